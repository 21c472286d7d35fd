#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "model/cluster.h"
#include "model/fit.h"
#include "model/fit_summary.h"
#include "policy/policy.h"
#include "sched/cluster_counts.h"
#include "sched/column_choice.h"
#include "sched/node_groups.h"
#include "sched/pod_shapes.h"
#include "sched/score_cache.h"
#include "sched/score_context.h"
#include "sched/tagged_choice.h"
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
/// pods they hold) form one group (sched/node_groups.h), scored once; a score is cached per
/// (group, pod shape) (sched/score_cache.h, sched/pod_shapes.h), so the cost of a decision
/// grows with the number of distinct node states, not with nodes. Ties go to the node that
/// comes first in `node_order` (the per-seed random node order). Every group has a 32-byte
/// record (its FitSummary and its size) in one array by group id, which a decision reads
/// first: a group that cannot take the pod costs that record only. ScoreMode::kInteger
/// policies keep their scores in columns by pod shape and choose from them
/// (sched/column_choice.h without a context, sched/tagged_choice.h with one); the others
/// collect the feasible groups from the score cache. A pod shape that fit no node is
/// remembered with its rejections, kept up to date by Bind and Unbind, until a node enters a
/// state where it fits: until then its pods are answered without a pass over the groups.
/// For a policy that uses a cluster-wide context (Policy::UsesContext), the scheduler keeps a
/// ClusterSummary up to date (sched/cluster_counts.h) and caches scores per context value
/// that concerns the group's GPU model and the pod (Policy::ContextFor,
/// sched/score_context.h), so a context change recomputes only the scores it concerns, and
/// decisions stay those of a plain loop over all nodes.
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
  int distinct_states() const { return static_cast<int>(groups_.live().size()); }
  /// The id of `node`'s group: nodes with the same id have the same capacity type and state,
  /// so a pod fits them alike (CheckFit) and ScoreNodes scores them alike. Ids are reused once
  /// a group empties; valid until the next Bind/Unbind. (Read-only; the extender's filter and
  /// prioritize use it to decide one node per group.)
  int group_of(int node) const { return groups_.group_of(node); }
  /// Every group id is below this (arrays by group id can be sized to it).
  int group_ids() const { return groups_.ids(); }
  /// The cluster-wide summary a context-using policy sees (Policy::ContextKey).
  const ClusterSummary& summary() const { return counts_.summary(); }
  /// The whole idle GPUs (nothing allocated on them) of the cluster now, kept up to date by
  /// Bind and Unbind: what the headroom counts (sched/headroom.h, CountIdleGpus computes the
  /// same by a pass over the nodes).
  int64_t idle_gpus() const { return counts_.idle_gpus(); }
  /// The same by GPU model id (the cluster's models); they sum to idle_gpus().
  const std::vector<int64_t>& idle_gpus_by_model() const { return counts_.idle_gpus_by_model(); }
  /// How often the policy's context value changed.
  int context_changes() const { return context_.changes(); }

 private:
  // A group the pod fits, with its score and GPUs.
  struct Feasible {
    int group;
    double raw;
    GpuSet gpus;
  };
  // A pod shape that fit no node when last decided, with every node's rejection (kept up to
  // date by Insert and Remove until a node enters a state where it fits): a pod of that
  // shape is answered from here (the answer the plain loop would give).
  struct Failed {
    int shape;
    FitQuery query;
    std::array<int, kNumFitReasons> rejected;
  };
  static constexpr size_t kMaxFailed = 64;

  // The shape id of `pod`, with room for it in the columns.
  int ShapeId(const PodRequest& pod);
  // Takes the context again and projects it for `pod` (policies with a context).
  void UpdateContext(const PodRequest& pod);
  // Fills d.rejected for a pod that fits no group, and remembers the shape in failed_.
  void CountRejections(int shape, const FitQuery& query, const PodRequest& pod, Decision& d);
  // Counts a node entering (+1) or leaving (−1) group `gid` in failed_.
  void TrackFailed(int gid, int sign);
  // The cached score of `pod` on group `gid`, or nullptr when it does not fit.
  const ScoreCache::Entry* Lookup(int gid, int shape, const FitQuery& query, const PodRequest& pod);
  // Collects the feasible groups in scratch_ (policies scored apart from the columns).
  template <bool kContext>
  void ScoreGroups(int shape, const FitQuery& query, const PodRequest& pod, int64_t& feasible_nodes,
                   double& lo, double& hi);
  // A feasible node drawn uniformly from scratch_, and a GPU (ScoreMode::kUniformRandom).
  Decision Draw(Decision d, int64_t feasible_nodes, const PodRequest& pod);
  // Puts `node`, in its current state, into its group, and tells every part that follows the
  // groups; Remove takes it out before its state changes.
  void Insert(int node);
  void Remove(int node);
  // `d` for the member of `group` that comes first in the tie order, with `gpus`.
  Decision Finish(Decision d, int group, GpuSet gpus, const PodRequest& pod) const;

  Cluster* cluster_;
  const Policy* policy_;
  Rng rng_;
  const bool uses_context_;
  const bool in_columns_;  // ScoreMode::kInteger without a context: plain_ decides
  const bool tagged_;      // ScoreMode::kInteger with a context: tagged_choice_ decides
  NodeGroups groups_;
  PodShapes shapes_;
  ClusterCounts counts_;
  ScoreContext context_;
  ScoreCache cache_;
  ColumnChoice plain_;
  TaggedChoice tagged_choice_;
  std::vector<Failed> failed_;
  std::vector<Feasible> scratch_;  // feasible groups
};

}  // namespace tessera
