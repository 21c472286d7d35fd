#pragma once

// `tessera analyze`'s computations on a Model (analyze/model.h): stranded capacity per GPU pool,
// pending GPU pods and why, the offline repack bound, and a dry-run move plan. No I/O; the
// output formats are in analyze/analyze_report.h. See docs/ANALYZE.md for what each figure
// means. Deterministic; not thread-safe (it works on the model's cluster copy).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analyze/model.h"
#include "offline/offline_bound.h"
#include "util/result.h"

namespace tessera::analyze {

/// Limits of the move plan.
struct PlanOptions {
  int max_moves = 20;          ///< moves in all
  int max_moves_per_node = 4;  ///< pods moved off one node
  int max_moves_per_namespace = 10;
  int max_moves_per_workload = 2;  ///< pods of one controller (ReplicaSet, StatefulSet, ...)
  /// Candidate actions evaluated per round (the plan is built greedily, one action a round).
  int candidate_nodes = 16;   ///< nodes tried as make-room targets or drains
  int candidate_shares = 64;  ///< GPU-sharing pods alone on a GPU, tried as single moves
  int max_victims = 8;        ///< pods moved to make room for one pending pod
};

struct AnalyzeOptions {
  PlanOptions plan;
  int closest_nodes = 3;  ///< per pending pod
  bool bound = true;      ///< solve the offline LP bounds
};

/// FGD's fragmentation (docs/ARCHITECTURE.md, "Definitions") split by why each class cannot use
/// a node's idle GPU, in milli-GPU. Parts sum to `total`.
struct FragParts {
  double total = 0;
  double gpu = 0;       ///< too few GPUs with the class's share free, or shares too small
  double cpu = 0;       ///< the node has too little CPU left for the class
  double model = 0;     ///< the class's GPU-model constraint excludes the node's model
  double cpu_only = 0;  ///< CPU-only classes (all idle GPU counts for them, as in FGD)
};

/// One GPU pool: the nodes of one GPU model.
struct PoolReport {
  std::string model;
  int nodes = 0;
  int gpus = 0;
  int64_t allocated_milli = 0;
  int idle_gpus = 0;               ///< GPUs with nothing on them
  int64_t free_milli = 0;          ///< all free GPU milli
  int64_t partial_free_milli = 0;  ///< free milli on GPUs partly used (fractional free)
  int64_t stranded_milli = 0;      ///< TargetWorkload::NodeStranded summed
  FragParts frag;
  int idle_nodes = 0;  ///< nodes with every GPU idle
  // The bound of an ideal repack of the pool's movable pods (pods stay in their pool).
  int idle_gpus_max = 0;    ///< at most this many idle GPUs after any repack
  int gpus_freed_max = 0;   ///< idle_gpus_max − idle_gpus
  int idle_nodes_max = 0;   ///< at most this many nodes with every GPU idle
  int nodes_freed_max = 0;  ///< idle_nodes_max − idle_nodes
  bool nodes_lp = false;    ///< idle_nodes_max was tightened by the LP (one node type)
  /// The LP (offline_bound.h) over the pool's nodes, its bound pods and the pending pods that
  /// allow its model: the most GPU milli any placement of them can allocate.
  double lp_max_placed_milli = 0;
  int64_t lp_requested_milli = 0;  ///< GPU milli of those pods
};

/// A node that comes close to hosting a pending pod, and what it lacks.
struct NodeMiss {
  std::string node;
  std::string reason;    ///< the extender's filter reason
  int gpus_missing = 0;  ///< GPUs with the pod's share free that it lacks
  int64_t cpu_missing_milli = 0;
  int64_t memory_missing_mib = 0;
};

struct PendingReport {
  std::string pod;  ///< namespace/name
  int gpu_count = 0;
  int32_t gpu_milli = 0;
  int32_t priority = 0;
  std::string cls;
  std::string fits_now;                ///< a node the filter passes now ("" if none)
  std::map<std::string, int> reasons;  ///< filter reason → nodes
  std::vector<NodeMiss> closest;
  /// "plan" (the move plan makes room), "possible" (some node would hold it once its movable
  /// pods moved; the caps or the other nodes' room stopped the plan), "no" (no node can, even
  /// emptied of its movable pods), "fits" (it fits now; nothing to move).
  std::string repack;
  std::string placed_on;  ///< with "plan": the node
};

/// One move of the plan.
struct Move {
  int step = 0;     ///< 1-based position in the plan
  int action = 0;   ///< the action (make-room, drain, consolidate) it belongs to, 1-based
  std::string why;  ///< "make room for ns/p on n3", "empty node n7", "join a shared GPU"
  std::string pod;  ///< namespace/name
  std::string workload;
  std::string from;
  std::string to;
  std::vector<int> gpus_from;
  std::vector<int> gpus_to;
  int gpu_count = 0;
  int32_t gpu_milli = 0;
  /// Whole idle GPUs gained by this move on the state the earlier steps leave (may be
  /// negative: a move that makes room takes an idle GPU elsewhere).
  int gpus_freed = 0;
  double frag_removed_milli = 0;  ///< cluster fragmentation before − after this move
  double cost = 0;                ///< disruption cost (CostWeights)
  int32_t priority = 0;
  std::string cls;
  int64_t restarts = 0;
};

/// A pending pod the plan makes room for: it fits `node` after move `after_step`.
struct Placement {
  std::string pod;
  std::string node;
  std::vector<int> gpus;
  int after_step = 0;
};

struct Plan {
  std::vector<Move> moves;
  std::vector<Placement> placements;
  int gpus_freed = 0;  ///< Σ moves' gpus_freed
  double frag_removed_milli = 0;
  double cost = 0;
  std::vector<std::string> limits;  ///< caps that stopped a candidate ("per-node cap on n3", ...)
};

/// One node's GPUs before and after the plan, for the GPU map.
struct NodeMap {
  std::string name;
  std::string model;
  std::vector<int32_t> used_before;  ///< milli used per GPU
  std::vector<int32_t> used_after;
  bool touched = false;  ///< a move or placement involves it
};

struct Analysis {
  int nodes = 0;
  int gpus = 0;
  int pods_bound = 0;
  int pods_pending_gpu = 0;
  int pods_movable = 0;
  std::map<std::string, int> unmovable;  ///< reason → GPU pods
  int64_t allocated_milli = 0;
  int idle_gpus = 0;
  FragParts frag;         ///< whole cluster
  double frag_ratio = 0;  ///< frag / free milli
  std::vector<PoolReport> pools;
  std::vector<PendingReport> pending;
  /// The offline bound of `tessera frag --offline` for every bound and pending pod on the
  /// empty cluster (all pools at once).
  bool has_bound = false;
  OfflineBound bound;
  Plan plan;
  std::vector<NodeMap> node_map;
  std::vector<std::string> warnings;
  int budgets = 0;               ///< PodDisruptionBudgets the plan respects
  std::string budgets_not_read;  ///< why there are none to respect ("" = they were read)
};

/// FGD fragmentation of one node of the model's cluster, split by cause.
FragParts NodeFragParts(const Model& model, int node);

/// Everything analyze reports. Changes no state of `model` (the plan runs on a copy).
Result<Analysis> Analyze(const Model& model, const AnalyzeOptions& options);

/// The plan alone (Analyze calls it), for tests: built on `model`'s state.
Plan MakePlan(const Model& model, const PlanOptions& options);

}  // namespace tessera::analyze
