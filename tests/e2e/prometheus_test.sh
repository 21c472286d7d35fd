#!/usr/bin/env bash
# The SLO metrics of `tessera serve` through a real Prometheus (Debian's prometheus package):
# the extender runs against the fake API server process (tessera_fake_apiserver), Prometheus
# scrapes it every second on loopback, and a scripted sequence plays the pods' life — GPU pods
# created pending (three LS by label, one Burstable by priority, two BE; plus a GPU pod of
# another scheduler and a CPU pod, which must not count), five of them bound through the
# extender's /filter and /bind with curl, then all deleted. Through Prometheus' HTTP API it
# checks that the queue depth rose to 6 and fell to 0, that the wait histogram's count equals
# the pods bound (per class), the SLO counters (LS beyond its 1 s SLO, Burstable within its
# 60 s), and that every query of deploy/monitoring/grafana/grafana-dashboard.json returns data.
# Also: `promtool check metrics` on /metrics, `promtool check rules` on the alert rules (and
# Prometheus loads and evaluates them; `promtool test rules` fires the per-model headroom alert
# on scripted series), the dashboard against tests/e2e/grafana_dashboard.schema.json
# (python3-jsonschema), and every metric name in every panel query is one /metrics exports.
# Skips only when prometheus is not installed.
set -euo pipefail
: "${TESSERA:?}" "${TESSERA_SOURCE_DIR:?}" "${TESSERA_FAKE_APISERVER:?}"
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
if ! command -v prometheus >/dev/null || ! command -v promtool >/dev/null; then
  echo "SKIP: prometheus not installed (bash scripts/deps.sh --test installs it)"
  exit 0
fi
need_tools curl python3
need_python_module jsonschema python3-jsonschema
rules="$TESSERA_SOURCE_DIR/deploy/monitoring/prometheus/alert-rules.yaml"
dashboard="$TESSERA_SOURCE_DIR/deploy/monitoring/grafana/grafana-dashboard.json"
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

# promtool check rules: the rules file as shipped, and a broken one is caught.
if promtool check rules "$rules" >"$tmp/rules.out" 2>&1; then
  echo "ok   promtool check rules: $(grep -o '[0-9]* rules found' "$tmp/rules.out")"
else
  echo "FAIL promtool check rules:"; cat "$tmp/rules.out"; fails=$((fails + 1))
fi
printf 'groups:\n  - name: x\n    rules:\n      - alert: A\n        expr: rate(x[5m] > 1\n' \
  >"$tmp/bad-rules.yaml"
if promtool check rules "$tmp/bad-rules.yaml" >/dev/null 2>&1; then
  echo "FAIL promtool check rules accepted a broken expression"; fails=$((fails + 1))
else
  echo "ok   promtool check rules refuses a broken expression"
fi
# promtool test rules: a model's headroom alert fires for the model short of its floor only
# (A10: 2 idle of 4 kept; V100M16: 1 idle, none kept; T4: 3 idle of 2 kept).
cat >"$tmp/model-headroom-test.yaml" <<YAML
rule_files: [$rules]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - {series: 'tessera_model_headroom_target_gpus{model="A10"}', values: '4x20'}
      - {series: 'tessera_model_idle_gpus{model="A10"}', values: '2x20'}
      - {series: 'tessera_model_headroom_target_gpus{model="V100M16"}', values: '0x20'}
      - {series: 'tessera_model_idle_gpus{model="V100M16"}', values: '1x20'}
      - {series: 'tessera_model_headroom_target_gpus{model="T4"}', values: '2x20'}
      - {series: 'tessera_model_idle_gpus{model="T4"}', values: '3x20'}
    alert_rule_test:
      - {eval_time: 5m, alertname: TesseraModelHeadroomExhausted, exp_alerts: []}
      - eval_time: 15m
        alertname: TesseraModelHeadroomExhausted
        exp_alerts:
          - exp_labels: {severity: warning, model: A10}
            exp_annotations:
              summary: "Fewer idle A10 GPUs than the headroom kept for that GPU model"
              description: "4 A10 GPUs kept (headroom.models); held pods wait for A10 nodes, and LS pods that need A10 may wait or preempt next."
YAML
if promtool test rules "$tmp/model-headroom-test.yaml" >"$tmp/rules-test.out" 2>&1; then
  echo "ok   promtool test rules: TesseraModelHeadroomExhausted fires for A10 only, after 10 m"
else
  echo "FAIL promtool test rules:"; cat "$tmp/rules-test.out"; fails=$((fails + 1))
fi

