#!/usr/bin/env bash
# The extender under load (issue 3, acceptance 4): `tessera serve` with 1213 and 5000 trace
# nodes, driven by wrk on loopback. For each cluster size, policy and run it starts a fresh
# server and measures, one after the other:
#   filter      POST /filter, NodeNames = every node, the trace's pod shapes in turn
#   prioritize  POST /prioritize, same bodies
#   bind        the filter -> bind cycle with unique UIDs (64 candidate nodes per filter); wrk's
#               figures mix both verbs, the server's histogram gives bind alone
#   healthz-1   the noise floor: GET /healthz (no work) with wrk -t1 -c1, then
#   healthz     with the verbs' -t/-c: the machine's own tail latency next to the verbs'
#               (an idle vCPU's wake-up shows here as it does in every verb's p99)
# then reads the server's /metrics histogram. Prints one line per run and a table of medians.
# Each wrk line also gives steal%: the share of CPU time the hypervisor took from this VM's
# vCPUs while wrk ran (/proc/stat; 0 on bare metal). A vCPU that is descheduled for a few ms
# stalls every request it holds, so on a VM the p99 follows the steal of the run.
#
# Usage: bench/extender_load.sh [BUILD_DIR]       (default: build)
#        SIZES=50000 bench/extender_load.sh         (50 000 candidate nodes: ~1.1 MB request bodies,
#                                                   ~2.2 MB filter answers, a 100 MB PodList)
# Environment: DURATION (10s), RUNS (3), THREADS (2), CONNECTIONS (2; the bind load always uses
# one connection per thread), SIZES ("1213 5000"), POLICIES ("fgd tessera"),
# NOISE_DURATION (the healthz runs, 3s; NOISE=0 skips them),
# OUT (/tmp/tessera-load: generated JSON and raw outputs; never committed),
# TESSERA_DATA_DIR (../shared/data/alibaba-gpu-v2023/csv), SERVER_CPUS and CLIENT_CPUS (CPU
# lists for `taskset -c`, e.g. 0 and 1: the server and wrk pinned apart; default: unpinned),
# SPIN_US (the server's --spin-us; default: the server's default), CONFIG (a tessera.yaml for
# the server's --config, e.g. bench/headroom.yaml: classes and a static LS headroom, which holds
# the load's pods (priority 0: BE) to it; default: none).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
build=$(cd "$build" && pwd)
data=${TESSERA_DATA_DIR:-$root/../shared/data/alibaba-gpu-v2023/csv}
out=${OUT:-/tmp/tessera-load}
duration=${DURATION:-10s}
runs=${RUNS:-3}
threads=${THREADS:-2}
connections=${CONNECTIONS:-2}
sizes=${SIZES:-1213 5000}
policies=${POLICIES:-fgd tessera}
noise=${NOISE:-1}
noise_duration=${NOISE_DURATION:-3s}
server_pin=()
client_pin=()
spin_flag=()
[ -n "${SPIN_US:-}" ] && spin_flag=(--spin-us "$SPIN_US")
[ -n "${CONFIG:-}" ] && spin_flag+=(--config "$CONFIG")
[ -n "${SERVER_CPUS:-}" ] && server_pin=(taskset -c "$SERVER_CPUS")
[ -n "${CLIENT_CPUS:-}" ] && client_pin=(taskset -c "$CLIENT_CPUS")

# wrk is a Debian package; install it once (as root, or through sudo).
if ! command -v wrk >/dev/null; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get install -y wrk >/dev/null || { $sudo apt-get update >/dev/null && $sudo apt-get install -y wrk >/dev/null; }
fi
for tool in wrk curl; do
  command -v "$tool" >/dev/null || { echo "extender_load: $tool is missing" >&2; exit 1; }
done
for bin in "$build/tessera" "$build/bench/tessera_extender_inputs"; do
  [ -x "$bin" ] || { echo "extender_load: $bin not built" >&2; exit 1; }
done
[ -f "$data/openb_node_list_gpu_node.csv" ] || { echo "extender_load: no trace in $data" >&2; exit 1; }

