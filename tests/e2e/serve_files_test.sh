#!/usr/bin/env bash
# `tessera serve --nodes FILE [--pods FILE]` reads its files as `tessera analyze` does, each for
# what its flag promises: the combined List of `kubectl get nodes,pods,pdb -A -o json` given as
# --nodes is read whole (its bound pods occupy their GPUs), and a file of the wrong kind (a
# PodList as --nodes, a NodeList as --pods, an object of another kind) is an error naming the
# file, the item and what was expected (exit 2), not a cluster of zero-capacity "nodes".
set -euo pipefail
: "${TESSERA:?}"
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
require_tools curl
with_scratch

node='{"apiVersion": "v1", "kind": "Node",
  "metadata": {"name": "n1", "labels": {"nvidia.com/gpu.product": "NVIDIA-A10"}},
  "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "tessera.io/gpu": "2"}}}'
pod='{"apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "train-0", "namespace": "ml", "uid": "u-train-0",
               "annotations": {"tessera.io/gpu-indices": "1"}},
  "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "x",
           "resources": {"limits": {"cpu": "1", "memory": "1Gi", "tessera.io/gpu": "1"}}}]},
  "status": {"phase": "Running"}}'
pdb='{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
  "metadata": {"name": "train", "namespace": "ml"},
  "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "train"}}}}'
# As `kubectl get nodes,pods,pdb -A -o json` prints it: one List of every kind.
echo "{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [$node, $pod, $pdb]}" >"$tmp/all.json"
echo "{\"apiVersion\": \"v1\", \"kind\": \"PodList\", \"items\": [$pod]}" >"$tmp/podlist.json"
echo "{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [$pod]}" >"$tmp/pods.json"
echo "{\"apiVersion\": \"v1\", \"kind\": \"NodeList\", \"items\": [$node]}" >"$tmp/nodelist.json"
echo "{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [$node,
  {\"apiVersion\": \"v1\", \"kind\": \"Service\", \"metadata\": {\"name\": \"s\"}}]}" >"$tmp/svc.json"

expect podlist-as-nodes 2 "tessera serve: error: $tmp/podlist.json: a PodList, but --nodes expects nodes: a NodeList as \`kubectl get nodes -o json\` prints it" \
  serve --nodes "$tmp/podlist.json" --listen 127.0.0.1:0
expect pods-as-nodes 2 "$tmp/pods.json: no Node objects (1 Pod, 0 PodDisruptionBudget), but --nodes expects nodes" \
  serve --nodes "$tmp/pods.json" --listen 127.0.0.1:0
expect nodelist-as-pods 2 "$tmp/nodelist.json: a NodeList, but --pods expects pods" \
  serve --nodes "$tmp/nodelist.json" --pods "$tmp/nodelist.json" --listen 127.0.0.1:0
expect service 2 "$tmp/svc.json: items[1].kind: unknown kind \"Service\"" \
  serve --nodes "$tmp/svc.json" --listen 127.0.0.1:0

# The combined List as --nodes: one node, the bound pod on its GPU 1, the model by its engine
# name.
"$TESSERA" serve --nodes "$tmp/all.json" --listen 127.0.0.1:0 >"$tmp/out" 2>"$tmp/err" &
pid=$!
port=$(listening_port "$pid" "$tmp/out" "$tmp/err") || exit 1
curl -sS -m 5 "http://127.0.0.1:$port/state" >"$tmp/state"
check state-allocated "$tmp/state" '"gpu_allocated_milli":1000'
check state-assignment "$tmp/state" '"pod":"ml/train-0","node":"n1","gpus":[1]'
check state-model "$tmp/state" '"gpu_model":"A10"'
if grep -qF '"name":"train-0"' "$tmp/state"; then fail "the pod was read as a node"; cat "$tmp/state"; fi
kill -TERM "$pid"
wait "$pid" || fail "serve: exit $? after SIGTERM"
pid=""

if [ "$fails" -ne 0 ]; then echo "$fails failure(s)"; exit 1; fi
echo "all ok"
