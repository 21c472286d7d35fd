#pragma once

// The GPUs a pod gets inside the node it goes to, in every front door: the policy's choice
// (NodeScore::gpus) where it can be used, else the generic choice (DefaultGpuChoice: the
// tightest GPU that fits for a sharing pod, the lowest-index free GPUs for whole-GPU pods, an
// aligned set on a node with a topology); and the `random` policy's draw of a GPU for a share.
// The Scheduler caches the choice with the score (sched/score_cache.h). Pure functions but for
// the draw's Rng.

#include "model/fit.h"
#include "model/node.h"
#include "model/pod.h"
#include "model/topology.h"
#include "util/rng.h"

namespace tessera {

/// Whether a policy's GPU choice `gpus` can be used: not 0 (which asks for the generic choice)
/// and, on a node with a topology, meeting what the pod's topology requires there (a
/// topology-blind policy's choice may not).
inline bool UsableGpuChoice(const GpuTopology* topology, int gpu_count, const PodRequest& pod,
                            GpuSet gpus) {
  if (gpus == 0) return false;
  return topology == nullptr ||
         MeetsRequired(*topology, gpu_count, EffectiveNeed(*topology, pod), gpus);
}

/// `chosen` (the policy's choice) where it can be used, else DefaultGpuChoice. Precondition:
/// the pod requests GPUs and fits the node (CheckFit).
inline GpuSet GpusOnNode(int gpu_count, const NodeState& state, const GpuTopology* topology,
                         const PodRequest& pod, GpuSet chosen) {
  if (UsableGpuChoice(topology, gpu_count, pod, chosen)) return chosen;
  return DefaultGpuChoice(gpu_count, state, pod, topology);
}

/// A GPU drawn uniformly among the node's GPUs with room for the share `pod` (GpuHasRoom).
/// Precondition: one has.
GpuSet DrawSharedGpu(int gpu_count, const NodeState& state, const PodRequest& pod, Rng& rng);

}  // namespace tessera
