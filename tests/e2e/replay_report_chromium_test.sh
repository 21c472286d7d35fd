#!/usr/bin/env bash
# End-to-end: `tessera replay` on the embedded peak-sale scenario with a cluster-size sweep
# writes report.html; headless Chromium renders it, and we check what a reader would see: the
# headline table with every class that has an SLO, the queue depth of each class, tessera's
# headroom against the idle GPUs, allocation and fragmentation over time, the latency-
# utilization frontier (LS p99 against GPU allocation, a marker per measured run), the sweep
# table and the two charts against cluster size, one line per policy in each, and a screenshot
# that is a real picture.
#
# Environment (set by ctest): TESSERA = path of the tessera binary.
# Optional: TESSERA_ARTIFACTS = folder to keep replay-report.png in for people.
set -euo pipefail

source "$(dirname "$0")/chromium.sh"

out="$tmp/out"

"$TESSERA" replay -q --scenario peak-sale --policy tessera,k8s-default,fgd --sweep-nodes 30,40 \
  --samples 100 --out "$out" >"$tmp/replay.log" 2>&1 || {
  tail -n 20 "$tmp/replay.log" >&2
  fail "tessera replay exited non-zero"
}
[[ -s "$out/report.html" ]] || fail "no report.html"
chromium_self_contained "$out/report.html"

chromium_render "$out/report.html" 1280x5200 "$tmp/dom.html" "$tmp/replay.png"

svgs=$(grep -o '<svg[ >]' "$tmp/dom.html" | wc -l)
[[ $svgs -eq 8 ]] || fail "expected 8 charts (2 queues, headroom, allocation, fragmentation, frontier, 2 sweep), found $svgs"
for title in "Queue depth: LS" "Queue depth: BE" "Headroom kept for LS" "GPU allocation" \
  "Fragmentation ratio" "LS p99 wait against GPU allocation" "LS p99 wait against cluster size" \
  "BE GPU-hours served against cluster size" "Cluster-size sweep" "LS (SLO 1 s)"; do
  grep -qF "$title" "$tmp/dom.html" || fail "'$title' is missing"
done
# Each policy has one line in each chart but the headroom (tessera only: the others keep none).
for p in tessera k8s-default fgd; do
  want=7
  [[ $p == tessera ]] && want=8
  n=$(grep -o "<polyline class=\"series\" data-policy=\"$p\"" "$tmp/dom.html" | wc -l)
  [[ $n -eq $want ]] || fail "policy $p has $n lines, expected $want"
done
# Markers: per policy the main run (40 nodes) and the 30-node run in the frontier, and the two
# swept sizes in each chart against cluster size.
m=$(grep -o '<circle class="marker" data-policy="tessera"' "$tmp/dom.html" | wc -l)
[[ $m -eq 6 ]] || fail "$m tessera markers, expected 6 (2 in each of 3 charts)"
# The trade-off lines have one point per swept size (30 and 40 nodes).
pts=$(grep -o '<polyline class="series" data-policy="tessera"[^>]*points="[^"]*"' "$tmp/dom.html" |
  tail -n 1 | sed 's/.*points="//; s/"$//' | wc -w)
[[ $pts -eq 2 ]] || fail "the tessera trade-off line has $pts points, expected 2"
grep -q '<table' "$tmp/dom.html" || fail "the per-class table is missing"

chromium_check_screenshot "$tmp/replay.png" 1280x5200 replay-report.png
echo "OK: $svgs charts, 3 policies, screenshot 1280x5200 with $colours colours"