# The fake API server, fed over HTTP (POST nodes/pods, DELETE pods).
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
# The classes spelled out (they are the defaults), so that the config file's classes: key is
# what the extender runs with.
cat >"$tmp/tessera.yaml" <<YAML
listen: 127.0.0.1:0
policy: fgd
kubernetes:
  kubeconfig: $tmp/kubeconfig
  readNodeBeforeBind: true
schedulerNames: [tessera-scheduler]
classes:
  - {name: LS, priority: 1000, sloWaitSeconds: 1, preemptible: false, useHeadroom: true}
  - {name: Guaranteed, priority: 900, sloWaitSeconds: 10, preemptible: false}
  - {name: Burstable, priority: 500, sloWaitSeconds: 60}
  - {name: BE, priority: 0}
YAML
"$TESSERA" serve --config "$tmp/tessera.yaml" >"$tmp/serve.out" 2>"$tmp/serve.err" &
serve_pid=$!
port=$(listening_port "$serve_pid" "$tmp/serve.out" "$tmp/serve.err") || exit 1
echo "ok   tessera serve on port $port against the fake API server"

prom_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$tmp/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $rules
scrape_configs:
  - job_name: tessera
    static_configs:
      - targets: ["127.0.0.1:$port"]
YAML
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
  --web.listen-address="127.0.0.1:$prom_port" >"$tmp/prom.log" 2>&1 &
prom_pid=$!

# The sequence and the checks through Prometheus' HTTP API.
set +e
python3 - "$fake" "http://127.0.0.1:$port" "http://127.0.0.1:$prom_port" \
  "$dashboard" "$TESSERA_SOURCE_DIR/tests/e2e/grafana_dashboard.schema.json" \
  "$tmp" "$rules" <<'PY'
import json, re, subprocess, sys, time, urllib.parse, urllib.request

fake, tessera, prom, dashboard_path, schema_path, tmp, rules_path = sys.argv[1:8]
fails = 0

def check(ok, what):
    global fails
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        fails += 1

def http(method, url, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read() or b"null")

def until(what, fn, timeout=60):
    """Polls fn (0.2 s steps) until it returns a true value; the scrape interval is 1 s."""
    deadline = time.time() + timeout
    last = None
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

def query(expr):
    q = urllib.parse.urlencode({"query": expr})
    r = http("GET", f"{prom}/api/v1/query?{q}")
    if r.get("status") != "success":
        raise RuntimeError(f"{expr}: {r}")
    return r["data"]["result"]

def by_class(expr):
    return {s["metric"].get("class", ""): float(s["value"][1]) for s in query(expr)}

def scalar(expr):
    res = query(expr)
    return float(res[0]["value"][1]) if res else None

# Ready, and scraped.
until("tessera serve /readyz", lambda: urllib.request.urlopen(f"{tessera}/readyz", timeout=5).status == 200)
until("Prometheus scraping tessera serve", lambda: scalar('up{job="tessera"}') == 1)
check(True, "Prometheus scrapes tessera serve every 1 s")

def node(name):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": "uid-" + name,
                         "labels": {"tessera.io/gpu-model": "A10", "tessera.io/gpu-memory": "24576"}},
            "spec": {},
            "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "tessera.io/gpu": "4"}}}

def pod(name, milli=1000, gpus=1, label=None, priority=None, scheduler="tessera-scheduler"):
    limits = {"cpu": "1", "memory": "1Gi"}
    if gpus:
        limits["tessera.io/gpu"] = str(gpus)
        limits["tessera.io/gpu-milli"] = str(milli)
    spec = {"schedulerName": scheduler,
            "containers": [{"name": "main", "image": "x", "resources": {"limits": limits}}]}
    if priority is not None:
        spec["priority"] = priority
    meta = {"name": name, "labels": {"tessera.io/class": label} if label else {}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}

for n in ("n1", "n2"):
    http("POST", f"{fake}/api/v1/nodes", node(n))
until("both nodes in the model", lambda: http("GET", f"{tessera}/state")["gpu_capacity_milli"] == 8000)

# 1. Pending: 3 LS (label), 1 Burstable (priority 600), 2 BE (priority 0); not counted: a GPU
#    pod of another scheduler and a CPU-only pod.
pods = [pod("ls-0", 500, label="LS"), pod("ls-1", 500, label="LS"), pod("ls-2", 500, label="LS"),
        pod("bu-0", priority=600), pod("be-0", priority=0), pod("be-1", priority=0),
        pod("other-0", scheduler="default-scheduler"), pod("cpu-0", gpus=0)]
for p in pods:
    http("POST", f"{fake}/api/v1/namespaces/ml/pods", p)
