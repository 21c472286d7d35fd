#!/usr/bin/env bash
# Predictions = behaviour: one timeline of 2,000 LS and BE pods on 100 kwok nodes, run through
# the real control plane (kube-scheduler v1.37 with deploy/'s configuration, `tessera serve` with
# deploy/'s tessera.yaml, kwok ending each pod after its run time, victims re-created as their
# controller would) and through `tessera replay` with the same policy, nodes and target
# workload. Compared pod by pod (tests/tools/cluster_driver.cc compare): at least 99 % of the
# pods on the same node, and each class's p99 wait within 10 % or 1 s. Where they differ, the
# report lists the pods (docs/experiments/2026-12-07-real-cluster.md explains why they can).
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

# The replay first (it takes a second): tessera placement, no headroom (deploy/'s tessera.yaml
# keeps none), seed 42 (its tie order), the trace's pods as the target workload.
"$TESSERA" replay --nodes "$scratch/nodes.csv" --pods "$scratch/pods.csv" --policy tessera \
  --headroom-mode none --seed 42 --time-scale "$rate" --horizon-s $((pods / rate + 900)) \
  --out "$scratch/replay" -q >"$scratch/replay.out"
tail -4 "$scratch/replay.out"

# The real cluster: serve gets the same target workload (--workload), as the replay has it.
cluster_up -- --workload "$scratch/pods.csv"
"$TESSERA_CLUSTER_DRIVER" nodes --nodes "$scratch/nodes.csv" | k create -f - >/dev/null
k create priorityclass tessera-ls --value 1000 >/dev/null
k create priorityclass tessera-be --value 0 >/dev/null
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
if [ -n "${KEEP_CLUSTER:-}" ]; then echo "kept $scratch"; else rm -rf "$scratch"; fi
finish
