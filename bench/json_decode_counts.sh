#!/usr/bin/env bash
# Instructions per decode of a kube-scheduler filter body by each decoder of
# tessera_json_decode_bench (bench/json_decode_bench.cc), counted by callgrind so that the
# figure does not depend on how busy the machine is: COUNT decodes inside DecodeLoop (the only
# function collected, after one warm-up decode), its instructions divided by COUNT. Prints a
# Markdown table: decoder x names, and each decoder's ratio to the hand-written scanner.
#
# Usage: bench/json_decode_counts.sh [BUILD_DIR]      (default: build)
# Environment: NAMES ("1213 5000 50000"), DECODERS ("hand simdjson simdjson_copy hand_memo
# simdjson_memo general": the first is the baseline), COUNT (50; a tenth of it, at least 5,
# for 50000 names), OUT (/tmp/tessera-json-counts: callgrind files). About a minute in all.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
bench=$build/bench/tessera_json_decode_bench
read -r -a names <<<"${NAMES:-1213 5000 50000}"
read -r -a decoders <<<"${DECODERS:-hand simdjson simdjson_copy hand_memo simdjson_memo general}"
count=${COUNT:-50}
out=${OUT:-/tmp/tessera-json-counts}

command -v valgrind >/dev/null || { echo "json_decode_counts: valgrind is missing (apt-get install valgrind)" >&2; exit 1; }
[ -x "$bench" ] || { echo "json_decode_counts: $bench not built (needs libsimdjson-dev)" >&2; exit 1; }
mkdir -p "$out"

# per_decode DECODER NAMES COUNT -> instructions per decode
per_decode() {
  local file="$out/$1-$2.cg"
  valgrind --tool=callgrind --callgrind-out-file="$file" --toggle-collect='*DecodeLoop*' \
    "$bench" --count "$1" "$2" "$3" >"$out/run.log" 2>"$out/valgrind.log" ||
    { cat "$out/run.log" "$out/valgrind.log" >&2; exit 1; }
  awk -v n="$3" '/^(summary|totals):/ {printf "%.0f", $2 / n; exit}' "$file"
}

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'); $(valgrind --version)"
echo "instructions per decode (callgrind, DecodeLoop only); ratio to ${decoders[0]}"
printf '| names | bytes |'
for d in "${decoders[@]}"; do printf ' %s |' "$d"; done
for d in "${decoders[@]:1}"; do printf ' %s / %s |' "$d" "${decoders[0]}"; done
printf '\n|---|---|'
for _ in "${decoders[@]}" "${decoders[@]:1}"; do printf -- '---|'; done
printf '\n'
for n in "${names[@]}"; do
  c=$count
  if [ "$n" -ge 50000 ]; then c=$((count / 10 > 5 ? count / 10 : 5)); fi
  costs=()
  for d in "${decoders[@]}"; do costs+=("$(per_decode "$d" "$n" "$c")"); done
  bytes=$(sed -n 's/.* decodes of \([0-9]*\) bytes.*/\1/p' "$out/run.log")
  printf '| %s | %s |' "$n" "$bytes"
  for x in "${costs[@]}"; do printf ' %s |' "$x"; done
  for x in "${costs[@]:1}"; do awk -v x="$x" -v b="${costs[0]}" 'BEGIN {printf " %.2f |", x / b}'; done
  printf '\n'
done
