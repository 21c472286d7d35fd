#!/usr/bin/env bash
# The container image, without building it (scripts/build-image.sh builds and checks it; it
# needs docker or podman and minutes): the Dockerfile has a Debian 12 build stage and a runtime
# stage that runs as 65532 and installs no -dev package; the runtime packages of the binary we
# built are Debian library packages only; deploy/ runs the image the build script builds.
set -euo pipefail
: "${TESSERA:?}" "${TESSERA_SOURCE_DIR:?}"
src=$TESSERA_SOURCE_DIR
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

df="$src/Dockerfile"
[ -f "$df" ] || { echo "FAIL no Dockerfile"; exit 1; }
[ "$(grep -c '^FROM ' "$df")" -eq 2 ] || fail "Dockerfile: want two stages (build, runtime)"
grep -q '^ARG BUILD_BASE=docker.io/library/debian:bookworm$' "$df" || fail "Dockerfile: build stage not on Debian 12"
grep -q '^ARG BASE=docker.io/library/debian:bookworm-slim$' "$df" || fail "Dockerfile: runtime stage not on Debian 12 slim"
grep -q '^FROM ${BUILD_BASE} AS build$' "$df" || fail "Dockerfile: no build stage"
runtime=$(sed -n '/^FROM ${BASE}$/,$p' "$df")
[ -n "$runtime" ] || fail "Dockerfile: no runtime stage"
grep -q '^USER 65532:65532$' <<<"$runtime" || fail "Dockerfile: the runtime stage does not run as 65532"
if grep -q -- '-dev\b\|g++\|cmake\|deps.sh' <<<"$runtime"; then fail "Dockerfile: the runtime stage installs build tools"; fi
grep -q 'COPY --from=build /src/build/tessera /usr/local/bin/tessera' <<<"$runtime" || fail "Dockerfile: the binary is not copied"
echo "ok   Dockerfile: two Debian 12 stages, runtime as 65532 without build tools"

# What the runtime stage would install for the binary built here.
pkgs=$(bash "$src/scripts/runtime-packages.sh" "$TESSERA") || fail "runtime-packages.sh failed"
for want in libc6 libstdc++6 libyaml-cpp0.7 libglpk40; do
  grep -qx "$want" <<<"$pkgs" || fail "runtime packages lack $want: $(tr '\n' ' ' <<<"$pkgs")"
done
if grep -q -- '-dev$' <<<"$pkgs"; then fail "runtime packages include -dev packages"; fi
echo "ok   runtime packages: $(tr '\n' ' ' <<<"$pkgs")"

# deploy/ runs what the build script builds.
built=$(bash "$src/scripts/build-image.sh" --print-image)
deployed=$(sed -n 's/^ *image: *\(.*tessera.*\)$/\1/p' "$src/deploy/scheduler.yaml" | grep -v kube-scheduler)
[ "$built" = "$deployed" ] || fail "deploy/scheduler.yaml runs '$deployed', scripts/build-image.sh builds '$built'"
echo "ok   deploy/scheduler.yaml runs $deployed"

# The dependency split: scripts/run.sh installs no test-only package, scripts/test.sh all.
run_pkgs=$(bash "$src/scripts/deps.sh" --print)
test_pkgs=$(bash "$src/scripts/deps.sh" --test --print)
for p in chromium imagemagick kubernetes-client libgtest-dev libgmock-dev libbenchmark-dev curl openssl; do
  if grep -qx "$p" <<<"$run_pkgs"; then fail "scripts/deps.sh (run) installs the test-only $p"; fi
done
for p in chromium imagemagick libgtest-dev libbenchmark-dev curl openssl g++ cmake; do
  grep -qx "$p" <<<"$test_pkgs" || fail "scripts/deps.sh --test lacks $p"
done
grep -q '^bash scripts/deps.sh$' "$src/scripts/run.sh" || fail "run.sh does not install the run set"
grep -q '^bash scripts/deps.sh --test$' "$src/scripts/test.sh" || fail "test.sh does not install the test set"
echo "ok   dependencies: run $(wc -l <<<"$run_pkgs") packages, test $(wc -l <<<"$test_pkgs")"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all ok"