want_pending = {"LS": 3, "Guaranteed": 0, "Burstable": 1, "BE": 2}
seen = until("Prometheus to show the queue of 6",
             lambda: (lambda d: d if d == want_pending else None)(
                 by_class("max by (class) (tessera_pending_gpu_pods)")))
print(f"     queue depth by class (Prometheus): {json.dumps(seen, sort_keys=True)}")
check(seen == want_pending, "queue depth rose: LS 3, Burstable 1, BE 2, Guaranteed 0")
state = http("GET", f"{tessera}/state")
classes = {c["name"]: c for c in state["classes"]}
check([c["name"] for c in state["classes"]] == ["LS", "Guaranteed", "Burstable", "BE"] and
      classes["LS"]["slo_wait_seconds"] == 1 and classes["BE"]["slo_wait_seconds"] is None and
      classes["LS"]["use_headroom"] and classes["LS"]["pending"] == 3,
      "/state classes: names, SLOs, useHeadroom, pending counts")
check(sorted(p["pod"] for p in state["pending"]) ==
      ["ml/be-0", "ml/be-1", "ml/bu-0", "ml/ls-0", "ml/ls-1", "ml/ls-2"] and
      all(p["waiting_seconds"] >= 0 for p in state["pending"]),
      "/state pending: the 6 GPU pods with their class and wait")

# 2. Bound through the extender as kube-scheduler does (filter, then bind to a passing node),
#    after 2.5 s: LS waits exceed their 1 s SLO, Burstable's stay within 60 s.
time.sleep(2.5)
objects = {p["metadata"]["name"]: p for p in http("GET", f"{fake}/api/v1/pods")["items"]}
bound = ["ls-0", "ls-1", "ls-2", "bu-0", "be-0"]
for name in bound:
    p = objects[name]
    f = http("POST", f"{tessera}/filter", {"Pod": p, "Nodes": None, "NodeNames": ["n1", "n2"]})
    if not f.get("NodeNames"):
        check(False, f"filter passed no node for {name}: {f}")
        continue
    b = http("POST", f"{tessera}/bind", {"PodName": name, "PodNamespace": "ml",
                                         "PodUID": p["metadata"]["uid"], "Node": f["NodeNames"][0]})
    check(not b.get("Error"), f"bind {name} to {f['NodeNames'][0]}: {b.get('Error') or 'ok'}")
want_after = {"LS": 0, "Guaranteed": 0, "Burstable": 0, "BE": 1}
after = until("Prometheus to show the queue after the binds",
              lambda: (lambda d: d if d == want_after else None)(
                  by_class("max by (class) (tessera_pending_gpu_pods)")))
check(after == want_after, "queue depth fell: BE 1 left, the others 0")
counts = until("the wait histogram's counts",
               lambda: (lambda d: d if sum(d.values()) == len(bound) else None)(
                   by_class("max by (class) (tessera_scheduling_wait_seconds_count)")))
print(f"     wait histogram _count by class (Prometheus): {json.dumps(counts, sort_keys=True)}")
check(counts == {"LS": 3, "Guaranteed": 0, "Burstable": 1, "BE": 1},
      f"wait histogram count = pods bound ({len(bound)}): LS 3, Burstable 1, BE 1")
binds_ok = scalar('tessera_binds_total{result="ok"}')
check(binds_ok == len(bound), f"tessera_binds_total{{result=\"ok\"}} = {binds_ok}")
ls_sum = scalar('tessera_scheduling_wait_seconds_sum{class="LS"}')
print(f"     LS wait sum {ls_sum:.3f} s over 3 pods")
check(ls_sum is not None and ls_sum >= 3 * 2.5 - 3, "LS waits include the 2.5 s before the binds")
slo = {(s["metric"]["class"], s["metric"]["result"]): float(s["value"][1])
       for s in query("tessera_slo_pods_total")}
print(f"     SLO counters: {json.dumps({f'{c}/{r}': v for (c, r), v in sorted(slo.items())})}")
check(slo.get(("LS", "beyond")) == 3 and slo.get(("LS", "within")) == 0 and
      slo.get(("Burstable", "within")) == 1 and slo.get(("Burstable", "beyond")) == 0 and
      ("BE", "within") not in slo, "SLO counters: LS 3 beyond, Burstable 1 within, BE none")
le1 = scalar('tessera_scheduling_wait_seconds_bucket{class="LS", le="1"}')
check(le1 == 0, f"LS bucket le=1 s holds {le1} pods (all waited > 2.5 s)")
alloc = scalar("tessera_gpu_allocated_milli")
model = {s["metric"]["model"]: float(s["value"][1]) for s in query("tessera_gpu_model_allocated_milli")}
check(alloc == 3500 and model == {"A10": 3500},
      f"allocation 3500 milli (3 x 500 + 2 x 1000): total {alloc}, by model {model}")
