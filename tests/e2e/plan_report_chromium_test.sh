#!/usr/bin/env bash
# End-to-end: `tessera plan` on two classes at equal load on one-GPU nodes, where k8s-default
# meets the LS SLO and tessera meets it with no mix of the catalog, writes report.html; headless
# Chromium renders it, and we check what a reader would see: the page styled as the other
# reports (cards on the grey background), the warning that tessera has no plan, the table
# with its "no plan" row, two charts (LS within its SLO, LS p99 wait on a log axis with the SLO
# as a dashed line) with one line per policy and a legend keyed by colour, and a screenshot that
# is a real picture.
#
# Environment (set by ctest): TESSERA = path of the tessera binary.
# Optional: TESSERA_ARTIFACTS = folder to keep plan-report.png in for people.
set -euo pipefail

source "$(dirname "$0")/chromium.sh"
src=${TESSERA_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
data=$src/tests/plan/testdata

out="$tmp/out"

"$TESSERA" plan --catalog "$data/one-gpu-catalog.yaml" --scenario "$data/two-classes.yaml" \
  --policy tessera,k8s-default --threads 2 -q --out "$out" >"$tmp/plan.log" 2>&1 || {
  tail -n 20 "$tmp/plan.log" >&2
  fail "tessera plan exited non-zero"
}
[[ -s "$out/report.html" ]] || fail "no report.html"
chromium_self_contained "$out/report.html"

chromium_render "$out/report.html" 1280x2400 "$tmp/dom.html" "$tmp/plan.png"

# The DOM as Chromium built it.
for what in '<main>' '<header class="card">' '<section class="card warnings" id="warnings">' \
  'tessera: no plan: no mix up to the catalog' '">no plan</td>' \
  'LS pods within 1 s against GPUs' 'LS p99 wait against GPUs (log scale)' '>SLO 1 s</text>' \
  '<g class="legend">' '<table class="summary plan">' 'Headroom for tessera.yaml' \
  'Demand forecast'; do
  grep -qF "$what" "$tmp/dom.html" || fail "'$what' is missing from the rendered page"
done
svgs=$(grep -o '<svg[ >]' "$tmp/dom.html" | wc -l)
[[ $svgs -eq 2 ]] || fail "expected 2 charts, found $svgs"
for p in tessera k8s-default; do
  n=$(grep -o "<polyline class=\"series\" data-policy=\"$p\"" "$tmp/dom.html" | wc -l)
  [[ $n -eq 2 ]] || fail "policy $p has $n lines, expected one per chart"
  # The legend names the policy next to a line of its colour.
  colour=$(grep -o "<polyline class=\"series\" data-policy=\"$p\" fill=\"none\" stroke=\"#[0-9a-f]*\"" \
    "$tmp/dom.html" | head -1 | sed 's/.*stroke="//; s/"$//')
  grep -qE "stroke=\"$colour\" stroke-width=\"3\"></line><text[^>]*>$p</text>" "$tmp/dom.html" ||
    fail "the legend has no $colour key for $p"
done
# The wait axis is logarithmic: ticks at 0, 1 s and 10 s at least.
for tick in '>0</text>' '>1 s</text>' '>10 s</text>'; do
  grep -qF "$tick" "$tmp/dom.html" || fail "the wait axis has no tick '$tick'"
done

# The screenshot: the right size, a real picture, on the reports' grey background (#f6f8fa).
chromium_check_screenshot "$tmp/plan.png" 1280x2400 plan-report.png
corner=$(chromium_corner "$tmp/plan.png")
[[ "$corner" == "srgb(246,248,250)" ]] || fail "not the reports' background: corner pixel $corner"
echo "OK: $svgs charts, 2 policies with a legend, the no-plan warning, screenshot 1280x2400 with $colours colours"
