#!/usr/bin/env bash
# `tessera serve` reading GPU topology from node annotations, end to end with curl: a node with
# HAMi's hami.io/node-nvidia-score (the kubectl-printed fixture), a twin with Tessera's own
# tessera.io/gpu-topology, and one whose annotation is malformed; a config file with a kubelet
# policy per node pool. The server starts and answers; /state shows each node's topology (none
# for the malformed one), /metrics counts the error once, stderr logs it naming the node and the
# field; a pod with a bad tessera.io/topology gets filter's Error. Then SIGTERM, exit 0.
set -euo pipefail
: "${TESSERA:?}"
: "${TESSERA_SOURCE_DIR:?}"
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
require_tools curl python3
with_scratch

python3 - "$TESSERA_SOURCE_DIR/tests/k8s/testdata/node_hami_score.json" >"$tmp/nodes.json" <<'PY'
import copy, json, sys
hami = json.load(open(sys.argv[1]))
hami["metadata"]["labels"] = {"gpu-pool": "train"}
ours = copy.deepcopy(hami)
ours["metadata"]["name"] = "ours-8"
ours["metadata"]["labels"] = {"gpu-pool": "serve"}
ours["metadata"]["annotations"]["tessera.io/gpu-topology"] = json.dumps(
    {"nvlink": [[0, 1], [2, 3], [4, 5], [6, 7]], "numa": [[0, 1, 2, 3], [4, 5, 6, 7]]})
bad = copy.deepcopy(hami)
bad["metadata"]["name"] = "bad-8"
bad["metadata"]["annotations"]["hami.io/node-nvidia-score"] = "[{\"uuid\": \"GPU-nobody\"}]"
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": [hami, ours, bad]}))
PY
printf 'topology:\n  pools:\n    - selector: {matchLabels: {gpu-pool: train}}\n      kubeletPolicy: single-numa-node\n' >"$tmp/tessera.yaml"

"$TESSERA" serve --config "$tmp/tessera.yaml" --nodes "$tmp/nodes.json" --listen 127.0.0.1:0 \
  >"$tmp/out" 2>"$tmp/err" &
pid=$!
port=$(listening_port "$pid" "$tmp/out" "$tmp/err") || exit 1
echo "ok   listening on port $port"
url="http://127.0.0.1:$port"

curl -sS -m 5 "$url/state" >"$tmp/state"
python3 - "$tmp/state" >"$tmp/topologies" <<'PY'
import json, sys
for n in json.load(open(sys.argv[1]))["nodes"]:
    print(n["name"], n["topology"])
PY
check hami-score "$tmp/topologies" "a100-hami-8 nvlink=0-3/4-7;numa=0-3/4-7;kubelet=single-numa-node"
check ours-wins "$tmp/topologies" "ours-8 nvlink=0-1/2-3/4-5/6-7;numa=0-3/4-7;kubelet=none"
check malformed-none "$tmp/topologies" "bad-8 None"
curl -sS -m 5 "$url/metrics" >"$tmp/metrics"
check metrics-help "$tmp/metrics" "# HELP tessera_topology_annotation_errors_total"
check metrics-count "$tmp/metrics" "tessera_topology_annotation_errors_total 1"
check metrics-capacity "$tmp/metrics" "tessera_gpu_capacity_milli 24000"
check log "$tmp/err" 'node \"bad-8\": topology annotation ignored, the node has no topology: metadata.annotations[\"hami.io/node-nvidia-score\"][0].uuid: GPU \"GPU-nobody\" is not in'

cat >"$tmp/filter.json" <<'JSON'
{"Pod": {"apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "train", "namespace": "ml", "uid": "u-train",
               "annotations": {"tessera.io/topology": "required:rack"}},
  "spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "4"}}}]}},
 "Nodes": null, "NodeNames": ["a100-hami-8"]}
JSON
code=$(curl -sS -m 5 -o "$tmp/filter.out" -w '%{http_code}' -H 'Content-Type: application/json' \
  --data-binary @"$tmp/filter.json" "$url/filter")
[ "$code" = 200 ] || { echo "FAIL filter: HTTP $code"; fails=$((fails + 1)); }
check bad-pod-intent "$tmp/filter.out" 'annotations[\"tessera.io/topology\"]: \"required:rack\": unknown scope'

kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
pid=""
[ "$rc" = 0 ] || { echo "FAIL: exit $rc after SIGTERM"; cat "$tmp/err"; fails=$((fails + 1)); }
[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "ok   exit 0 after SIGTERM"
