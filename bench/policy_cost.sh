#!/usr/bin/env bash
# What a `tessera` run costs against an FGD run (the target: at most 2x), counted in
# instructions by callgrind so that the figure does not depend on how busy the machine is.
# For each pod list and policy: the whole `tessera frag --seeds 42 --threads 1` run minus the
# same run with `--max-arrival 1` (reading the trace and building the cluster), then the ratio.
# Prints one line per list and exits 1 if any ratio is over LIMIT.
#
# Usage: bench/policy_cost.sh [BUILD_DIR]            (default: build)
# Environment: LISTS ("default gpuspec05 gpuspec10 gpuspec20 gpuspec25 gpuspec33"; the pod
# lists openb_pod_list_NAME.csv), POLICIES ("fgd tessera": the first is the baseline),
# SEED (42), LIMIT (2), TESSERA_DATA_DIR (../shared/data/alibaba-gpu-v2023/csv),
# OUT (/tmp/tessera-cost: callgrind files; never committed), BASE_BUILD (a second build
# directory: the baseline column is then the first policy run by BASE_BUILD's tessera, to
# compare two builds, e.g. BASE_BUILD=../main/build POLICIES="tessera tessera" LIMIT=1.2).
# About 20 s per run under valgrind: 4 runs per list.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
data=${TESSERA_DATA_DIR:-$root/../shared/data/alibaba-gpu-v2023/csv}
lists=${LISTS:-default gpuspec05 gpuspec10 gpuspec20 gpuspec25 gpuspec33}
read -r -a policies <<<"${POLICIES:-fgd tessera}"
seed=${SEED:-42}
limit=${LIMIT:-2}
out=${OUT:-/tmp/tessera-cost}

command -v valgrind >/dev/null || { echo "policy_cost: valgrind is missing (apt-get install valgrind)" >&2; exit 1; }
[ -x "$build/tessera" ] || { echo "policy_cost: $build/tessera not built" >&2; exit 1; }
[ -f "$data/openb_node_list_gpu_node.csv" ] || { echo "policy_cost: no trace in $data" >&2; exit 1; }
[ "${#policies[@]}" -ge 2 ] || { echo "policy_cost: POLICIES needs a baseline and at least one more" >&2; exit 1; }
base_build=${BASE_BUILD:-}
[ -z "$base_build" ] || [ -x "$base_build/tessera" ] || { echo "policy_cost: $base_build/tessera not built" >&2; exit 1; }
mkdir -p "$out"

# instructions BUILD LIST POLICY EXTRA... -> total instructions of one run
instructions() {
  local dir=$1 list=$2 policy=$3
  shift 3
  local file="$out/$list-$policy-$(basename "$dir")${1:+-short}.cg"
  valgrind --tool=callgrind --callgrind-out-file="$file" "$dir/tessera" frag \
    --nodes "$data/openb_node_list_gpu_node.csv" --pods "$data/openb_pod_list_$list.csv" \
    --policy "$policy" --seeds "$seed" --threads 1 --no-placements -q --out "$out/frag" "$@" \
    >/dev/null 2>"$out/valgrind.log" || { cat "$out/valgrind.log" >&2; exit 1; }
  awk '/^(summary|totals):/ {print $2; exit}' "$file"
}

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'); $(valgrind --version)"
echo "M instructions, run minus --max-arrival 1, seed $seed; ratio to ${policies[0]}${base_build:+ of $base_build}, limit ${limit}x"
printf '| pod list |'
label0=${policies[0]}
[ -n "$base_build" ] && label0="base ${policies[0]}"
printf ' %s |' "$label0"
for p in "${policies[@]:1}"; do printf ' %s |' "$p"; done
for p in "${policies[@]:1}"; do printf ' %s / %s |' "$p" "$label0"; done
printf '\n|---|'
for _ in "${policies[@]}" "${policies[@]:1}"; do printf -- '---|'; done
printf '\n'
status=0
for list in $lists; do
  [ -f "$data/openb_pod_list_$list.csv" ] || { echo "policy_cost: no pod list $list" >&2; exit 1; }
  costs=()
  first=1
  for p in "${policies[@]}"; do
    dir=$build
    [ "$first" = 1 ] && [ -n "$base_build" ] && dir=$base_build
    first=0
    full=$(instructions "$dir" "$list" "$p")
    short=$(instructions "$dir" "$list" "$p" --max-arrival 1)
    costs+=("$((full - short))")
  done
  printf '| %s |' "$list"
  for c in "${costs[@]}"; do awk -v c="$c" 'BEGIN {printf " %.1f |", c / 1e6}'; done
  for c in "${costs[@]:1}"; do
    ratio=$(awk -v a="$c" -v b="${costs[0]}" 'BEGIN {printf "%.2f", a / b}')
    over=$(awk -v r="$ratio" -v l="$limit" 'BEGIN {print (r > l) ? 1 : 0}')
    [ "$over" = 1 ] && status=1
    printf ' %sx%s |' "$ratio" "$([ "$over" = 1 ] && echo ' OVER')"
  done
  printf '\n'
done
exit $status
