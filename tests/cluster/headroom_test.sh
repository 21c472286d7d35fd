#!/usr/bin/env bash
# The headroom deploy/ ships (tessera.yaml `headroom: {mode: backlog, ...}`), through the real
# kube-scheduler: once LS pods have been seen, BE work cannot fill the cluster — the BE pods
# beyond the kept GPUs stay pending with Tessera's headroom reason while GPUs sit idle — and the
# next LS pod is placed at once on an idle GPU, within its 1 s SLO, preempting nobody. Then the
# same steps with the headroom off (deploy/'s tessera.yaml with `mode: none`): BE fills every
# GPU and the next LS pod waits out a BE victim's grace period (5 s here), beyond its SLO.
# Judged by the API server's objects and events.
source "$(dirname "$0")/lib.sh"

pod() { gpu_pod "$1" "$2" 1 5; }  # pod NAME PRIORITY-CLASS: one GPU, a 5 s grace period
state_headroom() {  # the leader's /state headroom, for the log
  local i port_var
  i=$(bash "$cluster_here/cluster.sh" leader "$c" 2>/dev/null || echo 0)
  port_var="TESSERA_PORT_$i"
  curl -s "http://127.0.0.1:${!port_var}/state" |
    python3 -c 'import json,sys; h=json.load(sys.stdin)["headroom"]; print("headroom", h["mode"], "target", h["target_gpus"], "idle", h["idle_gpus"])' 2>/dev/null ||
    echo "(no /state)"
}
bound_named() {  # bound_named PREFIX: how many pods PREFIX* are bound
  k get pods -o 'jsonpath={range .items[*]}{.metadata.name}={.spec.nodeName}{"\n"}{end}' |
    grep -c "^$1[^=]*=." || true
}
be_tried() {  # whether kube-scheduler has tried all 12 BE pods (bound or FailedScheduling)
  local failed bound
  failed=$(k get events --field-selector reason=FailedScheduling \
    -o 'jsonpath={range .items[*]}{.involvedObject.name}{"\n"}{end}' | grep '^be-' | sort -u | wc -l)
  bound=$(bound_named be-)
  [ $((failed + bound)) -ge 12 ]
}

# run_case: on a fresh cluster of 3 nodes of 4 A10 (12 GPUs), three LS pods, then twelve BE
# pods for the nine GPUs left, then one more LS pod. Sets be_bound, ls_wait_s (-1: not bound),
# ls_node and preempted.
run_case() {
  {
    echo "sn,cpu_milli,memory_mib,gpu,model"
    for i in 0 1 2; do echo "h-$i,32000,131072,4,A10"; done
  } >"$c/nodes.csv"
  "$TESSERA_CLUSTER_DRIVER" nodes --nodes "$c/nodes.csv" | k create -f - >/dev/null
  k create priorityclass ls --value 1000 >/dev/null
  k create priorityclass be --value 0 >/dev/null
  { for i in 0 1 2; do pod "ls-$i" ls; done; } | k create -f - >/dev/null
  for i in 0 1 2; do wait_for 60 "ls-$i to be bound" is_bound "ls-$i" || fail "ls-$i not bound"; done
  echo "after three LS pods: $(state_headroom)"
  { for i in $(seq 0 11); do pod "be-$i" be; done; } | k create -f - >/dev/null
  wait_for 60 "every BE pod tried" be_tried || fail "kube-scheduler did not try every BE pod"
  sleep 2
  be_bound=$(bound_named be-)
  echo "after twelve BE pods: $be_bound bound; $(state_headroom)"
  pod ls-next ls | k create -f - >/dev/null
  ls_wait_s=-1
  ls_node=""
  if wait_for 40 "ls-next to be bound" is_bound ls-next; then
    ls_node=$(node_of ls-next)
    local created scheduled
    created=$(k get pod ls-next -o 'jsonpath={.metadata.creationTimestamp}')
    scheduled=$(k get pod ls-next -o 'jsonpath={.status.conditions[?(@.type=="PodScheduled")].lastTransitionTime}')
    # The API's times are whole seconds: a wait of a few milliseconds can read as 1 s.
    [ -z "$scheduled" ] || ls_wait_s=$(($(date -d "$scheduled" +%s) - $(date -d "$created" +%s)))
  fi
  preempted=$(k get events --field-selector reason=Preempted -o 'jsonpath={.items[*].involvedObject.name}')
  echo "ls-next: node '$ls_node', waited ${ls_wait_s} s; preempted: '${preempted}'"
}

# As shipped: the headroom on.
cluster_up
run_case
if [ "$be_bound" -lt 9 ]; then
  ok "headroom on: BE did not fill the cluster: $be_bound of 12 BE pods bound, $((9 - be_bound)) GPUs kept idle"
else
  fail "headroom on: BE filled the cluster ($be_bound of 12 BE pods bound)"
fi
msg=$(k get events --field-selector reason=FailedScheduling \
  -o 'jsonpath={range .items[*]}{.involvedObject.name}: {.message}{"\n"}{end}' |
  grep '^be-' | grep -m1 'headroom: ' || true)
if [ -n "$msg" ]; then ok "a pending BE pod's event names the headroom: $msg"; else fail "no BE pod's FailedScheduling event names the headroom"; fi
if [ "$ls_wait_s" -ge 0 ] && [ "$ls_wait_s" -le 1 ]; then
  ok "headroom on: ls-next bound to $ls_node within its 1 s SLO (${ls_wait_s} s by the API's whole-second times)"
else
  fail "headroom on: ls-next waited ${ls_wait_s} s (-1: not bound)"
fi
if [ -z "$preempted" ]; then ok "headroom on: nobody preempted"; else fail "headroom on: preempted $preempted"; fi
check_cluster "headroom on" --expect-bound $((3 + be_bound + 1))

# The same with the headroom off.
python3 - "$repo_root/deploy/extender-config.yaml" >"$c/no-headroom.yaml" <<'PY'
import sys, yaml
config = yaml.safe_load(yaml.safe_load(open(sys.argv[1]))["data"]["tessera.yaml"])
config["headroom"] = {"mode": "none"}
print(yaml.safe_dump(config))
PY
cp "$c/no-headroom.yaml" /tmp/tessera-no-headroom.$$.yaml
cluster_down
trap - EXIT
cluster_up --tessera-config /tmp/tessera-no-headroom.$$.yaml
rm -f /tmp/tessera-no-headroom.$$.yaml
run_case
if [ "$be_bound" -eq 9 ]; then ok "headroom off: BE filled the cluster (9 of 12 BE pods bound)"; else fail "headroom off: $be_bound BE pods bound, want 9"; fi
if [ -n "$preempted" ] && [ "$ls_wait_s" -gt 1 ]; then
  ok "headroom off: ls-next preempted $preempted and waited ${ls_wait_s} s, beyond its 1 s SLO"
else
  fail "headroom off: ls-next waited ${ls_wait_s} s, preempted '$preempted' (want a victim and > 1 s)"
fi
check_cluster "headroom off"
finish
