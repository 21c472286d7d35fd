#!/usr/bin/env bash
# End-to-end: `tessera frag` on the embedded default scenario writes report.html; headless
# Chromium renders it, and we check what a reader would see: two SVG charts with one line per
# policy and the ideal line, and a screenshot that is a real picture (not a blank page).
#
# Environment (set by ctest): TESSERA = path of the tessera binary.
# Optional: TESSERA_ARTIFACTS = folder to keep report.png (and report.html) in for people.
set -euo pipefail

source "$(dirname "$0")/chromium.sh"
out="$tmp/out"

# 1. The report, from the CLI.
echo "Running: $TESSERA frag --seeds 42-43 --out $out"
if ! "$TESSERA" frag --seeds 42-43 --out "$out" >"$tmp/frag.log" 2>&1; then
  tail -n 30 "$tmp/frag.log" >&2
  fail "tessera frag exited non-zero (log above)"
fi
for f in curve.csv report.html; do
  [[ -s "$out/$f" ]] || fail "tessera frag did not write $out/$f"
done
[[ ! -e "$out/placements.csv" ]] || fail "placements.csv written without --placements"
[[ "$(head -n 1 "$out/curve.csv")" == \
  "policy,seed,arrival_pct,arrived_pct,allocated_milli,unallocated_pct,frag_milli,frag_ratio" ]] ||
  fail "curve.csv header is '$(head -n 1 "$out/curve.csv")'"
chromium_self_contained "$out/report.html"

# 2. Render it in headless Chromium: a DOM dump and a screenshot.
chromium_render "$out/report.html" 1280x2000 "$tmp/dom.html" "$tmp/report.png"

# 3. The DOM as Chromium built it.
svgs=$(grep -o '<svg[ >]' "$tmp/dom.html" | wc -l)
[[ $svgs -eq 2 ]] || fail "expected 2 <svg> charts in the rendered DOM, found $svgs"
series=$(grep -o '<polyline class="series" data-policy="[^"]*"' "$tmp/dom.html" | wc -l)
[[ $series -ge 7 ]] ||
  fail "expected at least 7 <polyline class=\"series\" data-policy=...> lines, found $series"
ideal=$(grep -o '<polyline class="series ideal"' "$tmp/dom.html" | wc -l)
[[ $ideal -eq 1 ]] || fail "expected 1 ideal line (class=\"series ideal\"), found $ideal"
# Each policy has one line in each of the two charts.
odd=$(grep -o '<polyline class="series" data-policy="[^"]*"' "$tmp/dom.html" | sort | uniq -c |
  awk '$1 != 2' | wc -l)
[[ $odd -eq 0 ]] || fail "some policies do not have exactly one line per chart"
grep -q '<table class="summary"' "$tmp/dom.html" || fail "the summary table is missing"

# 4. The screenshot: right size and a real picture.
chromium_check_screenshot "$tmp/report.png" 1280x2000 report.png
[[ -z "${TESSERA_ARTIFACTS:-}" ]] || cp "$out/report.html" "$TESSERA_ARTIFACTS/report.html"
echo "OK: 2 charts, $series policy lines, screenshot 1280x2000 with $colours colours"
