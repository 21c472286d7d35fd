#!/usr/bin/env bash
# deploy/plan/ (tessera plan as an Indexed Job of shards and a merge Job) through kubectl,
# without a cluster: the kustomization builds four objects, kubectl's decoder reads each file,
# `kubectl apply --dry-run=client` accepts them against the test suite's fake API server, and
# the shard count is the same in the Job's completions, its --shard and the merge's glob.
set -euo pipefail
: "${TESSERA_SOURCE_DIR:?}"
if ! command -v kubectl >/dev/null; then echo "SKIP: kubectl not installed"; exit 0; fi
plan="$TESSERA_SOURCE_DIR/deploy/plan"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

if kubectl kustomize "$plan" >"$tmp/all.yaml" 2>"$tmp/err"; then
  n=$(grep -c '^kind:' "$tmp/all.yaml")
  [ "$n" -eq 4 ] && echo "ok   kustomize deploy/plan: $n objects" || fail "kustomize: $n objects, want 4"
else
  fail "kustomize:"; cat "$tmp/err"
fi
for f in "$plan"/plan-*.yaml; do
  if kubectl annotate --local -f "$f" tessera.io/checked=yes -o json >"$tmp/out.json" 2>"$tmp/err" &&
    grep -q '"tessera.io/checked": "yes"' "$tmp/out.json"; then
    echo "ok   $(basename "$f")"
  else
    fail "$(basename "$f"):"; cat "$tmp/err"
  fi
done
python3 - "$tmp/all.yaml" <<'PY' || fail "the shard count differs between the Jobs"
import re, sys
text = re.sub(r"\s+", " ", open(sys.argv[1]).read())  # kubectl folds long strings
completions = int(re.search(r"completions: (\d+)", text).group(1))
assert re.search(r"completionMode: Indexed", text)
assert f'--shard "$((JOB_COMPLETION_INDEX + 1))/{completions}"' in text, "--shard"
assert text.count(f"shard-*-of-{completions}.json") == 2, "merge glob"
assert f"-eq {completions}" in text, "wait-for-shards count"
print(f"ok   {completions} shards in completions, --shard, the wait and the merge")
PY
if [ -n "${TESSERA_FAKE_APISERVER:-}" ] && [ -x "$TESSERA_FAKE_APISERVER" ]; then
  mkfifo "$tmp/stdin"
  "$TESSERA_FAKE_APISERVER" <"$tmp/stdin" >"$tmp/url" &
  exec 3>"$tmp/stdin"
  for _ in $(seq 100); do [ -s "$tmp/url" ] && break; sleep 0.05; done
  url=$(head -1 "$tmp/url")
  if kubectl apply --dry-run=client --validate=false --server="$url" -f "$tmp/all.yaml" >"$tmp/dry" 2>"$tmp/err" &&
    [ "$(grep -c 'created (dry run)' "$tmp/dry")" -eq 4 ]; then
    echo "ok   kubectl apply --dry-run=client: 4 objects"
  else
    fail "kubectl apply --dry-run=client:"; cat "$tmp/dry" "$tmp/err"
  fi
  exec 3>&-
  wait
else
  echo "SKIP kubectl apply --dry-run=client: TESSERA_FAKE_APISERVER not set"
fi
if [ "$fails" -ne 0 ]; then echo "$fails failure(s)"; exit 1; fi
echo "deploy/plan checks passed"
