#pragma once

// The scores of a ScoreMode::kInteger policy kept in columns: for each pod shape, one 32-bit
// entry per node group id (a column), so that a decision reads one array in group id order
// beside the groups' records (NodeGroups) and touches a group itself only to score it for the
// first time. An entry is kUnknown (nothing known yet, and every entry of a free group id),
// kRejected + r (the pod does not fit, FitReason r ≥ 1) or a value v, a score or an upper bound
// of it (Policy::ScoreBound), stored as 2v + (1 if a bound); values outside [kMinValue,
// kMaxValue] are not stored. With a context, a shape may have a column for each value of the
// policy's paired context bit, and a tag per (shape, group id): the Policy::ContextFor its
// entries hold scores for (sched/tagged_choice.h). The choices over the columns are
// ColumnChoice (sched/column_choice.h) and TaggedChoice. Not copyable; not thread-safe.

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "model/fit.h"
#include "model/fit_summary.h"
#include "model/pod.h"
#include "sched/node_groups.h"

namespace tessera {

class ScoreColumns {
 public:
  static constexpr int32_t kUnknown = std::numeric_limits<int32_t>::min();
  static constexpr int32_t kRejected = kUnknown + 1;
  static constexpr int32_t kLastSentinel = kRejected + kNumFitReasons - 1;
  static constexpr int32_t kMinValue = (kLastSentinel >> 1) + 1;
  static constexpr int32_t kMaxValue = std::numeric_limits<int32_t>::max() >> 1;
  static bool IsRejection(int32_t v) { return v > kRejected && v <= kLastSentinel; }
  static bool Storable(int32_t v) { return v >= kMinValue && v <= kMaxValue; }
  static int32_t Encode(int32_t v, bool bound) { return v * 2 + (bound ? 1 : 0); }
  /// The order of the choice: the higher value, then the lower rank.
  static int64_t KeyOf(int32_t value, int32_t rank) {
    return static_cast<int64_t>(value) * (int64_t{1} << 32) +
           (int64_t{0xffffffff} - static_cast<int64_t>(rank));
  }

  /// `per_shape`: columns per shape (1, or 2 for a paired context bit's values); `tagged`: a
  /// tag per (shape, group id) too.
  ScoreColumns(size_t per_shape, bool tagged) : per_shape_(per_shape), tagged_(tagged) {}
  ScoreColumns(const ScoreColumns&) = delete;
  ScoreColumns& operator=(const ScoreColumns&) = delete;

  /// The columns of a new pod shape (the next id), where nothing is known.
  void AddShape();
  /// Makes room for group id `gid` in every column if there is none.
  void Widen(int gid) {
    if (static_cast<size_t>(gid) >= stride_) Grow(gid);
  }
  /// A group id is freed: nothing is known of its next group. (Entries of free ids stay
  /// kUnknown: a scan skips them by their record.)
  void Forget(int gid) {
    for (size_t s = 0; s < shapes_ * per_shape_; ++s) scores_[s * stride_ + gid] = kUnknown;
  }

  /// The first column of `shape`, by group id; the second (a paired bit set) follows at
  /// stride().
  int32_t* column(int shape) {
    return scores_.data() + static_cast<size_t>(shape) * per_shape_ * stride_;
  }
  /// The tags of `shape`, by group id (tagged only).
  int64_t* tags(int shape) { return tags_.data() + static_cast<size_t>(shape) * stride_; }
  size_t stride() const { return stride_; }
  size_t per_shape() const { return per_shape_; }

  /// Adds every live group's rejection of `pod` (of shape `shape`, FitQuery `query`), which
  /// fits none of them, to `rejected` by FitReason, its members counted; what is not known
  /// yet is checked and kept in the first column.
  void CountRejections(int shape, const NodeGroups& groups, const FitQuery& query,
                       const PodRequest& pod, std::array<int, kNumFitReasons>& rejected);

 private:
  // Doubles the columns' length (or more) so that they have room for group id `gid`.
  void Grow(int gid);

  const size_t per_shape_;
  const bool tagged_;
  size_t shapes_ = 0;
  size_t stride_ = 0;            // group ids each column has room for
  std::vector<int32_t> scores_;  // the columns of shape s: [s * per_shape_ * stride_, ...)
  std::vector<int64_t> tags_;    // tagged_: the tags of shape s: [s * stride_, (s + 1) * stride_)
};

}  // namespace tessera
