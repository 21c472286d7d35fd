#!/usr/bin/env bash
# End-to-end: `tessera analyze` on a small snapshot (three 8-GPU nodes at 7/6/7 GPUs used, a
# pending 4-GPU pod, a bound pod whose request is out of range) writes report.html; headless
# Chromium renders it, and we check what a reader would see: the page styled as the other
# reports, the warnings, the pending pods with what the move plan does for each, the pools, the
# moves and the GPU map with its colour key, and a screenshot that is a real picture.
#
# Environment (set by ctest): TESSERA = path of the tessera binary.
# Optional: TESSERA_ARTIFACTS = folder to keep analyze-report.png in for people.
set -euo pipefail

source "$(dirname "$0")/chromium.sh"
out="$tmp/out"

node() {  # node NAME
  printf '{"kind":"Node","metadata":{"name":"%s","labels":{"tessera.io/gpu-model":"V100M32"}},' "$1"
  printf '"status":{"allocatable":{"cpu":"96","memory":"384Gi","tessera.io/gpu":"8"}}}'
}
pod() {  # pod NAME NODE GPU-INDICES OWNER_KIND [GPUS [MILLI]]
  local owner="" gpus=${5:-1} node_field="" ann="{}" phase=Pending milli=""
  [ -n "$4" ] && owner=",\"ownerReferences\":[{\"kind\":\"$4\",\"name\":\"${1%-*}\",\"controller\":true}]"
  [ -n "${6:-}" ] && milli=",\"tessera.io/gpu-milli\":\"$6\""
  if [ -n "$2" ]; then
    node_field="\"nodeName\":\"$2\","
    ann="{\"tessera.io/gpu-indices\":\"$3\"}"
    phase=Running
  fi
  printf '{"kind":"Pod","metadata":{"name":"%s","namespace":"default","annotations":%s%s},' "$1" "$ann" "$owner"
  printf '"spec":{%s"containers":[{"name":"m","resources":{"requests":{"cpu":"4","memory":"16Gi","tessera.io/gpu":"%s"%s},"limits":{"tessera.io/gpu":"%s"%s}}}]},' "$node_field" "$gpus" "$milli" "$gpus" "$milli"
  printf '"status":{"phase":"%s"}}' "$phase"
}
{
  printf '{"apiVersion":"v1","kind":"List","items":['
  node n0; printf ','; node n1; printf ','; node n2
  for g in 0 1 2 3 4 5 6; do printf ','; pod "a-$g" n0 "$g" ReplicaSet; done
  printf ','; pod bare-0 n1 0 ""
  printf ','; pod ds-0 n1 1 DaemonSet
  for g in 2 3 4 5; do printf ','; pod "free-$g" n1 "$g" ReplicaSet; done
  for g in 0 1 2 3 4 5; do printf ','; pod "c-$g" n2 "$g" ReplicaSet; done
  printf ','; pod c-6 n2 6 ReplicaSet 1 1500  # a request out of range: estimated, a warning
  printf ','; pod big-0 "" "" ReplicaSet 4
  printf ']}\n'
} >"$tmp/snap.json"

"$TESSERA" analyze "$tmp/snap.json" --out "$out" >"$tmp/analyze.log" 2>&1 || {
  tail -n 20 "$tmp/analyze.log" >&2
  fail "tessera analyze exited non-zero"
}
[[ -s "$out/report.html" ]] || fail "no report.html"
chromium_self_contained "$out/report.html"
python3 -c 'import json,sys; w=json.load(open(sys.argv[1]))["warnings"]; assert w, w' \
  "$out/analyze.json" || fail "the snapshot gave no warning to show (analyze.json)"

chromium_render "$out/report.html" 1280x1600 "$tmp/dom.html" "$tmp/analyze.png"

for what in '<main>' '<header class="card">' '<section class="card warnings" id="warnings">' \
  'default/c-6' '<section class="card" id="pending">' '<tr data-repack="plan">' \
  'default/big-0' 'plan → n1' '<section class="card" id="pools">' \
  '<section class="card" id="moves">' '<section class="card" id="map">' 'partly used'; do
  grep -qF "$what" "$tmp/dom.html" || fail "'$what' is missing from the rendered page"
done
svgs=$(grep -o '<svg[ >]' "$tmp/dom.html" | wc -l)
[[ $svgs -eq 1 ]] || fail "expected 1 GPU map, found $svgs"

chromium_check_screenshot "$tmp/analyze.png" 1280x1600 analyze-report.png
# On the reports' grey background (#f6f8fa).
corner=$(chromium_corner "$tmp/analyze.png")
[[ "$corner" == "srgb(246,248,250)" ]] || fail "not the reports' background: corner pixel $corner"
echo "OK: warnings, pending pods, pools, moves, GPU map; screenshot 1280x1600 with $colours colours"
