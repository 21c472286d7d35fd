#!/usr/bin/env bash
# Predictions = behaviour: one timeline of 2,000 LS and BE pods on 100 kwok nodes, run through
# the real control plane (kube-scheduler v1.37 with deploy/'s configuration, `tessera serve` with
# deploy/'s tessera.yaml, kwok ending each pod after its run time, victims re-created as their
# controller would) and through `tessera replay` with the same policy, nodes and target
# workload. Compared pod by pod (tests/tools/cluster_driver.cc compare): at least 99 % of the
# pods on the same node, and each class's p99 wait within 10 % or 1 s. Where they differ, the
# report lists the pods (docs/experiments/2026-12-07-real-cluster.md explains why they can).
#
# The same run is recorded (`tessera record`, read-only, beside it) and the recording fed back
# to the tools an operator uses next: its node list must be the cluster's, its pods must have
# the timeline's per-class demand (tests/tools/cluster_driver.cc demand: each class's pods and
# GPU-hours, the arrivals), and `tessera replay` and `tessera plan` must run on it as they do on
# the timeline — the record -> plan -> replay round trip.
#
# Environment: TIMELINE_PODS (2000), TIMELINE_RATE (pods a second, 5), TIMELINE_RUN_S (the
# range of run times, "20-80"; "40-140" keeps the cluster near full, where kube-scheduler's
# queue and back-off part the runs), TIMELINE_MIN_SAME_NODE_PCT (99), KEEP_CLUSTER=1 keeps the
# folder with both records (real.csv, replay/pods.csv, compare.txt).
source "$(dirname "$0")/lib.sh"

pods=${TIMELINE_PODS:-2000}
rate=${TIMELINE_RATE:-5}
run_s=${TIMELINE_RUN_S:-20-80}
run_min=${run_s%-*}
run_max=${run_s#*-}
scratch=$(mktemp -d /tmp/tessera-timeline.XXXXXX)

# 100 nodes in name order (the order serve's tie order starts from, and the replay's): 60 of
# eight V100 (32 GiB), 40 of four T4 — 640 GPUs.
{
  echo "sn,cpu_milli,memory_mib,gpu,model"
  for i in $(seq 0 99); do
    if [ "$i" -lt 60 ]; then
      printf 'tl-%03d,96000,786432,8,V100M32\n' "$i"
    else
      printf 'tl-%03d,64000,262144,4,T4\n' "$i"
    fi
  done
} >"$scratch/nodes.csv"

# The pods, one a second in the file and $rate a second in both runs (--time-scale, which
# divides arrivals, not durations); 40 % LS (a whole GPU or half of one), 60 % BE (one, two or
# four GPUs), each running 20-80 s: about half the GPUs busy on average, a few pods queue at the
# peaks. A fixed LCG, so every run has the same timeline.
awk -v n="$pods" -v lo="$run_min" -v hi="$run_max" 'BEGIN {
  print "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time"
  x = 20261207
  for (i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648; u = x / 2147483648
    x = (x * 1103515245 + 12345) % 2147483648; v = x / 2147483648
    t = i
    run = lo + int(v * (hi - lo + 1))
    if (u < 0.4) {
      qos = "LS"; gpus = 1; milli = (u < 0.2) ? 500 : 1000
    } else {
      qos = "BE"; milli = 1000
      gpus = (u < 0.75) ? 1 : ((u < 0.92) ? 2 : 4)
    }
    printf "tl-pod-%04d,1000,4096,%d,%d,,%s,Running,%d,%d,%d\n", i, gpus, milli, qos, t, t + run, t
  }
}' >"$scratch/pods.csv"

# The replay first (it takes a second): the tessera policy with its headroom (deploy/'s
# tessera.yaml keeps the same), seed 42 (its tie order), the trace's pods as the target workload.
"$TESSERA" replay --nodes "$scratch/nodes.csv" --pods "$scratch/pods.csv" --policy tessera \
  --seed 42 --time-scale "$rate" --horizon-s $((pods / rate + 900)) \
  --out "$scratch/replay" -q >"$scratch/replay.out"
tail -4 "$scratch/replay.out"

# The real cluster: serve gets the same target workload (--workload), as the replay has it.
cluster_up -- --workload "$scratch/pods.csv"
"$TESSERA_CLUSTER_DRIVER" nodes --nodes "$scratch/nodes.csv" | k create -f - >/dev/null
k create priorityclass tessera-ls --value 1000 >/dev/null
k create priorityclass tessera-be --value 0 >/dev/null
# The recorder, as an operator runs it: every namespace, the default classes (the pods carry no
# class label; their priorities, 1000 and 0, make them LS and BE as serve sorts them).
"$TESSERA" record --kubeconfig "$KUBECONFIG" --out "$scratch/rec" --flush-seconds 5 \
  2>"$scratch/record.err" &
