#!/usr/bin/env bash
# Scale of `tessera serve` behind a real kube-scheduler (v1.37, tests/cluster/): 5,000 kwok
# nodes shaped like the openb node list (its 1,213 GPU nodes repeated), 10,000 GPU pods of the
# openb default pod list created at a steady rate, once with Tessera as deploy/ configures it
# and once with the same kube-scheduler without the extender (GPUs as a plain extended resource:
# a share asks for one whole GPU). Reports, per run: pods bound per second (from the bind times
# the driver watches), and the scheduler's own latency metrics — scheduling attempts
# (scheduler_scheduling_attempt_duration_seconds), the scheduling algorithm
# (scheduler_scheduling_algorithm_duration_seconds: filter and prioritize, the extender's HTTP
# round trips included) and the bind extension point — plus each verb as Tessera answers it
# (tessera_request_duration_seconds{verb}). kube-scheduler has no metric per extender verb.
#
# Usage: bash bench/cluster_scale.sh [BUILD_DIR]     (default build)
# Environment: NODES (5000), PODS (10000), RATE (pods created a second, 150), CREATORS (4),
#   MODES ("tessera plain"), DATA (../shared/data/alibaba-gpu-v2023/csv), OUT (results/scale).
# Needs what tests/cluster/ needs (Go to build the components once) and the trace's CSVs.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
nodes=${NODES:-5000}
pods=${PODS:-10000}
rate=${RATE:-150}
creators=${CREATORS:-4}
modes=${MODES:-tessera plain}
data=${DATA:-../shared/data/alibaba-gpu-v2023/csv}
out=${OUT:-results/scale}
driver=$build/tests/tessera_cluster_driver
export TESSERA=$build/tessera
for f in "$TESSERA" "$driver" "$data/openb_node_list_gpu_node.csv" "$data/openb_pod_list_default.csv"; do
  [ -e "$f" ] || { echo "cluster_scale.sh: $f not found" >&2; exit 2; }
done
mkdir -p "$out"

# The pods: the GPU pods of the default list (7,063), in order and again with a suffix until
# there are $pods, one a second in the file (--time-scale $rate in the driver), running far
# longer than the benchmark.
awk -v n="$pods" 'BEGIN { FS = OFS = "," } NR == 1 { print; next } $4 > 0 { row[++m] = $0 }
  END {
    for (i = 0; i < n; i++) {
      $0 = row[i % m + 1]
      if (i >= m) $1 = $1 "-" int(i / m)
      $8 = "Running"; $9 = i; $11 = i; $10 = i + 1000000
      print
    }
  }' "$data/openb_pod_list_default.csv" >"$out/pods.csv"

summary="$out/summary.txt"
: >"$summary"
for mode in $modes; do
  dir=$(mktemp -d /tmp/tessera-scale.XXXXXX)
  echo "== $mode: $nodes nodes, $pods pods at $rate/s" >&2
  up_flags=()
  family=tessera
  if [ "$mode" = plain ]; then up_flags=(--no-tessera); family=count; fi
  bash tests/cluster/cluster.sh up "$dir" "${up_flags[@]}" 2>"$dir/up.err" || {
    tail -5 "$dir/up.err" >&2; exit 1; }
  # shellcheck disable=SC1091
  source "$dir/env"
  k() { "$CLUSTER_BIN/kubectl" "$@"; }
  start=$SECONDS
  "$driver" nodes --nodes "$data/openb_node_list_gpu_node.csv" --count "$nodes" >"$dir/nodes.json"
  k create -f "$dir/nodes.json" >/dev/null
  until [ "$(k get nodes --no-headers 2>/dev/null | grep -c ' Ready')" -ge "$nodes" ]; do sleep 2; done
  echo "   $nodes nodes created and Ready in $((SECONDS - start)) s" >&2
  "$driver" timeline --kubeconfig "$KUBECONFIG" --pods "$out/pods.csv" --namespace default \
    --family "$family" --time-scale "$rate" --creators "$creators" --settle-s 300 \
    --out "$out/$mode.csv" 2>"$dir/driver.err" || true
  curl -sk "https://127.0.0.1:$SCHEDULER_PORT_0/metrics" >"$out/$mode.scheduler.metrics"
  if [ "$mode" != plain ]; then
    curl -s "http://127.0.0.1:$TESSERA_PORT_0/metrics" >"$out/$mode.tessera.metrics"
  fi
  bash tests/cluster/cluster.sh down "$dir"
  rm -rf "$dir"

  # Pods bound a second: over the middle 80 % of the binds (the ramp at both ends left out).
  rate_line=$(awk -F, 'NR > 1 && $5 >= 0 { print $5 }' "$out/$mode.csv" | sort -n |
    awk '{ t[NR] = $1 } END {
      lo = int(NR * 0.1) + 1; hi = int(NR * 0.9)
      printf "%d of '"$pods"' bound; %.1f pods/s bound (middle 80 %%: %d binds in %.1f s)",
        NR, (hi - lo) / (t[hi] - t[lo]), hi - lo, t[hi] - t[lo] }')
  q() { "$driver" quantiles --metrics "$1" --name "$2" "${@:3}"; }
  {
    echo "$mode: $rate_line"
    echo "  scheduling attempt (scheduled): $(q "$out/$mode.scheduler.metrics" scheduler_scheduling_attempt_duration_seconds --label result=scheduled)"
    echo "  scheduling algorithm:           $(q "$out/$mode.scheduler.metrics" scheduler_scheduling_algorithm_duration_seconds)"
    echo "  bind extension point:           $(q "$out/$mode.scheduler.metrics" scheduler_framework_extension_point_duration_seconds --label extension_point=Bind)"
    echo "  pod scheduling SLI (e2e):       $(q "$out/$mode.scheduler.metrics" scheduler_pod_scheduling_sli_duration_seconds)"
    if [ "$mode" != plain ]; then
      for verb in filter prioritize bind; do
        echo "  tessera $verb:$(printf '%*s' $((24 - ${#verb})) '')$(q "$out/$mode.tessera.metrics" tessera_request_duration_seconds --label verb=$verb)"
      done
    fi
  } | tee -a "$summary"
done
echo "summary in $summary (seconds; count = observations)" >&2
