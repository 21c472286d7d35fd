#!/usr/bin/env bash
# Runs `tessera frag` on every pod list in the shared data (all policies, seed 42) and checks
# each run's placements.csv and curve.csv with the independent checker tessera_check.
set -euo pipefail
: "${TESSERA:?}" "${TESSERA_CHECK:?}" "${TESSERA_DATA_DIR:?}"
if [ ! -f "$TESSERA_DATA_DIR/openb_node_list_gpu_node.csv" ]; then
  echo "SKIP: no trace at $TESSERA_DATA_DIR"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nodes="$TESSERA_DATA_DIR/openb_node_list_gpu_node.csv"
count=0
for pods in "$TESSERA_DATA_DIR"/openb_pod_list_*.csv; do
  name=$(basename "$pods" .csv)
  "$TESSERA" frag --nodes "$nodes" --pods "$pods" --seeds 42 --threads 2 --placements -q --out "$tmp/$name" >"$tmp/$name.log"
  "$TESSERA_CHECK" "$nodes" "$pods" "$tmp/$name/placements.csv" "$tmp/$name/curve.csv" | sed "s|^|$name: |"
  count=$((count + 1))
done
# The checker must also catch a corrupted run.
f="$tmp/openb_pod_list_default/placements.csv"
# Move every GPU placement onto the first node used: over-allocation follows.
awk -F, 'BEGIN{OFS=","} NR==1{print; next} $8=="OK" && $6!="" {if (first=="") first=$5; $5=first} {print}' \
  "$f" >"$tmp/corrupt.csv"
if "$TESSERA_CHECK" "$nodes" "$TESSERA_DATA_DIR/openb_pod_list_default.csv" "$tmp/corrupt.csv" \
    "$tmp/openb_pod_list_default/curve.csv" 2>"$tmp/corrupt.err"; then
  echo "FAIL: the checker accepted a corrupted placements.csv"
  exit 1
fi
grep -q "over-allocated" "$tmp/corrupt.err" || { echo "FAIL: no over-allocation reported"; cat "$tmp/corrupt.err"; exit 1; }
echo "checked $count pod lists; the checker rejects a corrupted run"
