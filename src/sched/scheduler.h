#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/cluster.h"
#include "model/fit.h"
#include "model/fit_summary.h"
#include "policy/policy.h"
#include "util/rng.h"

namespace tessera {

/// The outcome of scheduling one pod.
struct Decision {
  int node = -1;    ///< chosen node, or -1 if the pod fits nowhere
  GpuSet gpus = 0;  ///< GPUs on that node (0 for CPU-only pods)
  int score = 0;    ///< the winning integer score
  /// For a failed pod: how many nodes each filter rejected (indexed by FitReason).
  std::array<int, kNumFitReasons> rejected{};
  bool ok() const { return node >= 0; }
};

/// Filter → score → pick node → pick GPUs, over one Cluster with one Policy.
///
/// Nodes in equal states (same capacity, model, what is left on each GPU and which kinds of
/// pods they hold) form one group, scored once; a score is cached per (group, pod shape), so
/// the cost of a decision grows with the number of distinct node states, not with nodes.
/// Ties go to the node that comes first in `node_order` (the per-seed random node order).
/// Every group has a 32-byte record (its FitSummary, its lowest rank and its size) in one
/// array by group id, which a decision reads first: a group that cannot take the pod costs
/// that record only. For ScoreMode::kInteger policies without a context, the cached scores
/// are columns, one per pod shape, of one 32-bit integer per group id, so a decision reads
/// two arrays in order and touches a group itself only to score it for the first time; a
/// policy with Policy::ScoreBound gets a group's bound first, and its score only if the bound
/// could beat the best score found (the choice is the same). A pod shape that fit no node is
/// remembered with its rejections, kept up to date by Bind and Unbind, until a node enters a
/// state where it fits: until then its pods are answered without a pass over the groups.
/// For a policy that uses a cluster-wide context (Policy::UsesContext), the scheduler keeps a
/// ClusterSummary up to date and caches scores per (group, pod shape, the part of the context
/// value that concerns the group's GPU model and the pod: Policy::ContextFor), up to four
/// such values per (group, pod shape), the oldest replaced first; so a context change
/// recomputes only the scores it concerns, and decisions stay those of a plain loop over all
/// nodes. Whether a pod shape fits a group is cached apart from the context slots. For
/// ScoreMode::kInteger policies the best group is chosen during the scoring pass, which reads
/// a per-shape column first, like the columns above, whose entries are tagged with the
/// ContextFor they were scored under: a group is looked up in its context slots only when
/// its tag is not the current one.
/// A policy with a Policy::PairedContextBit is scored under both of its values at once
/// (Policy::ScorePair), and both are cached. Each group also has a PolicyScratch, handed to the
/// policy in NodeView::scratch, for values that depend only on the group's state.
///
/// The Scheduler is the only writer of its Cluster while it lives (Bind/Unbind).
/// Not thread-safe; the Cluster and the Policy must outlive it.
class Scheduler {
 public:
  /// `node_order` is a permutation of the cluster's node indices; `seed` drives the
  /// `random` policy's draws.
  Scheduler(Cluster* cluster, const Policy* policy, const std::vector<int>& node_order,
            uint64_t seed);
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  /// Chooses a node and GPUs for `pod`; changes no allocation. Counts `pod` as seen (Observe)
  /// unless `observe` is false: for a pod asked about again (the replay's retries of a pending
  /// pod), which was counted once when it arrived, as the extender counts a pod UID once.
  Decision Decide(const PodRequest& pod, bool observe = true);
  /// Counts `pod` among the pods seen (ClusterSummary::seen_*), as Decide does. For callers
  /// that score through ScoreNodes (the extender), which counts nothing: they call it once per
  /// pod, when they first see it. No effect for policies without a context.
  void Observe(const PodRequest& pod);
  /// The integer score (0..100 for the published policies) of each node of `nodes` on which
  /// `pod` fits, as (node, score) in the order of `nodes`; nodes where it does not fit are
  /// left out. Uses the same per-group cache as Decide; kMinMax policies are normalised
  /// across the feasible nodes of `nodes` (not of the whole cluster), kUniformRandom
  /// policies score every feasible node 0. Changes no allocation and draws no random number.
  /// Precondition: every entry of `nodes` is a valid node index.
  std::vector<std::pair<int, int>> ScoreNodes(const PodRequest& pod, const std::vector<int>& nodes);
  /// The GPUs Decide would give `pod` on `node`: the policy's choice under its current
  /// context, from the same cache (the generic choice for policies that leave it open). 0 for
  /// a CPU-only pod or a node it does not fit. Changes no allocation, counts nothing and draws
  /// no random number: the one GPU choice of every front door (the extender's bind, the
  /// replay's nominated preemptor).
  GpuSet ChooseGpus(int node, const PodRequest& pod);
  /// Allocates `pod` on `node`/`gpus` (as returned by Decide, or chosen by a caller that
  /// checked the fit).
  void Bind(int node, const PodRequest& pod, GpuSet gpus);
  /// Gives back an allocation made by Bind.
  void Unbind(int node, const PodRequest& pod, GpuSet gpus);

