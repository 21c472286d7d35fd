#!/usr/bin/env bash
# The SLO robustness family (docs/experiments/2026-12-07-slo-family.md): tessera, k8s-default
# and fgd replayed on 200 generated clusters and timelines (bench/scenario_family.h,
# GenerateSloScenario), 3 seeds each, and on the named scenarios of bench/slo/; per scenario
# whether tessera serves every SLO class within 1 pp of the better of the two and BE at least
# 90 % of k8s-default's GPU-hours. Tables on stdout; slo_family.csv and the YAML of the
# scenarios where tessera is furthest behind in OUT. Builds the benchmark first (Release, in
# BUILD_DIR) if it is missing or out of date. About a minute on 2 cores.
#
# Usage: bench/slo_family.sh [BUILD_DIR] [tessera_slo_family options...]
#   e.g. bench/slo_family.sh build --scenarios 50 --seeds 2
# Environment: OUT (/tmp/tessera-slo-family; never committed).
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
cmake --build "$build" --target tessera_slo_family >&2
out=${OUT:-/tmp/tessera-slo-family}
named=()
for f in "$root"/bench/slo/*.yaml; do named+=(--scenario "$f"); done
exec "$build/bench/tessera_slo_family" --out "$out" "${named[@]}" "$@"
