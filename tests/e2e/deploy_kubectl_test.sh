#!/usr/bin/env bash
# deploy/ through kubectl itself, without a cluster: each kustomization builds with nothing on
# stderr (a deprecated field's warning fails it) and lists its objects — deploy/ 14, the
# monitoring folders' (grafana/: the dashboard ConfigMap, labelled for Grafana's sidecar;
# prometheus/: the rules ConfigMap; prometheus-operator/: a ServiceMonitor and a
# PrometheusRule); kubectl's decoder reads every manifest and the examples (`kubectl annotate
# --local -o json`); `kubectl apply -k --dry-run=client` applies each folder as the docs say
# (and `-f` each example) against the test suite's fake API server (tessera_fake_apiserver:
# discovery maps each kind to its resource, the Prometheus Operator's CRDs included; an
# unknown kind is refused); and every `kubectl ... -f|-k deploy/...` in the docs and manifests
# names a kustomization with -k and a file with -f. tests/deploy/manifests_test.cc checks the
# wiring; deploy/plan, deploy/record and deploy/analyze have their own scripts.
set -euo pipefail
: "${TESSERA_SOURCE_DIR:?}"
if ! command -v kubectl >/dev/null; then echo "SKIP: kubectl not installed"; exit 0; fi
src="$TESSERA_SOURCE_DIR"
deploy="$src/deploy"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

# kustomize NAME DIR WANT: `kubectl kustomize DIR` into $tmp/NAME.yaml, with WANT objects and
# nothing on stderr.
kustomize() {
  local name=$1 dir=$2 want=$3 n
  if ! kubectl kustomize "$dir" >"$tmp/$name.yaml" 2>"$tmp/$name.err"; then
    fail "kustomize $name:"; cat "$tmp/$name.err"; return
  fi
  if [ -s "$tmp/$name.err" ]; then
    fail "kustomize $name printed on stderr (a deprecated field?):"; cat "$tmp/$name.err"; return
  fi
  n=$(grep -c '^kind:' "$tmp/$name.yaml" || true)
  if [ "$n" -eq "$want" ]; then echo "ok   kustomize $name: $n objects, no warning"; else fail "kustomize $name: $n objects, want $want"; fi
}
kustomize all "$deploy" 14
kustomize grafana "$deploy/monitoring/grafana" 1
kustomize prometheus "$deploy/monitoring/prometheus" 1
kustomize operator "$deploy/monitoring/prometheus-operator" 2
if grep -q 'grafana-dashboard.json:' "$tmp/grafana.yaml" && grep -q 'grafana_dashboard: "1"' "$tmp/grafana.yaml" &&
  grep -q 'alert-rules.yaml:' "$tmp/prometheus.yaml" && ! grep -q 'grafana_dashboard' "$tmp/prometheus.yaml" &&
  grep -q '^kind: ServiceMonitor' "$tmp/operator.yaml" && grep -q '^kind: PrometheusRule' "$tmp/operator.yaml"; then
  echo "ok   monitoring: the dashboard ConfigMap alone carries grafana_dashboard; rules; ServiceMonitor, PrometheusRule"
else
  fail "monitoring: a file or the dashboard label is missing, or the rules carry the label"
fi
# The warning check can fail: a kustomization with a deprecated field prints a warning (where
# kubectl's kustomize has deprecations: v5; Debian 12's kubectl 1.20 has kustomize v2).
mkdir "$tmp/deprecated"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n' >"$tmp/deprecated/cm.yaml"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, labels: {a: b}}\n' >"$tmp/deprecated/patch.yaml"
printf 'resources: [cm.yaml]\npatchesStrategicMerge: [patch.yaml]\n' >"$tmp/deprecated/kustomization.yaml"
if kubectl kustomize "$tmp/deprecated" >/dev/null 2>"$tmp/deprecated.err" && [ -s "$tmp/deprecated.err" ]; then
  echo "ok   a deprecated field's warning is seen: $(head -1 "$tmp/deprecated.err" | cut -c1-80)"
else
  echo "note this kubectl's kustomize prints no deprecation warning ($(kubectl version --client 2>/dev/null | head -1 | cut -c1-60))"
fi

