#!/usr/bin/env bash
# Placement through a real kube-scheduler (v1.37, deploy/'s configuration) and `tessera serve`
# (deploy/'s tessera.yaml, deploy/'s RBAC), judged by the API server's objects: whole, shared,
# HAMi and multi-GPU pods with topology and model constraints land where they may and get the
# GPUs they must; pods that no node can serve stay pending with Tessera's reason as the
# scheduler's event; no GPU is given twice (tests/tools/check_cluster.cc).
source "$(dirname "$0")/lib.sh"
data=$cluster_here/testdata

cluster_up
k create -f "$data/placement-nodes.yaml" >/dev/null
wait_for 30 "kwok to make the nodes Ready" \
  bash -c "[ \$('$CLUSTER_BIN/kubectl' get nodes --no-headers | grep -c ' Ready') -eq 5 ]"
k create -f "$data/placement-pods.yaml" >/dev/null

for p in whole-1 share-a share-b multi-4 hami-share t4-only; do
  if wait_for 60 "$p to be bound" is_bound "$p"; then :; fi
done

expect_on() {  # expect_on POD NODE-PREFIX
  local n
  n=$(node_of "$1")
  case "$n" in
    "$2"*) ok "$1 on $n (gpu-indices $(annotation_of "$1" 'tessera\.io/gpu-indices'))" ;;
    *) fail "$1 on '$n', want a node $2*" ;;
  esac
}
expect_on whole-1 t-a100-
expect_on share-a t-a100-
expect_on share-b t-a100-
expect_on multi-4 t-a100-
expect_on hami-share h-a10-
expect_on t4-only d-t4-0

# Four GPUs in one NVLink domain (0-3 or 4-7).
idx=$(annotation_of multi-4 'tessera\.io/gpu-indices')
case "$idx" in
  0-3|4-7) ok "multi-4 in one NVLink domain: $idx" ;;
  *) fail "multi-4 got GPUs '$idx', not one NVLink domain" ;;
esac

# HAMi's device list names the register's UUID of the GPU the indices name.
hami=$(annotation_of hami-share 'hami\.io/vgpu-devices-to-allocate')
case "$hami" in
  GPU-a10*,NVIDIA,8000,30:*) ok "hami-share: hami.io/vgpu-devices-to-allocate=$hami" ;;
  *) fail "hami-share: hami.io/vgpu-devices-to-allocate='$hami'" ;;
esac

# Never bound, with the reason kube-scheduler got from Tessera in its event.
sleep 3
for p in wrong-family too-big; do
  n=$(node_of "$p")
  if [ -n "$n" ]; then fail "$p was bound to $n"; continue; fi
  msg=$(k get events --field-selector "involvedObject.name=$p,reason=FailedScheduling" \
    -o 'jsonpath={.items[-1:].message}')
  if [ -n "$msg" ]; then ok "$p pending: $msg"; else fail "$p pending without a FailedScheduling event"; fi
done

check_cluster "placement" --expect-bound 6
finish
