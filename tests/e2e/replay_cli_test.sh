#!/usr/bin/env bash
# `tessera replay` end to end: a small trace with pods whose times are unusable (reported with
# file:line and skipped), the output files, the sweep, the embedded peak-sale scenario, and
# bad input answered with file:line and exit code 2 without writing a report.
set -euo pipefail
: "${TESSERA:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

printf 'sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,T4\nn1,64000,262144,2,T4\nn2,32000,131072,4,V100M32\n' >"$tmp/nodes.csv"
{
  echo "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time"
  for i in $(seq 0 39); do
    q=BE; [ $((i % 3)) -eq 0 ] && q=LS
    echo "p$i,1000,1024,1,1000,,$q,Running,$((i * 10)),$((i * 10 + 200)),$((i * 10))"
  done
  echo "nosched,1000,1024,1,1000,,LS,Pending,50,,"
  echo "backwards,1000,1024,1,1000,,BE,Failed,60,10,70"
} >"$tmp/pods.csv"

"$TESSERA" replay --nodes "$tmp/nodes.csv" --pods "$tmp/pods.csv" --policy tessera,k8s-default \
  --sweep-nodes 1,2 --out "$tmp/out" >"$tmp/ok.out" 2>"$tmp/ok.err" || fail "ok run: exit $?"
# Skipped pods: one warning with the count and where the list is, not a line per pod; the
# list in skipped.csv names file:line and the reason.
grep -qF "warning: 2 pod(s) skipped for missing or inconsistent times" "$tmp/ok.err" || fail "no skipped count on stderr"
grep -qF "$tmp/out/skipped.csv" "$tmp/ok.err" || fail "stderr does not point to skipped.csv"
[ "$(grep -c "pod(s) skipped" "$tmp/ok.err")" -eq 1 ] || fail "want one stderr line about skipped pods"
if grep -q "' skipped: " "$tmp/ok.err"; then fail "stderr still lists skipped pods one by one"; fi
grep -qF "pods.csv:42,scheduled_time missing" "$tmp/out/skipped.csv" || fail "no file:line for nosched in skipped.csv"
grep -qF "pods.csv:43,deletion_time 10 < scheduled_time 70" "$tmp/out/skipped.csv" || fail "no file:line for backwards in skipped.csv"
grep -qF "2 pod(s) skipped" "$tmp/ok.out" || fail "skipped count not printed"
for f in classes.csv series.csv skipped.csv sweep.csv report.html; do
  [ -s "$tmp/out/$f" ] || fail "missing $f"
done
[ "$(grep -c '^tessera,' "$tmp/out/classes.csv")" -eq 4 ] || fail "classes.csv: want 4 tessera rows"
[ "$(grep -c '^tessera,1,' "$tmp/out/sweep.csv")" -eq 4 ] || fail "sweep.csv: want the 1-node rows"
grep -q 'class="series" data-policy="k8s-default"' "$tmp/out/report.html" || fail "report lacks a k8s-default line"
grep -q "LS p99 wait against cluster size" "$tmp/out/report.html" || fail "report lacks the trade-off chart"
[ "$(wc -l <"$tmp/out/skipped.csv")" -eq 3 ] || fail "skipped.csv: want header + 2 rows"
echo "ok   trace run"

"$TESSERA" replay -q --scenario peak-sale --policy k8s-default --samples 20 --out "$tmp/ps" >"$tmp/ps.out" \
  || fail "peak-sale: exit $?"
grep -q "k8s-default *LS" "$tmp/ps.out" || fail "peak-sale: no LS row"
echo "ok   peak-sale"

printf 'classes:\n  - {name: LS, priority: 7, slo_wait_s: 2}\n  - {name: BE, priority: 1}\nfallback: BE\n' >"$tmp/good.yaml"
"$TESSERA" replay -q --nodes "$tmp/nodes.csv" --pods "$tmp/pods.csv" --classes "$tmp/good.yaml" \
  --policy tessera --out "$tmp/cls" >/dev/null || fail "classes run: exit $?"
awk -F, '$1 == "tessera" && $2 == "LS" && $13 == 2 {found = 1} END {exit !found}' "$tmp/cls/classes.csv" \
  || fail "classes.csv lacks the SLO of 2 s"
[ "$(grep -c '^tessera,' "$tmp/cls/classes.csv")" -eq 2 ] || fail "classes.csv: want the 2 classes of the file"
echo "ok   --classes"

# --headroom-mode static keeps that many idle GPUs for LS: with more than the cluster has, no BE
# pod starts; the default (backlog) mode lets them start on an LS-free trace.
printf 'sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,T4\n' >"$tmp/n1.csv"
{
  echo "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time"
  for i in 0 1 2 3; do echo "b$i,1000,1024,1,1000,,BE,Running,$((i * 10)),$((i * 10 + 200)),$((i * 10))"; done
} >"$tmp/be.csv"
"$TESSERA" replay -q --nodes "$tmp/n1.csv" --pods "$tmp/be.csv" --policy tessera --headroom-mode static \
  --headroom-gpus 100 --out "$tmp/hs" >/dev/null || fail "static headroom run: exit $?"
