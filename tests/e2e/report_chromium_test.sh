#!/usr/bin/env bash
# End-to-end: `tessera frag` on the embedded default scenario writes report.html; headless
# Chromium renders it, and we check what a reader would see: two SVG charts with one line per
# policy and the ideal line, and a screenshot that is a real picture (not a blank page).
#
# Environment (set by ctest): TESSERA = path of the tessera binary.
# Optional: TESSERA_ARTIFACTS = folder to keep report.png (and report.html) in for people.
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

[[ -n "${TESSERA:-}" ]] || fail "TESSERA is not set (path of the tessera binary)"
[[ -x "$TESSERA" ]] || fail "TESSERA=$TESSERA is not an executable"
command -v convert >/dev/null || fail "ImageMagick 'convert' not found"
command -v identify >/dev/null || fail "ImageMagick 'identify' not found"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tessera-report-e2e.XXXXXX")
out="$tmp/out"
ok=0
cleanup() {
  rm -rf "$tmp/profile"
  if [[ $ok -eq 1 ]]; then
    if [[ -n "${TESSERA_ARTIFACTS:-}" ]]; then
      rm -rf "$tmp"
    else
      # Keep only what a person may want to look at.
      rm -rf "$out" "$tmp"/*.log "$tmp/dom.html"
    fi
  else
    echo "(kept $tmp for inspection)" >&2
  fi
}
trap cleanup EXIT

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
if grep -Eq 'https?://|<script' "$out/report.html"; then
  fail "report.html is not self-contained (has a URL or a script)"
fi

# 2. Render it in headless Chromium: a DOM dump and a screenshot.
# shellcheck disable=SC2054  # the comma in --window-size=1280,2000 is meant
chromium_flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-component-update --disable-sync
  --user-data-dir="$tmp/profile" --window-size=1280,2000)
url="file://$out/report.html"

if ! timeout 120 "$CHROMIUM" "${chromium_flags[@]}" --dump-dom "$url" >"$tmp/dom.html" \
  2>"$tmp/chromium-dom.log"; then
  tail -n 20 "$tmp/chromium-dom.log" >&2
  fail "chromium --dump-dom failed (log above)"
fi
if ! timeout 120 "$CHROMIUM" "${chromium_flags[@]}" --screenshot="$tmp/report.png" "$url" \
  >"$tmp/chromium-shot.log" 2>&1; then
  tail -n 20 "$tmp/chromium-shot.log" >&2
  fail "chromium --screenshot failed (log above)"
fi

# 3. The DOM as Chromium built it.
[[ -s "$tmp/dom.html" ]] || fail "chromium dumped an empty DOM"
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
[[ -s "$tmp/report.png" ]] || fail "chromium wrote no screenshot"
size=$(identify -format '%wx%h' "$tmp/report.png") || fail "identify cannot read report.png"
[[ "$size" == "1280x2000" ]] || fail "screenshot is $size, expected 1280x2000"
colours=$(convert "$tmp/report.png" -format %k info:) || fail "convert cannot read report.png"
[[ $colours -gt 50 ]] || fail "screenshot has only $colours colours: a blank or broken page"

artifacts="${TESSERA_ARTIFACTS:-$tmp}"
mkdir -p "$artifacts"
if [[ "$artifacts" != "$tmp" ]]; then
  cp "$tmp/report.png" "$artifacts/report.png"
  cp "$out/report.html" "$artifacts/report.html"
else
  cp "$out/report.html" "$tmp/report.html"
fi
ok=1
echo "OK: 2 charts, $series policy lines, screenshot $size with $colours colours: $artifacts/report.png"
