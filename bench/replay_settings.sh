#!/usr/bin/env bash
# How the `tessera` replay policy's setting was chosen (docs/experiments/2026-12-06-replay-settings.md): every setting of the
# placement under the backlog headroom, its factor and its window, on the default trace at the
# contention level (time scale 50, 84 nodes) for several node draws and on peak-sale, each
# against k8s-default (priority + preemption) on the same nodes. Prints one markdown table: per
# setting, the draws that meet every condition, the draws where the LS p99 is above its SLO, the
# ranges over the draws of LS within SLO %, preemptions (victims), Burstable within SLO % and BE
# GPU-hours as % of k8s-default's (mean), and whether peak-sale meets every condition; then the
# k8s-default runs' ranges.
#
# The conditions (those TesseraSlo* checks): LS p99 wait within its SLO, >= 99 % of LS pods
# within it, fewer preemptions than k8s-default, every other class with an SLO within it at
# least as often as under k8s-default, BE served >= 90 % of k8s-default's GPU-hours.
#
# Usage: bench/replay_settings.sh [BUILD_DIR]       (default: build; about a minute)
# Environment: SEEDS (the node draws, "42 1 2 3 7 43 44 45"), SETTINGS (placement:factor:window
# triples, default below), OUT (/tmp/tessera-replay-settings: every run's classes.csv),
# TESSERA_DATA_DIR (../shared/data/alibaba-gpu-v2023/csv).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
data=${TESSERA_DATA_DIR:-$root/../shared/data/alibaba-gpu-v2023/csv}
seeds=${SEEDS:-42 1 2 3 7 43 44 45}
default_settings=""
for p in tessera k8s-default fgd; do
  for f in 1 1.25 1.5 2 2.5; do default_settings+=" $p:$f:3600"; done
done
for w in 1800 5400; do
  for f in 1 1.5 2 2.5; do default_settings+=" tessera:$f:$w"; done
done
for f in 1.5 2 2.5; do default_settings+=" k8s-default:$f:5400"; done
for w in 3600 5400 7200; do default_settings+=" k8s-default:1.75:$w"; done
default_settings+=" k8s-default:2:7200"
settings=${SETTINGS:-$default_settings}
out=${OUT:-/tmp/tessera-replay-settings}
[ -x "$build/tessera" ] || { echo "replay_settings: $build/tessera not built" >&2; exit 1; }
[ -f "$data/openb_pod_list_default.csv" ] || { echo "replay_settings: no trace in $data" >&2; exit 1; }
mkdir -p "$out"
trace=(--nodes "$data/openb_node_list_gpu_node.csv" --pods "$data/openb_pod_list_default.csv"
  --time-scale 50 --num-nodes 84)

run() {  # run DIR ARGS...: one replay, its classes.csv in DIR
  local dir=$1
  shift
  "$build/tessera" replay -q "$@" --samples 0 --out "$dir" >/dev/null 2>"$dir.err" ||
    { echo "replay_settings: failed: tessera replay $*" >&2; cat "$dir.err" >&2; exit 1; }
}

# verdict T_CSV K_CSV: "meets lsbad ls_pct preemptions burstable_pct be_pct" of a tessera run
# against its k8s-default run (classes.csv: policy,class,...,wait_p99_s(11),...,
# slo_wait_s(13),slo_pct(14),preempted(15),...,gpu_hours(17)).
verdict() {
  awk -F, 'FNR == 1 { next }
    FILENAME == ARGV[1] { t[$2] = $0; order[++n] = $2; next }
    { k[$2] = $0 }
    END {
      meets = 1; tp = 0; kp = 0; burst = "-"
      for (i = 1; i <= n; ++i) {
        c = order[i]; split(t[c], a, ","); split(k[c], b, ",")
        tp += a[15]; kp += b[15]
        if (c == "LS") {
          lsbad = (a[11] > a[13]) ? 1 : 0; ls = a[14]
          if (lsbad || a[14] < 99) meets = 0
        } else if (a[13] >= 0 && a[3] > 0 && a[14] < b[14]) {
          meets = 0
        }
        if (c == "Burstable" && a[3] > 0) burst = a[14]
        if (c == "BE") be = b[17] > 0 ? 100 * a[17] / b[17] : 100
      }
      if (tp >= kp || be < 90) meets = 0
      printf "%d %d %.2f %d %s %.1f\n", meets, lsbad, ls, tp, burst, be
    }' "$1" "$2"
}

