#include "sched/cycle.h"

namespace tessera {

HeadroomPod ClassifyForHeadroom(const Headroom& headroom, const QosClass& cls,
                                std::optional<double> waited_s) {
  HeadroomPod p;
  p.held = headroom.Holds(cls.priority, cls.preemptible);
  if (!p.held) return p;
  p.at_risk = waited_s.has_value() && headroom.AtRisk(cls.slo_wait_s, *waited_s);
  p.preempts = headroom.options().slo_classes_preempt && cls.slo_wait_s >= 0;
  return p;
}

HeadroomIdle HeadroomGate::IdleOf(int node) const {
  HeadroomIdle h = HeadroomIdleOf(headroom_, cluster_, node, idle_, by_model_);
  h.at_risk = pod_.at_risk;
  return h;
}

Headroom::Shortfall HeadroomGate::MayUse(int node, const PodRequest& request) const {
  Headroom::Shortfall why = Headroom::Shortfall::kNone;
  if (!checks()) return why;
  HeldMayUse(headroom_, IdleOf(node), cluster_.state(node), cluster_.spec(node).gpu_count, request,
             &why);
  return why;
}

Headroom::Shortfall HeadroomGate::Place(int node, const PodRequest& request, GpuSet* gpus) const {
  Headroom::Shortfall why = Headroom::Shortfall::kNone;
  if (!checks()) return why;
  PlaceHeld(headroom_, IdleOf(node), cluster_.state(node), cluster_.spec(node).gpu_count, request,
            gpus, &why);
  return why;
}

}  // namespace tessera
