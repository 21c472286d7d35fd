#!/usr/bin/env bash
# `tessera serve` configuration end to end: bad config files, addresses and conflicting modes
# stop with exit 2 and a message naming file:line or the flag; a kubeconfig pointing at an API
# server that is down still serves (/healthz ok, /readyz 503; the file's metricsListen serves
# /metrics, with tessera_synced 0, and nothing else), logs JSON errors with the URL, and stops
# on SIGTERM.
set -euo pipefail
: "${TESSERA:?}"
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
require_tools curl
with_scratch
expect_exit2() {  # expect_exit2 NAME EXPECTED-STDERR-SUBSTRING ARGS...
  local name=$1 want=$2; shift 2
  set +e
  "$TESSERA" serve "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  set -e
  if [ "$rc" = 2 ] && grep -qF -- "$want" "$tmp/err"; then
    echo "ok   $name"
  else
    echo "FAIL $name: exit $rc, stderr:"; cat "$tmp/err"; fails=$((fails + 1))
  fi
}

printf 'listen: 127.0.0.1:0\nkubernetes:\n  inCluster: yes please\n' >"$tmp/bad-type.yaml"
expect_exit2 bad-type "$tmp/bad-type.yaml:3: kubernetes.inCluster: expected true or false" \
  --config "$tmp/bad-type.yaml"
printf 'policy: fgd\nlisen: 127.0.0.1:0\n' >"$tmp/typo.yaml"
expect_exit2 unknown-key "$tmp/typo.yaml:2: lisen: unknown key" --config "$tmp/typo.yaml"
printf 'topology:\n  pools:\n    - selector: {matchLabels: {pool: a}}\n      kubeletPolicy: strict\n' >"$tmp/topology.yaml"
expect_exit2 bad-kubelet-policy "$tmp/topology.yaml:4: topology.pools[0].kubeletPolicy: unknown kubelet topology policy" \
  --config "$tmp/topology.yaml"
expect_exit2 no-mode "no cluster source" --listen 127.0.0.1:0
expect_exit2 two-modes "more than one cluster source" --in-cluster --kubeconfig "$tmp/k"
expect_exit2 missing-kubeconfig "kubeconfig $tmp/nope" --kubeconfig "$tmp/nope"
expect_exit2 pods-alone "--pods needs --nodes" --kubeconfig "$tmp/k" --pods x.json
expect_exit2 missing-config "$tmp/none.yaml" --config "$tmp/none.yaml"
expect_exit2 bad-metrics-listen 'error: --metrics-listen "8890": expected HOST:PORT' \
  --kubeconfig "$tmp/k" --metrics-listen 8890
# --workload (or workload: in the file): a pod CSV whose errors name file:line.
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\np1,1000,1024,one,1000,,LS,Running,0,,0\n' >"$tmp/mix.csv"
expect_exit2 bad-workload "--workload: $tmp/mix.csv:2" --kubeconfig "$tmp/k" --workload "$tmp/mix.csv"
printf 'workload: %s\n' "$tmp/absent.csv" >"$tmp/workload.yaml"
expect_exit2 missing-workload "$tmp/absent.csv" --config "$tmp/workload.yaml" --kubeconfig "$tmp/k"

# An API server that refuses connections (port 1): the extender serves but is not ready.
cat >"$tmp/kubeconfig" <<'YAML'
apiVersion: v1
kind: Config
current-context: down
clusters: [{name: down, cluster: {server: "http://127.0.0.1:1"}}]
contexts: [{name: down, context: {cluster: down, user: u}}]
users: [{name: u, user: {token: t}}]
YAML
printf 'listen: 127.0.0.1:9\nmetricsListen: 127.0.0.1:0\npolicy: bestfit\nkubernetes:\n  kubeconfig: %s\n' \
  "$tmp/kubeconfig" >"$tmp/tessera.yaml"
# The flag overrides the file's listen address (port 9 would need root).
"$TESSERA" serve --config "$tmp/tessera.yaml" --listen 127.0.0.1:0 >"$tmp/out" 2>"$tmp/err" &
pid=$!
port=$(listening_port "$pid" "$tmp/out" "$tmp/err") || exit 1
echo "ok   listening on port $port (flag over file)"
[ "$(curl -sS -m 5 "http://127.0.0.1:$port/healthz")" = ok ] && echo "ok   healthz" ||
  { echo "FAIL healthz"; fails=$((fails + 1)); }
code=$(curl -sS -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz")
[ "$code" = 503 ] && echo "ok   readyz 503 before the initial lists" ||
  { echo "FAIL readyz: $code"; fails=$((fails + 1)); }
curl -sS -m 5 "http://127.0.0.1:$port/state" >"$tmp/state" && grep -qF '"policy":"bestfit"' "$tmp/state" &&
  echo "ok   policy from the file" || { echo "FAIL policy"; fails=$((fails + 1)); }
# metricsListen from the file: /metrics only, served while out of sync (the alert's source).
metrics_port=$(sed -n 's/^metrics on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$tmp/out")
# (into a file: grep -q stops reading at its match, and curl then fails writing — pipefail)
if [ -n "$metrics_port" ] && curl -sS -m 5 "http://127.0.0.1:$metrics_port/metrics" >"$tmp/metrics" &&
  grep -qx 'tessera_synced 0' "$tmp/metrics" &&
  [ "$(curl -sS -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$metrics_port/healthz")" = 404 ] &&
  [ "$(curl -sS -m 5 -o /dev/null -w '%{http_code}' -d '{}' "http://127.0.0.1:$metrics_port/bind")" = 404 ]; then
  echo "ok   metricsListen from the file: /metrics on $metrics_port (tessera_synced 0), /healthz and /bind 404"
else
  echo "FAIL metricsListen: port '$metrics_port'"; cat "$tmp/out"; fails=$((fails + 1))
fi
for _ in $(seq 1 50); do
  grep -qF '"msg":"list failed"' "$tmp/err" && break
  sleep 0.1
done
if grep -F '"msg":"list failed"' "$tmp/err" | grep -qF 'GET http://127.0.0.1:1/api/v1/nodes?limit=500: no response: cannot connect'; then
  echo "ok   list error logged as JSON with the URL"
else
  echo "FAIL no list error"; cat "$tmp/err"; fails=$((fails + 1))
fi
grep -F '"msg":"start"' "$tmp/err" | grep -qF '"mode":"kubeconfig"' && echo "ok   start logged" ||
  { echo "FAIL start log"; cat "$tmp/err"; fails=$((fails + 1)); }
kill -TERM "$pid"
set +e
wait "$pid"
rc=$?
set -e
pid=""
[ "$rc" = 0 ] && echo "ok   SIGTERM exit 0" || { echo "FAIL exit $rc"; fails=$((fails + 1)); }

[ "$fails" = 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all serve config checks passed"
