#pragma once

#include <string_view>

#include "model/node.h"
#include "model/pod.h"

namespace tessera {

/// Why a pod does not fit a node (the filters, in the order they are checked).
enum class FitReason : uint8_t {
  kFits = 0,
  kGpuModel,   ///< the node's GPU model is not among the pod's allowed models
  kGpuCount,   ///< the node has fewer GPUs in total than the pod requests (never fits)
  kCpu,        ///< not enough CPU left
  kMemory,     ///< not enough memory left
  kGpu,        ///< not enough GPU left: too few GPUs with the requested milli free
  kGpuMemory,  ///< enough GPU compute, but too little GPU memory on those GPUs
  /// enough GPUs with room, but no set of them inside the domains the pod's topology request
  /// (or the node's kubelet Topology Manager) requires (TopologyShortfall says what lacks)
  kTopology,
};
inline constexpr int kNumFitReasons = 8;

/// A short, stable name ("cpu", "gpu-model", ...), used in CSV output and messages.
std::string_view FitReasonName(FitReason reason);

/// Whether `pod` fits `state` on a node with `gpu_count` GPUs of model `model_id`
/// (-1 for none) and GPU topology `topology` (null: none; then kTopology never happens).
/// The topology is checked last, only for a pod that requires it (or on a node whose kubelet
/// aligns, KubeletAligns): some set of GPUs with room must meet the requirement
/// (TopologyFits). Pure function of its inputs.
FitReason CheckFit(int gpu_count, int model_id, const NodeState& state, const PodRequest& pod,
                   const GpuTopology* topology = nullptr);

/// Whether the GPU `i` can take a share of `pod` (compute and, if requested, memory).
inline bool GpuHasRoom(const NodeState& state, int i, const PodRequest& pod) {
  return state.gpu_free[i] >= pod.gpu_milli &&
         (pod.gpu_memory_mib == 0 || state.gpu_mem_free[i] >= pod.gpu_memory_mib);
}

/// How many of the node's `gpu_count` GPUs are idle (nothing allocated on them).
inline int IdleGpus(const NodeState& state, int gpu_count) {
  int idle = 0;
  for (int i = 0; i < gpu_count; ++i) idle += state.gpu_free[i] == kMilliPerGpu;
  return idle;
}

/// The tightest GPU that is partly used and has room for the share `pod` (lowest index among
/// equals), or -1: where a share goes without taking an idle GPU.
inline int TightestUsedGpuWithRoom(const NodeState& state, int gpu_count, const PodRequest& pod) {
  int best = -1;
  for (int i = 0; i < gpu_count; ++i) {
    if (state.gpu_free[i] < kMilliPerGpu && GpuHasRoom(state, i, pod) &&
        (best < 0 || state.gpu_free[i] < state.gpu_free[best])) {
      best = i;
    }
  }
  return best;
}

/// The generic GPU choice inside a node (every policy but fgd): for a sharing pod the
/// tightest GPU that fits (lowest index among equals); for whole-GPU pods the lowest-index
/// GPUs that fit. On a node with a topology (`topology` not null), TopologyGpuChoice instead:
/// an aligned set with the best links that keeps whole domains free. Precondition:
/// CheckFit(...) == kFits and the pod requests GPUs.
GpuSet DefaultGpuChoice(int gpu_count, const NodeState& state, const PodRequest& pod,
                        const GpuTopology* topology = nullptr);

}  // namespace tessera
