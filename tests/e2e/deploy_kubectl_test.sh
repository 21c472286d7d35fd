#!/usr/bin/env bash
# deploy/ through kubectl itself, offline (no cluster): the kustomization builds and lists the
# 15 objects, and kubectl's decoder reads every manifest and the example pod
# (`kubectl annotate --local -o json`). tests/deploy/manifests_test.cc checks the wiring.
set -euo pipefail
: "${TESSERA_SOURCE_DIR:?}"
if ! command -v kubectl >/dev/null; then echo "SKIP: kubectl not installed"; exit 0; fi
deploy="$TESSERA_SOURCE_DIR/deploy"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

if kubectl kustomize "$deploy" >"$tmp/all.yaml" 2>"$tmp/err"; then
  n=$(grep -c '^kind:' "$tmp/all.yaml")
  if [ "$n" -eq 15 ]; then echo "ok   kustomize: $n objects"; else echo "FAIL kustomize: $n objects, want 15"; fails=$((fails + 1)); fi
else
  echo "FAIL kustomize:"; cat "$tmp/err"; fails=$((fails + 1))
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

# A broken manifest is caught (the check can fail).
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: [oops\n' >"$tmp/bad.yaml"
if kubectl annotate --local -f "$tmp/bad.yaml" a=b -o json >/dev/null 2>&1; then
  echo "FAIL malformed YAML accepted"; fails=$((fails + 1))
else
  echo "ok   malformed YAML rejected"
fi

if [ "$fails" -ne 0 ]; then echo "$fails failure(s)"; exit 1; fi
echo "all ok"
