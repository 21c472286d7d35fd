#!/usr/bin/env bash
# `tessera record` as a process: bad flags exit 2; an unreachable API server exits 1 with a
# message naming it and writes nothing; against the test suite's fake API server
# (tessera_fake_apiserver) SIGTERM ends a run cleanly (exit 0, record.json "complete", the final
# lists written, the partial ones removed), and a second run resumes the journal.
set -uo pipefail
: "${TESSERA:?}"
tmp=$(mktemp -d)
fake_pid=""
cleanup() {
  [ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
ok() { echo "ok   $1"; }
fail() {
  echo "FAIL $1"
  fails=$((fails + 1))
}

kubeconfig() {  # server -> a kubeconfig file
  cat >"$tmp/kubeconfig" <<EOF
apiVersion: v1
kind: Config
current-context: t
contexts: [{name: t, context: {cluster: c, user: u}}]
clusters: [{name: c, cluster: {server: "$1"}}]
users: [{name: u, user: {token: x}}]
EOF
}

# Bad input: exit 2.
"$TESSERA" record --out "$tmp/r0" >/dev/null 2>"$tmp/err"
code=$?
if [ $code -eq 2 ] && grep -q "exactly one of --in-cluster or --kubeconfig" "$tmp/err"; then
  ok "no mode: exit 2"
else
  fail "no mode: exit $code: $(cat "$tmp/err")"
fi
kubeconfig "http://127.0.0.1:1"
"$TESSERA" record --kubeconfig "$tmp/kubeconfig" --out "$tmp/r0" --duration 5x >/dev/null 2>"$tmp/err"
code=$?
if [ $code -eq 2 ] && grep -q -- '--duration "5x"' "$tmp/err"; then
  ok "bad --duration: exit 2"
else
  fail "bad --duration: exit $code: $(cat "$tmp/err")"
fi
"$TESSERA" record --kubeconfig "$tmp/kubeconfig" --out "$tmp/r0" --until 2020-01-01T00:00:00Z >/dev/null 2>"$tmp/err"
code=$?
if [ $code -eq 2 ] && grep -q -- 'is not in the future' "$tmp/err" && [ ! -e "$tmp/r0" ]; then
  ok "--until in the past: exit 2, nothing written"
else
  fail "--until in the past: exit $code: $(cat "$tmp/err")"
fi

printf 'classes:\n  - {name: LS, priorty: 1000}\n' >"$tmp/bad.yaml"
"$TESSERA" record --kubeconfig "$tmp/kubeconfig" --out "$tmp/r0" --config "$tmp/bad.yaml" >/dev/null 2>"$tmp/err"
code=$?
if [ $code -eq 2 ] && grep -q -- "--config: $tmp/bad.yaml:2: classes\[0\].priorty: unknown key" "$tmp/err" &&
  [ ! -e "$tmp/r0" ]; then
  ok "bad --config: exit 2, the place named, nothing written"
else
  fail "bad --config: exit $code: $(cat "$tmp/err")"
fi

# Unreachable: exit 1, a message naming the server, nothing written.
"$TESSERA" record --kubeconfig "$tmp/kubeconfig" --out "$tmp/r1" --duration 5s >/dev/null 2>"$tmp/err"
code=$?
if [ $code -eq 1 ] && grep -q "cannot read nodes from the API server: GET http://127.0.0.1:1/api/v1/nodes" "$tmp/err" &&
  grep -q "nothing was recorded" "$tmp/err" && [ ! -e "$tmp/r1" ]; then
  ok "unreachable: exit 1, $(head -c 120 "$tmp/err")..."
else
  fail "unreachable: exit $code: $(cat "$tmp/err"); $(ls "$tmp/r1" 2>&1)"
fi

# Against the fake API server: SIGTERM ends cleanly; a second run resumes.
if [ -n "${TESSERA_FAKE_APISERVER:-}" ] && [ -x "$TESSERA_FAKE_APISERVER" ]; then
  mkfifo "$tmp/stdin"
  "$TESSERA_FAKE_APISERVER" <"$tmp/stdin" >"$tmp/url" &
  fake_pid=$!
  exec 3>"$tmp/stdin"
  for _ in $(seq 100); do [ -s "$tmp/url" ] && break; sleep 0.05; done
  url=$(head -1 "$tmp/url")
  kubeconfig "$url"
  curl -sf -X POST "$url/api/v1/nodes" -H 'Content-Type: application/json' -d \
    '{"metadata":{"name":"n1","labels":{"tessera.io/gpu-model":"A10"}},"status":{"allocatable":{"cpu":"32","memory":"128Gi","tessera.io/gpu":"4"}}}' >/dev/null
  curl -sf -X POST "$url/api/v1/namespaces/ml/pods" -H 'Content-Type: application/json' -d \
    '{"metadata":{"name":"p1"},"spec":{"nodeName":"n1","containers":[{"name":"m","resources":{"limits":{"cpu":"2","memory":"4Gi","tessera.io/gpu":"1","tessera.io/gpu-milli":"500"}}}]},"status":{"phase":"Running"}}' >/dev/null
  for run in 1 2; do
    "$TESSERA" record --kubeconfig "$tmp/kubeconfig" --out "$tmp/r2" --flush-seconds 0.2 2>"$tmp/err$run" &
    pid=$!
    for _ in $(seq 200); do grep -q "in sync" "$tmp/err$run" && break; sleep 0.05; done
    kill -TERM $pid
    wait $pid
    code=$?
    state=$(grep -o '"state": "[a-z]*"' "$tmp/r2/record.json" 2>/dev/null)
    rows=$(($(wc -l <"$tmp/r2/openb_pod_list.csv" 2>/dev/null || echo 0) - 1))
    if [ $code -eq 0 ] && [ "$state" = '"state": "complete"' ] && [ "$rows" -eq 1 ] &&
      grep -q '^ml/p1,2000,4096,1,500,' "$tmp/r2/openb_pod_list.csv" &&
      grep -q '^n1,32000,131072,4,A10$' "$tmp/r2/openb_node_list.csv" &&
      [ ! -e "$tmp/r2/openb_pod_list.partial.csv" ]; then
      ok "run $run: SIGTERM -> exit 0, complete, $rows pod row"
    else
      fail "run $run: exit $code, $state, $rows rows: $(cat "$tmp/err$run")"
    fi
  done
  if grep -q "resuming $tmp/r2/record.journal" "$tmp/err2"; then
    ok "run 2 resumed the journal"
  else
    fail "run 2 did not resume: $(cat "$tmp/err2")"
  fi
  exec 3>&-
else
  echo "SKIP: the fake API server part (TESSERA_FAKE_APISERVER not set)"
fi

[ $fails -eq 0 ] && echo "all passed" || echo "$fails failed"
[ $fails -eq 0 ]