for f in "$deploy"/*.yaml "$deploy"/examples/*.yaml "$deploy"/monitoring/prometheus-operator/*.yaml; do
  [ "$(basename "$f")" = kustomization.yaml ] && continue
  if kubectl annotate --local -f "$f" tessera.io/checked=yes -o json >"$tmp/out.json" 2>"$tmp/err"; then
    if grep -q '"tessera.io/checked": "yes"' "$tmp/out.json"; then
      echo "ok   ${f#"$deploy"/}"
    else
      fail "${f#"$deploy"/}: annotation missing from kubectl's output"
    fi
  else
    fail "${f#"$deploy"/}:"; cat "$tmp/err"
  fi
done

# The docs' commands: -k for a folder with a kustomization, -f for a file, nothing else. A
# stale path (a folder that moved) or `apply -f deploy/` (kubectl would read
# kustomization.yaml as an object and fail) fails here.
cmds=0
while IFS= read -r hit; do
  where=${hit%%:kubectl*}
  cmd="kubectl${hit#*:kubectl}"
  flag=$(sed -E 's/.* (-[fk]) +deploy.*/\1/' <<<"$cmd")
  path=$(sed -E 's/.* -[fk] +(deploy[^ `),;]*).*/\1/' <<<"$cmd")
  cmds=$((cmds + 1))
  if [ "$flag" = -k ]; then
    [ -f "$src/${path%/}/kustomization.yaml" ] || fail "$where: '$cmd': $path has no kustomization.yaml"
  elif [ -d "$src/$path" ]; then
    fail "$where: '$cmd': $path is a folder: kubectl apply -k, not -f"
  else
    [ -f "$src/$path" ] || fail "$where: '$cmd': no such file $path"
  fi
done < <(cd "$src" && grep -rnoE 'kubectl [a-z]+( [^ `]+)* -[fk] +deploy[^ `),;]*' \
  README.md docs deploy scripts --include='*.md' --include='*.yaml' --include='*.sh')
if [ "$cmds" -ge 8 ]; then echo "ok   $cmds kubectl commands on deploy/ in the docs and manifests: -k for folders, -f for files"; else fail "only $cmds kubectl commands on deploy/ found in the docs"; fi

# kubectl apply --dry-run=client, against the fake API server (its discovery).
if [ -n "${TESSERA_FAKE_APISERVER:-}" ] && [ -x "$TESSERA_FAKE_APISERVER" ]; then
  mkfifo "$tmp/stdin"
  "$TESSERA_FAKE_APISERVER" <"$tmp/stdin" >"$tmp/url" &
  fake_pid=$!
  exec 3>"$tmp/stdin"  # the fake serves until this closes
  for _ in $(seq 100); do [ -s "$tmp/url" ] && break; sleep 0.05; done
  url=$(head -1 "$tmp/url")
  dry() { kubectl apply --dry-run=client --validate=false --server="$url" "$@"; }
  for k in ".:14" "monitoring/grafana:1" "monitoring/prometheus:1" "monitoring/prometheus-operator:2"; do
    dir=${k%:*} want=${k#*:}
    if dry -k "$deploy/$dir" >"$tmp/dry" 2>"$tmp/err" &&
      [ "$(grep -c 'created (dry run)' "$tmp/dry")" -eq "$want" ]; then
      echo "ok   kubectl apply -k deploy/${dir#.} --dry-run=client: $want objects"
    else
      fail "kubectl apply -k deploy/${dir#.} --dry-run=client:"; cat "$tmp/dry" "$tmp/err"
    fi
  done
  for f in "$deploy"/examples/*.yaml; do
    if dry -f "$f" >"$tmp/dry" 2>"$tmp/err"; then
      echo "ok   kubectl apply --dry-run=client -f $(basename "$f")"
    else
      fail "kubectl apply --dry-run=client -f $(basename "$f"):"; cat "$tmp/err"
    fi
  done
  printf 'apiVersion: apps/v1\nkind: Deploymnt\nmetadata: {name: x, namespace: tessera}\n' >"$tmp/typo.yaml"
  if dry -f "$tmp/typo.yaml" >/dev/null 2>&1; then
    fail "an unknown kind passed kubectl apply --dry-run=client"
  else
    echo "ok   an unknown kind is refused by kubectl apply --dry-run=client"
  fi
  exec 3>&-
  wait "$fake_pid" || true
else
  fail "tessera_fake_apiserver not built (TESSERA_FAKE_APISERVER)"
fi

# A broken manifest is caught (the check can fail).
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: [oops\n' >"$tmp/bad.yaml"
if kubectl annotate --local -f "$tmp/bad.yaml" a=b -o json >/dev/null 2>&1; then
  fail "malformed YAML accepted"
else
  echo "ok   malformed YAML rejected"
fi

if [ "$fails" -ne 0 ]; then echo "$fails failure(s)"; exit 1; fi
echo "all ok"
