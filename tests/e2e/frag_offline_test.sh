#!/usr/bin/env bash
# `tessera frag --offline` end to end: the bound per seed and each policy's gap in the terminal
# table, offline_bound.csv, offline_gap.csv, offline_classes.csv and report.html; what the
# bound leaves out and --offline-sharing; the bound is known exactly on a
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

# One GPU, an 810-milli share and a whole-GPU pod; with seed 1 the share arrives first, then the
# whole pod, which takes arrival past 100 %: the bound places the whole pod and says it leaves
# the share out (fgd placed the share: 19 %); with --offline-sharing 1 the share takes the GPU
# in the bound too, and the whole pod is left out.
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,1,810\np1,1000,1024,1,1000\n' >"$tmp/pods2.csv"
"$TESSERA" frag -q --offline --policy fgd --seeds 1 --max-arrival 200 --nodes "$tmp/nodes1.csv" \
  --pods "$tmp/pods2.csv" --out "$tmp/left" >"$tmp/left.out" || fail "left out: exit $?"
grep -q "^left out by the bound, mean per seed: 1.0 of 1 pods of 1 GPU x 810 milli$" "$tmp/left.out" \
  || fail "left out: $(tail -3 "$tmp/left.out")"
grep -q "^fgd .* 19.00±0.00 .* 0.00±0.00 .* 19.00±0.00$" "$tmp/left.out" || fail "left out: $(grep '^fgd' "$tmp/left.out")"
grep -q "^1,1,810,1,0$" "$tmp/left/offline_classes.csv" || fail "offline_classes.csv: $(cat "$tmp/left/offline_classes.csv")"
"$TESSERA" frag -q --offline --offline-sharing 1 --policy fgd --seeds 1 --max-arrival 200 \
  --nodes "$tmp/nodes1.csv" --pods "$tmp/pods2.csv" --out "$tmp/every" >"$tmp/every.out" \
  || fail "--offline-sharing 1: exit $?"
grep -q "^bound .* 19.00±0.00 " "$tmp/every.out" || fail "--offline-sharing 1: $(grep '^bound' "$tmp/every.out")"
grep -q "^left out by the bound, mean per seed: 1.0 of 1 pods of 1 GPU x 1000 milli$" "$tmp/every.out" \
  || fail "--offline-sharing 1: $(grep 'left out' "$tmp/every.out")"
if "$TESSERA" frag -q --offline-sharing 1 --nodes "$tmp/nodes1.csv" --pods "$tmp/pods2.csv" \
  --out "$tmp/bad" >/dev/null 2>"$tmp/bad.err"; then fail "--offline-sharing without --offline accepted"; fi
grep -q "needs --offline" "$tmp/bad.err" || fail "--offline-sharing without --offline: $(cat "$tmp/bad.err")"
echo "ok   what the bound leaves out, and --offline-sharing"

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
