#pragma once

// Preemption, GPU by GPU: which running pods to evict on one node so that a higher-priority
// pod fits, and which node's victims to take. One search for every front door: the extender's
// answer to kube-scheduler's /preempt and the replay's preemptions run this code, so the
// simulator predicts what the server does. PodDisruptionBudgets are optional, given as indices
// (the Kubernetes layer decides which budgets cover which pod). Pure: reads copies of node
// states and changes nothing. Thread-safe.

#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/fit.h"
#include "model/node.h"
#include "model/pod.h"

namespace tessera {

/// A pod running on the node, as the victim search sees it.
struct VictimCandidate {
  /// The caller's name of the pod (the UID in the extender; the pod's name in the replay): the
  /// last tie-break, so the same pods get the same answer in every front door.
  std::string id;
  int32_t priority = 0;  ///< spec.priority (the class's priority in the replay)
  /// Whether the model holds the pod (request and gpus below are what it holds). A pod the
  /// scheduler names but the model does not know frees nothing the model can see.
  bool modelled = false;
  PodRequest request;
  GpuSet gpus = 0;
  std::vector<int> budgets;  ///< indices of the disruption budgets that cover it
  /// When it started, in whole seconds (status.startTime; kube-scheduler takes "now" for a pod
  /// without one). Among pods of equal priority the one that started first is the more
  /// important (kube-scheduler's MoreImportantPod): the later starters, which lose less work,
  /// are evicted first.
  int64_t start_s = 0;
};

/// The node the preemptor would go to: its GPUs and what is left on it now.
struct PreemptionNode {
  int gpu_count = 0;
  int model_id = -1;  ///< -1: no GPUs
  NodeState state;
  std::vector<VictimCandidate> pods;      ///< the modelled pods on the node
  const GpuTopology* topology = nullptr;  ///< the node's GPU topology (null: none)
};

struct PreemptionOptions {
  /// At most this many victim sets are checked by the exhaustive search on one node; past it
  /// the best set found so far is kept (the greedy set at worst).
  int64_t max_subsets = 20000;
};

/// The victims chosen on one node.
struct VictimSet {
  std::vector<std::string> ids;      ///< the required victims first, as given, then the chosen
  int64_t num_pdb_violations = 0;    ///< evictions that exceed a disruption budget
  int32_t max_priority = INT32_MIN;  ///< the highest priority among the victims
  int64_t sum_priority = 0;          ///< the sum of their priorities
  /// The earliest start among the victims of the highest priority (INT64_MAX: no victims).
  int64_t earliest_start_s = INT64_MAX;

  bool operator==(const VictimSet&) const = default;
};

/// Adds a victim of `priority` that started at `start_s` (whole seconds) to `set`: its id, the
/// highest and summed priorities, and the earliest start among the highest-priority victims.
void AddVictim(VictimSet* set, std::string id, int32_t priority, int64_t start_s);

/// How many evictions of `victims` exceed a budget, counted as kube-scheduler does: the pods
/// in order of priority (highest first, then id), each taking one from every budget that
/// covers it (VictimCandidate::budgets; `allowed[b]` disruptions left in budget b); a pod that
/// drives any budget below zero is one violation.
int64_t CountPdbViolations(const std::vector<const VictimCandidate*>& victims,
                           const std::vector<int32_t>& allowed);

/// Chooses the victims on `node` for `preemptor` (engine request, priority `priority`).
///
/// `required` are the victims kube-scheduler proposed (possibly none): they are always part of
/// the answer. If the preemptor fits once they are gone (CheckFit on a copy of the state with
/// their allocations released), they are the answer. Otherwise more victims are chosen among
/// the pods of `node.pods` with priority strictly lower than `priority` (never equal or higher,
/// never the required ones twice), minimising, in this order:
///   1. PodDisruptionBudget violations (as CountPdbViolations, over all victims),
///   2. the number of pods,
///   3. the highest priority among them, then the sum of their priorities,
///   4. ties: the set that comes first with pods ordered by (priority, latest start first, id).
/// The search starts from kube-scheduler's greedy reprieve (evict every eligible pod, then put
/// back budget-protected pods, then the others, most important first (highest priority, then
/// earliest start: kube-scheduler's MoreImportantPod), keeping each that
/// still lets the preemptor fit) and then enumerates sets by size, up to options.max_subsets.
/// nullopt when even evicting every eligible pod does not make the preemptor fit (wrong GPU
/// model, too few GPUs, or too much held by pods of equal or higher priority).
/// `allowed`: the disruptions each budget allows (empty: no budgets).
std::optional<VictimSet> SelectVictims(const PreemptionNode& node,
                                       const std::vector<VictimCandidate>& required,
                                       const PodRequest& preemptor, int32_t priority,
                                       const std::vector<int32_t>& allowed,
                                       const PreemptionOptions& options = {});

/// One node's answer to a preemption: its victims, with the node's rank in the tie order.
struct NodeVictims {
  int node = -1;
  int rank = 0;  ///< smaller is preferred among equals
  VictimSet victims;
};

/// The node a preemptor goes to, as kube-scheduler picks it among the nodes answered (its
/// pickOneNodeForPreemption): the fewest budget violations, then the lowest highest victim
/// priority, then the smallest sum of victim priorities, then the fewest victims, then the
/// latest earliest start among the highest-priority victims (the least work lost), then the
/// smallest rank. Returns an index into `answers`, or -1 when it is empty.
int ChoosePreemptionNode(const std::vector<NodeVictims>& answers);

}  // namespace tessera
