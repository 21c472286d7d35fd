#pragma once

#include <string>
#include <vector>

#include "model/node.h"
#include "model/pod.h"

namespace tessera {

// A lower bound on the pods that any placement must refuse (docs/GPU_MEMORY.md, "How far from
// the fewest refusals"): for pod lists with GPU memory, where pods are lost for memory and the
// count of refusals is the figure, the offline bound of src/offline (which maximises GPU milli
// and pools GPU memory per node type) says nothing. This LP keeps each GPU's memory:
//  - node types: nodes with equal (GPU model, GPU count, GPU memory, CPU, memory), N_t nodes;
//    pod shapes: pods with equal requests; whole-GPU shapes take whole GPUs, a sharing shape
//    (one GPU, milli < 1000) is placed only inside a per-GPU pattern: a multiset of sharing
//    shapes whose milli sum ≤ 1000 and GPU memory sum ≤ the type's GPU memory, all enumerated;
//  - per seed s (its arrived pods): maximise the pods placed subject to, per shape, placed ≤
//    arrived; per type, whole GPUs + pattern GPUs ≤ N_t · G_t, CPU and memory ≤ N_t times the
//    node's (pooled), at most N_t pods that need more than half a node's GPUs; a pod shape only
//    on types where one fits an empty node by the engine's own filter (Cluster::Check);
//  - optionally, over all seeds together, the GPU milli placed ≥ a floor (another policy's).
// Relaxed: integrality, CPU and memory pooled per type, whole GPUs pooled per type (a 2-GPU
// pod may take two GPUs of different nodes), the arrival order (pods may be left out at will).
// Every real placement is a feasible point, so no policy refuses fewer pods than the bound
// (with the floor: none that allocates at least that much compute). CPU-only pods are counted
// as placed.
struct CountBound {
  bool ok = false;
  std::string error;
  double refused_mean = 0;  ///< the LP's least refusals, mean over the seeds
  double arrived_mean = 0;  ///< pods arrived, mean over the seeds
  int patterns = 0;         ///< per-GPU sharing patterns over all types
};

/// `arrived[s]`: the pod indices arrived at 100 % for seed s (offline/offline_bound.h,
/// ArrivedPods). `min_placed_milli` < 0: no floor; else the GPU milli placed, summed over the
/// seeds, must reach it.
CountBound PodCountBound(const std::vector<NodeSpec>& nodes, const std::vector<PodSpec>& pods,
                         const std::vector<std::vector<int>>& arrived, double min_placed_milli);

}  // namespace tessera
