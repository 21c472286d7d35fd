#!/usr/bin/env bash
# deploy/ as Prometheus sees it, without a cluster: a real Prometheus (Debian's) scrapes
# `tessera serve` through the Service that deploy/ defines, and the dashboard's queries return
# data.
#  1. `kubectl kustomize deploy/` (nothing on stderr); from the rendered objects: the Service
#     with the port named `metrics` that selects the scheduler Deployment's pods, its target
#     port resolved to the tessera container's port, the prometheus.io/* annotations, and the
#     tessera.yaml of the ConfigMap the container mounts. The wiring must hold: the metrics
#     listener (metricsListen) on every address at that port, the verbs on loopback.
#  2. `tessera serve` starts from that tessera.yaml as shipped, with only what a machine
#     without a cluster needs changed: the fake API server (tessera_fake_apiserver) through a
#     kubeconfig for inCluster, loopback for 0.0.0.0, port 0 for the verbs' and the probes'
#     ports (and for the metrics port only where the shipped one is taken here). The metrics
#     listener serves /metrics and 404 for the verbs, /state and the probes.
#  3. Prometheus runs deploy/monitoring/prometheus/scrape-config.yaml's job as shipped, with its
#     Kubernetes discovery (which Debian's build lacks) replaced by a static target carrying the
#     labels that discovery gives the Service's endpoint, plus a decoy endpoint of another port
#     that the job's relabelling must drop; deploy/monitoring/prometheus/alert-rules.yaml is
#     loaded. The active target must be the metrics listener at the Service's path.
#  4. Traffic with curl: nodes and GPU pods posted to the fake API server, four pods bound
#     through the extender's /filter and /bind as kube-scheduler does.
#  5. Every PromQL expression of deploy/monitoring/grafana/grafana-dashboard.json, evaluated
#     through Prometheus' HTTP API, returns data, and a few carry the traffic's numbers; the
#     alert rules are loaded and healthy; `promtool check rules` passes on the rules file and on
#     the PrometheusRule of deploy/monitoring/prometheus-operator/, whose groups are the same.
# Skips only when prometheus, promtool or kubectl is not installed.
set -euo pipefail
: "${TESSERA:?}" "${TESSERA_SOURCE_DIR:?}" "${TESSERA_FAKE_APISERVER:?}"
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
for tool in prometheus promtool kubectl; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool not installed (bash scripts/deps.sh --test installs it)"; exit 0
  fi
