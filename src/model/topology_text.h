#pragma once

// A node's GPU topology as users write it: GPU partitions (NVLink domains, NUMA nodes), an
// optional pairwise link matrix, and the compact text forms of the node-list CSV, the pod
// intent and the kubelet policy. One builder serves every front door (the node annotation
// tessera.io/gpu-topology, HAMi's score annotation, the scenario YAML, the node-list CSV, the
// planner's catalog), so a topology read from any of them is validated by the same rules
// (docs/TOPOLOGY.md, "Inputs"). Pure functions; thread-safe.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/topology.h"
#include "util/result.h"

namespace tessera {

/// The greatest pairwise link score accepted (HAMi's scale: 100 per NVLink link, up to 18
/// links on an H100 SXM pair, 10-60 for PCIe paths); anything above is absurd input.
inline constexpr int64_t kMaxLinkScore = 10000;
/// Link scores derived when no matrix is given (HAMi's scale): same NVLink domain, same NUMA
/// node (PCIe under one CPU socket), across sockets.
inline constexpr uint16_t kDerivedNvlinkScore = 100;
inline constexpr uint16_t kDerivedSameNumaScore = 20;
inline constexpr uint16_t kDerivedCrossNumaScore = 10;

/// A topology as written, before validation. Each partition lists GPU indices per domain.
struct TopologyGroups {
  /// NVLink domains; empty = no NVLink (every GPU its own domain).
  std::vector<std::vector<int>> nvlink;
  /// NUMA nodes; empty = one NUMA node holding every GPU.
  std::vector<std::vector<int>> numa;
  /// Milli-CPU per NUMA node, in the order of `numa`; empty = not known.
  std::vector<int64_t> numa_cpu_milli;
  /// gpu_count x gpu_count link scores (symmetric, 0 on the diagonal, 0..kMaxLinkScore);
  /// empty = derived from the partitions (kDerived*Score).
  std::vector<std::vector<int64_t>> links;
  KubeletTopologyPolicy kubelet = KubeletTopologyPolicy::kNone;
};

/// Validates `groups` for a node of `gpu_count` GPUs and builds its topology (domain ids dense,
/// in order of each domain's lowest GPU index; numa_cpu_milli follows the renumbering).
/// Errors name the field as a path relative to the topology ("nvlink[1][2]: GPU 9 is out of
/// range 0..7"): an index out of range or repeated, a GPU in no domain, an empty domain, more
/// domains than GPUs, numa_cpu_milli not one per NUMA node or out of 0..kMaxCpuMilli, a link
/// matrix of the wrong size, asymmetric, non-zero on the diagonal or out of 0..kMaxLinkScore,
/// a node without GPUs or with more than kMaxGpusPerNode.
Result<GpuTopology> BuildTopology(int gpu_count, const TopologyGroups& groups);

/// GPU index groups in the compact form "0-3/4-7" ('/' between domains, ',' between items,
/// "a-b" an inclusive range): [[0,1,2,3],[4,5,6,7]]. Error: malformed text.
Result<std::vector<std::vector<int>>> ParseGpuGroups(std::string_view text);

/// The compact topology text of the node-list CSV: "key=value" pairs joined by ';' with keys
/// nvlink (GPU groups), numa (GPU groups) and kubelet (a ParseKubeletPolicy name), e.g.
/// "nvlink=0-3/4-7;numa=0-3/4-7". Error: unknown or repeated key, malformed value.
Result<TopologyGroups> ParseCompactTopology(std::string_view text);

/// The GPU groups of a topology's partition (nvlink or numa) in the compact form "0-3/4-7".
std::string FormatGpuGroups(const GpuTopology& topology, TopologyScope scope);
/// The whole topology in the compact text ParseCompactTopology reads:
/// "nvlink=0-3/4-7;numa=0-3/4-7;kubelet=none" (a link matrix and CPU per NUMA node are not
/// part of it; a reader derives the links from the domains).
std::string FormatCompactTopology(const GpuTopology& topology);

/// A pod's topology intent: "required" | "preferred", optionally with ":nvlink" (the default)
/// or ":numa"; "none" (or "") is no intent. Error: anything else.
Result<TopologyRequest> ParseTopologyRequest(std::string_view text);

/// The kubelet's --topology-manager-policy names: "none", "best-effort", "restricted",
/// "single-numa-node". Error: anything else.
Result<KubeletTopologyPolicy> ParseKubeletPolicy(std::string_view text);
/// The name ParseKubeletPolicy reads.
std::string_view KubeletPolicyName(KubeletTopologyPolicy policy);

/// `topology` with its kubelet policy replaced (a new shared object; null stays null).
TopologyPtr WithKubeletPolicy(const TopologyPtr& topology, KubeletTopologyPolicy policy);

/// Returns the one shared object equal to `topology` among those interned in `pool` so far
/// (adding it when new), so nodes built alike share one TopologyPtr. Not thread-safe: one pool
/// per reader.
TopologyPtr InternTopology(std::vector<TopologyPtr>* pool, const GpuTopology& topology);

}  // namespace tessera
