#!/usr/bin/env bash
# Two leader-elected kube-scheduler replicas, each with its `tessera serve` sidecar (deploy/'s
# layout), under a steady stream of GPU pods that kwok ends after their run time. Mid-stream the
# leader's sidecar is killed (SIGKILL) and restarted; later the leading kube-scheduler itself is
# killed and the standby takes the lease. Scheduling goes on, and no GPU is ever given twice:
# the independent checker judges the API server's objects every two seconds throughout.
source "$(dirname "$0")/lib.sh"

cluster_up --schedulers 2

{
  echo "sn,cpu_milli,memory_mib,gpu,model"
  for i in $(seq -w 0 39); do echo "f-$i,64000,262144,4,A10"; done
} >"$c/nodes.csv"
"$TESSERA_CLUSTER_DRIVER" nodes --nodes "$c/nodes.csv" | k create -f - >/dev/null

# 450 pods over 90 s (5 a second), one GPU or a half, running 10-40 s: about 120 GPUs busy of 160.
{
  echo "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time"
  for i in $(seq 0 449); do
    t=$((i / 5))
    run=$((10 + (i * 7) % 31))
    milli=$([ $((i % 3)) -eq 0 ] && echo 500 || echo 1000)
    echo "fo-$i,1000,2048,1,$milli,,BE,Running,$t,$((t + run)),$t"
  done
} >"$c/pods.csv"

"$TESSERA_CLUSTER_DRIVER" timeline --kubeconfig "$KUBECONFIG" --pods "$c/pods.csv" \
  --namespace default --settle-s 120 --out "$c/record.csv" 2>"$c/driver.err" &
driver=$!

snapshots=0
bad=0
snapshot() {
  k get nodes,pods -A -o json >"$c/snap.json" 2>/dev/null || return 0
  snapshots=$((snapshots + 1))
  if ! "$TESSERA_CHECK_CLUSTER" "$c/snap.json" >"$c/snap.out"; then
    bad=$((bad + 1))
    cp "$c/snap.json" "$c/bad-snapshot-$bad.json"
    cat "$c/snap.out"
  fi
}
leader() { bash "$cluster_here/cluster.sh" leader "$c"; }

start=$SECONDS
lead=$(leader || echo "?")
echo "leader: scheduler-$lead"
killed_sidecar=0
killed_leader=0
while kill -0 "$driver" 2>/dev/null; do
  sleep 2
  snapshot
  t=$((SECONDS - start))
  if [ "$killed_sidecar" -eq 0 ] && [ "$t" -ge 20 ]; then
    lead=$(leader || echo 0)
    echo "t=${t}s: SIGKILL tessera-$lead (the leader's sidecar), restarted 3 s later"
    bash "$cluster_here/cluster.sh" stop "$c" "tessera-$lead" KILL
    sleep 3
    bash "$cluster_here/cluster.sh" start "$c" "tessera-$lead"
    killed_sidecar=$t
  fi
  if [ "$killed_leader" -eq 0 ] && [ "$t" -ge 50 ]; then
    lead=$(leader || echo 0)
    echo "t=${t}s: SIGKILL scheduler-$lead (the leader)"
    bash "$cluster_here/cluster.sh" stop "$c" "scheduler-$lead" KILL
    killed_leader=$t
    dead=$lead
  fi
done
wait "$driver" || fail "the timeline driver failed: $(tail -3 "$c/driver.err")"
new=$(leader || echo "none")
if [ "$new" != "none" ] && [ "$new" != "${dead:-x}" ]; then
  ok "scheduler-$new leads after scheduler-${dead:-?} was killed"
else
  fail "no new leader after scheduler-${dead:-?} was killed ('$new')"
fi
if [ "$bad" -eq 0 ]; then ok "$snapshots snapshots, no GPU given twice in any"; else fail "$bad of $snapshots snapshots violate"; fi

# Every pod was bound at some point; the pods that arrived after each kill too.
total=$(tail -n +2 "$c/record.csv" | wc -l)
bound=$(tail -n +2 "$c/record.csv" | awk -F, '$5 >= 0' | wc -l)
late=$(tail -n +2 "$c/record.csv" | awk -F, -v t="$killed_leader" '$3 > t + 20 && $5 >= 0' | wc -l)
if [ "$bound" -eq "$total" ]; then ok "all $total pods were bound"; else fail "$bound of $total pods were bound"; fi
if [ "$late" -gt 0 ]; then ok "$late pods that arrived 20 s or more after the leader was killed were bound"; else fail "nothing bound after the leader was killed"; fi
awk -F, 'NR > 1 && $5 >= 0 { w = $6; if (w > max) max = w; sum += w; n++ } END { printf "waits: mean %.2f s, max %.2f s over %d pods\n", sum / n, max, n }' "$c/record.csv"
check_cluster "after failover"
finish
