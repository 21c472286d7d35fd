#!/usr/bin/env bash
# `tessera replay` against `tessera serve` at scale: the `tessera` replay policy (tessera
# placement, backlog headroom) run in-process and through the server's HTTP verbs on a fake API
# server (tests/k8s/extender/serve_replay_test.cc, ServeReplayAtScale), beside k8s-default, on
# the default trace at docs/REPLAY.md's contention level (time scale 50, 84 nodes) and on the
# notebooks scenario. Prints the per-class table of each and whether the runs agree event for
# event; fails if they do not, or if a tessera run misses BE >= 90 % of k8s-default's GPU-hours,
# an SLO class served worse than under k8s-default, or the LS p99 above its SLO.
#
# Usage: bench/serve_replay.sh [BUILD_DIR]        (default: build; needs tessera_tests)
# Environment: SEEDS (the node draws of the trace, "42"); PLACEMENT, FACTOR, WINDOW_S (the
# tessera policy's placement, headroom factor and window, as `tessera replay`'s
# --tessera-placement, --headroom-factor and --headroom-window-s; default: the policy's own);
# TESSERA_DATA_DIR is compiled in (../shared/data/alibaba-gpu-v2023/csv; the trace test skips
# without it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
tests=$build/tests/tessera_tests
[ -x "$tests" ] || { echo "serve_replay: $tests not built" >&2; exit 1; }
export TESSERA_SERVE_REPLAY_SCALE=1
export TESSERA_SERVE_REPLAY_PLACEMENT=${PLACEMENT:-} TESSERA_SERVE_REPLAY_FACTOR=${FACTOR:-}
export TESSERA_SERVE_REPLAY_WINDOW_S=${WINDOW_S:-}
"$tests" --gtest_filter='ServeReplayAtScale.NotebooksScenario'
for seed in ${SEEDS:-42}; do
  TESSERA_SERVE_REPLAY_SEED=$seed "$tests" --gtest_filter='ServeReplayAtScale.DefaultTrace*'
done