record_pid=$!
for _ in $(seq 300); do grep -q "in sync" "$scratch/record.err" && break; sleep 0.1; done
grep -q "in sync" "$scratch/record.err" || fail "tessera record: not in sync: $(tail -3 "$scratch/record.err")"
start=$SECONDS
"$TESSERA_CLUSTER_DRIVER" timeline --kubeconfig "$KUBECONFIG" --pods "$scratch/pods.csv" \
  --namespace default --priority-class LS=tessera-ls --priority-class BE=tessera-be \
  --recreate-victims --time-scale "$rate" --end-from-arrival --settle-s 900 \
  --out "$scratch/real.csv" 2>"$scratch/driver.err" ||
  fail "the timeline driver failed: $(tail -3 "$scratch/driver.err")"
echo "timeline ran in $((SECONDS - start)) s"
check_cluster "after the timeline"

if "$TESSERA_CLUSTER_DRIVER" compare --real "$scratch/real.csv" --replay "$scratch/replay/pods.csv" \
  --policy tessera --report "$scratch/compare.txt" \
  --min-same-node-pct "${TIMELINE_MIN_SAME_NODE_PCT:-99}" >"$scratch/compare.out"; then
  ok "$(tail -1 "$scratch/compare.out")"
else
  fail "$(tail -1 "$scratch/compare.out")"
fi
head -8 "$scratch/compare.out"
grep -A 25 "^pods on another node" "$scratch/compare.out" | head -26

# The round trip: the recording ends cleanly, holds the cluster's nodes and the timeline's
# demand, and replays and plans.
kill -TERM "$record_pid"
wait "$record_pid"
code=$?
rec="$scratch/rec"
if [ $code -eq 0 ] && grep -q '"state": "complete"' "$rec/record.json"; then
  ok "tessera record: clean end on SIGTERM, $(($(wc -l <"$rec/openb_pod_list.csv") - 1)) pods recorded"
else
  fail "tessera record: exit $code, $(cat "$rec/record.json" 2>&1): $(tail -3 "$scratch/record.err")"
fi
if diff <(tail -n +2 "$scratch/nodes.csv" | sort) <(tail -n +2 "$rec/openb_node_list.csv" | cut -d, -f1-5 | sort) \
  >"$scratch/nodes.diff"; then
  ok "recorded node list = the cluster's 100 nodes (CPU, memory, GPUs, model)"
else
  fail "recorded node list differs: $(head -5 "$scratch/nodes.diff")"
fi
if "$TESSERA_CLUSTER_DRIVER" demand --timeline "$scratch/pods.csv" --time-scale "$rate" \
  --recorded "$rec/openb_pod_list.csv" >"$scratch/demand.out"; then
  ok "$(tail -1 "$scratch/demand.out")"
else
  fail "$(tail -1 "$scratch/demand.out")"
fi
cat "$scratch/demand.out"
if "$TESSERA" replay --nodes "$rec/openb_node_list.csv" --pods "$rec/openb_pod_list.csv" \
  --policy tessera --seed 42 --out "$scratch/rec-replay" -q \
  >"$scratch/rec-replay.out" 2>"$scratch/rec-replay.err" && ! grep -q "skipped" "$scratch/rec-replay.err"; then
  ok "tessera replay of the recording: $(grep -c . "$scratch/rec-replay/classes.csv") lines in classes.csv, no pod skipped"
else
  fail "tessera replay of the recording: $(tail -3 "$scratch/rec-replay.err")"
fi
# The cluster's two node types as a catalog; the default SLO (LS p99 wait <= 1 s) on the
# recorded LS pods.
cat >"$scratch/catalog.yaml" <<'YAML'
node_types:
  - {name: v100x8, model: V100M32, gpus: 8, cpu_milli: 96000, memory_mib: 786432,
     cost_per_hour: 20.0, min_count: 4, max_count: 60, step: 2, count_today: 60}
  - {name: t4x4, model: T4, gpus: 4, cpu_milli: 64000, memory_mib: 262144,
     cost_per_hour: 4.0, min_count: 0, max_count: 40, step: 8, count_today: 40}
YAML
if "$TESSERA" plan --catalog "$scratch/catalog.yaml" --pods "$rec/openb_pod_list.csv" \
  --nodes "$rec/openb_node_list.csv" --policy tessera --seeds 1 --check-seeds 2 --threads 2 -q \
  --out "$scratch/plan" >"$scratch/plan.out" 2>"$scratch/plan.err" &&
  chosen=$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["chosen"]; print(c["mix"], c["gpus"], "GPUs")' \
    "$scratch/plan/plan.json" 2>>"$scratch/plan.err"); then
  ok "tessera plan from the recording (LS p99 wait <= 1 s): $chosen"
else
  fail "tessera plan from the recording: $(tail -3 "$scratch/plan.err")"
fi
if [ -n "${KEEP_CLUSTER:-}" ]; then echo "kept $scratch"; else rm -rf "$scratch"; fi
finish
