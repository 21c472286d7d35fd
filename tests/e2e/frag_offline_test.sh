#!/usr/bin/env bash
# `tessera frag --offline` end to end: the bound per seed and each policy's gap in the terminal
# table, offline_bound.csv, offline_gap.csv and report.html; the bound is known exactly on a
# hand-made cluster and never above any policy; --help explains it; no files without --offline.
set -euo pipefail
: "${TESSERA:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

# One 1-GPU node, only 600-milli pods: at 100 % arrival two have arrived (1200 milli >= 1000),
# one GPU holds one of them, so no placement leaves less than 40 % unallocated.
printf 'sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,1,T4\n' >"$tmp/nodes1.csv"
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,1,600\np1,1000,1024,1,600\n' >"$tmp/pods1.csv"
"$TESSERA" frag -q --offline --policy fgd,bestfit --seeds 1-3 --nodes "$tmp/nodes1.csv" \
  --pods "$tmp/pods1.csv" --out "$tmp/one" >"$tmp/one.out" || fail "exact: exit $?"
[ "$(grep -c ',40,' "$tmp/one/offline_bound.csv")" -eq 3 ] || fail "exact: want bound 40 for 3 seeds: $(cat "$tmp/one/offline_bound.csv")"
grep -q "^fgd .* 40.00±0.00 .* 0.00±0.00$" "$tmp/one.out" || fail "exact: fgd row: $(grep fgd "$tmp/one.out")"
echo "ok   exact bound on one GPU"

# A mixed cluster: the gap is never negative, every run has a row, the report has the section.
printf 'sn,cpu_milli,memory_mib,gpu,model\nn0,16000,65536,2,T4\nn1,32000,131072,4,V100M32\nn2,8000,32768,1,T4\nn3,64000,262144,8,V100M32\n' >"$tmp/nodes.csv"
{
  echo "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec"
  for i in $(seq 0 59); do
    case $((i % 6)) in
      0) echo "p$i,4000,8192,1,1000," ;;
      1) echo "p$i,2000,4096,1,810," ;;
      2) echo "p$i,6000,16384,1,470,T4" ;;
      3) echo "p$i,8000,16384,2,1000,V100M32" ;;
      4) echo "p$i,1000,2048,1,230," ;;
      5) echo "p$i,3000,4096,0,0," ;;
    esac
  done
} >"$tmp/pods.csv"
"$TESSERA" frag --offline --policy all --seeds 42-45 --nodes "$tmp/nodes.csv" --pods "$tmp/pods.csv" \
  --out "$tmp/mixed" >"$tmp/mixed.out" 2>"$tmp/mixed.err" || fail "mixed: exit $?"
grep -q "\[offline 4/4\] seed 45 *bound@100%" "$tmp/mixed.err" || fail "mixed: no offline progress"
grep -q "^Offline bound and gap at 100 % arrival" "$tmp/mixed.out" || fail "mixed: no offline table"
[ "$(wc -l <"$tmp/mixed/offline_bound.csv")" -eq 5 ] || fail "offline_bound.csv: want header + 4 rows"
[ "$(wc -l <"$tmp/mixed/offline_gap.csv")" -eq 33 ] || fail "offline_gap.csv: want header + 8 policies x 4 seeds"
awk -F, 'NR > 1 && $6 < -1e-6 { bad = 1; print "negative gap: " $0 } END { exit bad }' \
  "$tmp/mixed/offline_gap.csv" || fail "a policy beat the bound"
awk -F, 'NR > 1 && $12 != 1 { bad = 1 } END { exit bad }' "$tmp/mixed/offline_bound.csv" \
  || fail "bound not converged"
grep -q '<section class="card" id="offline">' "$tmp/mixed/report.html" || fail "report lacks the offline section"
grep -q 'data-policy="tessera"><th class="policy" scope="row">tessera</th>' "$tmp/mixed/report.html" \
  || fail "report's offline table lacks tessera"
echo "ok   mixed cluster: $(grep '^bound ' "$tmp/mixed.out")"

# Without --offline: no offline files, no section.
"$TESSERA" frag -q --policy fgd --seeds 1 --nodes "$tmp/nodes.csv" --pods "$tmp/pods.csv" \
  --out "$tmp/plain" >/dev/null || fail "plain: exit $?"
[ ! -e "$tmp/plain/offline_bound.csv" ] || fail "plain: wrote offline_bound.csv"
! grep -q 'id="offline"' "$tmp/plain/report.html" || fail "plain: report has the offline section"
echo "ok   no offline output without --offline"

"$TESSERA" frag --help >"$tmp/help.txt"
grep -q -- "--offline" "$tmp/help.txt" || fail "help lacks --offline"
grep -q "NO policy, online or offline" "$tmp/help.txt" || fail "help does not explain the bound"
echo "ok   --help explains the bound"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all frag --offline checks passed"