  const Cluster& cluster() const { return *cluster_; }
  /// Node groups currently holding at least one node (distinct node states).
  int distinct_states() const { return static_cast<int>(live_.size()); }
  /// The id of `node`'s group: nodes with the same id have the same capacity type and state,
  /// so a pod fits them alike (CheckFit) and ScoreNodes scores them alike. Ids are reused once
  /// a group empties; valid until the next Bind/Unbind. (Read-only; the extender's filter and
  /// prioritize use it to decide one node per group.)
  int group_of(int node) const { return group_of_[node]; }
  /// The cluster-wide summary a context-using policy sees (Policy::ContextKey).
  const ClusterSummary& summary() const { return summary_; }
  /// The whole idle GPUs (nothing allocated on them) of the cluster now, kept up to date by
  /// Bind and Unbind: what the headroom counts (sched/headroom.h, CountIdleGpus computes the
  /// same by a pass over the nodes).
  int64_t idle_gpus() const { return idle_gpus_; }
  /// The same by GPU model id (the cluster's models); they sum to idle_gpus().
  const std::vector<int64_t>& idle_gpus_by_model() const { return idle_gpus_by_model_; }
  /// How often the policy's context value changed.
  int context_changes() const { return context_changes_; }

 private:
  struct Key {
    int type;
    NodeState state;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  // A cached score of a fitting (group, pod shape).
  struct CacheEntry {
    int64_t context = 0;  // Policy::ContextFor under which it was computed
    double raw = 0;
    GpuSet gpus = 0;
    int8_t known = 0;  // 0 = not computed yet
    uint8_t next = 0;  // in a line's first entry: the entry to replace next
  };
  struct Feasible {
    int group;
    double raw;
    GpuSet gpus;
  };
  // What a decision reads of a group it knows nothing of yet for the pod's shape, by group
  // id; for a free id, a FitSummary that fits nothing and no members.
  struct Record {
    FitSummary fit = FitSummary::None();
    int32_t members = 0;
  };
  static_assert(sizeof(Record) == 32);
  struct Group {
    Key key;
    int representative = -1;
    std::set<int> ranks;       // ranks of member nodes in node_order
    std::vector<int> members;  // member nodes (for uniform draws)
    int model = -1;            // GPU model id of the members
    // By pod shape id: 0 = not known yet, else (FitReason + 1) | (line + 1) << 4, the line
    // (fitting shapes only) being the shape's slots_ entries in `lines`. Whether a shape fits
    // does not depend on the context, so rejections cost one lookup and no context slot.
    std::vector<uint32_t> fit;
    std::vector<CacheEntry> lines;
    // By score shape id (score_shape_): its line + 1, 0 if none yet; shapes that differ only
    // in what the policy does not read share a line.
    std::vector<uint32_t> line_of;
    int live_pos = -1;
  };

