#!/usr/bin/env bash
# What a first run shows: on a small cluster no curve point, table cell or chart point beats the
# ideal line; placements.csv only on request; a class no node can host (too big, or a GPU model
# the cluster lacks) is named in a warning by frag and replay; progress lines within a run.
set -euo pipefail
: "${TESSERA:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

# Two 4-GPU nodes, pods of 2 and 4 GPUs: one pod is 25 or 50 % of capacity, so nearly every
# level is crossed inside a pod.
cat >"$tmp/small.yaml" <<'EOF'
name: small
pods: 6
seed: 3
nodes:
  - {name: n, model: T4, gpus: 4, cpu_milli: 64000, memory_mib: 262144, count: 2}
classes:
  - {name: two, cpu_milli: 1000, memory_mib: 1024, gpu_count: 2, gpu_milli: 1000, share: 1}
  - {name: four, cpu_milli: 1000, memory_mib: 1024, gpu_count: 4, gpu_milli: 1000, share: 1}
EOF
"$TESSERA" frag -q --scenario "$tmp/small.yaml" --out "$tmp/small" >"$tmp/small.out"
# curve.csv: unallocated_pct >= max(0, 100 - arrival_pct) on every row.
below=$(awk -F, 'NR > 1 { ideal = 100 - $3; if (ideal < 0) ideal = 0; if ($6 < ideal - 1e-9) n++ }
  END { print n + 0 }' "$tmp/small/curve.csv")
[ "$below" -eq 0 ] || fail "small cluster: $below curve.csv rows below the ideal line"
# The table: each unalloc@L mean (before the ±) >= the ideal row's value.
awk 'NR == 2 { for (i = 2; i <= NF; i++) h[i] = $i }
  $1 ~ /^(tessera|fgd|bestfit|packing|clustering|dotprod|random|k8s-default)$/ {
    for (i = 2; i <= NF; i++) if (h[i] ~ /^unalloc@/) {
      level = substr(h[i], 9) + 0; ideal = 100 - level; if (ideal < 0) ideal = 0
      split($i, m, "\xc2\xb1"); if (m[1] + 0 < ideal - 0.005) { print $1, h[i], $i; bad++ } } }
  END { exit bad > 0 }' "$tmp/small.out" || fail "small cluster: a table cell beats the ideal"
grep -q "^tessera " "$tmp/small.out" || fail "small cluster: no table"
echo "ok   small cluster: no point below the ideal line"

# placements.csv is opt-in.
[ ! -e "$tmp/small/placements.csv" ] || fail "placements.csv written by default"
"$TESSERA" frag -q --scenario "$tmp/small.yaml" --seeds 1 --placements --out "$tmp/pl" >/dev/null
[ "$(head -n 1 "$tmp/pl/placements.csv")" = "policy,seed,seq,pod,node,gpus,milli_per_gpu,status" ] ||
  fail "--placements: no placements.csv"
grep -q "placements.csv" <("$TESSERA" frag -q --scenario "$tmp/small.yaml" --seeds 1 --placements --out "$tmp/pl") ||
  fail "--placements: not listed among the files written"
echo "ok   placements.csv only with --placements"

# Classes no node can ever host: named on stderr, by frag and by replay (with --quiet too).
cat >"$tmp/never.yaml" <<'EOF'
name: never
pods: 100
seed: 3
horizon_h: 2
nodes:
  - {name: n, model: T4, gpus: 4, cpu_milli: 64000, memory_mib: 262144, count: 2}
classes:
  - {name: ok, cpu_milli: 1000, memory_mib: 1024, gpu_count: 1, gpu_milli: 1000, share: 8, arrival: {rate_per_h: 20}}
  - {name: huge, cpu_milli: 1000, memory_mib: 1024, gpu_count: 8, gpu_milli: 1000, share: 1, arrival: {rate_per_h: 5}}
  - {name: h100-only, cpu_milli: 1000, memory_mib: 1024, gpu_count: 1, gpu_milli: 1000, models: [H100], share: 1, arrival: {rate_per_h: 5}}
EOF
for cmd in frag replay; do
  "$TESSERA" "$cmd" -q --scenario "$tmp/never.yaml" --out "$tmp/never-$cmd" >/dev/null 2>"$tmp/never-$cmd.err" ||
    fail "$cmd never-fit run: exit $?"
  grep -qF "tessera $cmd: warning: class 'huge' (" "$tmp/never-$cmd.err" || fail "$cmd: no warning naming 'huge'"
  grep -qF "2 of 2 nodes have fewer GPUs than the pod asks for" "$tmp/never-$cmd.err" || fail "$cmd: no reason for 'huge'"
  grep -qF "class 'h100-only'" "$tmp/never-$cmd.err" || fail "$cmd: no warning naming 'h100-only'"
  grep -qF "no node has GPU model 'H100' (the cluster has: T4)" "$tmp/never-$cmd.err" || fail "$cmd: no model reason"
  if grep -q "class 'ok'" "$tmp/never-$cmd.err"; then fail "$cmd: warns about a class that fits"; fi
done
# From a CSV (no classes): grouped by request, with an example pod.
printf 'sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,T4\n' >"$tmp/n.csv"
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,1,500\nbig0,1000,1024,4,1000\nbig1,1000,1024,4,1000\n' >"$tmp/p.csv"
"$TESSERA" frag -q --seeds 1 --nodes "$tmp/n.csv" --pods "$tmp/p.csv" --out "$tmp/csv" >/dev/null 2>"$tmp/csv.err"
grep -qF "warning: pods like 'big0' (4 GPU x 1000 milli, cpu 1000 milli, memory 1024 MiB) (2 pods)" "$tmp/csv.err" ||
  { fail "CSV never-fit warning:"; cat "$tmp/csv.err"; }
echo "ok   never-fit classes named"

# Progress within a run: every 1024 pods (frag) or 1024 events (replay) with --progress-s 0.
cat >"$tmp/mid.yaml" <<'EOF'
name: mid
pods: 6000
seed: 3
nodes:
  - {name: n, model: T4, gpus: 4, cpu_milli: 64000, memory_mib: 262144, count: 1000}
classes:
  - {name: one, cpu_milli: 1000, memory_mib: 1024, gpu_count: 1, gpu_milli: 1000, share: 1}
EOF
"$TESSERA" frag --scenario "$tmp/mid.yaml" --policy fgd --seeds 1 --progress-s 0 --out "$tmp/mid" \
  >/dev/null 2>"$tmp/mid.err"
grep -qE '^  \.\.\. fgd +seed 1 +1024 of [0-9]+ pods submitted' "$tmp/mid.err" ||
  { fail "frag: no progress line within the run:"; cat "$tmp/mid.err"; }
"$TESSERA" replay --scenario peak-sale --policy k8s-default --progress-s 0 --samples 10 --out "$tmp/ps" \
  >/dev/null 2>"$tmp/ps.err"
grep -qE '^  \.\.\. k8s-default on 40 nodes: virtual [0-9.]+ of 24.00 h' "$tmp/ps.err" ||
  { fail "replay: no progress line within the run:"; cat "$tmp/ps.err"; }
"$TESSERA" frag -q --scenario "$tmp/mid.yaml" --policy fgd --seeds 1 --progress-s 0 --out "$tmp/mid" \
  >/dev/null 2>"$tmp/midq.err"
[ ! -s "$tmp/midq.err" ] || fail "frag -q printed progress"
echo "ok   progress within runs"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all ok"
