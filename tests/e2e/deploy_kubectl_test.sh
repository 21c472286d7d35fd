#!/usr/bin/env bash
# deploy/ through kubectl itself, without a cluster: the kustomization builds and lists the 13
# objects (deploy/monitoring's: 2 ConfigMaps), kubectl's decoder reads every manifest and the
# examples (`kubectl annotate --local -o json`), and `kubectl apply --dry-run=client` accepts all of them against the test suite's
# fake API server (tessera_fake_apiserver: discovery maps each kind to its resource; an unknown
# kind is refused). tests/deploy/manifests_test.cc checks the wiring.
set -euo pipefail
: "${TESSERA_SOURCE_DIR:?}"
if ! command -v kubectl >/dev/null; then echo "SKIP: kubectl not installed"; exit 0; fi
deploy="$TESSERA_SOURCE_DIR/deploy"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

if kubectl kustomize "$deploy" >"$tmp/all.yaml" 2>"$tmp/err"; then
  n=$(grep -c '^kind:' "$tmp/all.yaml")
  if [ "$n" -eq 13 ]; then echo "ok   kustomize: $n objects"; else echo "FAIL kustomize: $n objects, want 13"; fails=$((fails + 1)); fi
else
  echo "FAIL kustomize:"; cat "$tmp/err"; fails=$((fails + 1))
fi

# The monitoring kustomization: the dashboard and the alert rules as two ConfigMaps.
if kubectl kustomize "$deploy/monitoring" >"$tmp/monitoring.yaml" 2>"$tmp/err"; then
  n=$(grep -c '^kind: ConfigMap' "$tmp/monitoring.yaml")
  if [ "$n" -eq 2 ] && grep -q 'grafana-dashboard.json:' "$tmp/monitoring.yaml" &&
    grep -q 'alert-rules.yaml:' "$tmp/monitoring.yaml"; then
    echo "ok   kustomize monitoring: $n ConfigMaps (dashboard, alert rules)"
  else
    echo "FAIL kustomize monitoring: $n ConfigMaps or a file missing"; fails=$((fails + 1))
  fi
else
  echo "FAIL kustomize monitoring:"; cat "$tmp/err"; fails=$((fails + 1))
fi

for f in "$deploy"/*.yaml "$deploy"/examples/*.yaml; do
  [ "$(basename "$f")" = kustomization.yaml ] && continue
  if kubectl annotate --local -f "$f" tessera.io/checked=yes -o json >"$tmp/out.json" 2>"$tmp/err"; then
    if grep -q '"tessera.io/checked": "yes"' "$tmp/out.json"; then
      echo "ok   $(basename "$f")"
    else
      echo "FAIL $(basename "$f"): annotation missing from kubectl's output"; fails=$((fails + 1))
    fi
  else
    echo "FAIL $(basename "$f"):"; cat "$tmp/err"; fails=$((fails + 1))
  fi
done

# kubectl apply --dry-run=client, against the fake API server (its discovery).
if [ -n "${TESSERA_FAKE_APISERVER:-}" ] && [ -x "$TESSERA_FAKE_APISERVER" ]; then
  mkfifo "$tmp/stdin"
  "$TESSERA_FAKE_APISERVER" <"$tmp/stdin" >"$tmp/url" &
  fake_pid=$!
  exec 3>"$tmp/stdin"  # the fake serves until this closes
  for _ in $(seq 100); do [ -s "$tmp/url" ] && break; sleep 0.05; done
  url=$(head -1 "$tmp/url")
  dry() { kubectl apply --dry-run=client --validate=false --server="$url" "$@"; }
  if dry -f "$tmp/all.yaml" >"$tmp/dry" 2>"$tmp/err" &&
    [ "$(grep -c 'created (dry run)' "$tmp/dry")" -eq 13 ]; then
    echo "ok   kubectl apply --dry-run=client: 13 objects"
  else
    echo "FAIL kubectl apply --dry-run=client:"; cat "$tmp/dry" "$tmp/err"; fails=$((fails + 1))
  fi
  if dry -f "$tmp/monitoring.yaml" >"$tmp/dry" 2>"$tmp/err" &&
    [ "$(grep -c 'created (dry run)' "$tmp/dry")" -eq 2 ]; then
    echo "ok   kubectl apply --dry-run=client: monitoring, 2 objects"
  else
    echo "FAIL kubectl apply --dry-run=client monitoring:"; cat "$tmp/dry" "$tmp/err"; fails=$((fails + 1))
  fi
  for f in "$deploy"/examples/*.yaml; do
    if dry -f "$f" >"$tmp/dry" 2>"$tmp/err"; then
      echo "ok   kubectl apply --dry-run=client $(basename "$f")"
    else
      echo "FAIL kubectl apply --dry-run=client $(basename "$f"):"; cat "$tmp/err"; fails=$((fails + 1))
    fi
  done
  printf 'apiVersion: apps/v1\nkind: Deploymnt\nmetadata: {name: x, namespace: tessera}\n' >"$tmp/typo.yaml"
  if dry -f "$tmp/typo.yaml" >/dev/null 2>&1; then
    echo "FAIL an unknown kind passed kubectl apply --dry-run=client"; fails=$((fails + 1))
  else
    echo "ok   an unknown kind is refused by kubectl apply --dry-run=client"
  fi
  exec 3>&-
  wait "$fake_pid" || true
else
  echo "FAIL tessera_fake_apiserver not built (TESSERA_FAKE_APISERVER)"; fails=$((fails + 1))
fi

# A broken manifest is caught (the check can fail).
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: [oops\n' >"$tmp/bad.yaml"
if kubectl annotate --local -f "$tmp/bad.yaml" a=b -o json >/dev/null 2>&1; then
  echo "FAIL malformed YAML accepted"; fails=$((fails + 1))
else
  echo "ok   malformed YAML rejected"
fi

if [ "$fails" -ne 0 ]; then echo "$fails failure(s)"; exit 1; fi
echo "all ok"
