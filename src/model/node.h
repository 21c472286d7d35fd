#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "model/resources.h"
#include "model/topology.h"

namespace tessera {

/// The fixed description of one node, as read from a node list, a scenario or the API.
struct NodeSpec {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int gpu_count = 0;
  std::string gpu_model;       ///< empty when gpu_count == 0
  int64_t gpu_memory_mib = 0;  ///< per GPU; 0 = unknown (GPU memory is then not enforced)
  TopologyPtr topology{};      ///< null = no topology known (every GPU alike)
};

/// The kinds of pod the `clustering` policy tells apart (its "type tags").
enum class PodTypeTag : uint8_t {
  kNoGpu = 0,
  kShareGpu,
  kOneGpu,
  kTwoGpu,
  kFourGpu,
  kEightGpu,
  kOther
};
inline constexpr int kNumPodTypeTags = 7;

/// The mutable state of one node: what is left. Plain value; compared and hashed as a whole
/// by the scheduler, which groups nodes in equal states.
struct NodeState {
  int64_t cpu_left = 0;                                 ///< milli-CPU
  int64_t memory_left = 0;                              ///< MiB
  std::array<int32_t, kMaxGpusPerNode> gpu_free{};      ///< milli free per GPU index
  std::array<int32_t, kMaxGpusPerNode> gpu_mem_free{};  ///< MiB free per GPU (0 if unknown)
  std::array<uint16_t, kNumPodTypeTags> pods_by_tag{};  ///< resident pods per type tag

  bool operator==(const NodeState&) const = default;
};

}  // namespace tessera
