#pragma once

// The Scheduler's score cache: for each node group (sched/node_groups.h) and pod shape
// (sched/pod_shapes.h), whether the pod fits the group and, where it does, the policy's score
// and GPU choice for the group's state (the GPU choice of sched/gpu_choice.h), computed once.
// Whether a shape fits does not depend on the context, so a rejection costs one lookup and no
// score; a fitting shape has a line of entries, shared by the shapes of one score shape. For
// a policy with a context (Policy::UsesContext), a line holds kContextSlots entries, each
// tagged with the Policy::ContextFor of the group's model it was scored under (ScoreContext):
// a context change recomputes only the scores it concerns, the oldest entry replaced first.
// With a Policy::PairedContextBit, a miss scores both values of the bit at once
// (Policy::ScorePair) and keeps both. Each group also has a PolicyScratch, handed to the policy
// in NodeView::scratch, for values that depend only on the group's state.
//
// Borrows the cluster, the policy, the groups, the shapes and the context, which must outlive
// it; not copyable; not thread-safe.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/cluster.h"
#include "model/fit.h"
#include "policy/policy.h"
#include "sched/node_groups.h"
#include "sched/pod_shapes.h"
#include "sched/score_context.h"

namespace tessera {

class ScoreCache {
 public:
  /// A score of a fitting (group, pod shape).
  struct Entry {
    int64_t context = 0;  ///< the Policy::ContextFor under which it was computed
    double raw = 0;       ///< the policy's score
    GpuSet gpus = 0;      ///< the GPUs (GpusOnNode); 0 for a CPU-only pod
    int8_t known = 0;     ///< 0 = not computed yet
    uint8_t next = 0;     ///< in a line's first entry: the entry to replace next
  };
  /// Entries per line with a context.
  static constexpr size_t kContextSlots = 4;

  ScoreCache(const Cluster& cluster, const Policy& policy, const NodeGroups& groups,
             const PodShapes& shapes, const ScoreContext& context);
  ScoreCache(const ScoreCache&) = delete;
  ScoreCache& operator=(const ScoreCache&) = delete;

  /// Group id `gid` holds a new group: nothing is known of it.
  void Reset(int gid) {
    if (static_cast<size_t>(gid) >= lines_.size()) return Grow(gid);
    Lines& l = lines_[gid];
    l.fit.clear();
    l.lines.clear();
    l.line_of.clear();
    memo_[gid] = PolicyScratch{};
  }

  /// The cached score of `pod` (of shape `shape`) on group `gid`, computed if not cached; or
  /// nullptr, with `*reason` set, when the pod does not fit. `fits`: known to fit (an exact
  /// FitQuery said so), CheckFit is not needed. kContext: the policy uses a context (the
  /// entry is the one of the context the group's model projects now).
  template <bool kContext>
  [[gnu::always_inline]] const Entry* Evaluate(int gid, int shape, const PodRequest& pod, bool fits,
                                               FitReason* reason) {
    return Find<kContext>(gid, shape, pod, fits, reason,
                          [this, gid] { return context_.of_model(groups_.group(gid).model); });
  }
  /// Evaluate<true> for a caller that knows `context`, the context the group's model projects
  /// now (ScoreContext::of_model). Where the pod fits, *line (if given) is set to the first
  /// entry of its line: kContextSlots entries, the known ones first, each under its context.
  [[gnu::always_inline]] const Entry* EvaluateUnder(int64_t context, int gid, int shape,
                                                    const PodRequest& pod, bool fits,
                                                    FitReason* reason,
                                                    const Entry** line = nullptr) {
    return Find<true>(
        gid, shape, pod, fits, reason, [context] { return context; }, line);
  }
  /// CheckFit's reason for `pod` (of shape `shape`) on group `gid`, cached like the scores.
  FitReason Fit(int gid, int shape, const PodRequest& pod);

  /// The score and GPUs of `pod` on group `gid` (which it fits) under the current context,
  /// computed now (Policy::Score is a pure function) and not kept.
  Entry Score(int gid, const PodRequest& pod);
  /// Policy::ScoreBound of `pod` on group `gid` (which it fits).
  int32_t Bound(int gid, const PodRequest& pod);

 private:
  // What the cache holds of one group.
  struct Lines {
    // By pod shape id: 0 = not known yet, else (FitReason + 1) | (line + 1) << 4, the line
    // (fitting shapes only) being the shape's slots_ entries in `lines`.
    std::vector<uint32_t> fit;
    std::vector<Entry> lines;
    // By score shape id: its line + 1, 0 if none yet.
    std::vector<uint32_t> line_of;
  };

  // Room for group id `gid`, nothing known of it.
  void Grow(int gid);
  // Evaluate, with `context_of()` the context of the group's model and *line (if given) set to
  // the line's first entry (kContext only).
  template <bool kContext, typename ContextOf>
  const Entry* Find(int gid, int shape, const PodRequest& pod, bool fits, FitReason* reason,
                    ContextOf context_of, const Entry** line = nullptr);
  // Checks whether `pod` fits the group and, if so, gives it a line: Lines::fit's value.
  uint32_t Classify(int gid, Lines& l, int shape, const PodRequest& pod, bool fits);
  // Evaluate's miss with a context: computes `context`'s entry of the line at `first`.
  Entry* Fill(int gid, Entry* first, int64_t context, const PodRequest& pod);
  void Compute(int gid, Entry& e, const PodRequest& pod);
  void ComputePair(int gid, Entry& e, Entry& sibling, bool bit_set, const PodRequest& pod);

  const Cluster& cluster_;
  const Policy& policy_;
  const NodeGroups& groups_;
  const PodShapes& shapes_;
  const ScoreContext& context_;
  const int64_t paired_bit_;  // Policy::PairedContextBit, with a context
  const size_t slots_;        // entries per line: kContextSlots with a context, else 1
  std::vector<Lines> lines_;  // by group id
  // The policy's memo of each group's state (NodeView::scratch), by group id.
  std::vector<PolicyScratch> memo_;
};

// A line holds kContextSlots entries with a context, tagged with the context they were
// computed under; when none matches, an empty one is used, else the one computed longest ago
// is replaced (Fill). Without, one entry per line.
template <bool kContext, typename ContextOf>
[[gnu::always_inline]] inline const ScoreCache::Entry* ScoreCache::Find(
    int gid, int shape, const PodRequest& pod, bool fits, FitReason* reason, ContextOf context_of,
    const Entry** line) {
  Lines& l = lines_[gid];
  if (l.fit.size() <= static_cast<size_t>(shape)) [[unlikely]] {
    l.fit.resize(shapes_.size());
  }
  uint32_t fit = l.fit[shape];
  if (fit == 0) [[unlikely]] {
    fit = l.fit[shape] = Classify(gid, l, shape, pod, fits);
  }
  if ((fit & 15) != 1) {
    *reason = static_cast<FitReason>((fit & 15) - 1);
    return nullptr;
  }
  constexpr size_t kSlots = kContext ? kContextSlots : 1;
  Entry* first = &l.lines[static_cast<size_t>((fit >> 4) - 1) * kSlots];
  if constexpr (!kContext) {
    if (!first->known) [[unlikely]] {
      Compute(gid, *first, pod);
    }
    return first;
  } else {
    if (line != nullptr) *line = first;
    const int64_t context = context_of();
    for (size_t i = 0; i < kSlots && first[i].known; ++i) {
      if (first[i].context == context) return &first[i];
    }
    return Fill(gid, first, context, pod);
  }
}

}  // namespace tessera
