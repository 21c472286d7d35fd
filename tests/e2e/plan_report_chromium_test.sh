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

readonly CHROMIUM=/usr/bin/chromium
if [[ ! -x "$CHROMIUM" ]]; then
  echo "SKIP: chromium not installed"
  exit 0
fi
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
[[ -x "${TESSERA:-}" ]] || fail "TESSERA is not set to the tessera binary"
command -v convert >/dev/null || fail "ImageMagick 'convert' not found"
command -v identify >/dev/null || fail "ImageMagick 'identify' not found"
src=${TESSERA_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
data=$src/tests/plan/testdata

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tessera-plan-report.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
out="$tmp/out"

"$TESSERA" plan --catalog "$data/one-gpu-catalog.yaml" --scenario "$data/two-classes.yaml" \
  --policy tessera,k8s-default --threads 2 -q --out "$out" >"$tmp/plan.log" 2>&1 || {
  tail -n 20 "$tmp/plan.log" >&2
  fail "tessera plan exited non-zero"
}
[[ -s "$out/report.html" ]] || fail "no report.html"
if grep -Eq 'https?://[^"]*\.(js|css)|<script' "$out/report.html"; then
  fail "report.html is not self-contained (loads a script or stylesheet)"
fi

# shellcheck disable=SC2054  # the comma in --window-size=1280,2400 is meant
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-component-update --disable-sync
  --user-data-dir="$tmp/profile" --window-size=1280,2400)
url="file://$out/report.html"
timeout 120 "$CHROMIUM" "${flags[@]}" --dump-dom "$url" >"$tmp/dom.html" 2>"$tmp/dom.log" ||
  fail "chromium --dump-dom failed: $(tail -n 5 "$tmp/dom.log")"
timeout 120 "$CHROMIUM" "${flags[@]}" --screenshot="$tmp/plan.png" "$url" >"$tmp/shot.log" 2>&1 ||
  fail "chromium --screenshot failed: $(tail -n 5 "$tmp/shot.log")"

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
[[ -s "$tmp/plan.png" ]] || fail "no screenshot"
size=$(identify -format '%wx%h' "$tmp/plan.png")
[[ "$size" == "1280x2400" ]] || fail "screenshot is $size, expected 1280x2400"
colours=$(convert "$tmp/plan.png" -format %k info:)
[[ $colours -gt 50 ]] || fail "screenshot has only $colours colours: a blank or broken page"
corner=$(convert "$tmp/plan.png" -format '%[pixel:p{2,2}]' info:)
[[ "$corner" == "srgb(246,248,250)" ]] || fail "not the reports' background: corner pixel $corner"
if [[ -n "${TESSERA_ARTIFACTS:-}" ]]; then
  mkdir -p "$TESSERA_ARTIFACTS"
  cp "$tmp/plan.png" "$TESSERA_ARTIFACTS/plan-report.png"
fi
echo "OK: $svgs charts, 2 policies with a legend, the no-plan warning, screenshot $size with $colours colours"
