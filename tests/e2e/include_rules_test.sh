#!/usr/bin/env bash
# The include rule of docs/ARCHITECTURE.md holds on src/ (tests/tools/include_rules.py), and the
# check fails where it must: on a copy of src/ with a forbidden edge added (the server reaching
# into the replay, the engine into the API objects), a folder the table does not place, and a
# table with a cycle, each named in its output.
set -euo pipefail
src=${TESSERA_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
check="$src/tests/tools/include_rules.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

python3 "$check" "$src" || fail "the tree breaks the include rule (above)"

copy() {
  rm -rf "$tmp/t" && mkdir -p "$tmp/t/docs" "$tmp/t/tests/tools"
  cp -r "$src/src" "$tmp/t/src"
  cp "$src/docs/ARCHITECTURE.md" "$tmp/t/docs/"
}
expect_fail() { # what, pattern
  if python3 "$check" "$tmp/t" >"$tmp/out" 2>&1; then
    fail "$1: the check passed"
  fi
  grep -q -- "$2" "$tmp/out" || { cat "$tmp/out" >&2; fail "$1: no line matching '$2'"; }
  echo "ok: $1 -> $(grep -m1 -- "$2" "$tmp/out")"
}

copy
echo '#include "replay/replay.h"' >>"$tmp/t/src/k8s/extender/pod_state.cc"
expect_fail "the server includes the replay" 'src/k8s/extender/pod_state.cc:.*k8s/extender -> replay'

copy
sed -i '1i #include "k8s/api/objects.h"' "$tmp/t/src/sched/scheduler.cc"
expect_fail "the engine includes an API object" 'src/sched/scheduler.cc:1: sched -> k8s/api'

copy
echo '#include "plan/planner.h"' >>"$tmp/t/src/report/summary.cc"
expect_fail "a report includes the planner above it" 'src/report/summary.cc:.*report -> plan'

copy
mkdir "$tmp/t/src/newfolder" && echo '#include "model/pod.h"' >"$tmp/t/src/newfolder/x.h"
expect_fail "an unplaced folder" 'src/newfolder/: a folder the layers table'

copy
sed -i 's/^model         -> util$/model         -> util sched/' "$tmp/t/docs/ARCHITECTURE.md"
expect_fail "a cycle in the table" 'cycle'
echo "OK: the include rule holds and its check fails on each break"
