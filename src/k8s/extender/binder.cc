#include "k8s/extender/binder.h"

#include <algorithm>
#include <bit>
#include <utility>

#include "k8s/api/json_util.h"
#include "k8s/api/objects.h"
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

ExtenderBindingResult Binder::Bind(const ExtenderBindingArgs& args, Mutex& mutex,
                                   ExtenderState& state, ExtenderMetrics& metrics) {
  if (live_.api != nullptr) return BindThroughApi(args, mutex, state, metrics);
  ClusterModel& model = state.model();
  model.Refresh();
  const std::string pod = PodKey(args);
  const PodRecord* r = model.pods().Find(args.pod_uid);
  if (r != nullptr && r->phase != PodPhase::kSeen) {
    if (r->node == args.node) return {};
    return {"pod " + pod + " (UID " + args.pod_uid + ") is already bound to node " + r->node};
  }
  GpuSet gpus = 0;
  std::optional<BindRefusal> refusal = state.CheckBind(args, pod);
  if (!refusal) refusal = state.Assume(args.pod_uid, model.names().Find(args.node), &gpus);
  if (refusal) {
    metrics.Bind(refusal->result());
    return {std::move(refusal->message)};
  }
  // No API: the bind is confirmed at once.
  PodRecord bound = *model.pods().Find(args.pod_uid);
  bound.node = args.node;
  model.Observe(args.pod_uid, std::move(bound));
  metrics.Bind("ok");
  state.WaitEnded(args.pod_uid);
  return {};
}

ExtenderBindingResult Binder::BindThroughApi(const ExtenderBindingArgs& args, Mutex& mutex,
                                             ExtenderState& state, ExtenderMetrics& metrics) {
  ClusterModel& model = state.model();
  const std::string& uid = args.pod_uid;
  const std::string pod = PodKey(args);
  const auto answer = [&](const char* result, std::string error)
                          TESSERA_REQUIRES(mutex) -> ExtenderBindingResult {
    metrics.Bind(result);
    if (std::string_view(result) == "ok") state.WaitEnded(uid);
    return {std::move(error)};
  };
  if (std::optional<std::string> gate = state.Gate()) {
    return answer("not-synced", "bind " + pod + ": " + *gate);
  }
  // The scheduler may retry while our first attempt is still talking to the API.
  while (binding_.count(uid) != 0) bind_done_.wait(mutex);
  model.Refresh();
  const PodRecord* r = model.pods().Find(uid);
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
    if (std::optional<BindRefusal> refusal = state.CheckBind(args, pod)) {
      return answer(refusal->result(), std::move(refusal->message));
    }
  }
  binding_.insert(uid);
  KubeApi* api = live_.api;
  const auto release = [&]() TESSERA_REQUIRES(mutex) {
    binding_.erase(uid);
    bind_done_.notify_all();
  };

  // What the API says is on the node now, before choosing GPUs there.
  if (live_.read_node_before_bind) {
    mutex.unlock();  // locked again below
    ListOptions read;
    read.limit = 0;
    read.field_selector = "spec.nodeName=" + args.node;
    ListPage page;
    ApiStatus status = api->List("/api/v1/pods", read, &page);
    mutex.lock();
    if (!status.ok()) {
      release();
      return answer("error", "bind " + pod + ": cannot read the pods of node " + args.node +
                                 " before binding: " + status.error);
    }
    model.Refresh();
    model.MergeNodeRead(args.node, page);
    r = model.pods().Find(uid);
    if (r != nullptr && r->phase == PodPhase::kBound) {
      release();
      if (r->node == args.node) return answer("ok", "");  // the earlier attempt went through
      return answer("rejected",
                    "pod " + pod + " (UID " + uid + ") is already bound to node " + r->node);
    }
  }
  const int node = model.names().Find(args.node);
  if (node < 0 || r == nullptr) {
    release();
    return answer("rejected", r == nullptr ? "unknown pod " + pod + " (UID " + uid + ")"
                                           : "unknown node " + QuoteForError(args.node));
  }
  GpuSet gpus = r->assumed_gpus;
  if (!retry) {
    std::optional<BindRefusal> refusal =
        !model.blocked(node).empty()
            ? BindRefusal{BindRefusal::Kind::kRejected,
                          "node " + args.node + " is blocked for GPU pods: " + model.blocked(node)}
            : state.Assume(uid, node, &gpus);
    if (refusal) {
      release();
      return answer(refusal->result(),
                    "bind " + pod + " to node " + args.node + ": " + refusal->message);
    }
    r = model.pods().Find(uid);
  }

  // The handoff to the node, in the Binding itself: ours always, HAMi's when the node registers
  // its GPUs with HAMi.
  std::map<std::string, std::string> annotations;
  if (gpus != 0) {
    annotations[std::string(kGpuIndicesAnnotation)] = FormatGpuIndices(gpus);
    const std::vector<HamiDevice>& devices = model.node(args.node)->gpus;
    if (!devices.empty()) {
      const PodRequest request = model.cluster().MakeRequest(r->spec);
      for (auto& [k, v] : HamiBindAnnotations(&r->layout, gpus, devices, request, args.node,
                                              static_cast<int64_t>(state.Now()))) {
        annotations[k] = std::move(v);
      }
    }
  }
  mutex.unlock();  // locked again below
  const ApiStatus status =
      api->BindPod(args.pod_namespace, args.pod_name, uid, args.node, annotations);
  mutex.lock();
  release();
  if (status.ok()) return answer("ok", "");
  const PodRecord* now = model.pods().Find(uid);
  const bool still_assumed = now != nullptr && now->phase == PodPhase::kAssumed;
  if (status.http_status == 0 || status.http_status == 409) {
    // No answer, or "already bound": the Binding may have been written. The pod stays assumed
    // (its GPUs stay taken) until the API shows it bound or gone; a retry reads the node again.
    return answer("unknown", "bind " + pod + " to node " + args.node + ": " + status.error +
                                 " (outcome unknown: its GPUs stay reserved until the API "
                                 "shows it bound or gone)");
  }
  if (still_assumed) model.Forget(uid);
  return answer("error", "bind " + pod + " to node " + args.node + ": " + status.error);
}

}  // namespace tessera::k8s
