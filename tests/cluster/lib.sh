# Helpers shared by the real-cluster tests (tests/cluster/*_test.sh; sourced, not run).
#
# A test calls `cluster_up [cluster.sh up flags...]` first: it brings a control plane up in a
# scratch folder ($c), exits 77 (ctest: skipped) with build.sh's message when no Go can build
# the components, and takes everything down when the script ends. Then `k` is the real kubectl
# of that release against it as administrator, and `check_cluster` runs the independent
# checker on the API server's objects. The script ends with `finish`.
set -euo pipefail

cluster_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$cluster_here/../.." && pwd)
: "${TESSERA:=$repo_root/build/tessera}"
: "${TESSERA_CHECK_CLUSTER:=$(dirname "$TESSERA")/tests/tessera_check_cluster}"
: "${TESSERA_CLUSTER_DRIVER:=$(dirname "$TESSERA")/tests/tessera_cluster_driver}"
export TESSERA
fails=0

fail() { echo "FAIL $*"; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }

cluster_up() {
  c=$(mktemp -d /tmp/tessera-cluster.XXXXXX)
  trap 'cluster_down' EXIT
  local rc=0
  bash "$cluster_here/cluster.sh" up "$c" "$@" 2>"$c/up.err" || rc=$?
  if [ "$rc" -eq 3 ]; then
    cat "$c/up.err"
    echo "SKIP: the real-cluster tests need the Kubernetes components (above)"
    exit 77
  fi
  if [ "$rc" -ne 0 ]; then
    tail -40 "$c/up.err"
    echo "FAIL: the control plane did not come up"
    exit 1
  fi
  tail -1 "$c/up.err"
  # shellcheck disable=SC1091
  source "$c/env"
}

cluster_down() {
  local rc=$?
  if [ -n "${c:-}" ] && [ -d "$c" ]; then
    bash "$cluster_here/cluster.sh" down "$c" || true
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
      # Keep the evidence of a failed run: the logs' tails, then the folder goes.
      local f
      for f in "$c"/logs/*.log; do
        echo "--- tail of $f"
        tail -15 "$f"
      done
    fi
    if [ -z "${KEEP_CLUSTER:-}" ]; then rm -rf "$c"; else echo "kept $c"; fi
  fi
}

k() { "$CLUSTER_BIN/kubectl" "$@"; }

# check_cluster NAME [checker flags...]: the independent checker over every node and pod.
check_cluster() {
  local name=$1
  shift
  k get nodes,pods -A -o json >"$c/objects.json"
  if "$TESSERA_CHECK_CLUSTER" "$@" "$c/objects.json" >"$c/check.out"; then
    ok "$name: $(tail -1 "$c/check.out")"
  else
    fail "$name:"
    cat "$c/check.out"
  fi
}

# wait_for SECONDS WHAT COMMAND...: until COMMAND succeeds (every 0.5 s); false on timeout.
wait_for() {
  local limit=$1 what=$2
  shift 2
  local deadline=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then
      echo "timed out after ${limit}s waiting for $what"
      return 1
    fi
    sleep 0.5
  done
}

# pods_where JSONPATH-FILTER: names of pods in the default namespace matching a jsonpath filter.
node_of() { k get pod "$1" -o 'jsonpath={.spec.nodeName}'; }
annotation_of() { k get pod "$1" -o "jsonpath={.metadata.annotations.$2}"; }

# The number of pods (default namespace) with spec.nodeName; bound_at_least N: whether >= N.
count_bound() { k get pods -o 'jsonpath={range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . || true; }
bound_at_least() { [ "$(count_bound)" -ge "$1" ]; }
is_bound() { [ -n "$(node_of "$1")" ]; }

# gpu_pod NAME PRIORITY-CLASS GPUS [GRACE]: a pod of tessera-scheduler asking GPUS whole GPUs,
# with that PriorityClass and grace period (3 s by default), as YAML for `k create -f -`.
gpu_pod() {
  cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  schedulerName: tessera-scheduler
  priorityClassName: $2
  terminationGracePeriodSeconds: ${4:-3}
  containers:
    - {name: main, image: registry.k8s.io/pause:3.10, resources: {limits: {tessera.io/gpu: "$3"}}}
EOF
}

finish() {
  if [ "$fails" -eq 0 ]; then echo "PASSED"; else echo "FAILED: $fails check(s)"; exit 1; fi
}