# Per GPU model: one model here, so its idle GPUs are the cluster's; no floor is kept.
idle = scalar("max(tessera_idle_gpus)")
model_idle = {s["metric"]["model"]: float(s["value"][1]) for s in query("tessera_model_idle_gpus")}
model_kept = {s["metric"]["model"]: float(s["value"][1])
              for s in query("tessera_model_headroom_target_gpus")}
check(idle is not None and model_idle == {"A10": idle} and model_kept == {"A10": 0},
      f"idle GPUs per model {model_idle} (cluster {idle}), kept per model {model_kept}")
frag = scalar("tessera_gpu_fragmentation_milli")
stranded = scalar("tessera_gpu_stranded_milli")
print(f"     fragmentation {frag} milli, stranded {stranded} milli, idle {scalar('tessera_gpu_idle_milli')} milli")
check(frag is not None and stranded is not None and 0 <= stranded <= 8000 - 3500,
      "fragmentation and stranded GPU exported, stranded within idle")

# 3. Every dashboard query returns data (now that the sequence has run).
dashboard = json.load(open(dashboard_path))
exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
empty = [e for e in exprs if not query(e)]
check(not empty, f"all {len(exprs)} dashboard queries return data" +
      ("" if not empty else ": empty: " + "; ".join(empty)))

# 4. Deleted: the queue empties.
for p in pods:
    http("DELETE", f"{fake}/api/v1/namespaces/ml/pods/{p['metadata']['name']}")
until("Prometheus to show an empty queue",
      lambda: scalar("sum(tessera_pending_gpu_pods)") == 0)
peak = scalar("max_over_time(sum(tessera_pending_gpu_pods)[5m:1s])")
now = scalar("sum(tessera_pending_gpu_pods)")
print(f"     queue depth over the run: peak {peak}, now {now}")
check(peak == 6 and now == 0, "queue depth rose to 6 and fell to 0")
final = by_class("max by (class) (tessera_scheduling_wait_seconds_count)")
check(sum(final.values()) == len(bound), f"deleted pods add no waits: count {sum(final.values())}")

# 5. The alert rules load and evaluate in Prometheus.
rules = http("GET", f"{prom}/api/v1/rules")["data"]["groups"]
healths = {r["name"]: r["health"] for g in rules for r in g["rules"]}
until("the rules to be evaluated", lambda: all(
    r["health"] == "ok" for g in http("GET", f"{prom}/api/v1/rules")["data"]["groups"] for r in g["rules"]))
check(len(healths) == 5, f"Prometheus loaded the alert rules: {sorted(healths)}")

# 6. The exposition: promtool check metrics, and every panel's metric names are exported.
text = urllib.request.urlopen(f"{tessera}/metrics", timeout=5).read().decode()
open(f"{tmp}/metrics.txt", "w").write(text)
pc = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
check(pc.returncode == 0, "promtool check metrics: " + ((pc.stdout + pc.stderr).strip() or "no problems"))
exported = set()
for m in re.finditer(r"^# TYPE (\S+) (\S+)$", text, re.M):
    name, kind = m.groups()
    exported.add(name)
    if kind == "histogram":
        exported |= {name + "_bucket", name + "_count", name + "_sum"}
used = set(n for e in exprs for n in re.findall(r"\btessera_[a-z0-9_]+", e))
missing = sorted(used - exported)
check(not missing, f"the {len(used)} metric names of the panels are all in /metrics" +
      ("" if not missing else ": missing " + ", ".join(missing)))
rule_text = open(rules_path).read()
rule_missing = sorted(set(re.findall(r"\btessera_[a-z0-9_]+", rule_text)) - exported)
check(not rule_missing, "the alert rules' metric names are all in /metrics" +
      ("" if not rule_missing else ": missing " + ", ".join(rule_missing)))

# 7. The dashboard against the schema; a dashboard without targets fails it.
import jsonschema
schema = json.load(open(schema_path))
try:
    jsonschema.validate(dashboard, schema)
    check(True, f"dashboard matches the schema ({len(dashboard['panels'])} panels)")
except jsonschema.ValidationError as e:
    check(False, f"dashboard schema: {e.message} at {list(e.absolute_path)}")
broken = json.loads(json.dumps(dashboard))
del broken["panels"][0]["targets"]
try:
    jsonschema.validate(broken, schema)
    check(False, "a panel without targets passed the schema")
except jsonschema.ValidationError:
    check(True, "a panel without targets fails the schema")

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
