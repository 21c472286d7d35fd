#!/usr/bin/env bash
# The locking of the server is checked by the compiler: every source of src/k8s/ is compiled
# with clang's -Wthread-safety as an error (the flags of the Release build's
# compile_commands.json, syntax only), so that a member declared TESSERA_GUARDED_BY(mutex_)
# (util/mutex.h) read or written without the lock, or a *Locked method called without it, fails
# this test. Then the check is shown to fail where it must: a file that reads a guarded member
# without the lock, and one that calls a method that requires it from a method that does not
# hold it, are both refused with the analysis' message.
set -euo pipefail
src=${TESSERA_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=$(dirname "${TESSERA:-$src/build/tessera}")
clang=${CLANGXX:-clang++-14}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
command -v "$clang" >/dev/null ||
  fail "$clang is missing (bash scripts/deps.sh --test installs clang-14, as for the fuzz harnesses)"
[ -f "$build/compile_commands.json" ] || fail "no $build/compile_commands.json (configure the build first)"

# One line per source of src/k8s/: the directory, then the compiler's arguments without the
# output, the dependency file and the optimisation, GCC-only warnings dropped.
python3 - "$build/compile_commands.json" "$src/src/k8s/" >"$tmp/commands" <<'PY'
import json, shlex, sys
entries, prefix = json.load(open(sys.argv[1])), sys.argv[2]
for e in entries:
    if not e["file"].startswith(prefix):
        continue
    args, out, skip = shlex.split(e["command"])[1:], [], False
    for a in args:
        if skip:
            skip = False
        elif a in ("-o", "-MF", "-MT"):
            skip = True
        elif a not in ("-c", "-MD") and not a.startswith("-O") and a != "-Wno-restrict":
            out.append(a)
    print(shlex.quote(e["directory"]) + " " + " ".join(shlex.quote(a) for a in out))
PY
count=$(wc -l <"$tmp/commands")
if [ "$count" -eq 0 ] && grep -q -- '-Wthread-safety' "$build/compile_commands.json"; then
  # A clang build (the ASan one, a unity build whose commands name no source): it compiled
  # every file with -Wthread-safety and -Werror itself.
  echo "ok: $build compiles everything with clang -Wthread-safety -Werror (a clang build)"
  count=skip
fi
[ "$count" = skip ] || [ "$count" -gt 20 ] ||
  fail "only $count sources of src/k8s/ in compile_commands.json"
check() { # directory, then the arguments
  local dir=$1
  shift
  (cd "$dir" && "$clang" -fsyntax-only -Wthread-safety -Werror=thread-safety \
    -Wno-unknown-warning-option "$@")
}
export -f check
export clang
if [ "$count" != skip ]; then
  if ! xargs -P "$(nproc)" -L 1 bash -c 'check "$@"' _ <"$tmp/commands" >"$tmp/out" 2>&1; then
    grep -E 'error|warning' "$tmp/out" | head -n 20 >&2
    fail "a lock the code needs is not held (clang -Wthread-safety, above)"
  fi
  echo "ok: $count sources of src/k8s/ pass clang -Wthread-safety"
fi

# The check refuses what it must.
cat >"$tmp/bad.cc" <<'CC'
#include "util/mutex.h"
struct Model {
  tessera::Mutex mutex_;
  int pods_ TESSERA_GUARDED_BY(mutex_) = 0;
  int CountLocked() TESSERA_REQUIRES(mutex_) { return pods_; }
  int Good() {
    tessera::MutexLock lock(mutex_);
    return CountLocked();
  }
  int UNGUARDED_READ() { return pods_; }
  int UNLOCKED_CALL() { return CountLocked(); }
};
int main() { return Model().Good(); }
CC
if "$clang" -std=c++20 -fsyntax-only -Wthread-safety -Werror=thread-safety -I"$src/src" \
  "$tmp/bad.cc" >"$tmp/bad.out" 2>&1; then
  fail "a read without the lock and a call without it compiled"
fi
grep -q "reading variable 'pods_' requires holding mutex 'mutex_'" "$tmp/bad.out" ||
  { cat "$tmp/bad.out" >&2; fail "the unguarded read was not the error"; }
grep -q "calling function 'CountLocked' requires holding mutex 'mutex_'" "$tmp/bad.out" ||
  { cat "$tmp/bad.out" >&2; fail "the unlocked call was not the error"; }
[ "$(grep -c 'error:' "$tmp/bad.out")" -eq 2 ] || { cat "$tmp/bad.out" >&2; fail "expected exactly two errors"; }
echo "ok: an unguarded read and an unlocked call are refused"
