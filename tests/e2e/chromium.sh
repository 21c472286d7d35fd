# Sourced by the report checks (tests/e2e/*report_chromium_test.sh): what every one of them does
# around its own assertions — skip where Chromium is missing, render a report in headless
# Chromium (a DOM dump and a screenshot), and check that the screenshot is a real picture.
#
# After sourcing: fail MESSAGE (exit 1) and $tmp, a scratch folder removed at a clean exit and
# kept (and named) after a failure. Needs $TESSERA (set by ctest).

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

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tessera-report.XXXXXX")
chromium_cleanup() {
  local rc=$?
  if [[ $rc -eq 0 ]]; then
    rm -rf "$tmp"
  else
    rm -rf "$tmp/profile"
    echo "(kept $tmp for inspection)" >&2
  fi
}
trap chromium_cleanup EXIT

# chromium_self_contained FILE: the report loads no script or stylesheet from anywhere.
chromium_self_contained() {
  if grep -Eq 'https?://[^"]*\.(js|css)|<script' "$1"; then
    fail "$(basename "$1") is not self-contained (loads a script or stylesheet)"
  fi
}

# chromium_render HTML WIDTHxHEIGHT DOM PNG: the page as Chromium builds it (DOM) and a
# screenshot of that size (PNG).
chromium_render() {
  local html=$1 size=$2 dom=$3 png=$4
  local flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
    --disable-background-networking --disable-component-update --disable-sync
    --user-data-dir="$tmp/profile" "--window-size=${size/x/,}")
  timeout 120 "$CHROMIUM" "${flags[@]}" --dump-dom "file://$html" >"$dom" 2>"$tmp/dom.log" ||
    fail "chromium --dump-dom failed: $(tail -n 5 "$tmp/dom.log")"
  [[ -s "$dom" ]] || fail "chromium dumped an empty DOM"
  timeout 120 "$CHROMIUM" "${flags[@]}" --screenshot="$png" "file://$html" >"$tmp/shot.log" 2>&1 ||
    fail "chromium --screenshot failed: $(tail -n 5 "$tmp/shot.log")"
}

# chromium_check_screenshot PNG WIDTHxHEIGHT [ARTIFACT_NAME]: the screenshot has that size and
# more than 50 colours (not a blank or broken page); sets $colours. With ARTIFACT_NAME, a copy
# goes to $TESSERA_ARTIFACTS/ARTIFACT_NAME when that is set (for people to look at).
chromium_check_screenshot() {
  local png=$1 want=$2 name=${3:-}
  [[ -s "$png" ]] || fail "chromium wrote no screenshot"
  local size
  size=$(identify -format '%wx%h' "$png") || fail "identify cannot read $png"
  [[ "$size" == "$want" ]] || fail "screenshot is $size, expected $want"
  colours=$(convert "$png" -format %k info:) || fail "convert cannot read $png"
  [[ $colours -gt 50 ]] || fail "screenshot has only $colours colours: a blank or broken page"
  if [[ -n "$name" && -n "${TESSERA_ARTIFACTS:-}" ]]; then
    mkdir -p "$TESSERA_ARTIFACTS"
    cp "$png" "$TESSERA_ARTIFACTS/$name"
  fi
}

# chromium_corner PNG: the colour of the pixel at (2, 2), e.g. srgb(246,248,250).
chromium_corner() { convert "$1" -format '%[pixel:p{2,2}]' info:; }
