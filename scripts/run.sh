#!/usr/bin/env bash
# The main job: install what is missing, build Tessera, run `tessera frag` on the embedded
# default scenario (openb-like) and write the report to results/default/report.html.
# Extra arguments go to `tessera frag` (e.g. --policy fgd,bestfit --seeds 42-44).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSERA_TESTS=OFF -DTESSERA_BENCH=OFF >/dev/null
cmake --build build --target tessera
./build/tessera frag --out results/default "$@"
echo "Open results/default/report.html in a browser."
