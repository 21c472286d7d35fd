#pragma once

#include <array>
#include <cstdint>

#include "model/resources.h"
#include "policy/policy.h"

namespace tessera {

// The two halves of HAMi's scoring (src/policy/hami.cc has the formulas), shared by
// hami-binpack, hami-spread (hami.cc) and hami-topology (hami_topology.cc). Pure functions of
// the node view and the pod; thread-safe.

/// HAMi's node score before the placement, as the integer the scheduler compares (binpack:
/// higher for a more used node; spread: the reverse).
int64_t HamiNodeScore(const NodeView& node, bool binpack);

/// The node's GPUs with room for `pod` (GpuHasRoom), in HAMi's GPU order: binpack the highest
/// GPU score first, spread the lowest, the lower index first among equals. Writes them to
/// `order` and returns how many there are. `pod` requests GPUs.
int HamiGpuOrder(const NodeView& node, const PodRequest& pod, bool binpack,
                 std::array<int, kMaxGpusPerNode>& order);

}  // namespace tessera
