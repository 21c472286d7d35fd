#pragma once

#include <cstdint>
#include <string>

#include "model/node.h"
#include "model/resources.h"

namespace tessera {

/// A pod as read from a trace, a scenario or the API (before it is bound to a cluster).
struct PodSpec {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int gpu_count = 0;            ///< GPUs; sharing pods have 1
  int32_t gpu_milli = 0;        ///< per GPU; < 1000 only for sharing pods
  int64_t gpu_memory_mib = 0;   ///< per GPU; 0 = not requested
  std::string gpu_spec;         ///< allowed GPU models "A|B"; empty = any
  std::string qos;              ///< LS, BE, Burstable, Guaranteed, ... (may be empty)
  int64_t creation_time = -1;   ///< seconds; -1 = absent
  int64_t scheduled_time = -1;  ///< seconds; -1 = absent
  int64_t deletion_time = -1;   ///< seconds; -1 = absent
  /// Per GPU, a percentage (1..100) of the GPU's memory, when gpu_memory_mib is 0 (HAMi's
  /// nvidia.com/gpumem-percentage); 0 = none. Cluster::MakeRequest turns it into MiB.
  int32_t gpu_memory_percent = 0;
  TopologyRequest topology{};  ///< `tessera.io/topology`; kNone = topology-blind

  int64_t TotalGpuMilli() const { return int64_t{gpu_count} * gpu_milli; }
};

/// A pod's request in the engine's terms: the GPU-model constraint resolved against one
/// cluster's model ids. Two pods with equal requests are interchangeable for every policy.
struct PodRequest {
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t gpu_count = 0;
  int32_t gpu_milli = 0;
  int64_t gpu_memory_mib = 0;
  ModelMask models = kAnyModel;
  TopologyRequest topology{};

  bool IsCpuOnly() const { return gpu_count == 0 || gpu_milli == 0; }
  bool IsSharing() const { return gpu_count == 1 && gpu_milli > 0 && gpu_milli < kMilliPerGpu; }
  int64_t TotalGpuMilli() const { return IsCpuOnly() ? 0 : int64_t{gpu_count} * gpu_milli; }
  PodTypeTag Tag() const {
    if (IsCpuOnly()) return PodTypeTag::kNoGpu;
    if (IsSharing()) return PodTypeTag::kShareGpu;
    switch (gpu_count) {
      case 1:
        return PodTypeTag::kOneGpu;
      case 2:
        return PodTypeTag::kTwoGpu;
      case 4:
        return PodTypeTag::kFourGpu;
      case 8:
        return PodTypeTag::kEightGpu;
      default:
        return PodTypeTag::kOther;
    }
  }
  bool operator==(const PodRequest&) const = default;
};

}  // namespace tessera