done
need_tools curl python3
need_python_module yaml python3-yaml
deploy="$TESSERA_SOURCE_DIR/deploy"
tmp=$(mktemp -d)
fake_pid="" serve_pid="" prom_pid=""
cleanup() {
  stop_pids "$prom_pid" "$serve_pid"
  exec 3>&- || true  # the fake serves until its stdin closes
  if [ -n "$fake_pid" ]; then wait "$fake_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fails=0

# 1. The rendered manifests.
if ! kubectl kustomize "$deploy" >"$tmp/all.yaml" 2>"$tmp/kustomize.err" || [ -s "$tmp/kustomize.err" ]; then
  echo "FAIL kubectl kustomize deploy/:"; cat "$tmp/kustomize.err"; exit 1
fi
mkfifo "$tmp/stdin"
"$TESSERA_FAKE_APISERVER" <"$tmp/stdin" >"$tmp/fake_url" &
fake_pid=$!
exec 3>"$tmp/stdin"
for _ in $(seq 100); do [ -s "$tmp/fake_url" ] && break; sleep 0.05; done
fake=$(head -1 "$tmp/fake_url")
[ -n "$fake" ] || { echo "FAIL: the fake API server printed no URL"; exit 1; }
cat >"$tmp/kubeconfig" <<YAML
apiVersion: v1
kind: Config
current-context: fake
clusters: [{name: fake, cluster: {server: "$fake"}}]
contexts: [{name: fake, context: {cluster: fake, user: u}}]
users: [{name: u, user: {token: t}}]
YAML

python3 - "$tmp" <<'PY' || exit 1
import socket, sys, yaml
tmp = sys.argv[1]
objs = [o for o in yaml.safe_load_all(open(f"{tmp}/all.yaml")) if o]
def fail(what):
    print("FAIL " + what)
    sys.exit(1)
def ok(what):
    print("ok   " + what)
deployments = [o for o in objs if o["kind"] == "Deployment"]
if len(deployments) != 1:
    fail(f"{len(deployments)} Deployments in deploy/, want 1")
dep = deployments[0]
pod = dep["spec"]["template"]
pod_labels = pod["metadata"]["labels"]
ns = dep["metadata"]["namespace"]
tessera = [c for c in pod["spec"]["containers"] if c.get("args", [""])[0] == "serve"]
if len(tessera) != 1:
    fail("no container runs `tessera serve`")
c = tessera[0]
services = [o for o in objs if o["kind"] == "Service" and o["metadata"]["namespace"] == ns and
            o["spec"].get("selector") and
            all(pod_labels.get(k) == v for k, v in o["spec"]["selector"].items()) and
            any(p.get("name") == "metrics" for p in o["spec"]["ports"])]
if len(services) != 1:
    fail(f"{len(services)} Services select the scheduler pods with a port named metrics, want 1")
svc = services[0]
port = next(p for p in svc["spec"]["ports"] if p["name"] == "metrics")
target = port.get("targetPort", port["port"])
if isinstance(target, str):
    named = [p for p in c.get("ports", []) if p.get("name") == target]
    if not named:
        fail(f"Service {svc['metadata']['name']}: targetPort {target} names no port of container {c['name']}")
    container_port = named[0]["containerPort"]
else:
    container_port = target
ann = svc["metadata"].get("annotations", {})
path = ann.get("prometheus.io/path", "/metrics")
scheme = ann.get("prometheus.io/scheme", "http")
if ann.get("prometheus.io/scrape") != "true" or int(ann.get("prometheus.io/port", -1)) != port["port"]:
    fail(f"Service annotations {ann}: want prometheus.io/scrape \"true\" and prometheus.io/port {port['port']}")
ok(f"Service {ns}/{svc['metadata']['name']} selects the scheduler pods; port metrics -> "
   f"container {c['name']} port {container_port}; scrape {scheme}://<pod>:{container_port}{path}")
# The configuration the container reads: --config FILE, FILE in a ConfigMap volume.
config_file = c["args"][c["args"].index("--config") + 1]
mounts = [m for m in c["volumeMounts"] if config_file.startswith(m["mountPath"].rstrip("/") + "/")]
volume = next(v for v in pod["spec"]["volumes"] if v["name"] == mounts[0]["name"])
cm_name = volume["configMap"]["name"]
key = config_file[len(mounts[0]["mountPath"].rstrip("/")) + 1:]
cm = next(o for o in objs if o["kind"] == "ConfigMap" and o["metadata"]["name"] == cm_name)
config = yaml.safe_load(cm["data"][key])
host, _, metrics_port = config.get("metricsListen", "").rpartition(":")
if not metrics_port or int(metrics_port) != container_port or host not in ("0.0.0.0", "[::]"):
    fail(f"ConfigMap {cm_name} {key}: metricsListen {config.get('metricsListen')!r}, want every "
         f"address at port {container_port} (the Service's target)")
if not config["listen"].startswith("127.0.0.1:"):
    fail(f"ConfigMap {cm_name} {key}: listen {config['listen']}: the verbs must stay on loopback")
ok(f"ConfigMap {cm_name} {key}: metricsListen {config['metricsListen']}, the verbs on {config['listen']}")
# As shipped, but for this machine.
with socket.socket() as s:
    try:
        s.bind(("127.0.0.1", container_port))
        local_port = container_port
    except OSError:
        local_port = 0
        print(f"note port {container_port} is taken here: the metrics listener gets a free port")
config["listen"] = "127.0.0.1:0"
config["probeListen"] = "127.0.0.1:0"
config["metricsListen"] = f"127.0.0.1:{local_port}"
config["kubernetes"]["inCluster"] = False
config["kubernetes"]["kubeconfig"] = f"{tmp}/kubeconfig"
yaml.safe_dump(config, open(f"{tmp}/tessera.yaml", "w"))
with open(f"{tmp}/endpoint.env", "w") as f:
    f.write(f"namespace={ns}\nservice={svc['metadata']['name']}\npath={path}\nscheme={scheme}\n")
PY
# shellcheck disable=SC1091
source "$tmp/endpoint.env"

# 2. tessera serve with that configuration.
"$TESSERA" serve --config "$tmp/tessera.yaml" >"$tmp/serve.out" 2>"$tmp/serve.err" &
serve_pid=$!
port=$(listening_port "$serve_pid" "$tmp/serve.out" "$tmp/serve.err") || exit 1
for _ in $(seq 100); do grep -q '^metrics on ' "$tmp/serve.out" && break; sleep 0.1; done
metrics_port=$(sed -n 's/^metrics on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$tmp/serve.out")
probe_port=$(sed -n 's/^probes on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$tmp/serve.out")
if [ -z "$metrics_port" ] || [ -z "$probe_port" ]; then
  echo "FAIL: no 'metrics on' or 'probes on' line:"; cat "$tmp/serve.out" "$tmp/serve.err"; exit 1
fi
echo "ok   tessera serve from deploy/'s tessera.yaml: verbs on $port, probes on $probe_port, metrics on $metrics_port"
tessera="http://127.0.0.1:$port"
metrics="http://127.0.0.1:$metrics_port"
code() { curl -s -o /dev/null -w '%{http_code}' -m 5 "$@"; }
got="$(code "$metrics$path") $(code -X POST -d '{}' "$metrics/filter") $(code -X POST -d '{}' "$metrics/bind") $(code "$metrics/state") $(code "$metrics/readyz")"
if [ "$got" = "200 404 404 404 404" ]; then
  echo "ok   the metrics port answers $path (200) and nothing else: /filter, /bind, /state, /readyz 404"
else
  echo "FAIL the metrics port answered $got for $path, /filter, /bind, /state, /readyz; want 200 404 404 404 404"; fails=$((fails + 1))
fi

# 3. Prometheus with the shipped scrape job, its discovery replaced by what it would find.
prom_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 - "$deploy" "$tmp" "$metrics_port" "$probe_port" "$namespace" "$service" "$path" <<'PY' || exit 1
import sys, yaml
deploy, tmp, metrics_port, probe_port, ns, service, path = sys.argv[1:8]
shipped = yaml.safe_load(open(f"{deploy}/monitoring/prometheus/scrape-config.yaml"))
jobs = shipped["scrape_configs"]
assert len(jobs) == 1 and jobs[0]["kubernetes_sd_configs"][0]["role"] == "endpoints", jobs
job = jobs[0]
assert ns in job["kubernetes_sd_configs"][0]["namespaces"]["names"], "the job does not look in " + ns
del job["kubernetes_sd_configs"]
job["scrape_interval"] = "1s"
def endpoint(port, port_name, pod):
    # The labels of Prometheus' endpoints discovery for one endpoint port of the Service.
    return {"targets": [f"127.0.0.1:{port}"],
            "labels": {"__meta_kubernetes_namespace": ns,
                       "__meta_kubernetes_service_name": service,
                       "__meta_kubernetes_endpoint_port_name": port_name,
                       "__meta_kubernetes_service_annotation_prometheus_io_scrape": "true",
                       "__meta_kubernetes_service_annotation_prometheus_io_path": path,
                       "__meta_kubernetes_pod_name": pod}}
job["static_configs"] = [endpoint(metrics_port, "metrics", "tessera-scheduler-0"),
                         endpoint(probe_port, "probes", "tessera-scheduler-0")]
config = {"global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
          "rule_files": [f"{deploy}/monitoring/prometheus/alert-rules.yaml"],
          "scrape_configs": [job]}
yaml.safe_dump(config, open(f"{tmp}/prometheus.yml", "w"))
PY
if promtool check config "$tmp/prometheus.yml" >"$tmp/check-config.out" 2>&1; then
  echo "ok   promtool check config: the shipped job with a static endpoint"
else
  echo "FAIL promtool check config:"; cat "$tmp/check-config.out"; exit 1
fi
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
  --web.listen-address="127.0.0.1:$prom_port" >"$tmp/prom.log" 2>&1 &
prom_pid=$!

# One scrape before the traffic: the counters' first samples must be the zeros, or rate()
# over the window sees no increase (a series that first appears at its final value).
scraped=""
for _ in $(seq 300); do
  if curl -sf -m 2 "http://127.0.0.1:$prom_port/api/v1/query?query=up" 2>/dev/null |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; sys.exit(0 if any(x["value"][1]=="1" for x in r) else 1)' 2>/dev/null; then
    scraped=1; break
  fi
  sleep 0.2
done
if [ -z "$scraped" ]; then echo "FAIL Prometheus did not scrape the target within 60 s"; tail -5 "$tmp/prom.log"; exit 1; fi

# 4. Traffic with curl: two 4-GPU nodes, pending GPU pods (3 LS by label, 1 Burstable by
#    priority, 1 BE), four of them bound through /filter and /bind.
post_json() { curl -sSf -m 10 -H 'Content-Type: application/json' --data-binary "$2" "$1"; }
for n in n1 n2; do
  post_json "$fake/api/v1/nodes" '{"apiVersion":"v1","kind":"Node","metadata":{"name":"'$n'","labels":{"tessera.io/gpu-model":"A10","tessera.io/gpu-memory":"24576"}},"spec":{},"status":{"allocatable":{"cpu":"16","memory":"64Gi","tessera.io/gpu":"4"}}}' >/dev/null
done
for _ in $(seq 100); do
  curl -sf -m 5 "$tessera/readyz" >/dev/null && [ "$(curl -sf -m 5 "$tessera/state" | python3 -c 'import json,sys; print(json.load(sys.stdin)["gpu_capacity_milli"])')" = 8000 ] && break
  sleep 0.1
done
pod() {  # pod NAME MILLI LABELS-JSON PRIORITY-JSON
  echo '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"'"$1"'","labels":'"$3"'},"spec":{"schedulerName":"tessera-scheduler","priority":'"$4"',"containers":[{"name":"main","image":"x","resources":{"limits":{"cpu":"1","memory":"1Gi","tessera.io/gpu":"1","tessera.io/gpu-milli":"'"$2"'"}}}]}}'
}
post_json "$fake/api/v1/namespaces/ml/pods" "$(pod ls-0 500 '{"tessera.io/class":"LS"}' 0)" >/dev/null
post_json "$fake/api/v1/namespaces/ml/pods" "$(pod ls-1 500 '{"tessera.io/class":"LS"}' 0)" >/dev/null
post_json "$fake/api/v1/namespaces/ml/pods" "$(pod ls-2 500 '{"tessera.io/class":"LS"}' 0)" >/dev/null
post_json "$fake/api/v1/namespaces/ml/pods" "$(pod bu-0 1000 '{}' 600)" >/dev/null
post_json "$fake/api/v1/namespaces/ml/pods" "$(pod be-0 1000 '{}' 0)" >/dev/null
sleep 1.5  # the LS pods wait past their 1 s SLO
curl -sSf -m 10 "$fake/api/v1/pods" >"$tmp/pods.json"
bound=0
for name in ls-0 ls-1 ls-2 bu-0; do
  python3 -c '
import json, sys
pod = next(p for p in json.load(open(sys.argv[1]))["items"] if p["metadata"]["name"] == sys.argv[2])
json.dump({"Pod": pod, "Nodes": None, "NodeNames": ["n1", "n2"]}, open(sys.argv[3], "w"))
print(pod["metadata"]["uid"])' "$tmp/pods.json" "$name" "$tmp/filter.json" >"$tmp/uid"
  curl -sSf -m 10 -H 'Content-Type: application/json' --data-binary @"$tmp/filter.json" "$tessera/filter" >"$tmp/filtered.json"
  node=$(python3 -c 'import json,sys; print((json.load(sys.stdin).get("NodeNames") or [""])[0])' <"$tmp/filtered.json")
  [ -n "$node" ] || { echo "FAIL filter passed no node for $name: $(cat "$tmp/filtered.json")"; fails=$((fails + 1)); continue; }
  answer=$(post_json "$tessera/prioritize" "$(cat "$tmp/filter.json")" >/dev/null &&
    post_json "$tessera/bind" '{"PodName":"'$name'","PodNamespace":"ml","PodUID":"'"$(cat "$tmp/uid")"'","Node":"'$node'"}')
  if python3 -c 'import json,sys; sys.exit(1 if json.loads(sys.argv[1]).get("Error") else 0)' "$answer"; then
    bound=$((bound + 1))
  else
    echo "FAIL bind $name to $node: $answer"; fails=$((fails + 1))
  fi
done
echo "ok   curl: 2 nodes and 5 GPU pods posted, $bound bound through /filter, /prioritize and /bind"

# 5. Through Prometheus' HTTP API.
set +e
python3 - "http://127.0.0.1:$prom_port" "$deploy" "$tmp" "$metrics_port" "$namespace" "$scheme" "$path" "$bound" <<'PY'
import json, math, subprocess, sys, time, urllib.parse, urllib.request
import yaml
prom, deploy, tmp, metrics_port, ns, scheme, path, bound = sys.argv[1:9]
bound = int(bound)
fails = 0
def check(ok, what):
    global fails
    print(("ok   " if ok else "FAIL ") + what)
    fails += not ok
def get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())
def query(expr):
    r = get(f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
    if r.get("status") != "success":
        raise RuntimeError(f"{expr}: {r}")
    return r["data"]["result"]
def until(what, fn, timeout=60):
    deadline, last = time.time() + timeout, None
    while time.time() < deadline:
        try:
            last = fn()
            if last:
                return last
        except Exception as e:  # not up yet
            last = e
        time.sleep(0.2)
    print(f"FAIL timed out waiting for {what} (last: {last})")
    sys.exit(1)
def scalar(expr):
    res = query(expr)
    return float(res[0]["value"][1]) if res else None

# The target: the Service's endpoint at its path; the decoy port dropped by the relabelling.
targets = until("the tessera target up", lambda: (lambda t: t if t["activeTargets"] and all(
    a["health"] == "up" for a in t["activeTargets"]) else None)(get(f"{prom}/api/v1/targets")["data"]))
active = targets["activeTargets"]
want_url = f"{scheme}://127.0.0.1:{metrics_port}{path}"
check(len(active) == 1 and active[0]["scrapeUrl"] == want_url and
      active[0]["labels"].get("namespace") == ns and active[0]["labels"].get("job") == "tessera" and
      active[0]["labels"].get("pod") == "tessera-scheduler-0",
      f"one active target, {want_url}, labels {active[0]['labels'] if active else None}")
dropped = [d["discoveredLabels"].get("__meta_kubernetes_endpoint_port_name")
           for d in targets.get("droppedTargets", [])]
check(dropped == ["probes"], f"the job's relabelling drops the endpoint of another port: {dropped}")

# The traffic reached Prometheus (a few scrapes later, for the rate windows too).
until(f"{bound} binds in Prometheus", lambda: scalar('max(tessera_binds_total{result="ok"})') == bound)
time.sleep(3)
counts = {s["metric"]["class"]: float(s["value"][1])
          for s in query("max by (class) (tessera_scheduling_wait_seconds_count)")}
check(counts.get("LS") == 3 and counts.get("Burstable") == 1 and sum(counts.values()) == bound,
      f"wait histogram count by class = the pods bound: {counts}")

# Every dashboard query returns data.
dashboard = json.load(open(f"{deploy}/monitoring/grafana/grafana-dashboard.json"))
exprs = [(p["title"], t["expr"]) for p in dashboard["panels"] for t in p["targets"]]
empty = []
for title, expr in exprs:
    res = query(expr)
    values = [float(s["value"][1]) for s in res]
    print(f"     {title}: {expr[:70]}{'...' if len(expr) > 70 else ''} -> "
          f"{len(res)} series {[round(v, 3) for v in values[:4]]}")
    if not res:
        empty.append(expr)
check(not empty, f"all {len(exprs)} dashboard queries return data" +
      ("" if not empty else "; empty: " + "; ".join(empty)))
ls_p99 = scalar('histogram_quantile(0.99, max by (le) (rate(tessera_scheduling_wait_seconds_bucket{class="LS"}[5m])))')
check(ls_p99 is not None and math.isfinite(ls_p99) and ls_p99 > 1,
      f"the LS p99 panel shows the waits past the 1 s SLO: {ls_p99}")
alloc = scalar('max by (model) (tessera_gpu_model_allocated_milli) / max by (model) (tessera_gpu_model_capacity_milli)')
check(alloc is not None and abs(alloc - 2500 / 8000) < 1e-9,
      f"the allocation panel: A10 {alloc} = (3 x 500 + 1000) / 8000 milli")

# The alert rules: loaded and evaluated; promtool on the file and on the PrometheusRule.
until("the rules evaluated", lambda: all(r["health"] == "ok" and r.get("lastEvaluation", "").startswith("2")
      for g in get(f"{prom}/api/v1/rules")["data"]["groups"] for r in g["rules"]))
rules = [r["name"] for g in get(f"{prom}/api/v1/rules")["data"]["groups"] for r in g["rules"]]
plain = yaml.safe_load(open(f"{deploy}/monitoring/prometheus/alert-rules.yaml"))
check(len(rules) == sum(len(g["rules"]) for g in plain["groups"]) and rules,
      f"Prometheus loaded and evaluates the alert rules: {rules}")
operator = yaml.safe_load(open(f"{deploy}/monitoring/prometheus-operator/prometheus-rule.yaml"))
check(operator["kind"] == "PrometheusRule" and operator["spec"]["groups"] == plain["groups"],
      "the PrometheusRule's groups are alert-rules.yaml's")
yaml.safe_dump({"groups": operator["spec"]["groups"]}, open(f"{tmp}/operator-rules.yaml", "w"))
for f in (f"{deploy}/monitoring/prometheus/alert-rules.yaml", f"{tmp}/operator-rules.yaml"):
    pc = subprocess.run(["promtool", "check", "rules", f], capture_output=True, text=True)
    check(pc.returncode == 0, f"promtool check rules {f.replace(tmp, '$tmp')}: " +
          (pc.stdout + pc.stderr).strip().splitlines()[-1])
sys.exit(1 if fails else 0)
PY
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
  fails=$((fails + 1))
  echo "--- tessera serve stderr (tail)"; tail -20 "$tmp/serve.err"
  echo "--- prometheus log (tail)"; tail -20 "$tmp/prom.log"
fi
if [ "$fails" -ne 0 ]; then echo "$fails failure(s)"; exit 1; fi
echo "all ok"
