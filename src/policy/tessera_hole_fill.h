#pragma once

// Hole fill, a term of the `tessera` policy (docs/POLICIES.md, "The `tessera` policy";
// TesseraParams::hole_fill_primary, and memory_hole_fill in docs/GPU_MEMORY.md): the free part
// r of a GPU is a hole that the list's frequent sharing sizes (those of at least
// hole_min_share of its sharing pods, any number of each) fill at most up to the largest sum
// of them that fits in r, so waste(r) = r − that sum can never be used. A sharing pod's
// placement is judged by the drop of Σ waste over the node's GPUs, less the same drop on a
// free GPU (hole_relative): a 320-milli pod no longer takes the 530 next to a 470 (210 left,
// which no frequent size fits) when a 680 next to a 320 is free (360 left, which a 320
// closes). Plain values, immutable after construction.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "frag/target_workload.h"
#include "model/node.h"
#include "model/pod.h"

namespace tessera {

/// waste(r) over a range of hole sizes r, as a table.
class HoleWaste {
 public:
  /// No table (the term is off).
  HoleWaste() = default;
  /// waste(r) in milli-GPU, r = 0..1000, over the list's frequent sharing GPU milli.
  static HoleWaste OfMilli(const TargetWorkload& workload, double min_share);
  /// waste(r) in MiB, r = 0..256 GiB, over the frequent GPU memory requests of the list's
  /// sharing pods.
  static HoleWaste OfMemory(const TargetWorkload& workload, double min_share);

  bool empty() const { return waste_.empty(); }
  /// waste(r), for r in the table.
  int32_t operator[](size_t r) const { return waste_[r]; }
  /// waste(r), a larger r than the table's counting as its largest.
  int64_t Clamped(int64_t r) const { return waste_[std::min<int64_t>(r, waste_.size() - 1)]; }

 private:
  std::vector<int32_t> waste_;
};

/// The hole fill (milli) of one pod on one node, for each of its placements: what does not
/// depend on the placement is computed once. The drop of Σ waste over the node's GPUs is the
/// drop on the one GPU a sharing pod takes (the sums are of integers: exact). Borrows the
/// table and the node state, which must outlive it.
class NodeHoleFill {
 public:
  /// `waste`: the milli table (HoleWaste::OfMilli; empty: off). `relative`: taken relative
  /// to putting the pod on a free GPU (TesseraParams::hole_relative).
  NodeHoleFill(const HoleWaste& waste, const NodeState& state, const PodRequest& pod, bool relative)
      : waste_(waste) {
    on_ = pod.IsSharing() && !waste.empty();
    if (!on_) return;
    before_ = state.gpu_free.data();
    if (relative) {
      fresh_fill_ = static_cast<double>(waste[kMilliPerGpu] - waste[kMilliPerGpu - pod.gpu_milli]);
    }
  }

  /// The fill of the placement that leaves `free` milli on the node's `g` GPUs; 0 for a pod
  /// that does not share a GPU. Relative to a free GPU, only holes shared with other pods are
  /// judged (and a fresh GPU keeps FGD's own score).
  double Fill(const int32_t* free, int g) const {
    if (!on_) return 0;
    for (int i = 0; i < g; ++i) {
      if (free[i] != before_[i]) {
        return static_cast<double>(waste_[before_[i]] - waste_[free[i]]) - fresh_fill_;
      }
    }
    return -fresh_fill_;
  }

 private:
  const HoleWaste& waste_;
  bool on_ = false;
  const int32_t* before_ = nullptr;  // the node's free milli per GPU now
  double fresh_fill_ = 0;            // the same drop on a free GPU (with `relative`)
};

}  // namespace tessera
