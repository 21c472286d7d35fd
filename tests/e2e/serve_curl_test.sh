#!/usr/bin/env bash
# `tessera serve` end to end with the real curl: start on port 0, read the port from the first
# stdout line, drive filter/prioritize/bind with a pod that kubectl printed, check the answers,
# then SIGTERM and expect a clean exit 0.
set -euo pipefail
: "${TESSERA:?}"
: "${TESSERA_SOURCE_DIR:?}"
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
require_tools curl kubectl
with_scratch

# Nodes as `kubectl get nodes -o json` prints them: n1 fits, n2 lacks CPU.
cat >"$tmp/nodes.json" <<'JSON'
{"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": [
 {"apiVersion": "v1", "kind": "Node",
  "metadata": {"name": "n1", "labels": {"tessera.io/gpu-model": "A10", "tessera.io/gpu-memory": "24576"}},
  "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "tessera.io/gpu": "2"}}},
 {"apiVersion": "v1", "kind": "Node",
  "metadata": {"name": "n2", "labels": {"tessera.io/gpu-model": "A10", "tessera.io/gpu-memory": "24576"}},
  "status": {"allocatable": {"cpu": "1", "memory": "128Gi", "tessera.io/gpu": "2"}}}]}
JSON
# A real API object from kubectl (offline): 1 GPU at 500 milli, 2 CPUs (init container).
kubectl annotate --local -f "$TESSERA_SOURCE_DIR/tests/k8s/testdata/pod_tessera.yaml" \
  e2e=yes -o json >"$tmp/pod.json"
uid=5f1c2b9e-0d7a-4b8e-9a51-3c2e7f0a1b11
{ printf '{"Pod":'; cat "$tmp/pod.json"; printf ',"Nodes":null,"NodeNames":["n1","n2","ghost"]}'; } \
  >"$tmp/filter.json"

"$TESSERA" serve --nodes "$tmp/nodes.json" --listen 127.0.0.1:0 >"$tmp/out" 2>"$tmp/err" &
pid=$!
port=$(listening_port "$pid" "$tmp/out" "$tmp/err") || exit 1
echo "ok   listening on port $port"
url="http://127.0.0.1:$port"
post() {  # post PATH BODY-FILE OUT-FILE; prints the HTTP status
  curl -sS -m 5 -o "$3" -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary @"$2" "$url$1"
}

curl -sS -m 5 "$url/healthz" >"$tmp/healthz"
check healthz "$tmp/healthz" "ok"
[ "$(post /filter "$tmp/filter.json" "$tmp/filter.out")" = 200 ] || { echo "FAIL filter status"; fails=$((fails + 1)); }
check filter-fits "$tmp/filter.out" '"NodeNames":["n1"]'
check filter-cpu "$tmp/filter.out" '"FailedNodes":{"n2":"cpu: not enough CPU left"}'
check filter-unknown "$tmp/filter.out" '"FailedAndUnresolvableNodes":{"ghost":"unknown node"}'
check filter-error "$tmp/filter.out" '"Error":""'
[ "$(post /prioritize "$tmp/filter.json" "$tmp/prio.out")" = 200 ] || { echo "FAIL prioritize status"; fails=$((fails + 1)); }
check prioritize "$tmp/prio.out" '{"Host":"n1","Score":10}'
printf '{"PodName":"infer-0","PodNamespace":"ml","PodUID":"%s","Node":"n1"}' "$uid" >"$tmp/bind.json"
for attempt in 1 2; do
  [ "$(post /bind "$tmp/bind.json" "$tmp/bind.out")" = 200 ] || { echo "FAIL bind status"; fails=$((fails + 1)); }
  check "bind-$attempt" "$tmp/bind.out" '{"Error":""}'
done
printf '{"Pod": {"metadata": ' >"$tmp/bad.json"
[ "$(post /filter "$tmp/bad.json" "$tmp/bad.out")" = 400 ] || { echo "FAIL malformed: want 400"; fails=$((fails + 1)); }
check malformed "$tmp/bad.out" '{"Error":"ExtenderArgs: malformed JSON'
curl -sS -m 5 "$url/metrics" >"$tmp/metrics"
check metrics-bound "$tmp/metrics" 'tessera_pods_bound_total 1'
check metrics-filter "$tmp/metrics" 'tessera_requests_total{verb="filter"} 2'
curl -sS -m 5 "$url/state" >"$tmp/state"
check state "$tmp/state" '"gpu_allocated_milli":500'

kill -TERM "$pid"
rc=""
for _ in $(seq 1 100); do  # up to 10 s
  if ! kill -0 "$pid" 2>/dev/null; then break; fi
  sleep 0.1
done
set +e
wait "$pid"
rc=$?
set -e
pid=""
if [ "$rc" -eq 0 ]; then echo "ok   SIGTERM: exit 0"; else echo "FAIL SIGTERM: exit $rc"; cat "$tmp/err"; fails=$((fails + 1)); fi
check log-stopped "$tmp/err" '"msg":"stopped"'

if [ "$fails" -ne 0 ]; then echo "$fails failure(s)"; exit 1; fi
echo "all ok"
