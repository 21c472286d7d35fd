#pragma once

// The Scheduler's choice for a ScoreMode::kInteger policy without a context: the group with
// the highest score, then the lowest rank in the node order, from the policy's scores kept in
// columns by pod shape (ScoreColumns), so that a decision reads two arrays in group id order
// (the column and the groups' lowest ranks) and scores a group only the first time it is
// asked about in its state. A policy with Policy::ScoreBound gets a group's bound first, and
// its score only if the bound could beat the best score found: the choice is the same.
// Borrows the groups and the score cache, which must outlive it; not copyable; not
// thread-safe.

#include <cstdint>
#include <utility>
#include <vector>

#include "model/fit_summary.h"
#include "model/pod.h"
#include "sched/node_groups.h"
#include "sched/score_cache.h"
#include "sched/score_columns.h"

namespace tessera {

class ColumnChoice {
 public:
  /// `bounds`: the policy gives bounds (Policy::HasScoreBound).
  ColumnChoice(const NodeGroups& groups, ScoreCache& cache, bool bounds)
      : groups_(groups), cache_(cache), bounds_(bounds) {}
  ColumnChoice(const ColumnChoice&) = delete;
  ColumnChoice& operator=(const ColumnChoice&) = delete;

  ScoreColumns& columns() { return columns_; }

  /// The best group for `pod` (of shape `shape`, FitQuery `query`), or −1 if it fits none;
  /// sets *score to its score.
  int Best(int shape, const FitQuery& query, const PodRequest& pod, int* score);
  /// The score of `pod` on group `gid` (live, and not ruled out by its record) into *score;
  /// false if the pod does not fit.
  bool Score(int gid, int shape, const FitQuery& query, const PodRequest& pod, int32_t* score);

 private:
  static constexpr int32_t kUnknown = ScoreColumns::kUnknown;
  static constexpr int32_t kRejected = ScoreColumns::kRejected;
  static constexpr int32_t kLastSentinel = ScoreColumns::kLastSentinel;

  template <bool kExact, bool kBound>
  int BestInColumn(int shape, const FitQuery& query, const PodRequest& pod, int* score);
  // Fills a kUnknown entry; true if it now holds a value.
  template <bool kExact, bool kBound>
  bool Resolve(int gid, int32_t* column, const FitQuery& query, const PodRequest& pod,
               int64_t* uncached);
  // The score of a group whose entry holds a value (a bound is replaced by the score).
  int32_t Exact(int gid, int32_t* column, const PodRequest& pod);
  template <bool kExact>
  bool ColumnScore(int gid, int32_t* column, const FitQuery& query, const PodRequest& pod,
                   int32_t* score);

  const NodeGroups& groups_;
  ScoreCache& cache_;
  const bool bounds_;
  ScoreColumns columns_{1, false};
  // The groups of a decision whose key may beat the best score: (key, group id).
  std::vector<std::pair<int64_t, int>> candidates_;
};

}  // namespace tessera
