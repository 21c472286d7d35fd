#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz/ (clang-14, ASan + UBSan, build folder
# build-fuzz, or --build-dir) and runs each for a bounded, seeded time from its committed seed corpus
# (docs/DEVELOPING.md, "Fuzzing"):
#   bash scripts/fuzz.sh                       every harness, 25 s each (scripts/test.sh runs this)
#   bash scripts/fuzz.sh --seconds 600 NAME... the named harnesses (e.g. extender_filter), longer
#   --jobs N    harnesses run at once (default: the CPUs)
#   --seed N    libFuzzer's -seed (default 1): a run is repeatable on the same machine
#   --build-only
#   --build-dir DIR   build and run in DIR (default build-fuzz); a folder already configured
#               with TESSERA_FUZZ=ON (scripts/test.sh's build-asan) is used as it is
# The seed corpus (tests/fuzz/corpus/NAME/) is read, never written: inputs the run finds go to
# DIR/runs/NAME/corpus/, its log to DIR/runs/NAME/log, a crash or a failed check to
# DIR/runs/NAME/crash-* (DIR: the build folder). Exits non-zero when a harness failed; prints a table of
# executions and coverage (libFuzzer's cov: edges, ft: features) per harness.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=25
jobs=$(nproc)
seed=1
build_only=0
build_dir=build-fuzz
names=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --build-only) build_only=1; shift ;;
    --build-dir) build_dir=$2; shift 2 ;;
    -*) echo "usage: $0 [--seconds N] [--jobs N] [--seed N] [--build-only] [HARNESS...]" >&2; exit 2 ;;
    *) names+=("${1%_fuzz}"); shift ;;
  esac
done
if [ ${#names[@]} -eq 0 ]; then
  for f in tests/fuzz/*_fuzz.cc; do
    n=$(basename "$f" .cc)
    names+=("${n%_fuzz}")
  done
fi

# The flags of the sanitizer build of scripts/test.sh (-O1 -g1, a unity build of src/).
if ! grep -qs '^TESSERA_FUZZ:BOOL=ON' "$build_dir/CMakeCache.txt"; then
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DTESSERA_FUZZ=ON -DTESSERA_TESTS=OFF \
    -DTESSERA_BENCH=OFF -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=8 >/dev/null
fi
targets=()
for n in "${names[@]}"; do targets+=("${n}_fuzz"); done
cmake --build "$build_dir" -j "$(nproc)" --target "${targets[@]}"
[ "$build_only" -eq 1 ] && exit 0

root=$(pwd)
bdir=$(cd "$build_dir" && pwd)
run_one() {
  local name=$1 dir=$bdir/runs/$1
  rm -rf "$dir"
  mkdir -p "$dir/corpus"
  # The dictionary of the input's format: Kubernetes JSON, or the file's own keys.
  local dict=()
  case "$name" in
    extender_* | api_* | analyze_snapshot) dict=(-dict="$root/tests/fuzz/kube_json.dict") ;;
    *) [ -f "tests/fuzz/$name.dict" ] && dict=(-dict="$root/tests/fuzz/$name.dict") ;;
  esac
  # -timeout: an input slower than 10 s is a finding; -rss_limit_mb: so is 2 GiB of memory.
  (cd "$dir" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$bdir/tests/fuzz/${name}_fuzz" -seed="$seed" -max_total_time="$seconds" \
    -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 -artifact_prefix=./ \
    "${dict[@]}" corpus "$root/tests/fuzz/corpus/$name") >"$dir/log" 2>&1
}

pids=()
declare -A pid_name=()
failed=()
wait_one() {
  local pid=$1
  if ! wait "$pid"; then failed+=("${pid_name[$pid]}"); fi
}
for n in "${names[@]}"; do
  if [ ! -d "tests/fuzz/corpus/$n" ]; then
    echo "fuzz: no seed corpus tests/fuzz/corpus/$n" >&2
    failed+=("$n")
    continue
  fi
  echo "fuzz: $n (${seconds}s)" >&2
  run_one "$n" &
  pid_name[$!]=$n
  pids+=($!)
  if [ ${#pids[@]} -ge "$jobs" ]; then
    wait_one "${pids[0]}"
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait_one "$p"; done

printf '%-20s %6s %10s %7s %7s %s\n' harness seeds execs cov ft result >&2
for n in "${names[@]}"; do
  log=$bdir/runs/$n/log
  [ -f "$log" ] || continue
  seeds=$(find "tests/fuzz/corpus/$n" -type f | wc -l)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  result=ok
  if printf '%s\n' "${failed[@]}" | grep -qx "$n"; then result="FAILED (see $log)"; fi
  printf '%-20s %6s %10s %7s %7s %s\n' "$n" "$seeds" "${execs:-?}" "${cov:-?}" "${ft:-?}" \
    "$result" >&2
done
if [ ${#failed[@]} -gt 0 ]; then
  for n in "${failed[@]}"; do
    echo "== fuzz: $n failed; the end of $bdir/runs/$n/log:" >&2
    tail -40 "$bdir/runs/$n/log" >&2 || true
  done
  exit 1
fi
