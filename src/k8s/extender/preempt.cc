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
  // Read without the lock: the clock is the options' (ExtenderState::Now reads the same).
  const double now = ClockOrSystem(options_.clock)->NowSeconds();
  ProposedVictims proposed = Preemptor::Proposed(args, now);
  MutexLock lock(mutex_);
  state_.model().Refresh();
  if (state_.Gate()) return result;  // nothing is offered out of sync
  if (options_.preemption == PreemptionMode::kOff) return result;
  const PodRequest request = state_.model().cluster().MakeRequest(*spec);
  for (NodeVictims& a :
       state_.preemptor().Victims(state_.model(), PodUid(args.pod), args.pod.priority, request,
                                  proposed, false, state_.Now())) {
    metrics_->preempt_nodes->Increment();
    metrics_->preempt_victims->Increment(static_cast<double>(a.victims.ids.size()));
    result.node_name_to_meta_victims[state_.model().cluster().spec(a.node).name] =
        MetaVictims{std::move(a.victims.ids), a.victims.num_pdb_violations};
  }
  return result;
}

}  // namespace tessera::k8s
