#pragma once

// Preemption victim selection on one node, GPU by GPU: which running pods to evict so that a
// higher-priority pod fits (the extender's answer to kube-scheduler's /preempt). Pure: it
// reads a copy of the node's state and changes nothing. Thread-safe.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "k8s/api/disruption_budget.h"
#include "model/fit.h"
#include "model/node.h"
#include "model/pod.h"

namespace tessera::k8s {

/// A pod running on the node, as the victim search sees it.
struct VictimCandidate {
  std::string uid;
  std::string namespace_name;
  std::string name;
  int32_t priority = 0;  ///< spec.priority
  std::map<std::string, std::string> labels;
  /// Whether Tessera's model holds the pod (request and gpus below are what it holds). A pod
  /// the scheduler names but the model does not know frees nothing the model can see.
  bool modelled = false;
  PodRequest request;
  GpuSet gpus = 0;
};

/// The node the preemptor would go to: its GPUs and what is left on it now.
struct PreemptionNode {
  int gpu_count = 0;
  int model_id = -1;  ///< -1: no GPUs
  NodeState state;
  std::vector<VictimCandidate> pods;  ///< the modelled pods on the node
};

struct PreemptionOptions {
  /// At most this many victim sets are checked by the exhaustive search on one node; past it
  /// the best set found so far is kept (the greedy set at worst).
  int64_t max_subsets = 20000;
};

/// The victims chosen on one node.
struct VictimSet {
  std::vector<std::string> uids;   ///< the required victims first, as given, then the chosen
  int64_t num_pdb_violations = 0;  ///< evictions that exceed a PodDisruptionBudget

  bool operator==(const VictimSet&) const = default;
};

/// How many evictions of `victims` exceed a budget, counted as kube-scheduler does: the pods
/// in order of priority (highest first, then UID), each taking one from every budget that
/// covers it; a pod that drives any budget below zero is one violation.
int64_t CountPdbViolations(const std::vector<const VictimCandidate*>& victims,
                           const std::vector<PodDisruptionBudget>& pdbs);

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
///   4. ties: the set that comes first with pods ordered by (priority, UID).
/// The search starts from kube-scheduler's greedy reprieve (evict every eligible pod, then put
/// back budget-protected pods, then the others, highest priority first, keeping each that
/// still lets the preemptor fit) and then enumerates sets by size, up to options.max_subsets.
/// nullopt when even evicting every eligible pod does not make the preemptor fit (wrong GPU
/// model, too few GPUs, or too much held by pods of equal or higher priority).
std::optional<VictimSet> SelectVictims(const PreemptionNode& node,
                                       const std::vector<VictimCandidate>& required,
                                       const PodRequest& preemptor, int32_t priority,
                                       const std::vector<PodDisruptionBudget>& pdbs,
                                       const PreemptionOptions& options = {});

}  // namespace tessera::k8s
