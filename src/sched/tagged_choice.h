#pragma once

// The Scheduler's choice for a ScoreMode::kInteger policy with a context (Policy::UsesContext):
// the group with the highest score, then the lowest rank in the node order, in one pass over
// the pod shape's column of scores (ScoreColumns), whose entries are tagged with the
// Policy::ContextFor they were scored under: a group is looked up in the score cache's
// lines only when its tag is not the one its model projects now (ScoreContext). With a
// Policy::PairedContextBit the shape has a column for each value of the bit, and a tag is the
// context without it, so a change of the bit alone needs no lookup. Where every model projects
// the same context, the choice remembers the best keys of its last full pass per (shape, bit
// value) and, while that context lasts, looks only at them and at the groups that changed since
// (NoteChange): the others' keys cannot have changed. Decisions stay those of a plain loop
// over all nodes. Borrows the groups, the score cache and the context, which must outlive it;
// not copyable; not thread-safe.

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "model/fit_summary.h"
#include "model/pod.h"
#include "sched/node_groups.h"
#include "sched/score_cache.h"
#include "sched/score_columns.h"
#include "sched/score_context.h"

namespace tessera {

class TaggedChoice {
 public:
  /// `paired_bit`: Policy::PairedContextBit.
  TaggedChoice(const NodeGroups& groups, ScoreCache& cache, const ScoreContext& context,
               int64_t paired_bit)
      : groups_(groups),
        cache_(cache),
        context_(context),
        paired_bit_(paired_bit),
        columns_(paired_bit != 0 ? 2 : 1, true) {}
  TaggedChoice(const TaggedChoice&) = delete;
  TaggedChoice& operator=(const TaggedChoice&) = delete;

  ScoreColumns& columns() { return columns_; }
  /// The columns and the memory of a new pod shape (the next id).
  void AddShape() {
    columns_.AddShape();
    kept_.resize(kept_.size() + columns_.per_shape());
  }
  /// Group `gid` gained or lost a node.
  void NoteChange(int gid) {
    if (static_cast<size_t>(gid) >= stamp_.size()) stamp_.resize(static_cast<size_t>(gid) + 1, 0);
    change_log_.push_back(gid);
  }

  /// The best group for `pod` (of shape `shape`, FitQuery `query`) under the context's last
  /// projection, or −1 if it fits none; sets *score to its score.
  int Best(int shape, const FitQuery& query, const PodRequest& pod, int* score);

 private:
  static constexpr int32_t kUnknown = ScoreColumns::kUnknown;
  static constexpr int32_t kRejected = ScoreColumns::kRejected;
  static constexpr int32_t kLastSentinel = ScoreColumns::kLastSentinel;

  // Best where every model projects `context`.
  int UniformBest(int shape, int64_t context, const FitQuery& query, const PodRequest& pod,
                  int* score);
  // A miss in the tagged column (see the .cc).
  [[gnu::noinline]] bool TaggedMiss(int gid, int shape, int64_t context, const FitQuery& query,
                                    const PodRequest& pod, int32_t* score);

  const NodeGroups& groups_;
  ScoreCache& cache_;
  const ScoreContext& context_;
  const int64_t paired_bit_;
  ScoreColumns columns_;
  // UniformBest's memory of a (shape, paired bit value): the kKept largest keys
  // (ScoreColumns::KeyOf) of the last pass under `context`, largest first, and a floor above
  // every other group's key (kNoKey: none fits); the change log was at log_pos then.
  static constexpr int kKept = 16;
  static constexpr int64_t kNoKey = std::numeric_limits<int64_t>::min();
  struct Kept {
    bool valid = false;
    int64_t context = 0;
    size_t log_pos = 0;
    int64_t floor = kNoKey;
    int count = 0;
    std::array<std::pair<int64_t, int>, kKept> top;
  };
  std::vector<Kept> kept_;       // by shape * per_shape + (paired bit set)
  std::vector<int> change_log_;  // ids of the groups that gained or lost a node
  static constexpr size_t kLogLimit = size_t{1} << 16;
  std::vector<uint32_t> stamp_;  // by group id: stamp_now_ if in changed_
  uint32_t stamp_now_ = 0;
  std::vector<int> changed_;
};

}  // namespace tessera
