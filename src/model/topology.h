#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "model/resources.h"

namespace tessera {

/// Which partition of a node's GPUs a topology-aware pod must (or should) fit inside.
enum class TopologyScope : uint8_t {
  kNvlink = 0,  ///< one NVLink domain (GPUs that all reach each other over NVLink / NVSwitch)
  kNuma = 1,    ///< one NUMA node (GPUs attached to one CPU socket)
};

/// How strongly a pod asks for its GPUs inside one domain of its scope.
enum class TopologyIntent : uint8_t {
  kNone = 0,       ///< topology-blind (the default)
  kPreferred = 1,  ///< the score prefers nodes and GPUs that keep it inside one domain
  kRequired = 2,   ///< a node passes filter only if one domain can hold it
};

/// A pod's topology intent (annotation `tessera.io/topology`, or a node pool's kubelet policy).
struct TopologyRequest {
  TopologyIntent intent = TopologyIntent::kNone;
  TopologyScope scope = TopologyScope::kNvlink;
  bool operator==(const TopologyRequest&) const = default;
};

/// The kubelet Topology Manager policy of a node pool (its `--topology-manager-policy`).
/// Under kRestricted and kSingleNumaNode the kubelet rejects a pod whose GPUs are not
/// NUMA-aligned, so the scheduler treats every GPU pod as kRequired at NUMA scope there.
enum class KubeletTopologyPolicy : uint8_t {
  kNone = 0,
  kBestEffort = 1,
  kRestricted = 2,
  kSingleNumaNode = 3,
};

/// The GPU topology of one node (shared, immutable, by every node built alike): for GPU i,
/// its NVLink domain and NUMA node, and a pairwise link score on HAMi's scale (100 per NVLink
/// link, 10–60 for PCIe paths, higher = better; symmetric, 0 on the diagonal). Domain ids
/// are dense, 0..(domains − 1), in order of each domain's lowest GPU index.
struct GpuTopology {
  int gpu_count = 0;
  std::array<uint8_t, kMaxGpusPerNode> nvlink{};  ///< NVLink domain of each GPU
  std::array<uint8_t, kMaxGpusPerNode> numa{};    ///< NUMA node of each GPU
  std::array<std::array<uint16_t, kMaxGpusPerNode>, kMaxGpusPerNode> link{};
  /// Milli-CPU per NUMA node, by NUMA id; 0 = not known (then CPU is not checked per NUMA).
  std::array<int64_t, kMaxGpusPerNode> numa_cpu_milli{};
  KubeletTopologyPolicy kubelet = KubeletTopologyPolicy::kNone;

  bool operator==(const GpuTopology&) const = default;
};

using TopologyPtr = std::shared_ptr<const GpuTopology>;

}  // namespace tessera
