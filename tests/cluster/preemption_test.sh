#!/usr/bin/env bash
# Preemption through kube-scheduler's own PostFilter (DefaultPreemption) and Tessera's preempt
# verb, on a full cluster: a high-priority pod evicts exactly the victims Tessera names, on one
# node, is nominated there and lands there once they are gone (their grace period, played by
# kwok). Pods of its own or a higher priority are never victims. Judged by the API server's
# objects and events.
source "$(dirname "$0")/lib.sh"

cluster_up

{
  echo "sn,cpu_milli,memory_mib,gpu,model"
  echo "p-0,32000,131072,4,A10"
  echo "p-1,32000,131072,4,A10"
} >"$c/nodes.csv"
"$TESSERA_CLUSTER_DRIVER" nodes --nodes "$c/nodes.csv" | k create -f - >/dev/null
k create priorityclass low --value 0 >/dev/null
k create priorityclass mid --value 500 >/dev/null
k create priorityclass high --value 1000 >/dev/null

pod() { gpu_pod "$@"; }  # pod NAME PRIORITY-CLASS GPUS [GRACE]

# Fill both nodes: on each, three low pods of one GPU and one mid pod of one GPU.
{
  for i in 0 1 2 3 4 5; do pod "low-$i" low 1; done
  pod mid-0 mid 1
  pod mid-1 mid 1
} | k create -f - >/dev/null
wait_for 60 "8 pods bound" bound_at_least 8 || fail "the cluster did not fill"
k get pods -o 'jsonpath={range .items[*]}{.metadata.name}={.spec.nodeName}{" "}{end}' >"$c/before.txt"
echo "before: $(cat "$c/before.txt")"

# Two GPUs for a high-priority pod: two low pods of one node must go.
pod hi high 2 | k create -f - >/dev/null
nominated=""
for _ in $(seq 1 60); do
  nominated=$(k get pod hi -o 'jsonpath={.status.nominatedNodeName}')
  [ -z "$nominated" ] || break
  [ -z "$(node_of hi)" ] || break
  sleep 0.5
done
if wait_for 60 "hi to be bound" is_bound hi; then :; fi
landed=$(node_of hi)
if [ -n "$landed" ]; then ok "hi bound to $landed (nominated: '${nominated:-not seen}')"; else fail "hi not bound"; fi
if [ -n "$nominated" ] && [ "$nominated" != "$landed" ]; then fail "hi nominated to $nominated but bound to $landed"; fi

# The victims: exactly two low pods, of the node hi landed on; mid pods untouched.
gone=()
for p in low-0 low-1 low-2 low-3 low-4 low-5 mid-0 mid-1; do
  k get pod "$p" >/dev/null 2>&1 || gone+=("$p")
done
echo "evicted: ${gone[*]:-none}"
if [ "${#gone[@]}" -eq 2 ]; then ok "two victims"; else fail "${#gone[@]} victims, want 2"; fi
for p in "${gone[@]}"; do
  case "$p" in low-*) ;; *) fail "$p (priority mid) was evicted" ;; esac
  if ! grep -q "$p=$landed " "$c/before.txt"; then fail "$p was not on $landed"; fi
done
msg=$(k get events --field-selector "reason=Preempted" -o 'jsonpath={.items[*].message}')
case "$msg" in *"default/hi"*) ok "Preempted events: $msg" ;; *) fail "no Preempted event naming default/hi ('$msg')" ;; esac

# A pod of the same priority as every running pod can preempt nothing: it stays pending.
pod low-late low 1 | k create -f - >/dev/null
sleep 5
if [ -z "$(node_of low-late)" ]; then ok "low-late pending (nothing of lower priority to evict)"; else fail "low-late bound to $(node_of low-late)"; fi
check_cluster "preemption" --expect-bound 7
finish
