#!/usr/bin/env bash
# The replay experiment side by side: tessera against priority + preemption with
# the published placement policies, at the stated contention levels, with the
# latency-utilization trade-off (LS p99 wait and BE GPU-hours against cluster size).
# Usage: scripts/replay_tradeoff.sh [BUILD_DIR] [OUT_DIR]     (see docs/experiments/2026-12-06-replay-cluster-size.md)
set -euo pipefail
build=${1:-build}
out=${2:-results}
data=${TESSERA_DATA_DIR:-$(dirname "$0")/../../shared/data/alibaba-gpu-v2023/csv}
policies=tessera,k8s-default,fgd,bestfit,packing,clustering,dotprod,random

if [ -f "$data/openb_pod_list_default.csv" ]; then
  # Default trace: arrivals compressed 50x, 84 of the 1213 nodes (437 GPUs).
  "$build/tessera" replay -q --nodes "$data/openb_node_list_gpu_node.csv" \
    --pods "$data/openb_pod_list_default.csv" --time-scale 50 --num-nodes 84 \
    --policy "$policies" --sweep-nodes 72,76,80,84,88,92,96,104,120 --out "$out/replay-trace"
else
  echo "trace not found in $data: skipping the trace replay" >&2
fi
# peak-sale: 40 nodes (320 GPUs), one day; the same tessera settings as on the trace.
"$build/tessera" replay -q --scenario peak-sale --policy "$policies" \
  --sweep-nodes 30,34,38,40,44,48,56 --out "$out/replay-peak-sale"