  int ShapeId(const PodRequest& pod);
  // The column of `shape` (columns_ only): scores_ from shape * stride_, by group id.
  int32_t* Column(int shape) {
    return scores_.data() + static_cast<size_t>(shape) * per_shape_ * stride_;
  }
  // The score of `pod` on group `gid` into *score: from the column, computed if it holds a
  // bound or nothing yet; false if the pod does not fit.
  template <bool kExact>
  bool ColumnScore(int gid, int32_t* column, const FitQuery& query, const PodRequest& pod,
                   int32_t* score);
  // Fills a kUnknown entry (see the .cc); true if it now holds a value.
  template <bool kExact, bool kBound>
  bool Resolve(int gid, int32_t* column, const FitQuery& query, const PodRequest& pod,
               int64_t* uncached);
  // The score of a group whose entry holds a value (a bound is replaced by the score).
  int32_t Exact(int gid, int32_t* column, const PodRequest& pod);
  // The best group by (score, lowest rank) over the columns, or −1; sets *score.
  template <bool kExact, bool kBound>
  int BestInColumn(int shape, const FitQuery& query, const PodRequest& pod, int* score);
  // The integer score of `pod` on group `gid` (which it fits), and its bound.
  int32_t ScoreOf(int gid, const PodRequest& pod);
  int32_t BoundOf(int gid, const PodRequest& pod);
  // Fills d.rejected for a pod that fits no group, and remembers the shape in failed_.
  void CountRejections(int shape, const FitQuery& query, const PodRequest& pod, Decision& d);
  void CountRejectionsOnce(int shape, const FitQuery& query, const PodRequest& pod, Decision& d);
  // CheckFit's reason for `pod` (whose query is `query`) on group `gid`.
  FitReason ReasonOn(const FitQuery& query, int gid, const PodRequest& pod) const;
  // CheckFit of `pod` on the group's state (its topology included).
  FitReason CheckOn(const Group& g, const PodRequest& pod) const;
  // Counts a node entering (+1) or leaving (−1) group `gid` in failed_.
  void TrackFailed(int gid, int sign);
  // Makes room for group id `gid` in every column; forgets what they hold for it.
  void WidenColumns(int gid);
  void ForgetColumns(int gid);
  // The cached score of `pod` on `g`, or nullptr with `*reason` set when it does not fit
  // (`fits`: as Classify's).
  template <bool kContext>
  const CacheEntry* Evaluate(Group& g, int shape, const PodRequest& pod, bool fits,
                             FitReason* reason);
  // Evaluate's miss with a context: computes `context`'s entry of the line at `first`.
  CacheEntry* Fill(Group& g, CacheEntry* first, int64_t context, const PodRequest& pod);
  // Checks whether `pod` fits the group and, if so, gives it a line: Group::fit's value.
  // `fits`: known to fit (an exact FitQuery said so), CheckFit is not needed.
  uint32_t Classify(Group& g, int shape, const PodRequest& pod, bool fits);
  void Compute(Group& g, CacheEntry& e, const PodRequest& pod);
  void ComputePair(Group& g, CacheEntry& e, CacheEntry& sibling, bool bit_set,
                   const PodRequest& pod);
  template <bool kContext>
  void ScoreGroups(int shape, const FitQuery& query, const PodRequest& pod, int64_t& feasible_nodes,
                   double& lo, double& hi);
  template <bool kContext, typename Visit>
  void ForEachFit(int shape, const FitQuery& query, const PodRequest& pod, Visit&& feasible);
  // The choice for ScoreMode::kInteger policies with a context (see the .cc).
  void BestGroup(int shape, const FitQuery& query, const PodRequest& pod, Decision& d,
                 Feasible& best);
  // BestGroup's choice where every model projects one context (see the .cc).
  int UniformBest(int shape, int64_t context, const FitQuery& query, const PodRequest& pod,
                  int* score);
  // BestGroup's miss in a tagged column (see the .cc).
  [[gnu::noinline]] bool TaggedMiss(int gid, int shape, int64_t context, const FitQuery& query,
                                    const PodRequest& pod, int32_t* score);
  // Computes the policy's ContextFor of every GPU model of the cluster for `pod`.
  void ProjectContext(const PodRequest& pod);
  void Insert(int node);
  void Remove(int node);
  Decision Finish(Decision d, const Feasible& best, const PodRequest& pod);
  bool IsIdle(int node) const;
  void CountIdleGpusOf(int node, int sign);
  void AddFreeGpus(int node, int sign);
  void UpdateContext();
  static constexpr size_t kContextSlots = 4;  // cache entries per (group, shape) with a context
  // Column entries that are not values: nothing known yet, and kRejected + r: "does not fit,
  // FitReason r" (r ≥ 1); the smallest int32 values.
  static constexpr int32_t kUnknown = std::numeric_limits<int32_t>::min();
  static constexpr int32_t kRejected = kUnknown + 1;
  static constexpr int32_t kLastSentinel = kRejected + kNumFitReasons - 1;
  static bool IsRejection(int32_t v) { return v > kRejected && v <= kLastSentinel; }
  // A column entry: kUnknown, kRejected + a FitReason, or a value v (a score, or an upper
  // bound of it) as 2v + (1 if a bound); values outside [kMinValue, kMaxValue] are not kept.
  static constexpr int32_t kMinValue = (kLastSentinel >> 1) + 1;
  static constexpr int32_t kMaxValue = std::numeric_limits<int32_t>::max() >> 1;
  static bool Storable(int32_t v) { return v >= kMinValue && v <= kMaxValue; }
  static int32_t Encode(int32_t v, bool bound) { return v * 2 + (bound ? 1 : 0); }
  // The order of the choice: the higher value, then the lower rank.
  static int64_t KeyOf(int32_t value, int32_t rank) {
    return static_cast<int64_t>(value) * (int64_t{1} << 32) +
           (int64_t{0xffffffff} - static_cast<int64_t>(rank));
  }

