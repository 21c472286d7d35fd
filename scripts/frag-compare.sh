#!/usr/bin/env bash
# Compares two tessera binaries on the FGD trace: `tessera frag` with every policy, seeds 42-51,
# on each of the 24 pod lists of ../shared/data/alibaba-gpu-v2023/csv (the GPU node list), and
# cmp of placements.csv (every pod of every run: node and GPUs) and curve.csv. A change that
# claims to keep the engine's decisions must print "different: 0".
#   scripts/frag-compare.sh BASE_BINARY NEW_BINARY [OUT_DIR]
# Environment: POLICY (default all), SEEDS (default 42-51), LISTS (a grep pattern on the pod
# list names, default every list), THREADS (default nproc).
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,8p' "$0" >&2
  exit 2
fi
base=$1
new=$2
out=${3:-$(mktemp -d)}
data=${TESSERA_DATA_DIR:-$(cd "$(dirname "$0")/.." && pwd)/../shared/data/alibaba-gpu-v2023/csv}
[ -d "$data" ] || { echo "frag-compare: no trace at $data" >&2; exit 2; }
mkdir -p "$out"
# Builds older than --placements wrote placements.csv without being asked. (grep reads the whole
# help: with -q it may exit first, and the SIGPIPE of the help fails the pipe under pipefail.)
placements_flag() { "$1" frag --help 2>/dev/null | grep -- '--placements' >/dev/null && echo --placements; }
base_flag=$(placements_flag "$base" || true)
new_flag=$(placements_flag "$new" || true)
same=0
different=0
for pods in "$data"/openb_pod_list_*.csv; do
  list=$(basename "$pods" .csv)
  list=${list#openb_pod_list_}
  if [ -n "${LISTS:-}" ] && ! grep -Eq "$LISTS" <<<"$list"; then continue; fi
  for side in base new; do
    bin=$base
    flag=$base_flag
    [ "$side" = new ] && bin=$new && flag=$new_flag
    "$bin" frag --nodes "$data/openb_node_list_gpu_node.csv" --pods "$pods" \
      --policy "${POLICY:-all}" --seeds "${SEEDS:-42-51}" --threads "${THREADS:-$(nproc)}" \
      $flag -q --out "$out/$side/$list" >/dev/null
  done
  for file in placements.csv curve.csv; do
    if cmp -s "$out/base/$list/$file" "$out/new/$list/$file"; then
      same=$((same + 1))
    else
      different=$((different + 1))
      echo "DIFFERENT $list/$file"
    fi
  done
  echo "$list: $(($(wc -l <"$out/new/$list/placements.csv") - 1)) placements compared"
  rm -f "$out"/{base,new}/"$list"/placements.csv
done
echo "identical files: $same, different: $different"
[ "$different" -eq 0 ]
