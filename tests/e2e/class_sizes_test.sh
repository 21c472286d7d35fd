#!/usr/bin/env bash
# No class in src/ is over 800 lines, and the Extender's verbs class over 600
# (tests/tools/class_sizes.py: a class's body plus its members defined elsewhere, found by
# Universal Ctags); the check also fails where it must, on a copy of src/ with a class grown past
# its limit, and on a limit for a class that no longer exists.
set -euo pipefail
src=${TESSERA_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
check="$src/tests/tools/class_sizes.py"
limits=(--limit 800 --limit-of tessera::k8s::Extender=600)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
command -v ctags >/dev/null || fail "ctags not found (scripts/deps.sh --test installs universal-ctags)"

python3 "$check" "$src" "${limits[@]}" --top 5 || fail "a class of src/ is over its limit (above)"

# A copy of src/ where Extender::Unbind has grown by 700 lines (one statement per line).
rm -rf "$tmp/t" && mkdir -p "$tmp/t" && cp -r "$src/src" "$tmp/t/src"
python3 - "$tmp/t/src/k8s/extender/extender.cc" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
head = "bool Extender::Unbind(const std::string& uid) {\n"
assert head in text, "Extender::Unbind not found in extender.cc"
text = text.replace(head, head + "  (void)0;\n" * 700)
open(path, "w").write(text)
PY
if python3 "$check" "$tmp/t" "${limits[@]}" >"$tmp/out" 2>&1; then
  fail "a grown Extender passed the check"
fi
grep -q "FAIL tessera::k8s::Extender: .* (limit 600)" "$tmp/out" || {
  cat "$tmp/out" >&2
  fail "no line naming the grown Extender"
}
echo "ok: a grown class -> $(grep -m1 'FAIL tessera::k8s::Extender' "$tmp/out")"

if python3 "$check" "$src" --limit-of tessera::k8s::NoSuchClass=10 >"$tmp/out" 2>&1; then
  fail "a limit for a class that does not exist passed"
fi
grep -q "NoSuchClass: no such class" "$tmp/out" || {
  cat "$tmp/out" >&2
  fail "no line naming the unknown class"
}
echo "ok: a limit for an unknown class -> $(grep -m1 'NoSuchClass' "$tmp/out")"
echo "OK: every class of src/ is within its limit and the check fails on each break"