  Cluster* cluster_;
  const Policy* policy_;
  Rng rng_;
  std::vector<int> rank_;        // node -> rank in node_order
  std::vector<int> type_;        // node -> capacity type id
  std::vector<int> type_node_;   // capacity type id -> its first node
  std::vector<int> group_of_;    // node -> group id
  std::vector<int> member_pos_;  // node -> position in its group's members
  std::vector<Group> groups_;
  std::vector<Record> records_;    // by group id
  std::vector<int32_t> min_rank_;  // by group id: the lowest rank of a member in node_order
  // The policy's memo of each group's state (NodeView::scratch), by group id; kept out of
  // Group so that the scoring loop's group stride stays as it was.
  std::vector<PolicyScratch> memo_;
  std::vector<int> free_groups_;
  std::vector<int> live_;  // ids of non-empty groups
  std::unordered_map<Key, int, KeyHash> group_index_;
  std::vector<PodRequest> shapes_;
  std::unordered_map<uint64_t, std::vector<int>> shape_index_;  // hash -> shape ids
  // By shape id: its score shape, the shapes the policy scores alike (Policy::ReadsPodMemory:
  // equal but for the host memory request); score_shapes_ holds one shape of each.
  std::vector<int> score_shape_;
  std::vector<PodRequest> score_shapes_;
  std::vector<Feasible> scratch_;  // feasible groups
  const bool uses_context_;
  const int64_t paired_bit_;  // Policy::PairedContextBit, if uses_context_
  const size_t slots_;        // cache entries per line: kContextSlots with a context, else 1
  // Scores cached in columns (ScoreMode::kInteger) instead of lines; with a context
  // (tagged_), each entry also has the Policy::ContextFor it holds a score for (tags_), and the
  // lines keep every context's scores behind them.
  const bool columns_;
  const bool tagged_;
  const size_t per_shape_;       // columns per shape: 2 if tagged_ with a paired bit (its values)
  std::vector<int32_t> scores_;  // column of shape s: [s * stride_, (s + 1) * stride_)
  std::vector<int64_t> tags_;    // tagged_: the same layout
  // UniformBest's memory of a (shape, paired bit value): the kKept largest keys (KeyOf) of the
  // last pass under `context`, largest first, and a floor above every other group's key
  // (kNoKey: none fits); the change log was at log_pos then.
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
  std::vector<Kept> kept_;       // by shape * per_shape_ + (paired bit set)
  std::vector<int> change_log_;  // tagged_: ids of the groups that gained or lost a node
  static constexpr size_t kLogLimit = size_t{1} << 16;
  std::vector<uint32_t> stamp_;  // by group id: stamp_now_ if in changed_
  uint32_t stamp_now_ = 0;
  std::vector<int> changed_;
  size_t stride_ = 0;     // group ids each column has room for
  const bool bounds_on_;  // columns_ and Policy::HasScoreBound
  // Pod shapes that fit no node when last decided, with every node's rejection, kept up to
  // date by Insert and Remove until a node enters a state where the shape fits: a pod of
  // such a shape is answered from here (the answer the plain loop would give).
  struct Failed {
    int shape;
    FitQuery query;
    std::array<int, kNumFitReasons> rejected;
  };
  static constexpr size_t kMaxFailed = 64;
  std::vector<Failed> failed_;
  // The groups of a decision whose key may beat the best score: (key, group id).
  std::vector<std::pair<int64_t, int>> candidates_;
  int64_t idle_gpus_ = 0;                    // whole idle GPUs (idle_gpus())
  std::vector<int64_t> idle_gpus_by_model_;  // by model id
  ClusterSummary summary_;
  int64_t context_ = 0;           // the policy's current context value
  std::vector<int> models_;       // GPU model ids of the cluster (−1 for nodes without GPUs)
  std::vector<int64_t> project_;  // ContextFor of the current pod, by model id + 1
  int context_changes_ = 0;
};

}  // namespace tessera
