#include "model/fit.h"

#include <bit>

namespace tessera {

std::string_view FitReasonName(FitReason reason) {
  switch (reason) {
    case FitReason::kFits:
      return "fits";
    case FitReason::kGpuModel:
      return "gpu-model";
    case FitReason::kGpuCount:
      return "gpu-count";
    case FitReason::kCpu:
      return "cpu";
    case FitReason::kMemory:
      return "memory";
    case FitReason::kGpu:
      return "gpu";
    case FitReason::kGpuMemory:
      return "gpu-memory";
    case FitReason::kTopology:
      return "topology";
  }
  return "unknown";
}

FitReason CheckFit(int gpu_count, int model_id, const NodeState& state, const PodRequest& pod,
                   const GpuTopology* topology) {
  const bool wants_gpu = !pod.IsCpuOnly();
  if (wants_gpu) {
    if (model_id < 0 || ((pod.models >> model_id) & 1) == 0) return FitReason::kGpuModel;
    if (gpu_count < pod.gpu_count) return FitReason::kGpuCount;
  }
  if (state.cpu_left < pod.cpu_milli) return FitReason::kCpu;
  if (state.memory_left < pod.memory_mib) return FitReason::kMemory;
  if (!wants_gpu) return FitReason::kFits;
  int compute_ok = 0;
  int both_ok = 0;
  for (int i = 0; i < gpu_count; ++i) {
    if (state.gpu_free[i] >= pod.gpu_milli) {
      ++compute_ok;
      if (pod.gpu_memory_mib == 0 || state.gpu_mem_free[i] >= pod.gpu_memory_mib) ++both_ok;
    }
  }
  if (both_ok >= pod.gpu_count) {
    if (topology != nullptr && pod.gpu_count >= 2 &&
        !TopologyFits(*topology, gpu_count, state, pod)) {
      return FitReason::kTopology;
    }
    return FitReason::kFits;
  }
  return compute_ok >= pod.gpu_count ? FitReason::kGpuMemory : FitReason::kGpu;
}

GpuSet DefaultGpuChoice(int gpu_count, const NodeState& state, const PodRequest& pod,
                        const GpuTopology* topology) {
  if (topology != nullptr) return TopologyGpuChoice(*topology, gpu_count, state, pod);
  if (pod.IsSharing()) {
    int best = -1;
    for (int i = 0; i < gpu_count; ++i) {
      if (GpuHasRoom(state, i, pod) && (best < 0 || state.gpu_free[i] < state.gpu_free[best])) {
        best = i;
      }
    }
    return best < 0 ? 0 : GpuSet{1} << best;
  }
  GpuSet set = 0;
  int need = pod.gpu_count;
  for (int i = 0; i < gpu_count && need > 0; ++i) {
    if (GpuHasRoom(state, i, pod)) {
      set |= GpuSet{1} << i;
      --need;
    }
  }
  return need == 0 ? set : 0;
}

}  // namespace tessera