mkdir -p "$out/raw"
size_list=$(echo "$sizes" | tr ' ' ',')
"$build/bench/tessera_extender_inputs" "$data/openb_node_list_gpu_node.csv" \
  "$data/openb_pod_list_default.csv" "$out" --nodes "$size_list" --load 0.5 >"$out/inputs.txt"
cat "$out/inputs.txt"

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "wrk -t$threads -c$connections -d$duration --latency; bind: -t$threads -c$threads"
echo "server CPUs: ${SERVER_CPUS:-any}, wrk CPUs: ${CLIENT_CPUS:-any}, server --spin-us: ${SPIN_US:-default}"

pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
}
trap cleanup EXIT

start_server() {  # start_server SIZE POLICY LOG; sets pid and url
  "${server_pin[@]}" "$build/tessera" serve --nodes "$out/nodes-$1.json" --pods "$out/pods-$1.json" --policy "$2" \
    --listen 127.0.0.1:0 "${spin_flag[@]}" >"$3.out" 2>"$3.err" &
  pid=$!
  local port=""
  for _ in $(seq 1 600); do  # up to 60 s
    # (the server may not have opened its output yet: no file is no port, not an error)
    port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$3.out" 2>/dev/null | head -1 || true)
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$port" ] || { echo "extender_load: server did not start" >&2; cat "$3.err" >&2; exit 1; }
  url="http://127.0.0.1:$port"
}

stop_server() {
  kill -TERM "$pid"
  wait "$pid" || { echo "extender_load: server exit $?" >&2; exit 1; }
  pid=""
}

# cpu_sample -> "steal_jiffies total_jiffies" of all CPUs (/proc/stat).
cpu_sample() { awk '/^cpu / { print $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }

# run_wrk OUT ARGS...: wrk ARGS into OUT (pinned as asked); OUT.steal gets the steal % of the run.
run_wrk() {
  local file=$1 before after
  shift
  before=$(cpu_sample)
  "${client_pin[@]}" wrk "$@" >"$file"
  after=$(cpu_sample)
  echo "$before $after" | awk '{ d = $4 - $2; printf "%.2f\n", (d > 0 ? ($3 - $1) / d * 100 : 0) }' \
    >"$file.steal"
}

# wrk's latency figure in ms: "812.00us" -> 0.812, "1.20ms" -> 1.2, "1.01s" -> 1010.
to_ms() {
  awk -v v="$1" 'BEGIN {
    if (v ~ /us$/) { sub(/us$/, "", v); printf "%.3f", v / 1000 }
    else if (v ~ /ms$/) { sub(/ms$/, "", v); printf "%.3f", v }
    else if (v ~ /s$/) { sub(/s$/, "", v); printf "%.3f", v * 1000 }
    else printf "nan" }'
}

# wrk_figures FILE -> "p50_ms p99_ms req_per_s"
wrk_figures() {
  local p50 p99 rps
  p50=$(awk '$1 == "50%" {print $2}' "$1")
  p99=$(awk '$1 == "99%" {print $2}' "$1")
  rps=$(awk '$1 == "Requests/sec:" {print $2}' "$1")
  echo "$(to_ms "$p50") $(to_ms "$p99") $rps"
}

# metrics_figures FILE VERB -> "count mean_ms p50_le_ms p99_le_ms": the bucket bounds that hold
# half and 99 % of the requests (upper bounds; buckets are 0.1, 0.25, 0.5, 1, 2.5, 5, 10 ms ...).
metrics_figures() {
  awk -v verb="$2" '
    index($0, "tessera_request_duration_seconds_bucket{verb=\"" verb "\"") == 1 {
      match($0, /le="[^"]*"/); le = substr($0, RSTART + 4, RLENGTH - 5)
      n++; les[n] = le; cum[n] = $2 }
    index($0, "tessera_request_duration_seconds_sum{verb=\"" verb "\"") == 1 { sum = $2 }
    index($0, "tessera_request_duration_seconds_count{verb=\"" verb "\"") == 1 { count = $2 }
    END {
      if (count == 0) { print "0 nan nan nan"; exit }
      p50 = "inf"; p99 = "inf"
      for (i = n; i >= 1; i--) {
        if (cum[i] >= 0.5 * count && les[i] != "+Inf") p50 = les[i] * 1000
        if (cum[i] >= 0.99 * count && les[i] != "+Inf") p99 = les[i] * 1000
      }
      printf "%d %.3f %s %s\n", count, sum / count * 1000, p50, p99 }' "$1"
}

