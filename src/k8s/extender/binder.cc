// The Extender's Bind: the checks both modes share, the second wall (only a node this
// extender's filter passed for the pod), and in API mode the handoff through the API — a read
// of the node's pods, then the Binding with the GPU annotations in it. See extender.h.

#include <algorithm>
#include <bit>
#include <utility>

#include "k8s/api/json_util.h"
#include "k8s/api/objects.h"
#include "k8s/extender/extender.h"
#include "k8s/extender/extender_internal.h"
#include "k8s/extender/metrics.h"
#include "k8s/hami/annotations.h"
#include "model/fit.h"

namespace tessera::k8s {
namespace {

std::string PodKey(const ExtenderBindingArgs& args) {
  return ObjectKey(args.pod_namespace, args.pod_name);
}

}  // namespace

std::optional<Extender::BindRefusal> Extender::CheckBindLocked(const ExtenderBindingArgs& args,
                                                               const std::string& pod_key) const {
  using enum BindRefusal::Kind;
  const PodRecord* r = model_.pods().Find(args.pod_uid);
  if (r == nullptr) {
    return BindRefusal{kRejected, "unknown pod " + pod_key + " (UID " + args.pod_uid +
                                      "): no filter request seen for it"};
  }
  const int node = model_.names().Find(args.node);
  if (node < 0) return BindRefusal{kRejected, "unknown node " + QuoteForError(args.node)};
  if (!filter_passes_.Passed(args.pod_uid, args.node, node, model_.generation(), Now())) {
    return BindRefusal{
        kRefused, "refused: this extender's filter did not pass node " + QuoteForError(args.node) +
                      " for pod " + pod_key + " (UID " + args.pod_uid + ") in the last " +
                      std::to_string(static_cast<int64_t>(options_.filter_pass_seconds)) + " s"};
  }
  if (!model_.blocked(node).empty()) {
    return BindRefusal{kRejected,
                       "node " + args.node + " is blocked for GPU pods: " + model_.blocked(node)};
  }
  return std::nullopt;
}

std::optional<Extender::BindRefusal> Extender::AssumeLocked(const std::string& uid, int node,
                                                            GpuSet* gpus) {
  using enum BindRefusal::Kind;
  const PodRecord* r = model_.pods().Find(uid);
  if (r == nullptr || r->phase != PodPhase::kSeen) {
    return BindRefusal{kRejected, "the pod is no longer pending"};
  }
  const Cluster& cluster = model_.cluster();
  const PodRequest request = cluster.MakeRequest(r->spec);
  const FitReason fit = cluster.Check(node, request);
  if (fit == FitReason::kGpuModel) {
    return BindRefusal{
        kRejected, "does not fit: " + ModelRefusal(cluster.spec(node).gpu_model, r->spec.gpu_spec)};
  }
  if (fit != FitReason::kFits)
    return BindRefusal{kRejected, "does not fit: " + FitExplanation(fit)};
  *gpus = model_.scheduler().ChooseGpus(node, request);
  // The headroom (sched/headroom.h, PlaceHeld): a held pod keeps the policy's GPUs where they
  // leave the headroom whole; a held share that would eat it goes on the tightest used GPU
  // with room; else it is refused (kube-scheduler tries again). On the node its preemption
  // made room on, it takes its victims' GPUs unchecked.
  bool shrank = false;
  headroom_->Update(&shrank);
  const int cls = ClassOfRecord(options_.classes, *r);
  const std::string name = cluster.spec(node).name;
  const HeadroomPod headroom_pod = HeadroomOfLocked(uid, cls);
  if (headroom_pod.held && headroom_->keeps_some() && name != r->meta.nominated_node) {
    const HeadroomGate gate = GateOfLocked(headroom_pod);
    if (const Headroom::Shortfall why = gate.Place(node, request, gpus);
        why != Headroom::Shortfall::kNone) {
      const HeadroomIdle node_idle = gate.IdleOf(node);
      return BindRefusal{
          kRefused, "refused: " + (why == Headroom::Shortfall::kModel
                                       ? ModelHeadroomText(*headroom_, cluster, node_idle.model,
                                                           node_idle.model_idle)
                                       : ReasonText(kReasonHeadroom))};
    }
  }
  const int taken = IdleGpusTaken(cluster.state(node), *gpus);
  model_.Assume(uid, name, *gpus, Now());
  if (cls >= 0) {
    headroom_->NoteDemand(options_.classes.classes[static_cast<size_t>(cls)].priority,
                          int64_t{taken} * kMilliPerGpu, request.models);
  }
  return std::nullopt;
}

ExtenderBindingResult Extender::Bind(const ExtenderBindingArgs& args) {
  UniqueMutexLock lock(mutex_);
  if (api_mode_) return BindThroughApi(args, lock);
  model_.Refresh();
  const std::string pod = PodKey(args);
  const PodRecord* r = model_.pods().Find(args.pod_uid);
  if (r != nullptr && r->phase != PodPhase::kSeen) {
    if (r->node == args.node) return {};
    return {"pod " + pod + " (UID " + args.pod_uid + ") is already bound to node " + r->node};
  }
  GpuSet gpus = 0;
  std::optional<BindRefusal> refusal = CheckBindLocked(args, pod);
  if (!refusal) refusal = AssumeLocked(args.pod_uid, model_.names().Find(args.node), &gpus);
  if (refusal) {
    metrics_->Bind(refusal->result());
    return {std::move(refusal->message)};
  }
  // No API: the bind is confirmed at once.
  PodRecord bound = *model_.pods().Find(args.pod_uid);
  bound.node = args.node;
  model_.Observe(args.pod_uid, std::move(bound));
  metrics_->Bind("ok");
  WaitEndedLocked(args.pod_uid);
  return {};
}

bool Extender::Unbind(const std::string& uid) {
  MutexLock lock(mutex_);
  return model_.Remove(uid);
}

ExtenderBindingResult Extender::BindThroughApi(const ExtenderBindingArgs& args,
                                               UniqueMutexLock& lock) {
  const std::string& uid = args.pod_uid;
  const std::string pod = PodKey(args);
  const auto answer = [&](const char* result, std::string error)
                          TESSERA_REQUIRES(mutex_) -> ExtenderBindingResult {
    metrics_->Bind(result);
    if (std::string_view(result) == "ok") WaitEndedLocked(uid);
    return {std::move(error)};
  };
  if (std::optional<std::string> gate = GateLocked()) {
    return answer("not-synced", "bind " + pod + ": " + *gate);
  }
  // The scheduler may retry while our first attempt is still talking to the API.
  while (binding_.count(uid) != 0) bind_done_.wait(lock);
  model_.Refresh();
  const PodRecord* r = model_.pods().Find(uid);
  if (r != nullptr && r->phase == PodPhase::kBound) {
    if (r->node == args.node) return answer("ok", "");
    return answer("rejected",
                  "pod " + pod + " (UID " + uid + ") is already bound to node " + r->node);
  }
  // Assumed here already: a retry after an answer we did not get; the Binding is tried again.
  const bool retry = r != nullptr && r->phase == PodPhase::kAssumed;
  if (retry && r->node != args.node) {
    return answer("rejected",
                  "pod " + pod + " (UID " + uid + ") is being bound to node " + r->node);
  }
  if (!retry) {
    if (std::optional<BindRefusal> refusal = CheckBindLocked(args, pod)) {
      return answer(refusal->result(), std::move(refusal->message));
    }
  }
  binding_.insert(uid);
  KubeApi* api = live_.api;
  const auto release = [&]() TESSERA_REQUIRES(mutex_) {
    binding_.erase(uid);
    bind_done_.notify_all();
  };

  // What the API says is on the node now, before choosing GPUs there.
  if (live_.read_node_before_bind) {
    mutex_.unlock();  // `lock` still owns it: locked again below
    ListOptions read;
    read.limit = 0;
    read.field_selector = "spec.nodeName=" + args.node;
    ListPage page;
    ApiStatus status = api->List("/api/v1/pods", read, &page);
    mutex_.lock();
    if (!status.ok()) {
      release();
      return answer("error", "bind " + pod + ": cannot read the pods of node " + args.node +
                                 " before binding: " + status.error);
    }
    model_.Refresh();
    model_.MergeNodeRead(args.node, page);
    r = model_.pods().Find(uid);
    if (r != nullptr && r->phase == PodPhase::kBound) {
      release();
      if (r->node == args.node) return answer("ok", "");  // the earlier attempt went through
      return answer("rejected",
                    "pod " + pod + " (UID " + uid + ") is already bound to node " + r->node);
    }
  }
  const int node = model_.names().Find(args.node);
  if (node < 0 || r == nullptr) {
    release();
    return answer("rejected", r == nullptr ? "unknown pod " + pod + " (UID " + uid + ")"
                                           : "unknown node " + QuoteForError(args.node));
  }
  GpuSet gpus = r->assumed_gpus;
  if (!retry) {
    std::optional<BindRefusal> refusal =
        !model_.blocked(node).empty()
            ? BindRefusal{BindRefusal::Kind::kRejected,
                          "node " + args.node + " is blocked for GPU pods: " + model_.blocked(node)}
            : AssumeLocked(uid, node, &gpus);
    if (refusal) {
      release();
      return answer(refusal->result(),
                    "bind " + pod + " to node " + args.node + ": " + refusal->message);
    }
    r = model_.pods().Find(uid);
  }

  // The handoff to the node, in the Binding itself: ours always, HAMi's when the node registers
  // its GPUs with HAMi.
  std::map<std::string, std::string> annotations;
  if (gpus != 0) {
    annotations[std::string(kGpuIndicesAnnotation)] = FormatGpuIndices(gpus);
    const std::vector<HamiDevice>& devices = model_.node(args.node)->gpus;
    if (!devices.empty()) {
      const PodRequest request = model_.cluster().MakeRequest(r->spec);
      for (auto& [k, v] : HamiBindAnnotations(&r->layout, gpus, devices, request, args.node,
                                              static_cast<int64_t>(Now()))) {
        annotations[k] = std::move(v);
      }
    }
  }
  mutex_.unlock();  // `lock` still owns it: locked again below
  const ApiStatus status =
      api->BindPod(args.pod_namespace, args.pod_name, uid, args.node, annotations);
  mutex_.lock();
  release();
  if (status.ok()) return answer("ok", "");
  const PodRecord* now = model_.pods().Find(uid);
  const bool still_assumed = now != nullptr && now->phase == PodPhase::kAssumed;
  if (status.http_status == 0 || status.http_status == 409) {
    // No answer, or "already bound": the Binding may have been written. The pod stays assumed
    // (its GPUs stay taken) until the API shows it bound or gone; a retry reads the node again.
    return answer("unknown", "bind " + pod + " to node " + args.node + ": " + status.error +
                                 " (outcome unknown: its GPUs stay reserved until the API "
                                 "shows it bound or gone)");
  }
  if (still_assumed) model_.Forget(uid);
  return answer("error", "bind " + pod + " to node " + args.node + ": " + status.error);
}

}  // namespace tessera::k8s
