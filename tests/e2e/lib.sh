# Helpers shared by the e2e scripts (sourced, not run). The script sets `tmp` (a scratch
# folder) and `fails=0` before it uses them (with_scratch does both), and ends with:
# [ "$fails" -eq 0 ] || exit 1.

fail() { echo "FAIL $*"; fails=$((fails + 1)); }

check() {  # check NAME FILE FIXED-STRING: FILE holds FIXED-STRING
  if grep -qF -- "$3" "$2"; then
    echo "ok   $1"
  else
    echo "FAIL $1: '$3' not in:"; cat "$2"; echo; fails=$((fails + 1))
  fi
}

expect() {  # expect NAME RC PATTERN ARGS...: `$TESSERA ARGS` exits RC with PATTERN on stderr
  local name=$1 want=$2 pattern=$3
  shift 3
  set +e
  "$TESSERA" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  local rc=$?
  set -e
  if [ "$rc" -ne "$want" ]; then fail "$name: exit $rc, want $want ($(tail -1 "$tmp/$name.err"))"; return; fi
  if ! grep -qF -- "$pattern" "$tmp/$name.err"; then
    fail "$name: stderr lacks '$pattern':"; cat "$tmp/$name.err"; return
  fi
  echo "ok   $name: $(grep -F -- "$pattern" "$tmp/$name.err" | head -1)"
}

require_tools() {  # require_tools TOOL...: SKIP (exit 0) when one is not installed
  local t
  for t in "$@"; do
    if ! command -v "$t" >/dev/null; then echo "SKIP: $t not installed"; exit 0; fi
  done
}

need_tools() {  # need_tools TOOL...: FAIL (exit 1) when one is missing (deps.sh --test installs it)
  local t
  for t in "$@"; do
    if ! command -v "$t" >/dev/null; then echo "FAIL: $t not installed"; exit 1; fi
  done
}

need_python_module() {  # need_python_module MODULE PACKAGE: FAIL (exit 1) when python3 lacks it
  if ! python3 -c "import $1" 2>/dev/null; then
    echo "FAIL: $2 not installed (bash scripts/deps.sh --test)"; exit 1
  fi
}

stop_pids() {  # stop_pids PID...: kills and reaps each non-empty PID that still runs
  local p
  for p in "$@"; do
    if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then
      kill "$p" 2>/dev/null || true
      wait "$p" 2>/dev/null || true
    fi
  done
}

with_scratch() {  # sets tmp (a scratch folder), pid="" and fails=0; on exit kills $pid
  tmp=$(mktemp -d)  # (a server the script started) if it still runs and removes $tmp
  pid=""
  fails=0
  trap 'if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi; rm -rf "$tmp"' EXIT
}

listening_port() {  # listening_port PID OUT ERR: prints the port of the "listening on
  # 127.0.0.1:PORT" line that the server PID writes to OUT within 10 s; else shows OUT and ERR on
  # stderr and fails (the caller: port=$(listening_port ...) || exit 1)
  local port
  for _ in $(seq 1 100); do
    port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$2" | head -1)
    if [ -n "$port" ]; then echo "$port"; return 0; fi
    kill -0 "$1" 2>/dev/null || break
    sleep 0.1
  done
  port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$2" | head -1)
  if [ -n "$port" ]; then echo "$port"; return 0; fi
  echo "FAIL: no 'listening on' line" >&2
  cat "$2" "$3" >&2
  return 1
}
