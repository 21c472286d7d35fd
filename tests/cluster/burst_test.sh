#!/usr/bin/env bash
# A burst of 500 GPU pods created at once on 50 kwok nodes (300 GPUs; the pods ask for ~500):
# kube-scheduler's binding cycles run concurrently with the next pods' filter and prioritize,
# and the pods that do not fit are retried from its queues. Judged by the API server's objects:
# no GPU is given twice, every bound pod carries its assignment, and once the cluster has
# settled no pending pod would fit where room is left (tests/tools/check_cluster.cc).
source "$(dirname "$0")/lib.sh"

cluster_up

# 25 nodes of 8 V100 (32 GiB) and 25 of 4 T4 (15 GiB), as the openb node list names them.
{
  echo "sn,cpu_milli,memory_mib,gpu,model"
  for i in $(seq -w 0 24); do echo "v100-$i,96000,786432,8,V100M32"; done
  for i in $(seq -w 0 24); do echo "t4-$i,64000,262144,4,T4"; done
} >"$c/nodes.csv"
"$TESSERA_CLUSTER_DRIVER" nodes --nodes "$c/nodes.csv" >"$c/nodes.json"
k create -f "$c/nodes.json" >/dev/null

# 500 pods, every shape in turn: a quarter and a half GPU (with memory), one, two and four
# whole GPUs, some of them restricted to one model.
shapes=(
  'tessera.io/gpu: "1", tessera.io/gpu-milli: "250", tessera.io/gpu-memory: "4096"'
  'tessera.io/gpu: "1", tessera.io/gpu-milli: "500", tessera.io/gpu-memory: "8192"'
  'tessera.io/gpu: "1"'
  'tessera.io/gpu: "2"'
  'tessera.io/gpu: "1"'
  'tessera.io/gpu: "1", tessera.io/gpu-milli: "500"'
  'tessera.io/gpu: "4"'
  'tessera.io/gpu: "1", tessera.io/gpu-milli: "250"'
)
models=("" "" "" "" "T4" "" "V100M32" "")
for i in $(seq 0 499); do
  s=$((i % ${#shapes[@]}))
  echo "---"
  echo "apiVersion: v1"
  echo "kind: Pod"
  echo "metadata:"
  echo "  name: burst-$i"
  if [ -n "${models[$s]}" ]; then echo "  annotations: {tessera.io/gpu-model: ${models[$s]}}"; fi
  echo "spec:"
  echo "  schedulerName: tessera-scheduler"
  echo "  containers:"
  echo "    - name: main"
  echo "      image: registry.k8s.io/pause:3.10"
  echo "      resources: {requests: {cpu: 500m, memory: 1Gi}, limits: {${shapes[$s]}}}"
done >"$c/pods.yaml"

start=$SECONDS
k create -f "$c/pods.yaml" >/dev/null
echo "created 500 pods in $((SECONDS - start)) s"

# Settled: the number of bound pods has not changed for 15 s (kube-scheduler retries pods that
# did not fit on every change and at least every 5 minutes).
last=-1
stable_since=$SECONDS
while [ $((SECONDS - stable_since)) -lt 15 ] && [ $((SECONDS - start)) -lt 300 ]; do
  sleep 1
  now=$(count_bound)
  if [ "$now" != "$last" ]; then last=$now; stable_since=$SECONDS; fi
done
echo "$last of 500 pods bound after $((SECONDS - start)) s"
check_cluster "burst of 500 on 50 nodes" --expect-bound 200 --pending-must-not-fit

# Every pod is either bound or has kube-scheduler's FailedScheduling event with Tessera's reason.
k get pods -o 'jsonpath={range .items[*]}{.metadata.name}{" "}{.spec.nodeName}{"\n"}{end}' |
  awk 'NF==1{print $1}' >"$c/pending.txt"
unexplained=0
for p in $(head -20 "$c/pending.txt"); do
  msg=$(k get events --field-selector "involvedObject.name=$p,reason=FailedScheduling" \
    -o 'jsonpath={.items[-1:].message}')
  [ -n "$msg" ] || unexplained=$((unexplained + 1))
done
if [ "$unexplained" -eq 0 ]; then
  ok "$(wc -l <"$c/pending.txt") pending pods, each (of the first 20) with a FailedScheduling event"
  [ -s "$c/pending.txt" ] && echo "     e.g. $(head -1 "$c/pending.txt"): $msg"
else
  fail "$unexplained pending pods without a FailedScheduling event"
fi
finish