for s in $seeds; do run "$out/k8s-$s" "${trace[@]}" --seed "$s" --policy k8s-default; done
run "$out/k8s-ps" --scenario peak-sale --policy k8s-default

echo "| backlog headroom (placement, factor, window) | draws meeting every condition | draws with LS p99 > SLO | LS within SLO % | preemptions | Burstable within SLO % | BE % of k8s-default (mean) | peak-sale meets every condition |"
echo "|---|---|---|---|---|---|---|---|"
for setting in $settings; do
  IFS=: read -r placement factor window <<<"$setting"
  knobs=(--policy tessera --tessera-placement "$placement" --headroom-factor "$factor"
    --headroom-window-s "$window")
  lines=""
  for s in $seeds; do
    dir="$out/$placement-$factor-$window-$s"
    run "$dir" "${trace[@]}" --seed "$s" "${knobs[@]}"
    lines+="$s $(verdict "$dir/classes.csv" "$out/k8s-$s/classes.csv")"$'\n'
  done
  dir="$out/$placement-$factor-$window-ps"
  run "$dir" --scenario peak-sale "${knobs[@]}"
  ps=$(verdict "$dir/classes.csv" "$out/k8s-ps/classes.csv" | cut -d' ' -f1)
  printf '%s' "$lines" | awk -v name="$placement, $factor, ${window} s" -v ps="$ps" '
    function range(lo, hi, f) { return sprintf(f, lo) (lo == hi ? "" : "–" sprintf(f, hi)) }
    NF == 0 { next }
    { ++n
      if ($2) { ++meets; list = list (list == "" ? "" : ", ") $1 }
      lsbad += $3
      if (n == 1 || $4 < lslo) lslo = $4; if (n == 1 || $4 > lshi) lshi = $4
      if (n == 1 || $5 < plo) plo = $5; if (n == 1 || $5 > phi) phi = $5
      if ($6 != "-") { if (nb++ == 0 || $6 < blo) blo = $6; if (nb == 1 || $6 > bhi) bhi = $6 }
      if (n == 1 || $7 < elo) elo = $7; if (n == 1 || $7 > ehi) ehi = $7
      esum += $7 }
    END {
      printf "| %s | %d%s | %d | %s | %s | %s | %s (%.1f) | %s |\n", name, meets,
        meets ? " (" list ")" : "", lsbad, range(lslo, lshi, "%.2f"), range(plo, phi, "%d"),
        nb ? range(blo, bhi, "%.2f") : "-", range(elo, ehi, "%.1f"), esum / n,
        ps == 1 ? "yes" : "no" }'
done
echo
for s in $seeds; do cat "$out/k8s-$s/classes.csv"; done | awk -F, '
  $1 == "policy" { next }
  $2 == "LS" { ++n; lsp99 = lsp99 (lsp99 == "" ? "" : " ") $11 }
  { pre[n] += $15 }
  $2 == "Burstable" { b = $14; if (n == 1 || b < blo) blo = b; if (n == 1 || b > bhi) bhi = b }
  $2 == "BE" { e = $17; if (n == 1 || e < elo) elo = e; if (n == 1 || e > ehi) ehi = e }
  END {
    for (i = 1; i <= n; ++i) { if (i == 1 || pre[i] < plo) plo = pre[i]; if (i == 1 || pre[i] > phi) phi = pre[i] }
    printf "k8s-default over the %d draws: preemptions %s, Burstable within SLO %s %%, BE %s GPU-h, LS p99 (s) %s\n",
      n, range(plo, phi, "%d"), range(blo, bhi, "%.2f"), range(elo, ehi, "%.1f"), lsp99 }
  function range(lo, hi, f) { return sprintf(f, lo) (lo == hi ? "" : "–" sprintf(f, hi)) }'
