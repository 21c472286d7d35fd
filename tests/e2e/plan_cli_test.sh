#!/usr/bin/env bash
# tessera plan end to end: bad input (an unknown GPU model, a negative count, a malformed SLO,
# an SLO no mix up to the catalog's maximum meets, a history with no usable times, an SLO on a
# class the demand has no pods of or none a node type can host) is a precise error with exit
# 2; a plan writes plan.json, plan.csv, headroom.yaml (accepted by tessera serve's config
# reader), skipped.csv and report.html; a policy without a plan is said so in each output;
# pods without usable times are left out with replay's warning; `tessera plan` alone runs the
# embedded example; shards 1/4..4/4 merged give a plan.json byte-identical to the single run's.
set -euo pipefail
: "${TESSERA:?}"
src=${TESSERA_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
data=$src/tests/plan/testdata
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

small=(--scenario "$data/small.yaml" --threads 2 -q)

# Bad input.
sed 's/model: A100, gpus: 2/model: A1OO, gpus: 2/' "$data/small-catalog.yaml" >"$tmp/model.yaml"
expect unknown-model 2 "$tmp/model.yaml:5: node_types[1].model: unknown GPU model 'A1OO' (known: A10, A100, P100" \
  plan --catalog "$tmp/model.yaml" "${small[@]}"
sed 's/max_count: 12/max_count: -3/' "$data/small-catalog.yaml" >"$tmp/negative.yaml"
expect negative-count 2 "$tmp/negative.yaml:6: node_types[1].max_count: must not be negative, got -3" \
  plan --catalog "$tmp/negative.yaml" "${small[@]}"
printf 'node_types:\n  - {name: a, model: A100, gpus: 8, cpu_milli: 1, memory_mib: 1, max_count: 1}\n' >"$tmp/nocost.yaml"
expect missing-cost 2 "$tmp/nocost.yaml:2: node_types[0].cost_per_hour: missing (required)" \
  plan --catalog "$tmp/nocost.yaml" "${small[@]}"
printf 'node_types:\n  - {name: a\n' >"$tmp/syntax.yaml"
expect yaml-syntax 2 "$tmp/syntax.yaml:3: yaml syntax error" plan --catalog "$tmp/syntax.yaml" "${small[@]}"
expect malformed-slo 2 "--slo 'LS p99 <= 1s': expected 'CLASS: pNN wait <= TIME'" \
  plan --catalog "$data/small-catalog.yaml" --slo 'LS p99 <= 1s' "${small[@]}"
expect slo-quantile 2 "--slo 'LS: p90 wait <= 1s': the quantile must be p50, p95 or p99, got 'p90'" \
  plan --catalog "$data/small-catalog.yaml" --slo 'LS: p90 wait <= 1s' "${small[@]}"
expect slo-unit 2 "--slo 'LS: p99 wait <= 1': expected a time with a unit (ms, s, m or h)" \
  plan --catalog "$data/small-catalog.yaml" --slo 'LS: p99 wait <= 1' "${small[@]}"
expect slo-class 2 "--slo 'XL: p99 wait <= 1s': unknown class 'XL' (classes: LS, Guaranteed, Burstable, BE)" \
  plan --catalog "$data/small-catalog.yaml" --slo 'XL: p99 wait <= 1s' "${small[@]}"
printf 'node_types:\n  - {name: big, model: A100, gpus: 8, cpu_milli: 96000, memory_mib: 786432, cost_per_hour: 24, min_count: 1, max_count: 2}\n' >"$tmp/tiny.yaml"
expect unmet-slo 2 "class LS: no mix up to the catalog's maximum meets 'LS: p99 wait <= 1s': the best p99 wait reached is" \
  plan --catalog "$tmp/tiny.yaml" --policy k8s-default "${small[@]}" --out "$tmp/unmet"
grep -qF "by k8s-default on 2*big (16 GPUs)" "$tmp/unmet-slo.err" || fail "unmet-slo: where is not named: $(cat "$tmp/unmet-slo.err")"
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\np0,1000,1024,1,1000,,LS,Pending,5,,\np1,1000,1024,1,1000,,LS,Pending,,,\n' >"$tmp/notimes.csv"
expect no-times 2 "$tmp/notimes.csv: no pod has usable times" \
  plan --catalog "$data/small-catalog.yaml" --pods "$tmp/notimes.csv" -q
grep -qF "$tmp/notimes.csv:2:" "$tmp/no-times.err" || fail "no-times: no file:line: $(cat "$tmp/no-times.err")"
expect no-timeline 2 "openb-like': the scenario has no timeline" \
  plan --catalog "$data/small-catalog.yaml" --scenario openb-like -q
expect bad-shard 2 "--shard '5/4': K must be 1..N" plan --catalog "$data/small-catalog.yaml" --shard 5/4 "${small[@]}"
expect bad-seeds 2 "--seeds: bad part 'x'" plan --catalog "$data/small-catalog.yaml" --seeds 1,x "${small[@]}"
expect seeds-overlap 2 "--check-seeds: seed 2 is also in --seeds" plan --catalog "$data/small-catalog.yaml" --seeds 1,2 --check-seeds 2 "${small[@]}"
expect no-catalog 2 "--catalog FILE is required" plan "${small[@]}"
expect nan-time-scale 2 "--time-scale must be a finite number" plan --catalog "$data/small-catalog.yaml" --time-scale nan "${small[@]}"
expect nan-growth 2 "--growth must be a finite number" plan --catalog "$data/small-catalog.yaml" --growth nan "${small[@]}"

# Issue 40: one policy meets the SLO and the other with no mix of the catalog (two classes at
# equal load on one-GPU nodes): a plan (it crashed with exit 139), and every output says which
# policy has no plan and why.
"$TESSERA" plan --catalog "$data/one-gpu-catalog.yaml" --scenario "$data/two-classes.yaml" \
  --policy tessera,k8s-default --threads 2 -q --out "$tmp/noplan" >"$tmp/noplan.txt" ||
  fail "no-plan: exit $? (a policy without a plan)"
grep -qE '^ +plan +tessera( +-)+ +no plan$' "$tmp/noplan.txt" ||
  fail "no-plan: the table has no 'no plan' row for tessera: $(cat "$tmp/noplan.txt")"
grep -qF "warning: tessera: no plan: no mix up to the catalog's maximum meets every SLO: at 4*g1 (4 GPUs) LS p99 wait" "$tmp/noplan.txt" ||
  fail "no-plan: the table does not say why"
grep -qF "plan,tessera,tessera,0,,,,0,0,,,,,,,,,,,no plan: no mix up to the catalog's maximum" "$tmp/noplan/plan.csv" ||
  fail "no-plan: plan.csv has no line for tessera: $(cat "$tmp/noplan/plan.csv")"
python3 - "$tmp/noplan/plan.json" <<'PY' || fail "no-plan: plan.json"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["chosen"]["policy"] == "k8s-default", j["chosen"]
row = next(r for r in j["rows"] if r["kind"] == "plan" and r["policy"] == "tessera")
assert row["result"] is None and row["no_plan"].startswith("no mix up to the catalog's maximum"), row
assert j["gpus_needed_by_policy"]["tessera"] is None, j["gpus_needed_by_policy"]
assert j["warnings"] == ["tessera: no plan: " + row["no_plan"]], j["warnings"]
PY
grep -qF '<td class="verdict none" title="no mix up to the catalog&#39;s maximum meets every SLO: at 4*g1' "$tmp/noplan/report.html" ||
  fail "no-plan: report.html does not say it"
echo "ok   a policy without a plan: every output says so"

# A recorded history without LS pods (no label or priority says LS) and a pod without usable
# times. With an SLO on Guaranteed it plans; the pod is left out with the warning replay prints
# for it, listed in skipped.csv, and counted in every output.
{
  echo name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
  for i in $(seq 0 39); do
    q=Guaranteed; [ $((i % 4)) -eq 3 ] && q=BE
    echo "p$i,4000,16384,1,1000,,$q,Running,$((i * 90)),$((i * 90 + 1200)),$((i * 90))"
  done
  echo "p40,4000,16384,1,1000,,Guaranteed,Pending,3700,,"  # no usable times: skipped
} >"$tmp/recorded.csv"
printf 'sn,cpu_milli,memory_mib,gpu,model\nn0,96000,786432,8,A100\n' >"$tmp/recorded-nodes.csv"
recorded=(--pods "$tmp/recorded.csv" --nodes "$tmp/recorded-nodes.csv")  # A100: a known model
"$TESSERA" replay -q --nodes "$tmp/recorded-nodes.csv" --pods "$tmp/recorded.csv" --out "$tmp/recorded" \
  >/dev/null 2>"$tmp/replay-skip.err" || fail "replay of recorded.csv: exit $?"
"$TESSERA" plan --catalog "$data/small-catalog.yaml" "${recorded[@]}" --policy k8s-default \
  --slo 'Guaranteed: p99 wait <= 10s' --seeds 1 --check-seeds 2 --threads 2 -q --out "$tmp/recorded" \
  >"$tmp/recorded.txt" 2>"$tmp/plan-skip.err" || fail "plan of the recorded history: exit $?"
replay_warning=$(sed -n 's/^tessera replay: \(warning: 1 pod(s) skipped.*\)/\1/p' "$tmp/replay-skip.err")
plan_warning=$(sed -n 's/^tessera plan: \(warning: 1 pod(s) skipped.*\)/\1/p' "$tmp/plan-skip.err")
if [ -n "$plan_warning" ] && [ "$plan_warning" = "$replay_warning" ]; then
  echo "ok   skipped pods: plan warns as replay does: $plan_warning"
else
  fail "skipped pods: plan warns '$plan_warning', replay '$replay_warning'"
fi
grep -qF "p40,$tmp/recorded.csv:42," "$tmp/recorded/skipped.csv" ||
  fail "skipped.csv does not list p40 with file:line: $(cat "$tmp/recorded/skipped.csv")"
grep -qF "40 pods (1 skipped for missing or inconsistent times, listed in skipped.csv)" "$tmp/recorded.txt" ||
  fail "the table does not count the skipped pod: $(head -1 "$tmp/recorded.txt")"
python3 - "$tmp/recorded/plan.json" <<'PY' || fail "recorded plan.json: wrong skipped_pods or warnings"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["inputs"]["pods"] == 40 and j["inputs"]["skipped_pods"] == 1, j["inputs"]
assert any("1 pod(s) skipped" in w and w.endswith("in skipped.csv") for w in j["warnings"]), j["warnings"]
assert j["chosen"]["gpus"] > 0, j["chosen"]
PY
grep -qF "1 skipped (missing or inconsistent times; skipped.csv)" "$tmp/recorded/report.html" ||
  fail "report.html does not count the skipped pod"

# The same history with the default SLO, on LS, which any cluster would meet (issue 40: the plan
# said "meets" with a cluster a quarter of the demand): an error naming the classes it has and
# an SLO on one of them (the one that planned above).
expect empty-class 2 "--slo 'LS: p99 wait <= 1s' (the default SLO): $tmp/recorded.csv has no pods of class LS, so any cluster would meet it. Its pods by class: Guaranteed 30, BE 10" \
  plan --catalog "$data/small-catalog.yaml" "${recorded[@]}" -q --out "$tmp/empty"
grep -qF "Put the SLO on a class it has, e.g. --slo 'Guaranteed: p99 wait <= 10s'" "$tmp/empty-class.err" ||
  fail "empty-class: no SLO suggested: $(cat "$tmp/empty-class.err")"
[ ! -e "$tmp/empty/plan.json" ] || fail "empty-class: a plan was written"
expect empty-class-scenario 2 "--slo 'Burstable: p99 wait <= 1m': embedded scenario" \
  plan --catalog "$data/small-catalog.yaml" --scenario peak-sale --slo 'Burstable: p99 wait <= 1m' -q --out "$tmp/empty2"
printf 'node_types:\n  - {name: t, model: T4, gpus: 2, cpu_milli: 32000, memory_mib: 131072, cost_per_hour: 2, max_count: 4}\n' >"$tmp/t4.yaml"
sed 's/,1000,,Guaranteed,/,1000,A100,Guaranteed,/' "$tmp/recorded.csv" >"$tmp/a100.csv"
expect unhostable-class 2 "--slo 'Guaranteed: p99 wait <= 10s': none of the 30 pods of class Guaranteed fits a node of any type of $tmp/t4.yaml" \
  plan --catalog "$tmp/t4.yaml" --pods "$tmp/a100.csv" --slo 'Guaranteed: p99 wait <= 10s' -q --out "$tmp/unhostable"

# `tessera plan` alone: the embedded example (as frag and replay run an embedded scenario),
# said on stderr; --help shows it and a catalog.
mkdir -p "$tmp/example"
if (cd "$tmp/example" && "$TESSERA" plan >stdout.txt 2>stderr.txt); then
  check "no arguments: the embedded example, said on stderr" "$tmp/example/stderr.txt" \
    "tessera plan: no --catalog given: running the embedded example, scenario 'peak-sale' on the embedded catalog 'peak-sale'"
  check "no arguments: a plan of a100x8 nodes" "$tmp/example/stdout.txt" "*a100x8"
  [ -s "$tmp/example/results/plan/report.html" ] || fail "no arguments: no results/plan/report.html"
else
  fail "tessera plan with no arguments: exit $?: $(tail -3 "$tmp/example/stderr.txt")"
fi
"$TESSERA" plan --help >"$tmp/help.txt"
check "--help: the example" "$tmp/help.txt" "tessera plan                          # the embedded example"
check "--help: a catalog" "$tmp/help.txt" "node_types:"
check "--help: SLOs on recorded classes" "$tmp/help.txt" "--slo 'Guaranteed: p99 wait <= 10s'"

# A plan, and its outputs.
plan=(plan --catalog "$data/small-catalog.yaml" --policy tessera,k8s-default --seeds 1,2 --check-seeds 3 --quota 24 "${small[@]}")
"$TESSERA" "${plan[@]}" --out "$tmp/single" >"$tmp/single.txt"
for f in plan.json plan.csv headroom.yaml report.html skipped.csv; do
  [ -s "$tmp/single/$f" ] || fail "plan: $f missing or empty"
done
grep -q '^\*  *plan ' "$tmp/single.txt" || fail "plan: no chosen row marked: $(cat "$tmp/single.txt")"
for row in "on held-out seeds" "+10 % demand" "+25 % demand" "today" "quota 24 GPUs" "utilization" "cluster-autoscaler FFD"; do
  grep -qF -- "$row" "$tmp/single.txt" || fail "plan: the table has no row '$row'"
done
grep -q '^headroom:' "$tmp/single/headroom.yaml" || fail "headroom.yaml has no headroom: key"
python3 - "$tmp/single/plan.json" <<'PY' || fail "plan.json: wrong shape"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["format"] == "tessera-plan/1"
f = j["forecast"]
assert set(f) == {"history", "forecast", "backtest"}, f.keys()
assert [c["class"] for c in f["forecast"]["classes"]] == ["LS", "Guaranteed", "Burstable", "BE"], f
assert any(c["gpus"]["p95"] > 0 for c in f["forecast"]["classes"]), f["forecast"]
assert 0 <= f["backtest"]["exceeded_pct"] <= 100, f["backtest"]
util = [r for r in j["rows"] if r["kind"] == "baseline" and "forecast p95" in r["label"]]
assert len(util) == 1, [r["label"] for r in j["rows"]]
c = j["chosen"]
assert c["gpus"] > 0 and c["cost_per_hour"] > 0, c
plans = [r for r in j["rows"] if r["kind"] == "plan" and r["chosen"]]
assert len(plans) == 1 and plans[0]["result"]["meets"], plans
assert set(j["gpus_needed_by_policy"]) == {"tessera", "k8s-default"}
assert all(u["evaluated"] for u in j["search"])
PY
grep -q 'data-policy="tessera"' "$tmp/single/report.html" || fail "report.html: no tessera line"

# Three SLOs of one class count its load once: the same plan as the loosest alone.
one=$("$TESSERA" plan --catalog "$data/small-catalog.yaml" --policy k8s-default --slo 'LS: p50 wait <= 1h' "${small[@]}" --out "$tmp/slo1" | grep '^\*  *plan')
three=$("$TESSERA" plan --catalog "$data/small-catalog.yaml" --policy k8s-default --slo 'LS: p50 wait <= 1h' --slo 'LS: p95 wait <= 1h' --slo 'LS: p99 wait <= 1h' "${small[@]}" --out "$tmp/slo3" | grep '^\*  *plan')
[ "$(echo "$one" | awk '{print $4, $5, $6}')" = "$(echo "$three" | awk '{print $4, $5, $6}')" ] || fail "three SLOs of one class: '$three', one: '$one'"

# Growth, a peak window and a GPU-hours SLO reach the plan.
"$TESSERA" plan --catalog "$data/small-catalog.yaml" --policy tessera --seeds 1 --check-seeds 2 \
  --growth 1.5 --peak-window 2 --slo 'LS: p95 wait <= 500ms' --slo 'BE: gpu-hours >= 3' \
  "${small[@]}" --out "$tmp/grown" >"$tmp/grown.txt"
python3 - "$tmp/grown/plan.json" "$tmp/single/plan.json" <<'PY' || fail "growth/window/gpu-hours: wrong plan.json"
import json, sys
g, base = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert g["inputs"]["growth"] == 1.5 and g["inputs"]["peak_window_h"] == 2, g["inputs"]
assert g["inputs"]["slos"] == ["LS: p95 wait <= 500ms", "BE: gpu-hours >= 3"], g["inputs"]["slos"]
be = next(c for c in g["rows"][0]["result"]["classes"] if c["name"] == "BE")
assert be["gpu_hours"] >= 3, be
# Two of the four hours at 1.5 times the rate: fewer pods than the whole run.
assert g["inputs"]["pods"] < base["inputs"]["pods"], (g["inputs"]["pods"], base["inputs"]["pods"])
PY

# Shards 1/4..4/4, merged: the same plan.json, byte for byte.
for k in 1 2 3 4; do "$TESSERA" "${plan[@]}" --shard "$k/4" --out "$tmp/shards"; done
ls "$tmp/shards"/shard-*-of-4.json >/dev/null || fail "no shard files"
"$TESSERA" plan merge -q "$tmp"/shards/shard-*-of-4.json --out "$tmp/merged" >"$tmp/merged.txt"
if cmp -s "$tmp/single/plan.json" "$tmp/merged/plan.json"; then
  echo "ok   shards 1/4..4/4 merged: plan.json byte-identical ($(wc -c <"$tmp/single/plan.json") bytes)"
else
  fail "merged plan.json differs from the single run's"; diff "$tmp/single/plan.json" "$tmp/merged/plan.json" | head -20
fi
cmp -s "$tmp/single/plan.csv" "$tmp/merged/plan.csv" || fail "merged plan.csv differs"
expect merge-missing 2 "shard 4 of 4 missing" plan merge -q "$tmp"/shards/shard-{1,2,3}-of-4.json --out "$tmp/m2"
expect merge-twice 2 "shard 1 given twice" plan merge -q "$tmp"/shards/shard-1-of-4.json "$tmp"/shards/shard-1-of-4.json --out "$tmp/m3"
# One thread gives the same plan as two.
"$TESSERA" "${plan[@]}" --threads 1 --out "$tmp/one" >/dev/null
cmp -s "$tmp/single/plan.json" "$tmp/one/plan.json" || fail "--threads 1 and 2 give different plans"

if [ "$fails" -ne 0 ]; then echo "$fails failure(s)"; exit 1; fi
echo "all plan CLI checks passed"
