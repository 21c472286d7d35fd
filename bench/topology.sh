#!/usr/bin/env bash
# The topology experiment of docs/TOPOLOGY.md: the openb GPU nodes with a stated topology per
# node type (8-GPU nodes as two 4-GPU NVLink islands, one per NUMA node; smaller nodes one
# PCIe domain), the multi-GPU pods of each pod list `required` in one NVLink domain, and the
# inflation experiment of `tessera frag` (to 130 %, read at 100 % arrival) for tessera with
# and without topology, fgd with and without, and hami-topology, seeds 42-51. Prints one
# Markdown table per pod list (mean ± s.d. over the seeds), the seed-by-seed comparison of
# tessera with each other column, and whether the bar is met; then both tables for all lists.
# 8 s for the five lists on 2 cores, 40 s for all 24 (docs/TOPOLOGY.md).
#
# Usage: bench/topology.sh [BUILD_DIR]            (default: build)
# Environment: LISTS (default,multigpu20,multigpu30,multigpu40,multigpu50: pod lists by
# their openb_pod_list_ suffix; `all`: every openb_pod_list_*.csv in DATA), SEEDS (42-51), THREADS (nproc), COLUMNS
# (tessera,tessera-blind,fgd,fgd-blind,hami-topology), DATA
# (../shared/data/alibaba-gpu-v2023/csv).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
bin=$build/bench/tessera_topology_experiment
[ -x "$bin" ] || { echo "topology: $bin not built (cmake --build $build --target tessera_topology_experiment)" >&2; exit 1; }
data=${DATA:-$root/../shared/data/alibaba-gpu-v2023/csv}
[ -f "$data/openb_node_list_gpu_node.csv" ] || { echo "topology: no openb trace in $data" >&2; exit 1; }
lists=${LISTS:-default,multigpu20,multigpu30,multigpu40,multigpu50}
if [ "$lists" = all ]; then
  lists=$(cd "$data" && ls openb_pod_list_*.csv | sed 's/^openb_pod_list_//; s/\.csv$//' | paste -sd, -)
fi
"$bin" --data "$data" --lists "$lists" --seeds "${SEEDS:-42-51}" \
  --threads "${THREADS:-$(nproc)}" \
  --columns "${COLUMNS:-tessera,tessera-blind,fgd,fgd-blind,hami-topology}"
