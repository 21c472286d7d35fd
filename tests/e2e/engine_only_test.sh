#!/usr/bin/env bash
# The engine builds alone: CMake configured with TESSERA_ENGINE_ONLY=ON looks for no package but
# the C++ toolchain's threads, builds tessera_engine (src/util, model, frag, policy, sched) and a
# program that links nothing else (tests/tools/engine_smoke.cc), which must then place pods.
# The compiler's own dependency lists (ninja -t deps) must name no header of nlohmann-json,
# yaml-cpp, cpp-httplib, Boost, OpenSSL, prometheus-cpp or GLPK: those are installed on this
# machine, so a stray include would otherwise compile.
set -euo pipefail
src=${TESSERA_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S "$src" -B "$tmp/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSERA_ENGINE_ONLY=ON \
  "${launcher[@]}" >"$tmp/configure.log" 2>&1 || {
  tail -n 20 "$tmp/configure.log" >&2
  fail "configure failed"
}
# The configuration looked for none of the other packages.
if grep -Eiq 'nlohmann|yaml-cpp|httplib|boost|openssl|prometheus|glpk' "$tmp/build/CMakeCache.txt"; then
  fail "the engine-only configuration looked for a library: $(grep -Ei 'nlohmann|yaml-cpp|httplib|boost|openssl|prometheus|glpk' "$tmp/build/CMakeCache.txt" | head -n 3)"
fi
cmake --build "$tmp/build" -j "$(nproc)" --target tessera_engine_smoke >"$tmp/build.log" 2>&1 || {
  tail -n 30 "$tmp/build.log" >&2
  fail "the engine alone does not build"
}
echo "ok   tessera_engine and tessera_engine_smoke built with no package but the toolchain"

headers=$(ninja -C "$tmp/build" -t deps | grep -E '^ +/' | sort -u)
[ -n "$headers" ] || fail "ninja -t deps listed no header: cannot check"
stray=$(grep -E 'nlohmann|yaml-cpp|httplib|/boost/|openssl|prometheus|glpk' <<<"$headers" || true)
[ -z "$stray" ] || fail "the engine reads third-party headers: $(head -n 5 <<<"$stray")"
echo "ok   $(wc -l <<<"$headers") headers read, none of a third-party library"

"$tmp/build/tessera_engine_smoke" || fail "tessera_engine_smoke failed"
echo "OK: the engine builds, links and runs alone"
