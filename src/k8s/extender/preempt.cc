// The Extender's preempt verb: kube-scheduler's candidate nodes and proposed victims, answered
// by the victim search of preemptor.h on the cluster model. See extender.h.

#include <utility>

#include "k8s/extender/extender.h"
#include "k8s/extender/extender_internal.h"
#include "k8s/extender/metrics.h"

namespace tessera::k8s {

ExtenderPreemptionResult Extender::Preempt(const ExtenderPreemptionArgs& args) {
  ExtenderPreemptionResult result;
  Result<PodSpec> spec = PodToSpec(args.pod);
  if (!spec.ok()) return result;  // a pod the engine cannot model: no node is offered
  const double now = Now();
  ProposedVictims proposed = Preemptor::Proposed(args, now);
  MutexLock lock(mutex_);
  model_.Refresh();
  if (GateLocked()) return result;  // nothing is offered out of sync
  if (options_.preemption == PreemptionMode::kOff) return result;
  const PodRequest request = model_.cluster().MakeRequest(*spec);
  for (NodeVictims& a : preemptor_.Victims(model_, PodUid(args.pod), args.pod.priority, request,
                                           proposed, false, Now())) {
    metrics_->preempt_nodes->Increment();
    metrics_->preempt_victims->Increment(static_cast<double>(a.victims.ids.size()));
    result.node_name_to_meta_victims[model_.cluster().spec(a.node).name] =
        MetaVictims{std::move(a.victims.ids), a.victims.num_pdb_violations};
  }
  return result;
}

void Extender::SetDisruptionBudgets(std::vector<PodDisruptionBudget> pdbs) {
  MutexLock lock(mutex_);
  preemptor_.SetBudgets(std::move(pdbs));
}

}  // namespace tessera::k8s
