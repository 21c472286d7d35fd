#include "policy/tessera_topology.h"

namespace tessera {

void PreferAligned(const GpuTopology& topo, const NodeView& node, const PodRequest& pod,
                   double penalty, NodeScore* score) {
  if (pod.topology.intent != TopologyIntent::kPreferred || pod.IsCpuOnly() || pod.gpu_count < 2 ||
      Aligned(topo, pod.topology.scope, node.spec.gpu_count, score->gpus)) {
    return;
  }
  score->score -= penalty;
}

}  // namespace tessera
