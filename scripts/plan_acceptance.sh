#!/usr/bin/env bash
# tessera plan on the default trace and on peak-sale, checked: the chosen plan meets every SLO
# on the held-out seeds; it costs no more than each baseline that meets the SLOs, and every
# baseline that costs less misses them; on peak-sale tessera needs no more GPUs than
# k8s-default and fgd (on the trace the GPUs per policy are printed, not checked: tessera's
# cheaper mixes there serve BE less than the served floor, docs/PLAN.md "Results").
# Prints each plan's table and the GPUs per policy. Usage: scripts/plan_acceptance.sh
# [BUILD_DIR] [OUT_DIR]; PLAN_CASES="peak-sale" (or "trace") runs one of the two. The trace part
# is skipped without ../shared/data.
set -euo pipefail
build=${1:-build}
out=${2:-results/plan-acceptance}
src=$(cd "$(dirname "$0")/.." && pwd)
data=${TESSERA_DATA_DIR:-$src/../shared/data/alibaba-gpu-v2023/csv}
cases=()
for c in ${PLAN_CASES:-peak-sale trace}; do
  if [ "$c" = trace ] && [ ! -f "$data/openb_pod_list_default.csv" ]; then
    echo "SKIP trace: no $data/openb_pod_list_default.csv"
    continue
  fi
  cases+=("$c")
done
fails=0
for c in "${cases[@]}"; do
  if [ "$c" = trace ]; then
    args=(--catalog "$src/tests/plan/testdata/trace-catalog.yaml" --pods "$data/openb_pod_list_default.csv"
      --nodes "$data/openb_node_list_gpu_node.csv" --time-scale 50 --seeds 1-10 --check-seeds 11-13)
  else
    args=(--catalog "$src/tests/plan/testdata/peak-sale-catalog.yaml" --scenario peak-sale --seeds 1-3
      --check-seeds 11-13)
  fi
  mkdir -p "$out"
  "$build/tessera" plan "${args[@]}" --policy tessera,fgd,k8s-default --quota 256 -q \
    --out "$out/$c" | tee "$out-$c.txt"
  python3 - "$out/$c/plan.json" "$c" <<'PY' || fails=$((fails + 1))
import json, sys
j = json.load(open(sys.argv[1]))
name = sys.argv[2]
rows = j["rows"]
chosen = next(r for r in rows if r["chosen"])
policy = chosen["policy"]
cost = chosen["result"]["cost_per_hour"]
held = [r for r in rows if r["kind"] == "held-out" and r["policy"] == policy]
ok = True
def check(cond, what):
    global ok
    print(("ok   " if cond else "FAIL ") + f"{name}: {what}")
    ok = ok and cond
check(chosen["result"]["meets"], f"chosen {chosen['result']['mix']} ({policy}, {cost:.2f}/h) meets on seeds {j['inputs']['seeds']}")
check(held and held[0]["result"]["meets"], f"chosen plan meets on held-out seeds {j['inputs']['check_seeds']}")
for r in rows:
    if r["kind"] != "baseline":
        continue
    b = r["result"]
    if b["meets"]:
        check(b["cost_per_hour"] >= cost, f"baseline '{r['label']}' meets at {b['cost_per_hour']:.2f}/h >= {cost:.2f}/h")
    else:
        print(f"note {name}: baseline '{r['label']}' misses ({b['missed']}) at {b['cost_per_hour']:.2f}/h")
    if b["cost_per_hour"] < cost:
        check(not b["meets"], f"baseline '{r['label']}' is cheaper and misses")
g = j["gpus_needed_by_policy"]
for other in ("k8s-default", "fgd"):
    if g.get("tessera") is not None and g.get(other) is not None:
        what = f"tessera needs {g['tessera']} GPUs, {other} {g[other]} ({g[other] - g['tessera']} more)"
        if name == "peak-sale":
            check(g["tessera"] <= g[other], what)
        else:
            print(f"note {name}: {what}")
    else:
        check(g.get("tessera") is not None, f"tessera has a plan; {other}: {g.get(other)}")
sys.exit(0 if ok else 1)
PY
done
if [ "$fails" -ne 0 ]; then echo "$fails case(s) failed"; exit 1; fi
echo "plan acceptance: all checks passed"
