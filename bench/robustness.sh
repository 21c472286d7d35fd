#!/usr/bin/env bash
# The robustness benchmark (docs/experiments/2026-12-06-robustness.md): every policy on 300 generated
# fleets and workloads (bench/scenario_family.h), seeds 42-51, each policy's gap to the best
# published one per scenario; tables on stdout, robustness.csv and robustness.svg in OUT.
# Builds the benchmark first (Release, in BUILD_DIR) if it is missing or out of date.
# About 12 s on 2 cores with the offline bound (docs/experiments/2026-12-06-robustness.md).
#
# Usage: bench/robustness.sh [BUILD_DIR] [tessera_robustness options...]
#   e.g. bench/robustness.sh build --variant demand_weight=0 --scenarios 60
# Environment: OUT (/tmp/tessera-robustness; never committed).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then
  build=$1
  shift
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSERA_BENCH=ON >&2
fi
cmake --build "$build" --target tessera_robustness >&2
out=${OUT:-/tmp/tessera-robustness}
exec "$build/bench/tessera_robustness" --bound --out "$out" "$@"
