#pragma once

// The node catalog of `tessera plan`: the node types a cluster may be built from, with what
// each costs and how many of it the plan may use. YAML form (docs/PLAN.md):
//   node_types:
//     - {name: a100x8, model: A100, gpus: 8, cpu_milli: 96000, memory_mib: 786432,
//        gpu_memory_mib: 81920, cost_per_hour: 32.77, min_count: 0, max_count: 80,
//        count_today: 40, step: 4,
//        topology: {nvlink: [[0,1,2,3],[4,5,6,7]], numa: [[0,1,2,3],[4,5,6,7]]}}
//   (topology optional: the block of a scenario's node pool, trace/topology_yaml.h)
// Pure (parses text; no I/O); thread-safe.

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "model/node.h"
#include "model/topology.h"
#include "util/result.h"

namespace tessera {

/// One node type of the catalog.
struct NodeType {
  std::string name;   ///< nodes of the type are named "<name>-0000", ...
  std::string model;  ///< GPU model, by its engine name (CanonicalGpuModel)
  int gpus = 0;       ///< per node, >= 1
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int64_t gpu_memory_mib = 0;  ///< per GPU; 0 = the model's known memory, or not enforced
  double cost_per_hour = 0;    ///< per node, in the catalog's currency
  int min_count = 0;           ///< the plan's range of counts, min..max by `step`
  int max_count = 0;
  int step = 1;
  int count_today = 0;   ///< the cluster today (the "today" baseline), 0..max_count
  int line = 0;          ///< of its entry in the catalog file
  TopologyPtr topology;  ///< GPU topology of each node (`topology:`, as in a scenario); null = none
};

struct NodeCatalog {
  std::string file;
  std::vector<NodeType> types;
};

/// Parses a catalog. `known_models`: the GPU models a type may name (the GPU table of
/// model/gpu_catalog.h and the models the demand history names); an unknown one, a negative or
/// inconsistent count (min > max, count_today beyond max), a missing field, an unknown key or a
/// YAML syntax error is an error "file:line: node_types[i].field: what".
Result<NodeCatalog> ParseNodeCatalog(std::string_view yaml, std::string_view file,
                                     const std::set<std::string>& known_models);

/// The counts a type may take: min, min + step, ..., and max itself (always included).
std::vector<int> CountsOf(const NodeType& type);

/// The nodes of a mix: counts[t] nodes of catalog type t, type by type, named "<name>-%04d".
std::vector<NodeSpec> MixNodes(const NodeCatalog& catalog, const std::vector<int>& counts);

/// The GPUs and the cost per hour of a mix.
int64_t MixGpus(const NodeCatalog& catalog, const std::vector<int>& counts);
double MixCost(const NodeCatalog& catalog, const std::vector<int>& counts);
/// "40*a100x8 + 2*t4x2" (types with count 0 left out; "none" when all are 0).
std::string MixName(const NodeCatalog& catalog, const std::vector<int>& counts);

}  // namespace tessera
