#pragma once

// One scheduling cycle's headroom rules, for every front door: the replay's event loop and
// serve's filter and bind call these, so that which pods the headroom holds, which of them are
// at risk of their SLO, and on which node and GPUs a held pod may go are written once. The front
// doors keep what differs for a real reason: how long a pod has waited (the replay's arrival
// time; serve's metadata.creationTimestamp), which nodes are candidates (every node; the list
// kube-scheduler sends), and that a preemptor is placed on the node its preemption made room on
// without these checks (it takes its victims' GPUs). Pure; no clock, no I/O.

#include <cstdint>
#include <optional>
#include <vector>

#include "model/cluster.h"
#include "model/resources.h"
#include "sched/classes.h"
#include "sched/headroom.h"

namespace tessera {

/// What the headroom means for one pod in this cycle.
struct HeadroomPod {
  /// Held to the headroom: its class is below the protected priority, and preemptible unless
  /// hold_non_preemptible (Headroom::Holds).
  bool held = false;
  /// Held, and it has waited yield_after of its class's SLO: it may take the headroom down to
  /// ceil(yield_keep · H) (Headroom::AtRisk).
  bool at_risk = false;
  /// Held, of a class with an SLO, and slo_classes_preempt: refused for the headroom, it
  /// preempts lower classes instead of waiting for idle GPUs.
  bool preempts = false;
};

/// The headroom's view of a pod of class `cls` that has waited `waited_s` (none: not known to
/// wait, never at risk).
HeadroomPod ClassifyForHeadroom(const Headroom& headroom, const QosClass& cls,
                                std::optional<double> waited_s);

/// The pick among the nodes a pod may go to, in every front door (Scheduler::Decide, the
/// replay's node that keeps the headroom, serve's prioritize): the best score, then the lowest
/// rank in the tie order. Whether a node of `score` and `rank` goes before the best so far.
inline bool PicksBefore(int score, int rank, int best_score, int best_rank) {
  return score > best_score || (score == best_score && rank < best_rank);
}

/// The headroom gate of one pod in one cycle: where its placement may go, and with which GPUs.
/// Borrows the headroom, the cluster and the idle counts, which must not change while it is in
/// use (one cycle).
class HeadroomGate {
 public:
  /// `idle`, `by_model`: the cluster's idle GPUs now and by model id (Scheduler::idle_gpus).
  HeadroomGate(const Headroom& headroom, const Cluster& cluster, HeadroomPod pod, int64_t idle,
               const std::vector<int64_t>& by_model)
      : headroom_(headroom), cluster_(cluster), pod_(pod), idle_(idle), by_model_(by_model) {}

  const HeadroomPod& pod() const { return pod_; }
  /// Whether the headroom may refuse this pod anything now: it is held and some GPUs are kept.
  bool checks() const { return pod_.held && headroom_.keeps_some(); }
  /// The idle counts its placement on `node` is judged by (HeadroomIdleOf, with at_risk).
  HeadroomIdle IdleOf(int node) const;
  /// Whether some GPU choice on `node`, where the pod fits, keeps the headroom (HeldMayUse):
  /// Shortfall::kNone when it does or the pod is not held, else what it would break.
  Headroom::Shortfall MayUse(int node, const PodRequest& request) const;
  /// The GPUs the pod takes on `node`, where `*gpus` is the policy's choice (PlaceHeld): kNone
  /// when it may go there (a held share may be moved to a used GPU), else what it would break.
  Headroom::Shortfall Place(int node, const PodRequest& request, GpuSet* gpus) const;

 private:
  const Headroom& headroom_;
  const Cluster& cluster_;
  HeadroomPod pod_;
  int64_t idle_;
  const std::vector<int64_t>& by_model_;
};

}  // namespace tessera
