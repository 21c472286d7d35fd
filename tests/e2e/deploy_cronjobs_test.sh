#!/usr/bin/env bash
# deploy/record and deploy/analyze (`tessera record` and `tessera analyze` as CronJobs) through
# kubectl, without a cluster: each kustomization builds five objects with nothing on stderr,
# kubectl's decoder reads each file, `kubectl apply -k --dry-run=client` accepts them against
# the test suite's fake API server; the wiring holds (service account bound to a read-only
# ClusterRole that grants what the command reads, the volume claimed, no overlapping runs);
# and the containers' shell scripts do what their comments say: record's (with record stubbed)
# ends at 23:58 UTC of the day it starts and not at all in the last two minutes, copies the
# final lists to a dated folder after a clean end, passes SIGTERM on, and exits 1 with record;
# analyze's writes a dated folder with the real binary against the fake API server, points
# `latest` at it, prunes folders older than 30 days and keeps `latest` when analyze fails.
set -euo pipefail
: "${TESSERA:?}" "${TESSERA_SOURCE_DIR:?}" "${TESSERA_FAKE_APISERVER:?}"
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
require_tools kubectl
need_tools curl python3
need_python_module yaml python3-yaml
deploy="$TESSERA_SOURCE_DIR/deploy"
tmp=$(mktemp -d)
fake_pid=""
cleanup() {
  exec 3>&- || true  # the fake serves until its stdin closes
  if [ -n "$fake_pid" ]; then wait "$fake_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fails=0

for job in record analyze; do
  if ! kubectl kustomize "$deploy/$job" >"$tmp/$job.yaml" 2>"$tmp/$job.err"; then
    fail "kustomize deploy/$job:"; cat "$tmp/$job.err"; continue
  fi
  n=$(grep -c '^kind:' "$tmp/$job.yaml" || true)
  if [ -s "$tmp/$job.err" ]; then
    fail "kustomize deploy/$job printed on stderr:"; cat "$tmp/$job.err"
  elif [ "$n" -ne 5 ]; then
    fail "kustomize deploy/$job: $n objects, want 5"
  else
    echo "ok   kustomize deploy/$job: 5 objects, no warning"
  fi
  for f in "$deploy/$job"/*.yaml; do
    [ "$(basename "$f")" = kustomization.yaml ] && continue
    if kubectl annotate --local -f "$f" tessera.io/checked=yes -o json >"$tmp/out.json" 2>"$tmp/err" &&
      grep -q '"tessera.io/checked": "yes"' "$tmp/out.json"; then
      echo "ok   $job/$(basename "$f")"
    else
      fail "$job/$(basename "$f"):"; cat "$tmp/err"
    fi
  done
done

# The wiring, and the scripts of the two containers (for the runs below).
python3 - "$tmp" <<'PY' || fail "the CronJobs' wiring (above)"
import sys, yaml
tmp = sys.argv[1]
fails = 0
def check(ok, what):
    global fails
    print(("ok   " if ok else "FAIL ") + what)
    fails += not ok
# What each command reads (docs/RECORD.md, docs/ANALYZE.md "Input").
needs = {"record": {("", "pods"): {"list", "watch"}, ("", "nodes"): {"list", "watch"}},
         "analyze": {("", "pods"): {"list"}, ("", "nodes"): {"list"},
                     ("policy", "poddisruptionbudgets"): {"list"}}}
for job, need in needs.items():
    objs = [o for o in yaml.safe_load_all(open(f"{tmp}/{job}.yaml")) if o]
    by_kind = {}
    for o in objs:
        by_kind.setdefault(o["kind"], []).append(o)
    cron = by_kind["CronJob"][0]
    spec = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    sa = spec["serviceAccountName"]
    check(cron["metadata"]["namespace"] == "tessera" and
          by_kind["ServiceAccount"][0]["metadata"]["name"] == sa,
          f"{job}: CronJob in tessera runs as its own ServiceAccount {sa}")
    role = by_kind["ClusterRole"][0]
    binding = by_kind["ClusterRoleBinding"][0]
    check(binding["roleRef"]["name"] == role["metadata"]["name"] and
          {"kind": "ServiceAccount", "name": sa, "namespace": "tessera"} in binding["subjects"],
          f"{job}: ClusterRole {role['metadata']['name']} bound to {sa}")
    granted = {}
    for rule in role["rules"]:
        for g in rule["apiGroups"]:
            for r in rule["resources"]:
                granted.setdefault((g, r), set()).update(rule["verbs"])
    read_only = all(v <= {"get", "list", "watch"} for v in granted.values())
    covers = all(need[k] <= granted.get(k, set()) for k in need)
    check(read_only and covers and set(granted) == set(need),
          f"{job}: read-only, and exactly what it reads: {sorted(granted)}")
    claim = [v["persistentVolumeClaim"]["claimName"] for v in spec["volumes"]
             if "persistentVolumeClaim" in v]
    pvc = by_kind["PersistentVolumeClaim"][0]["metadata"]["name"]
    check(claim == [pvc], f"{job}: the volume is PersistentVolumeClaim {pvc}")
    check(cron["spec"]["concurrencyPolicy"] == "Forbid", f"{job}: never two runs at once")
    c = spec["containers"][0]
    check(c["command"] == ["/bin/sh", "-c"] and len(c["args"]) == 1 and
          "--in-cluster" in c["args"][0], f"{job}: one shell script, --in-cluster")
    check(c["securityContext"]["readOnlyRootFilesystem"] and
          spec["securityContext"]["runAsNonRoot"], f"{job}: non-root, read-only root")
    open(f"{tmp}/{job}.sh", "w").write(c["args"][0] + "\n")
sys.exit(1 if fails else 0)
PY

# The fake API server, with one GPU node (analyze needs a node).
mkfifo "$tmp/stdin"
"$TESSERA_FAKE_APISERVER" <"$tmp/stdin" >"$tmp/url" &
fake_pid=$!
exec 3>"$tmp/stdin"
for _ in $(seq 100); do [ -s "$tmp/url" ] && break; sleep 0.05; done
url=$(head -1 "$tmp/url")
[ -n "$url" ] || { echo "FAIL: the fake API server printed no URL"; exit 1; }

for job in record analyze; do
  if kubectl apply --dry-run=client --validate=false --server="$url" -k "$deploy/$job" >"$tmp/dry" 2>"$tmp/err" &&
    [ "$(grep -c 'created (dry run)' "$tmp/dry")" -eq 5 ]; then
    echo "ok   kubectl apply -k deploy/$job --dry-run=client: 5 objects"
  else
    fail "kubectl apply -k deploy/$job --dry-run=client:"; cat "$tmp/dry" "$tmp/err"
  fi
done

# record's script, with `date +%s` and tessera stubbed (the stub plays record's ends: a clean
# one writing the final lists, a failure, SIGTERM), the volume a scratch folder.
if [ -s "$tmp/record.sh" ]; then
  mkdir -p "$tmp/bin" "$tmp/data"
  printf '#!/bin/sh
if [ "$1" = +%%s ]; then echo "$FAKE_NOW"; else exec /bin/date "$@"; fi
' >"$tmp/bin/date"
  cat >"$tmp/bin/tessera" <<'SH'
#!/bin/sh
# record's stand-in: STUB=clean writes the final lists, STUB=fail exits 1, STUB=term runs until
# SIGTERM, then writes them (record's clean end on SIGTERM).
echo "$@" >"$STUB_DIR/record.args"
out=$4
lists() { printf 'sn
' >"$out/openb_node_list.csv"; printf 'name
' >"$out/openb_pod_list.csv"; }
mkdir -p "$out"
case "$STUB" in
  clean) lists ;;
  fail) exit 1 ;;
  term) trap 'lists; echo term >"$STUB_DIR/record.term"; exit 0' TERM
    : >"$STUB_DIR/record.started"
    while :; do sleep 0.1; done ;;
esac
SH
  chmod +x "$tmp/bin/date" "$tmp/bin/tessera"
  sed -e "s|/usr/local/bin/tessera|$tmp/bin/tessera|" -e "s|/data/|$tmp/data/|g" \
    -e "s|/etc/tessera/|$tmp/etc/tessera/|g" "$tmp/record.sh" >"$tmp/record-stub.sh"
  day=1796169600  # a midnight UTC (20789 x 86400)
  run_record() {  # run_record FAKE_NOW STUB
    FAKE_NOW=$1 STUB=$2 STUB_DIR=$tmp PATH="$tmp/bin:$PATH" sh "$tmp/record-stub.sh"
  }
  today="$tmp/data/lists/$(date -u +%Y-%m-%d)"
  set +e
  run_record $((day + 3600)) clean
  rc=$?
  set -e
  want="record --in-cluster --out $tmp/data/record --until $((day + 86400 - 120))"
  if [ "$rc" -eq 0 ] && [ "$(cat "$tmp/record.args" 2>/dev/null)" = "$want" ] &&
    [ -s "$today/openb_pod_list.csv" ] && [ -s "$today/openb_node_list.csv" ] &&
    [ "$(readlink "$tmp/data/lists/latest")" = "$today" ]; then
    echo "ok   record's script at 01:00 UTC: --until 23:58 UTC; the final lists copied to lists/$(basename "$today"), latest there"
  else
    fail "record's script at 01:00 UTC: exit $rc, ran '$(cat "$tmp/record.args" 2>/dev/null)' (want '$want'), lists: $(ls -R "$tmp/data/lists" 2>&1 | tr '\n' ' ')"
  fi
  rm -rf "$tmp/record.args" "$tmp/data/lists" "$tmp/data/record"
  # With the extender's ConfigMap mounted, record sorts pods into its classes.
  mkdir -p "$tmp/etc/tessera" && echo "classes: [{name: LS, priority: 1000}, {name: BE, priority: 0}]" >"$tmp/etc/tessera/tessera.yaml"
  if run_record $((day + 3600)) clean &&
    [ "$(cat "$tmp/record.args" 2>/dev/null)" = "$want --config $tmp/etc/tessera/tessera.yaml" ]; then
    echo "ok   record's script with the extender's ConfigMap mounted: --config passed"
  else
    fail "record's script with the ConfigMap: ran '$(cat "$tmp/record.args" 2>/dev/null)'"
  fi
  rm -rf "$tmp/record.args" "$tmp/data/lists" "$tmp/data/record" "$tmp/etc"
  if run_record $((day + 86400 - 60)) clean && [ ! -e "$tmp/record.args" ]; then
    echo "ok   record's script at 23:59 UTC: exits 0 without recording (the next run starts at 00:00)"
  else
    fail "record's script at 23:59 UTC ran tessera record or failed"
  fi
  set +e
  run_record $((day + 3600)) fail
  rc=$?
  set -e
  if [ "$rc" -eq 1 ] && [ ! -e "$tmp/data/lists" ]; then
    echo "ok   record's script when record fails: exit 1 (the Job restarts it), no lists copied"
  else
    fail "record's script when record fails: exit $rc, lists $(ls "$tmp/data/lists" 2>&1)"
  fi
  FAKE_NOW=$((day + 3600)) STUB=term STUB_DIR=$tmp PATH="$tmp/bin:$PATH" sh "$tmp/record-stub.sh" &
  script_pid=$!
  for _ in $(seq 100); do [ -e "$tmp/record.started" ] && break; sleep 0.05; done
  kill -TERM "$script_pid"
  set +e
  wait "$script_pid"
  rc=$?
  set -e
  if [ "$rc" -eq 0 ] && [ -e "$tmp/record.term" ] && [ -s "$today/openb_pod_list.csv" ]; then
    echo "ok   record's script on SIGTERM: passed on to record, which ended cleanly; the lists copied"
  else
    fail "record's script on SIGTERM: exit $rc, record saw it: $([ -e "$tmp/record.term" ] && echo yes || echo no)"
  fi
fi

# analyze's script with the real binary against the fake API server (--kubeconfig for
# --in-cluster, a scratch folder for the volume).
if [ -s "$tmp/analyze.sh" ]; then
  node='{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","labels":{"tessera.io/gpu-model":"A10"}},"status":{"allocatable":{"cpu":"16","memory":"64Gi","tessera.io/gpu":"4"}}}'
  curl -sf -X POST -H 'Content-Type: application/json' --data "$node" "$url/api/v1/nodes" >/dev/null ||
    fail "the fake API server refused the node"
  kubeconfig() {
    printf 'apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters: [{name: c, cluster: {server: "%s"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {token: t}}]\n' "$1"
  }
  kubeconfig "$url" >"$tmp/kubeconfig"
  kubeconfig "http://127.0.0.1:1" >"$tmp/kubeconfig-unreachable"
  results="$tmp/results"
  mkdir -p "$results/2000-01-01T0015Z" "$results/recent"
  touch -d '40 days ago' "$results/2000-01-01T0015Z"
  run_analyze() {  # run_analyze KUBECONFIG: the script, as the CronJob runs it
    sed -e "s|/usr/local/bin/tessera analyze --in-cluster|$TESSERA analyze -q --kubeconfig $1|" \
      -e "s|/results|$results|g" "$tmp/analyze.sh" >"$tmp/analyze-local.sh"
    sh "$tmp/analyze-local.sh" >"$tmp/analyze.out" 2>"$tmp/analyze.err"
  }
  if run_analyze "$tmp/kubeconfig"; then
    latest=$(readlink "$results/latest" || true)
    if [ -n "$latest" ] && [ -s "$latest/analyze.json" ] && [ -s "$latest/report.html" ] &&
      [[ "$(basename "$latest")" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{4}Z$ ]] &&
      grep -q 'A10' "$tmp/analyze.out"; then
      echo "ok   analyze's script: $(basename "$latest")/analyze.json and report.html, latest points there, the summary on stdout"
    else
      fail "analyze's script wrote no dated report or no latest link:"; ls -la "$results"; cat "$tmp/analyze.out" "$tmp/analyze.err"
    fi
    if [ ! -e "$results/2000-01-01T0015Z" ] && [ -d "$results/recent" ]; then
      echo "ok   analyze's script prunes a 40-day-old run and keeps a recent one"
    else
      fail "analyze's script pruning: $(ls "$results" | tr '\n' ' ')"
    fi
    set +e
    run_analyze "$tmp/kubeconfig-unreachable"
    rc=$?
    set -e
    if [ "$rc" -eq 4 ] && [ "$(readlink "$results/latest")" = "$latest" ]; then
      echo "ok   analyze's script with the API server unreachable: exit 4, latest unchanged"
    else
      fail "analyze's script with the API server unreachable: exit $rc, latest $(readlink "$results/latest")"
    fi
  else
    fail "analyze's script failed:"; cat "$tmp/analyze.out" "$tmp/analyze.err"
  fi
fi

if [ "$fails" -ne 0 ]; then echo "$fails failure(s)"; exit 1; fi
echo "all ok"
