#pragma once

// The extender's preemption on its cluster model (cluster_model.h): the victim search of the
// preempt verb (kube-scheduler's candidate nodes) and of the preemption filter carries out
// itself (PreemptionMode::kEvict), and the room held for nominated pods. One victim search for
// both: the pods of the model on each node, the shared search of sched/victims.h among the
// pods of preemptible classes, the cluster's PodDisruptionBudgets as the budget indices it
// counts.
//
// It remembers what this extender's own preemptions set going until the API shows it: the
// victims leaving, and the preemptors' nominations. Not thread-safe: the Extender's lock
// guards it.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "k8s/api/disruption_budget.h"
#include "k8s/api/objects.h"
#include "k8s/extender/cluster_model.h"
#include "k8s/extender/evictor.h"
#include "k8s/extender/extender_protocol.h"
#include "k8s/extender/pod_state.h"
#include "sched/classes.h"
#include "sched/victims.h"

namespace tessera::k8s {

/// Candidate node name → the victims the scheduler proposed there (possibly none), with their
/// metadata when it sent whole pods.
using ProposedVictims = std::map<std::string, std::vector<std::pair<VictimCandidate, PodMeta>>>;

class Preemptor {
 public:
  explicit Preemptor(QosClasses classes) : classes_(std::move(classes)) {}

  /// The candidate nodes and proposed victims of a preempt request; `now_s` starts the pods
  /// the scheduler sent by UID only.
  static ProposedVictims Proposed(const ExtenderPreemptionArgs& args, double now_s);
  /// The cluster's PodDisruptionBudgets.
  void SetBudgets(std::vector<PodDisruptionBudget> pdbs) { pdbs_ = std::move(pdbs); }

  /// The victim search on the nodes of `proposed`: one answer per node where some victim set
  /// makes the preemptor (UID `uid`, `priority`) fit, with the node's rank. Unknown, cordoned
  /// and blocked nodes are left out, and nodes with a pending nomination of another pod when
  /// `skip_nominated`. A proposed victim the model holds on the node frees what the model says
  /// it holds.
  std::vector<NodeVictims> Victims(const ClusterModel& model, const std::string& uid,
                                   int32_t priority, const PodRequest& request,
                                   ProposedVictims& proposed, bool skip_nominated,
                                   double now_s) const;
  /// PreemptionMode::kEvict: the pod fits none of `nodes` (filter's resolvable refusals). If it
  /// may preempt (pending, not preemptionPolicy: Never, not nominated to a node where pods of
  /// lower priority are still terminating), chooses the victims on each node without another
  /// pod's nomination and the node as kube-scheduler would (ChoosePreemptionNode), nominates
  /// the pod there in the model, and returns the API writes to make. Nothing when it may not,
  /// or no node has victims.
  std::optional<Eviction> AtFilter(ClusterModel& model, const Pod& pod, const PodRequest& request,
                                   const std::vector<int>& nodes, double now_s);
  /// Whether `request` (pod `uid` of `priority`) fits node `node` (named `name`) beside the
  /// pending pods nominated there of at least its priority, each placed first (highest
  /// priority first) where it fits now — kube-scheduler's RunFilterPluginsWithNominatedPods
  /// for the GPUs it does not see. True when none is nominated there.
  bool FitsBesideNominated(const ClusterModel& model, int node, const std::string& name,
                           const std::string& uid, int32_t priority,
                           const PodRequest& request) const;

  /// A pending pod's record from an API object: keeps this extender's own nomination of it
  /// while the object shows none yet; once the object shows one, that one is the truth.
  void KeepOwnNomination(const std::string& uid, PodRecord* record);
  /// The API shows pod `uid` bound: its nomination is the API's business now.
  void Bound(const std::string& uid) { own_nominations_.erase(uid); }
  /// Pod `uid` is gone.
  void Gone(const std::string& uid) {
    evicting_.erase(uid);
    own_nominations_.erase(uid);
  }
  /// The preemptor of `e` was not nominated (gone, or the write refused): nothing was evicted
  /// for it.
  void NotNominated(const Eviction& e);
  /// Whether pod `uid` is a victim of this extender's own preemption not yet shown gone.
  bool evicting(const std::string& uid) const { return evicting_.count(uid) != 0; }

 private:
  QosClasses classes_;
  std::vector<PodDisruptionBudget> pdbs_;
  /// The victims of this extender's own preemptions (kEvict), from the decision until the
  /// API shows them gone: leaving, before the watch shows them marked and deleted.
  std::set<std::string> evicting_;
  /// This extender's own nominations (kEvict), preemptor UID → node, until the API shows the
  /// pod with a nomination (or bound, or gone): an object of the pod written before the
  /// nomination (kube-scheduler's condition update, in flight) must not make the model forget
  /// it, or the next filter would preempt again.
  std::map<std::string, std::string> own_nominations_;
};

}  // namespace tessera::k8s
