#!/usr/bin/env bash
# tessera analyze from the command line: a small snapshot (three 8-GPU nodes at 7/6/7 GPUs used
# and a pending 4-GPU pod) gives the table, analyze.json and report.html with a plan that places
# the pod; bad input (malformed or truncated JSON, unknown kinds, objects missing fields) exits 2
# naming the file and JSON path and writes nothing; an API server that cannot be reached exits 4,
# one that answers 403 exits 3.
set -euo pipefail
: "${TESSERA:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

node() {  # node NAME
  printf '{"kind":"Node","metadata":{"name":"%s","labels":{"tessera.io/gpu-model":"V100M32"}},' "$1"
  printf '"status":{"allocatable":{"cpu":"96","memory":"384Gi","tessera.io/gpu":"8"}}}'
}
pod() {  # pod NAME NODE GPU OWNER_KIND [GPUS]
  local owner=""
  if [ -n "$4" ]; then
    owner=",\"ownerReferences\":[{\"kind\":\"$4\",\"name\":\"${1%-*}\",\"controller\":true}]"
  fi
  local gpus=${5:-1} node_field="" ann="{}" phase=Pending
  if [ -n "$2" ]; then
    node_field="\"nodeName\":\"$2\","
    ann="{\"tessera.io/gpu-indices\":\"$3\"}"
    phase=Running
  fi
  printf '{"kind":"Pod","metadata":{"name":"%s","namespace":"default","annotations":%s%s},' "$1" "$ann" "$owner"
  printf '"spec":{%s"containers":[{"name":"m","resources":{"requests":{"cpu":"4","memory":"16Gi","tessera.io/gpu":"%s"},"limits":{"tessera.io/gpu":"%s"}}}]},' "$node_field" "$gpus" "$gpus"
  printf '"status":{"phase":"%s"}}' "$phase"
}
{
  printf '{"apiVersion":"v1","kind":"List","items":['
  node n0; printf ','; node n1; printf ','; node n2
  for g in 0 1 2 3 4 5 6; do printf ','; pod "a-$g" n0 "$g" ReplicaSet; done
  printf ','; pod bare-0 n1 0 ""
  printf ','; pod ds-0 n1 1 DaemonSet
  for g in 2 3 4 5; do printf ','; pod "free-$g" n1 "$g" ReplicaSet; done
  for g in 0 1 2 3 4 5 6; do printf ','; pod "c-$g" n2 "$g" ReplicaSet; done
  printf ','; pod big-0 "" "" ReplicaSet 4
  printf ']}\n'
} >"$tmp/snap.json"

# A good snapshot: exit 0, the three outputs, the pending pod placed by the plan.
if ! "$TESSERA" analyze "$tmp/snap.json" --out "$tmp/out" >"$tmp/ok.out" 2>"$tmp/ok.err"; then
  fail "analyze of a good snapshot: exit $?"; cat "$tmp/ok.err"
fi
for f in analyze.json report.html; do [ -s "$tmp/out/$f" ] || fail "no $f"; done
grep -q "then default/big-0 fits n1" "$tmp/ok.out" || { fail "the plan does not place big-0"; cat "$tmp/ok.out"; }
grep -q '"dry_run": true' "$tmp/out/analyze.json" || fail "analyze.json lacks dry_run"
grep -q "<svg" "$tmp/out/report.html" || fail "report.html has no GPU map"
if grep -q '"pod": "default/bare-0"\|"pod": "default/ds-0"' <(python3 -c 'import json,sys; [print("\"pod\": \"%s\"" % m["pod"]) for m in json.load(open(sys.argv[1]))["plan"]["moves"]]' "$tmp/out/analyze.json" 2>/dev/null || true); then
  fail "a bare or DaemonSet pod is moved"
fi
echo "ok   good snapshot: $(grep -c '' "$tmp/ok.out") lines on stdout"

expect() {  # expect NAME RC PATTERN ARGS...: exit code RC, PATTERN on stderr, no output written
  local name=$1 want=$2 pattern=$3
  shift 3
  rm -rf "$tmp/bad"
  set +e
  "$TESSERA" analyze "$@" --out "$tmp/bad" >"$tmp/$name.out" 2>"$tmp/$name.err"
  local rc=$?
  set -e
  if [ "$rc" -ne "$want" ]; then fail "$name: exit $rc, want $want ($(head -1 "$tmp/$name.err"))"; return; fi
  if ! grep -qF -- "$pattern" "$tmp/$name.err"; then
    fail "$name: stderr lacks '$pattern':"; cat "$tmp/$name.err"; return
  fi
  if [ -e "$tmp/bad/analyze.json" ]; then fail "$name: a report was written"; return; fi
  echo "ok   $name: $(head -1 "$tmp/$name.err")"
}

