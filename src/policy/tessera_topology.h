#pragma once

// The topology terms of the `tessera` policy (docs/TOPOLOGY.md): which nodes its stranding
// measure judges with their GPU topology (a multi-GPU class then uses only the GPUs of an
// aligned set: TesseraMeasure), and the penalty that puts a `preferred` pod's placements
// outside one domain's alignment below every aligned one. Nodes without a topology behave
// exactly as before. Pure functions.

#include <cstdint>

#include "model/pod.h"
#include "model/topology.h"
#include "policy/policy.h"

namespace tessera {

/// The node's topology when it splits the measure's scope (MeasureScope) into domains that
/// constrain multi-GPU classes, else null: the node is measured as without topology.
inline const GpuTopology* MeasuredTopology(const NodeView& node) {
  const GpuTopology* topo = node.spec.topology.get();
  if (topo == nullptr) return nullptr;
  const uint8_t bits = TopologyBits(topo, node.spec.gpu_count);
  const uint8_t scope = MeasureScope(*topo) == TopologyScope::kNvlink
                            ? kTopoNvlinkSplit
                            : kTopoNumaSplit | kTopoKubelet;
  return (bits & scope) != 0 ? topo : nullptr;
}

/// For a `preferred` pod whose GPUs in `score` are not aligned in the pod's scope on the
/// node's topology `topo` (Aligned): lowers the score by `penalty`, which puts it below every
/// aligned placement on any node.
void PreferAligned(const GpuTopology& topo, const NodeView& node, const PodRequest& pod,
                   double penalty, NodeScore* score);

}  // namespace tessera