results="$out/results.txt"
: >"$results"
printf '%-5s %-8s %-10s %3s | %9s %9s %9s %6s | %8s %9s %9s %9s | %s\n' nodes policy verb run \
  "p50_ms" "p99_ms" "req/s" "steal%" "srv_n" "srv_mean" "srv_p50<=" "srv_p99<=" "notes"
for size in $sizes; do
  bodies=("$out"/filter-"$size"-*.json)
  for policy in $policies; do
    for run in $(seq 1 "$runs"); do
      tag="$out/raw/$size-$policy-$run"
      start_server "$size" "$policy" "$tag"
      for verb in filter prioritize; do
        run_wrk "$tag-$verb.wrk" -t"$threads" -c"$connections" -d"$duration" --latency \
          -s "$root/bench/wrk/post_bodies.lua" "$url" -- "/$verb" "${bodies[@]}"
        curl -sS -m 10 "$url/metrics" >"$tag-$verb.metrics"
      done
      run_wrk "$tag-bind.wrk" -t"$threads" -c"$threads" -d"$duration" --latency \
        -s "$root/bench/wrk/filter_bind.lua" "$url" -- "$out/names-$size.txt" "$out/bind-pod.json" 64
      curl -sS -m 10 "$url/metrics" >"$tag-bind.metrics"
      verbs="filter prioritize bind"
      if [ "$noise" != 0 ]; then
        run_wrk "$tag-healthz-1.wrk" -t1 -c1 -d"$noise_duration" --latency "$url/healthz"
        run_wrk "$tag-healthz.wrk" -t"$threads" -c"$connections" -d"$noise_duration" --latency \
          "$url/healthz"
        cp "$tag-bind.metrics" "$tag-healthz-1.metrics"  # not timed by the server
        cp "$tag-bind.metrics" "$tag-healthz.metrics"
        verbs="$verbs healthz-1 healthz"
      fi
      stop_server
      for verb in $verbs; do
        read -r p50 p99 rps <<<"$(wrk_figures "$tag-$verb.wrk")"
        steal=$(cat "$tag-$verb.wrk.steal")
        read -r n mean sp50 sp99 <<<"$(metrics_figures "$tag-$verb.metrics" "$verb")"
        notes=$(grep -E '^(http errors|binds:|Non-2xx)' "$tag-$verb.wrk" | head -1 || true)
        line=$(printf '%-5s %-8s %-10s %3s | %9s %9s %9s %6s | %8s %9s %9s %9s | %s' "$size" \
          "$policy" "$verb" "$run" "$p50" "$p99" "$rps" "$steal" "$n" "$mean" "$sp50" "$sp99" "$notes")
        echo "$line" | tee -a "$results"
      done
    done
  done
done

# Medians over the runs.
echo
echo "Medians over $runs runs (wrk: latency ms, req/s; server histogram: mean ms, p99 bucket bound ms)"
echo "| nodes | policy | verb | p50 ms | p99 ms | req/s | steal % | server mean ms | server p99 ≤ ms |"
echo "|---|---|---|---|---|---|---|---|---|"
awk -F'|' '
  function median(list,   a, n, i, j, t) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
  {
    split($1, k, " "); key = k[1] " | " k[2] " | " k[3]
    if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
    split($2, w, " "); split($3, s, " ")
    p50[key] = p50[key] " " w[1]; p99[key] = p99[key] " " w[2]; rps[key] = rps[key] " " w[3]
    steal[key] = steal[key] " " w[4]
    mean[key] = mean[key] " " s[2]; sp99[key] = sp99[key] " " s[4]
  }
  END {
    for (i = 1; i <= nk; i++) {
      key = order[i]
      printf "| %s | %s | %s | %s | %s | %s | %s |\n", key, median(p50[key]), median(p99[key]),
        median(rps[key]), median(steal[key]), median(mean[key]), median(sp99[key])
    }
  }' "$results" | tee "$out/summary.md"
