#!/usr/bin/env bash
# The whole test suite (docs/DEVELOPING.md, "The test command"; CI runs exactly this, see .ci/run):
#   1. install what is missing (scripts/deps.sh --test: the build set and the test tools),
#   2. Release build of everything, benchmarks included (they are only compiled here, so CI
#      still proves they build), and every test: unit tests and all e2e scripts, then the
#      real-cluster tests (tests/cluster: a v1.37 control plane built from Go modules drives
#      `tessera serve` through deploy/; skipped, with what is missing, where Go is too old),
#   3. ASan + UBSan build with clang 14 (-O1 -g1, no benchmarks, libFuzzer's coverage; the
#      *_test.cc files at -O0, see
#      tests/CMakeLists.txt; the libraries and binaries as a unity build, below) and every unit
#      test under the sanitizers,
#      plus the e2e scripts that drive our binaries with inputs the unit tests do not: `tessera
#      serve` over real HTTP (serve_curl, serve_config) and the CLI on good and bad files
#      (replay_cli, cli_bad_input, cli_errors, cli_first_run).
#   4. the libFuzzer harnesses of tests/fuzz/, built in step 3's folder, each from its committed
#      seed corpus for 25 s, seeded (scripts/fuzz.sh; a longer run: docs/DEVELOPING.md,
#      "Fuzzing").
# Not run under the sanitizers (they ran in step 2):
#   - e2e.invariants (24 pod lists x 8 policies, ~2 min under ASan): the engine still runs the
#     whole default trace under the sanitizers in Reproduction.* and TesseraVsFgd.*;
#   - e2e.report_chromium, e2e.replay_report_chromium: most of their time is Chromium rendering
#     the HTML; the report writers they exercise run under the sanitizers in report_test.cc,
#     TesseraSlo.* and the replay_cli script (which writes a report);
#   - e2e.deploy_kubectl: runs only kubectl on deploy/, none of our code;
#   - e2e.image: reads the Dockerfile and deploy/ and runs ldd on the binary, none of our code;
#   - e2e.engine_only: configures and builds the engine alone in Release (its own build folder),
#     whatever the build it is started from.
# Precompiled headers (-DTESSERA_PCH=ON, see CMakeLists.txt) are not used here: measured, they
# save only about 7 % of compile CPU and, with g++ 12, need -Warray-bounds and
# -Wstringop-overflow turned off (false reports inside libstdc++), which CI should keep checking
# (docs/experiments/2026-12-07-build-time.md).
# Each section prints its elapsed time; a summary of all of them ends the output.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc)
sections=()
section_name=""
section_start=$SECONDS

end_section() {
  if [ -n "$section_name" ]; then
    local took=$((SECONDS - section_start))
    sections+=("$(printf '%5ds  %s' "$took" "$section_name")")
    echo "== done: $section_name (${took}s)" >&2
  fi
  section_name=""
}
section() {
  end_section
  section_name=$1
  section_start=$SECONDS
  echo >&2
  echo "== $section_name (at ${SECONDS}s)" >&2
}
summary() {
  local rc=$?
  end_section
  echo >&2
  echo "== test.sh: $([ "$rc" -eq 0 ] && echo PASSED || echo "FAILED (exit $rc)") in ${SECONDS}s" >&2
  printf '%s\n' "${sections[@]}" >&2
}
trap summary EXIT

section "deps"
bash scripts/deps.sh --test

section "Release build: everything, benchmarks included"
cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSERA_BENCH=ON >/dev/null
cmake --build build-test -j "$jobs"

section "Release tests: all unit tests and e2e scripts"
ctest --test-dir build-test --output-on-failure -j "$jobs" --timeout 1200 -LE cluster

# The real-cluster tests (tests/cluster/): Kubernetes v1.37 built from its Go modules into a
# cache outside the repository (first time ~10 minutes, then seconds), one control plane at a
# time, nothing else running beside them. Without a Go that can build it, or without the Go
# module proxy to fetch its modules from, build.sh says what is missing and the tests are
# reported as skipped.
section "Real-cluster tests: kube-apiserver, kube-scheduler, etcd, kwok (tests/cluster)"
cluster_rc=0
bash tests/cluster/build.sh >/dev/null || cluster_rc=$?
if [ "$cluster_rc" -eq 3 ]; then
  echo "test.sh: the real-cluster tests are skipped (above: what is missing)" >&2
  sections+=("    -   real-cluster tests SKIPPED: no Go, or no Go module proxy, to build Kubernetes (see above)")
elif [ "$cluster_rc" -ne 0 ]; then
  exit "$cluster_rc"
else
  ctest --test-dir build-test --output-on-failure -j 1 --timeout 1800 -L cluster
fi

section "ASan + UBSan build (clang 14): tessera, tessera_tests, the fuzz harnesses"
# clang 14 with ASan + UBSan and libFuzzer's coverage (TESSERA_FUZZ): one build serves the unit
# tests under the sanitizers and the fuzz harnesses of tests/fuzz/ (a second, fuzz-only build of
# the libraries cost ~700 s on this project's 2-core machine; the coverage adds ~50 s to the
# sanitizer tests). g++ still builds everything above, at -O3, with -Werror.
# -O1 -g1 instead of RelWithDebInfo's -O2 -g: much less compile CPU, for engine-heavy tests
# about 45 % slower (docs/experiments/2026-12-07-build-time.md); -g1 keeps file:line in the reports, and
# -DNDEBUG stays, so the same code is checked with the same -fno-sanitize-recover=all.
# A unity build (CMake batches of 8 source files): a third less compile time for src/; the test
# files keep one object each (CMake leaves out sources with their own compile options). The
# Release build above still compiles every file on its own, which checks each file's includes;
# here two file-local helpers of the same name in one batch are an error ("redefinition of"):
# give one of them another name, or share one helper in a header.
# A folder configured by an older script with g++ cannot switch compilers: start it afresh.
if [ -f build-asan/CMakeCache.txt ] &&
  ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++-14$' build-asan/CMakeCache.txt; then
  rm -rf build-asan
fi
CC=clang-14 CXX=clang++-14 cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DTESSERA_SANITIZE=ON -DTESSERA_FUZZ=ON \
  -DTESSERA_BENCH=OFF -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=8 >/dev/null
cmake --build build-asan -j "$jobs"

section "ASan + UBSan tests: all unit tests, the CLI and serve e2e scripts"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs" --timeout 1800 \
  -LE cluster \
  -E '^e2e\.(invariants|report_chromium|replay_report_chromium|plan_report_chromium|analyze_report_chromium|deploy_kubectl|image|engine_only)_test$'

section "Fuzzing: every harness of tests/fuzz/, 25 s each from its seed corpus"
bash scripts/fuzz.sh --build-dir build-asan --seconds 25 --jobs "$jobs"
end_section