grep -q '^tessera,BE,4,0,' "$tmp/hs/classes.csv" || fail "static headroom: a BE pod started"
"$TESSERA" replay -q --nodes "$tmp/n1.csv" --pods "$tmp/be.csv" --policy tessera --out "$tmp/hb" >/dev/null \
  || fail "backlog headroom run: exit $?"
grep -q '^tessera,BE,4,2,' "$tmp/hb/classes.csv" || fail "backlog headroom: want 2 BE pods started"
echo "ok   --headroom-mode"

# --headroom-model keeps idle GPUs of one GPU model: T4=2 keeps both of n0's, so no BE pod
# starts though the cluster-wide headroom is 0; a model no node has keeps nothing, with a
# warning.
"$TESSERA" replay -q --nodes "$tmp/n1.csv" --pods "$tmp/be.csv" --policy tessera --headroom-mode static \
  --headroom-gpus 0 --headroom-model T4=2 --out "$tmp/hm" >/dev/null || fail "model headroom run: exit $?"
grep -q '^tessera,BE,4,0,' "$tmp/hm/classes.csv" || fail "model headroom: a BE pod started"
"$TESSERA" replay -q --nodes "$tmp/n1.csv" --pods "$tmp/be.csv" --policy tessera --headroom-mode static \
  --headroom-gpus 0 --headroom-model T4=1 --headroom-model H100=4 --out "$tmp/hm1" >/dev/null 2>"$tmp/hm1.err" \
  || fail "model headroom T4=1: exit $?"
grep -q '^tessera,BE,4,1,' "$tmp/hm1/classes.csv" || fail "model headroom T4=1: want 1 BE pod started"
grep -qF "warning: --headroom-model H100=4: no node has GPU model 'H100'" "$tmp/hm1.err" \
  || fail "no warning for a GPU model no node has"
echo "ok   --headroom-model"

expect_error() {  # expect_error NAME PATTERN ARGS...
  local name=$1 pattern=$2
  shift 2
  set +e
  "$TESSERA" replay -q --out "$tmp/out-$name" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  local rc=$?
  set -e
  if [ "$rc" -ne 2 ]; then fail "$name: exit $rc, want 2"; return; fi
  grep -qF -- "$pattern" "$tmp/$name.err" || { fail "$name: stderr lacks '$pattern':"; cat "$tmp/$name.err"; return; }
  [ -e "$tmp/out-$name/report.html" ] && fail "$name: wrote a report"
  echo "ok   $name: $(head -1 "$tmp/$name.err")"
}

printf 'name: x\npods: 5\nhorizon_h: 2\nnodes:\n  - {name: n, model: T4, gpus: 2, cpu_milli: 1000, memory_mib: 1000, count: 1}\nclasses:\n  - name: c\n    cpu_milli: 1\n    share: 1\n    arrival: {rate_per_h: lots}\n' >"$tmp/bad.yaml"
expect_error bad-rate "bad.yaml:10: field 'classes[0].arrival.rate_per_h': not a number: 'lots'" --scenario "$tmp/bad.yaml"
printf 'name: x\npods: 5\nnodes:\n  - {name: n, model: T4, gpus: 2, cpu_milli: 1000, memory_mib: 1000, count: 1}\nclasses:\n  - {name: c, cpu_milli: 1, share: 1}\n' >"$tmp/notimeline.yaml"
expect_error no-timeline "the scenario has no timeline" --scenario "$tmp/notimeline.yaml"
printf 'classes:\n  - {name: LS, priority: 10, slo_wait_s: soon}\n' >"$tmp/classes.yaml"
expect_error bad-classes "classes.yaml:2: field 'classes[0].slo_wait_s': expected a number, got 'soon'" --scenario peak-sale --classes "$tmp/classes.yaml"
expect_error unknown-policy "unknown replay policy 'fastest'" --scenario peak-sale --policy fastest
expect_error bad-sweep "--sweep-nodes: bad part 'x'" --scenario peak-sale --sweep-nodes 10,x
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,1,500\n' >"$tmp/notimes.csv"
expect_error no-times "no pod has usable times" --nodes "$tmp/nodes.csv" --pods "$tmp/notimes.csv"
expect_error nodes-alone "--nodes and --pods go together" --nodes "$tmp/nodes.csv"
expect_error model-malformed "--headroom-model: expected MODEL=GPUS (e.g. A10=4), got 'T4'" \
  --scenario peak-sale --headroom-model T4
expect_error model-negative "--headroom-model T4=-2: GPUS must be an integer 0..10000000, got '-2'" \
  --scenario peak-sale --headroom-model T4=-2
expect_error model-twice "--headroom-model: GPU model 'T4' given twice" \
  --scenario peak-sale --headroom-model T4=1 --headroom-model T4=2
expect_error model-mode-none "--headroom-model needs a headroom: --headroom-mode static, forecast or backlog" \
  --scenario peak-sale --headroom-mode none --headroom-model T4=1

set +e
"$TESSERA" replay -q --scenario peak-sale --time-scale 0 --out "$tmp/ts0" >/dev/null 2>"$tmp/ts0.err"
rc=$?
set -e
[ "$rc" -ne 0 ] && grep -q "time-scale" "$tmp/ts0.err" || fail "time-scale 0 accepted (exit $rc)"
echo "ok   time-scale 0 refused"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all ok"
