#!/usr/bin/env bash
# The command line on wrong use: every option error exits 2 with "tessera <command>: error:",
# an unknown or missing command says so, a directory given as a file is called a directory,
# an unwritable --out stops the run before any computation; and --help shows what a first
# user needs (the tessera policy's defaults, the embedded scenarios).
set -euo pipefail
: "${TESSERA:?}"
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
fails=0
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

# Option errors found by the parser: exit 2, the command named, the parser's reason kept.
expect frag-range 2 "tessera frag: error: --threads: Value 5000 not in range" frag --threads 5000
expect frag-missing-value 2 "tessera frag: error: --seeds" frag --seeds
expect frag-unknown-option 2 "tessera frag: error: The following arguments were not expected: 1 --sedes" frag --sedes 1
expect replay-member 2 "tessera replay: error: --headroom-mode: x not in" replay --headroom-mode x
expect replay-range 2 "tessera replay: error: --time-scale" replay --time-scale 0
expect serve-range 2 "tessera serve: error: --spin-us" serve --spin-us -1
expect unknown-command 2 "tessera: error: unknown command 'fragment' (commands: frag, replay, record, serve" fragment
expect no-command 2 "tessera: error: no command given (commands: frag, replay, record, serve" 
expect top-level-option 2 "tessera: error: unknown option '--bogus' (options go after the command" --bogus

# --help and --version still succeed.
"$TESSERA" --help >/dev/null || fail "tessera --help: exit $?"
"$TESSERA" --version | grep -q "^tessera " || fail "tessera --version"

# A directory where a file is expected is called a directory, for every file option.
mkdir -p "$tmp/dir"
printf 'sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,T4\n' >"$tmp/nodes.csv"
expect frag-dir 2 "tessera frag: error: $tmp/dir: is a directory, not a file" frag --nodes "$tmp/nodes.csv" --pods "$tmp/dir"
expect scenario-dir 2 "$tmp/dir: is a directory, not a file" frag --scenario "$tmp/dir"
expect replay-dir 2 "tessera replay: error: $tmp/dir: is a directory, not a file" replay --nodes "$tmp/dir" --pods "$tmp/nodes.csv"
expect classes-dir 2 "$tmp/dir: is a directory, not a file" replay --classes "$tmp/dir"
expect serve-dir 2 "tessera serve: error: $tmp/dir: is a directory, not a file" serve --nodes "$tmp/dir"
if grep -q "empty" "$tmp"/*-dir.err; then fail "a directory is still reported as an empty file"; fi

# An unwritable --out is found before the runs: no run's progress line precedes the error.
touch "$tmp/file"
expect frag-out 2 "tessera frag: error: $tmp/file/out" frag --seeds 42-43 --out "$tmp/file/out"
if grep -q '^  \[1/' "$tmp/frag-out.err"; then fail "frag ran before checking --out"; fi
expect replay-out 2 "tessera replay: error: $tmp/file/out" replay --out "$tmp/file/out"
if grep -q 'done:' "$tmp/replay-out.err"; then fail "replay ran before checking --out"; fi
if [ "$(id -u)" -ne 0 ]; then  # permissions do not stop root
  mkdir -p "$tmp/ro" && chmod 555 "$tmp/ro"
  expect frag-readonly 2 "$tmp/ro: not writable" frag --seeds 42 --out "$tmp/ro"
fi

# --help: the tessera policy's defaults, and the embedded scenarios.
"$TESSERA" replay --help >"$tmp/replay-help.txt"
for want in "--headroom-mode TEXT:{backlog,forecast,static,none}=backlog" "--headroom-gpus FLOAT" \
  "--headroom-window-s FLOAT" "=5400" "--headroom-bucket-s FLOAT" "=60" "--headroom-factor FLOAT" \
  "=2.5" "--headroom-quantile FLOAT" "=0.99" "--headroom-yield-after FLOAT" "=0.25" \
  "--headroom-yield-keep FLOAT" "=0.2" "--preempt-delay-s FLOAT" "--tessera-placement TEXT=tessera" \
  "Embedded scenarios with a timeline: peak-sale"; do
  grep -qF -- "$want" "$tmp/replay-help.txt" || fail "replay --help lacks '$want'"
done
grep -E -- '--preempt-delay-s FLOAT[^=]*=0$' "$tmp/replay-help.txt" >/dev/null || fail "replay --help: no default for --preempt-delay-s"
if grep -qE -- '=-1$' "$tmp/replay-help.txt"; then fail "replay --help shows -1 as a default"; fi
"$TESSERA" frag --help >"$tmp/frag-help.txt"
for want in "Embedded scenarios" "  openb-like   The 1213 GPU nodes" "  peak-sale    40 eight-GPU nodes" \
  "Embedded scenario name (openb-like, peak-sale, mem-v100, mem-v100m16, mem-openb)" "--placements"; do
  grep -qF -- "$want" "$tmp/frag-help.txt" || fail "frag --help lacks '$want'"
done
echo "ok   --help texts"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all ok"
