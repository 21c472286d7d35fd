#pragma once

#include <cstdint>
#include <vector>

#include "model/node.h"

namespace tessera {

/// `count` nodes drawn from `nodes` keeping the mix of GPU models: each model (CPU-only
/// nodes form one group) gets its share of `count` by largest remainder (ties to the larger
/// group, then the earlier one), and its nodes are drawn uniformly with `seed`. The result
/// keeps the input order. count >= nodes.size() returns all nodes. Deterministic; pure.
std::vector<NodeSpec> SubsetNodes(const std::vector<NodeSpec>& nodes, int count, uint64_t seed);

}  // namespace tessera

namespace tessera {

/// `count` nodes keeping the model mix: SubsetNodes when count <= nodes.size(); otherwise
/// the whole list repeated (copies named "<name>~<k>") plus a SubsetNodes draw for the rest.
/// Lets a sweep go beyond a scenario's cluster. Deterministic; pure.
std::vector<NodeSpec> ResizeNodes(const std::vector<NodeSpec>& nodes, int count, uint64_t seed);

}  // namespace tessera
