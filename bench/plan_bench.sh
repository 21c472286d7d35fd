#!/usr/bin/env bash
# The speed of `tessera plan` on the default trace: 3 node types x 11 sizes each
# (tests/plan/testdata/trace-catalog.yaml), 10 seeds, 3 policies (tessera, fgd, k8s-default),
# two threads. Prints the wall and CPU seconds (GNU time) and how many replays the search ran
# (plan.json). Usage: bench/plan_bench.sh [BUILD_DIR] [OUT_DIR]. Needs ../shared/data.
set -euo pipefail
build=${1:-build}
out=${2:-/tmp/tessera-plan-bench}
src=$(cd "$(dirname "$0")/.." && pwd)
data=${TESSERA_DATA_DIR:-$src/../shared/data/alibaba-gpu-v2023/csv}
if [ ! -f "$data/openb_pod_list_default.csv" ]; then echo "SKIP: no trace in $data"; exit 0; fi
/usr/bin/time -f "wall %e s, user %U s, sys %S s, max RSS %M KiB" \
  "$build/tessera" plan --catalog "$src/tests/plan/testdata/trace-catalog.yaml" \
  --pods "$data/openb_pod_list_default.csv" --nodes "$data/openb_node_list_gpu_node.csv" \
  --time-scale 50 --policy tessera,fgd,k8s-default --seeds 1-10 --check-seeds 11-12 \
  --threads 2 -q --out "$out" >"$out.txt"
python3 - "$out/plan.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
units = j["search"]
evals = sum(len(u["evaluated"]) for u in units)
replays = sum(e["seeds_run"] for u in units for e in u["evaluated"])
rows = sum(r["result"]["seeds_run"] for r in j["rows"] if r["kind"] != "plan")
print(f"{len(units)} search units, {evals} mixes replayed, {replays} search replays, "
      f"{rows} replays of checks and baselines; GPUs needed: {j['gpus_needed_by_policy']}")
PY
