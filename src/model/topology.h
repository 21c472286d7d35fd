#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

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

struct NodeState;
struct PodRequest;

/// The number of domains of `scope` on a node of `gpu_count` GPUs (domain ids are dense).
int DomainCount(const GpuTopology& topo, TopologyScope scope, int gpu_count);
/// The GPUs of each domain of `scope`, by domain id, into out[0..DomainCount).
int Domains(const GpuTopology& topo, TopologyScope scope, int gpu_count,
            std::array<GpuSet, kMaxGpusPerNode>* out);
/// The fewest domains of `scope` whose sizes add up to `k` GPUs: 1 whenever k fits one
/// domain (0 for k ≤ 0); −1 if the node has fewer than k GPUs.
int MinDomains(const GpuTopology& topo, TopologyScope scope, int gpu_count, int k);
/// Whether `gpus` touches no more domains of `scope` than MinDomains(its size): the kubelet
/// Topology Manager's `restricted` rule (the narrowest possible mask). A set of at most one
/// GPU is always aligned.
bool Aligned(const GpuTopology& topo, TopologyScope scope, int gpu_count, GpuSet gpus);

/// What a pod needs of a node's topology there: its own TopologyRequest and, on a node whose
/// kubelet policy is kRestricted or kSingleNumaNode, "required at NUMA scope" for GPU pods
/// (kSingleNumaNode: in exactly one NUMA node, so a pod needing more GPUs than one NUMA node
/// has never fits). Pods of at most one GPU (whole or a share) are always aligned.
struct TopologyNeed {
  TopologyIntent nvlink = TopologyIntent::kNone;
  TopologyIntent numa = TopologyIntent::kNone;
  bool single_numa = false;  ///< kSingleNumaNode: the GPUs in one NUMA node
  /// The scope whose domains the GPU choice keeps whole (the pod's own scope if it states an
  /// intent, else NUMA on a kubelet-restricted node, else NVLink).
  TopologyScope primary = TopologyScope::kNvlink;
  bool required() const {
    return nvlink == TopologyIntent::kRequired || numa == TopologyIntent::kRequired;
  }
};
TopologyNeed EffectiveNeed(const GpuTopology& topo, const PodRequest& pod);
/// Whether the node's kubelet treats every GPU pod as required at NUMA scope.
inline bool KubeletAligns(const GpuTopology& topo) {
  return topo.kubelet == KubeletTopologyPolicy::kRestricted ||
         topo.kubelet == KubeletTopologyPolicy::kSingleNumaNode;
}
/// Whether `gpus` meets every required part of `need`.
bool MeetsRequired(const GpuTopology& topo, int gpu_count, const TopologyNeed& need, GpuSet gpus);

/// The bits FitSummary::topology keeps of a node's topology, and FitQuery's of a pod: a pod
/// can be refused for topology only where the two share a bit.
inline constexpr uint8_t kTopoNvlinkSplit = 1;  ///< ≥ 2 NVLink domains (an NVLink pod may not fit)
inline constexpr uint8_t kTopoNumaSplit = 2;    ///< ≥ 2 NUMA nodes (a NUMA pod may not fit)
inline constexpr uint8_t kTopoKubelet = 4;      ///< ≥ 2 NUMA nodes and a kubelet that aligns
/// FitSummary's bits for a node (0 without topology).
uint8_t TopologyBits(const GpuTopology* topo, int gpu_count);
/// FitQuery's bits for a pod: those of the nodes where its topology may refuse it.
uint8_t TopologyQueryBits(const PodRequest& pod);

/// Whether some set of the pod's GPUs with room (GpuHasRoom) on the node meets every required
/// part of its need there (true when nothing is required). Precondition: enough GPUs have room.
bool TopologyFits(const GpuTopology& topo, int gpu_count, const NodeState& state,
                  const PodRequest& pod);
/// The GPU choice on a node with a topology (precondition: the pod fits, CheckFit): among the
/// sets of GPUs with room that meet the required part of the need, the one that (1) is aligned
/// in the primary scope, then in the other; (2) takes the fewest idle GPUs (a share goes to a
/// partly used GPU); (3) leaves the most whole domains of the primary scope idle; (4) touches
/// the domains with the fewest idle GPUs (best fit); (5) has the highest sum of pairwise link
/// scores (a share: the tightest GPU); (6) has the lowest indices. 0 if none.
GpuSet TopologyGpuChoice(const GpuTopology& topo, int gpu_count, const NodeState& state,
                         const PodRequest& pod);
/// For a pod refused for topology (FitReason::kTopology), what it lacks, e.g. "topology: needs
/// 4 GPUs in one NVLink domain, the most free in one is 3 (domains 0-3: 2 free, 4-7: 3 free)".
std::string TopologyShortfall(const GpuTopology& topo, int gpu_count, const NodeState& state,
                              const PodRequest& pod);
/// The topology fragmentation measure's scope on a node (TargetWorkload::NodeFragmentation):
/// NVLink domains, or NUMA nodes where the kubelet aligns (KubeletAligns). A k-GPU class
/// (k ≥ 2) can use a free GPU only inside a set of k GPUs that is aligned in that scope (one
/// domain when k fits one; under kSingleNumaNode always one NUMA node).
inline TopologyScope MeasureScope(const GpuTopology& topo) {
  return KubeletAligns(topo) ? TopologyScope::kNuma : TopologyScope::kNvlink;
}
/// The GPUs of `room` that lie in some set of `k` GPUs of `room` aligned in MeasureScope
/// (0 if there is none; `room` itself for k ≤ 1, or when every k-set is aligned).
GpuSet AlignedUsable(const GpuTopology& topo, int gpu_count, GpuSet room, int k);
/// A node's GPUs as index ranges, "0-3,6".
std::string GpuRanges(GpuSet gpus);

}  // namespace tessera
