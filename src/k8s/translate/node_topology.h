#pragma once

// A node's GPU topology from its annotations: Tessera's own tessera.io/gpu-topology, else
// HAMi's hami.io/node-nvidia-score with the NUMA nodes of hami.io/node-nvidia-register
// (docs/TOPOLOGY.md, "Inputs"). Pure and thread-safe.

#include <map>
#include <string>
#include <string_view>

#include "k8s/api/objects.h"
#include "model/node.h"
#include "model/topology.h"
#include "util/result.h"

namespace tessera::k8s {

/// The kubelet Topology Manager policy of the nodes whose labels include every pair of
/// `match_labels` (serve config `topology.pools`; an empty selector matches every node).
struct NodePoolTopology {
  std::map<std::string, std::string> match_labels;
  KubeletTopologyPolicy kubelet = KubeletTopologyPolicy::kNone;
  bool operator==(const NodePoolTopology&) const = default;
};

/// Tessera's node annotation: a JSON object
///   {"nvlink": [[0,1,2,3],[4,5,6,7]], "numa": [[0,1,2,3],[4,5,6,7]],
///    "numaCpu": ["48", "48"], "links": [[0,100,...],...]}
/// with every field optional: nvlink = GPU indices per NVLink domain (absent: no NVLink, each
/// GPU its own domain); numa = GPU indices per NUMA node (absent: one NUMA node); numaCpu = the
/// CPU of each NUMA node in the order of `numa` (Kubernetes quantities, or integer cores);
/// links = the gpu_count x gpu_count pairwise score matrix on HAMi's scale (absent: derived,
/// 100 within an NVLink domain, 20 within a NUMA node, else 10). Unknown fields are errors.
inline constexpr std::string_view kGpuTopologyAnnotation = "tessera.io/gpu-topology";

/// The topology of `node`, whose engine view is `spec` (NodeToSpec without topology):
///  - tessera.io/gpu-topology when present (it wins over HAMi's);
///  - else, when hami.io/node-nvidia-score is present: GPUs by the healthy devices of the
///    register annotation (as NodeToSpec numbers them; unhealthy devices' entries are skipped);
///    link(a, b) = the smaller of the two directions' scores (a pair counts as NVLink only when
///    both GPUs report it; a pair one side omits takes the other's, a pair neither reports is an
///    error); NVLink domains = the connected groups of the pairs scoring >= 100; NUMA nodes =
///    the register's `numa` values (renumbered densely);
///  - else null (no topology; HAMi's register alone says nothing of NVLink).
/// Errors name the node's field as a JSON path (`Node.metadata.annotations["tessera.io/
/// gpu-topology"].nvlink[1][0]: GPU 9 is out of range 0..7`): malformed JSON, an unknown field,
/// a GPU index out of range or repeated, a GPU in no domain, sizes that do not match the node's
/// GPU count, an unknown UUID, a healthy GPU without an entry, absurd numbers. The caller treats
/// an error as "no topology" for the node.
Result<TopologyPtr> NodeTopology(const Node& node, const NodeSpec& spec);

}  // namespace tessera::k8s