head -c 700 "$tmp/snap.json" >"$tmp/truncated.json"
expect truncated 2 "$tmp/truncated.json: malformed JSON at byte" "$tmp/truncated.json"
printf '{"kind":"List","items":[{"kind":"Node",]}' >"$tmp/malformed.json"
expect malformed 2 "$tmp/malformed.json: malformed JSON at byte" "$tmp/malformed.json"
printf '{"kind":"List","items":[{"kind":"ConfigMap","metadata":{"name":"x"}}]}' >"$tmp/kind.json"
expect unknown-kind 2 "$tmp/kind.json: items[0].kind: unknown kind \"ConfigMap\"" "$tmp/kind.json"
printf '{"kind":"List","items":[%s,{"kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[]}}]}' "$(node n0)" >"$tmp/nons.json"
expect missing-namespace 2 "$tmp/nons.json: items[1].metadata.namespace: missing" "$tmp/nons.json"
printf '{"kind":"List","items":[{"kind":"Node","metadata":{"name":"n0"}}]}' >"$tmp/nostatus.json"
expect missing-status 2 "$tmp/nostatus.json: items[0].status: missing" "$tmp/nostatus.json"
printf '{"kind":"List","items":[{"kind":"Node","metadata":{"name":"n0"},"status":{"allocatable":{"cpu":"lots"}}}]}' >"$tmp/qty.json"
expect bad-quantity 2 "$tmp/qty.json: items[0].status.allocatable.cpu" "$tmp/qty.json"
expect no-file 2 "$tmp/absent.json" "$tmp/absent.json"
expect no-mode 2 "give exactly one of"
expect two-modes 2 "give exactly one of" "$tmp/snap.json" --in-cluster

# An API server nobody listens on: exit 4, a clear message, nothing written.
cat >"$tmp/kubeconfig" <<'EOF'
apiVersion: v1
kind: Config
current-context: c
clusters: [{name: k, cluster: {server: "http://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
EOF
expect unreachable 4 "the API server could not be reached" --kubeconfig "$tmp/kubeconfig"

# An API server that refuses the token (403 with a Status, as kube-apiserver answers): exit 3,
# the API's message, nothing written.
python3 - "$tmp/port" <<'PY' &
import http.server, json, sys
class Refuse(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                           "message": "nodes is forbidden: User \"u\" cannot list resource",
                           "reason": "Forbidden", "code": 403}).encode()
        self.send_response(403)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Refuse)
open(sys.argv[1] + ".tmp", "w").write(str(server.server_address[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
server.serve_forever()
PY
refuser=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
sed "s|http://127.0.0.1:1|http://127.0.0.1:$(cat "$tmp/port")|" "$tmp/kubeconfig" >"$tmp/kubeconfig-403"
expect forbidden 3 "forbidden" --kubeconfig "$tmp/kubeconfig-403"
kill "$refuser" 2>/dev/null || true

# An account that may list nodes and pods but not PodDisruptionBudgets (the fake API server
# answers 403 for them, as RBAC does): the report is written without budgets and says so, as
# `tessera serve` goes on without them.
if [ -n "${TESSERA_FAKE_APISERVER:-}" ] && [ -x "$TESSERA_FAKE_APISERVER" ] && command -v curl >/dev/null; then
  mkfifo "$tmp/stdin"
  "$TESSERA_FAKE_APISERVER" --forbid poddisruptionbudgets <"$tmp/stdin" >"$tmp/url" &
  fake_pid=$!
  exec 3>"$tmp/stdin"
  for _ in $(seq 100); do [ -s "$tmp/url" ] && break; sleep 0.05; done
  url=$(head -1 "$tmp/url")
  sed "s|http://127.0.0.1:1|$url|" "$tmp/kubeconfig" >"$tmp/kubeconfig-nopdb"
  curl -sf -X POST "$url/api/v1/nodes" -H 'Content-Type: application/json' -d "$(node n0)" >/dev/null
  curl -sf -X POST "$url/api/v1/namespaces/default/pods" -H 'Content-Type: application/json' \
    -d "$(pod a-0 n0 0 ReplicaSet)" >/dev/null
  set +e
  "$TESSERA" analyze -q --kubeconfig "$tmp/kubeconfig-nopdb" --out "$tmp/nopdb" >"$tmp/nopdb.out" 2>"$tmp/nopdb.err"
  code=$?
  set -e
  if [ "$code" -eq 0 ] && grep -qF "tessera analyze: warning: PodDisruptionBudgets not read: the API server refused to list them (GET $url/apis/policy/v1/poddisruptionbudgets?limit=500: HTTP 403: \"poddisruptionbudgets.policy is forbidden" "$tmp/nopdb.err" &&
    grep -qF "Disruption budgets: none respected." "$tmp/nopdb.out" &&
    grep -qF '"read": false' "$tmp/nopdb/analyze.json" && grep -qF "none respected" "$tmp/nopdb/report.html"; then
    echo "ok   pdb-forbidden: exit 0, report written without budgets and says so"
  else
    fail "pdb-forbidden: exit $code: $(cat "$tmp/nopdb.err") $(cat "$tmp/nopdb.out")"
  fi
  exec 3>&-
  wait "$fake_pid" || true
else
  echo "SKIP pdb-forbidden: no tessera_fake_apiserver or curl"
fi

if [ "$fails" -gt 0 ]; then echo "$fails failure(s)"; exit 1; fi
echo "all analyze CLI checks passed"
