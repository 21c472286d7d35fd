#include "k8s/extender/extender_state.h"

#include <climits>
#include <utility>

#include "k8s/api/json_util.h"
#include "k8s/extender/extender_internal.h"
#include "k8s/extender/metrics.h"
#include "k8s/extender/node_filter.h"
#include "model/fit.h"
#include "util/clock.h"

namespace tessera::k8s {
namespace {

bool RequestsGpu(const PodSpec& spec) { return spec.gpu_count > 0 && spec.gpu_milli > 0; }

// The headroom protects the classes with use_headroom: from the lowest of their priorities.
HeadroomOptions ProtectedHeadroom(HeadroomOptions h, const QosClasses& classes) {
  h.min_priority = HeadroomProtectedPriority(classes);
  return h;
}

}  // namespace

ExtenderState::ExtenderState(const ExtenderOptions& options, bool api_mode,
                             ExtenderMetrics* metrics)
    : options_(options),
      api_mode_(api_mode),
      metrics_(metrics),
      model_({options.policy, options.seed, options.workload, api_mode},
             // The headroom never asks for more than the cluster (or a model) has, and its model
             // floors follow the new model ids.
             [this](const Cluster& cluster) { headroom_->SetCluster(cluster); }),
      queue_(options.classes, options.scheduler_names),
      headroom_(std::make_unique<Headroom>(ProtectedHeadroom(options.headroom, options.classes),
                                           ClockOrSystem(options.clock))),
      preemptor_(options.classes),
      filter_passes_(options.filter_pass_seconds) {
  if (api_mode_) sync_ = {false, "initial lists of nodes and pods not received yet"};
}

double ExtenderState::Now() const { return ClockOrSystem(options_.clock)->NowSeconds(); }

std::optional<std::string> ExtenderState::Gate() const {
  if (!api_mode_) return std::nullopt;
  if (!sync_.synced) return "not in sync with the Kubernetes API: " + sync_.reason;
  if (!model_.loaded()) return "not in sync with the Kubernetes API: the model is not built yet";
  return std::nullopt;
}

void ExtenderState::SyncChanged(const SyncStatus& status) {
  sync_ = status;
  if (status.synced && !model_.loaded()) model_.Load();  // the initial lists are in
}

void ExtenderState::UpsertPod(const Pod& pod, PodRecord record) {
  const std::string uid = PodUid(pod);
  model_.Refresh();
  if (PodEnded(pod.phase)) {
    queue_.Remove(uid);
    RemovePod(uid);
    return;
  }
  if (pod.node_name.empty()) {
    // In the GPU queue unless this extender's Binding of it is in flight or done (an assumed
    // pod shown pending: the object predates the Binding).
    const PodRecord* known = model_.pods().Find(uid);
    if (known == nullptr || known->phase == PodPhase::kSeen) {
      queue_.Pending(uid, pod, RequestsGpu(record.spec), false, Now());
    }
    // Pending: remembered for Bind. A pod we assumed stays assumed (this object predates our
    // Binding).
    preemptor_.KeepOwnNomination(uid, &record);
    model_.See(uid, std::move(record));
    return;
  }
  WaitEnded(uid);  // bound: a queued pod's wait ends when the watch first shows it
  preemptor_.Bound(uid);
  model_.Observe(uid, std::move(record));
}

void ExtenderState::UndecodablePod(const PodIdentity& pod, const std::string& error) {
  model_.Refresh();
  if (PodEnded(pod.phase)) {
    queue_.Remove(pod.uid);
    model_.Remove(pod.uid);
    return;
  }
  if (pod.node_name.empty()) {  // pending: nothing to account for, its request is unknown
    queue_.Remove(pod.uid);
    return;
  }
  WaitEnded(pod.uid);
  PodRecord record;
  record.key = ObjectKey(pod.namespace_name, pod.name);
  record.node = pod.node_name;
  record.opaque = error;
  record.meta = PodMeta{pod.namespace_name, pod.name, 0, {}, {}, false};
  record.resource_version = NumericVersion(pod.resource_version);
  model_.Observe(pod.uid, std::move(record));
}

void ExtenderState::DeletePod(const std::string& uid) {
  model_.Refresh();
  queue_.Remove(uid);
  RemovePod(uid);
}

void ExtenderState::EndPodList(const std::set<std::string>& uids, uint64_t list_version) {
  model_.Refresh();
  model_.EndList(uids, list_version);
  queue_.RemoveUnless([&](const std::string& uid) { return model_.pods().Find(uid) != nullptr; });
}

void ExtenderState::RemovePod(const std::string& uid) {
  // A preemption victim's GPUs go to its preemptor: they refill no headroom (as in the replay).
  const PodRecord* known = model_.pods().Find(uid);
  const bool backlog = headroom_->options().mode == HeadroomOptions::Mode::kBacklog &&
                       (known == nullptr || (!known->meta.victim && !preemptor_.evicting(uid)));
  const int64_t idle_before = model_.idle_gpus();
  // The departed pod's priority: a protected pod's departure lowers what protected pods hold.
  int priority = INT_MIN;
  if (known != nullptr) {
    const int cls = ClassOfRecord(options_.classes, *known);
    if (cls >= 0) priority = options_.classes.classes[static_cast<size_t>(cls)].priority;
  }
  preemptor_.Gone(uid);
  model_.Remove(uid);
  if (const int64_t idle_after = model_.idle_gpus(); backlog && idle_after > idle_before) {
    headroom_->NoteRelease(static_cast<int>(idle_after - idle_before), priority);
  }
}

void ExtenderState::See(const Pod& pod, const PodSpec& spec) {
  const std::string uid = PodUid(pod);
  const PodRecord* known = model_.pods().Find(uid);
  if (known != nullptr) {
    if (known->phase == PodPhase::kBound) return;
    // An older copy of the object than the one applied (kube-scheduler's cache lags the
    // watch, e.g. behind a nomination this extender's preemption wrote): nothing new in it.
    const uint64_t rv = NumericVersion(pod.resource_version);
    if (known->phase == PodPhase::kSeen && rv != 0 && rv < known->resource_version) return;
    // The same object again (kube-scheduler's prioritize after its filter): nothing new.
    if (known->phase == PodPhase::kSeen && known->resource_version != 0 &&
        known->resource_version == NumericVersion(pod.resource_version) &&
        known->estimated.empty()) {
      // The watch delivered it first (under another scheduler name, it is not queued yet).
      if (!queue_.Filtered(uid)) queue_.Pending(uid, pod, RequestsGpu(spec), true, Now());
      return;
    }
  }
  // Once queued from here, the watch keeps its class up to date (a new object comes with a new
  // resourceVersion there first): a further sighting costs one lookup.
  if ((known == nullptr || known->phase == PodPhase::kSeen) && !queue_.Filtered(uid)) {
    queue_.Pending(uid, pod, RequestsGpu(spec), true, Now());
  }
  PodRecord r = ClusterModel::RecordOf(pod, spec, nullptr);
  r.node.clear();
  preemptor_.KeepOwnNomination(uid, &r);
  // The engine counts each pod once (Scheduler::Decide in frag, the replay when the pod
  // arrives); here that is the first sighting of its UID (ClusterModel::See), so that
  // context-using policies see the same history.
  model_.See(uid, std::move(r));
}

HeadroomPod ExtenderState::HeadroomOf(const std::string& uid, int cls) const {
  if (cls < 0) return {};
  const QosClass& c = options_.classes.classes[static_cast<size_t>(cls)];
  if (!headroom_->Holds(c.priority, c.preemptible)) return {};  // the common case: no lookup
  const auto it = queue_.pods().find(uid);
  const std::optional<double> waited =
      it == queue_.pods().end() ? std::nullopt : std::optional(Now() - it->second.created_s);
  return ClassifyForHeadroom(*headroom_, c, waited);
}

HeadroomGate ExtenderState::GateOf(const HeadroomPod& pod) const {
  return HeadroomGate(*headroom_, model_.cluster(), pod, model_.idle_gpus(),
                      model_.idle_gpus_by_model());
}

void ExtenderState::WaitEnded(const std::string& uid) {
  if (const std::optional<PendingQueue::Waited> w = queue_.Bound(uid, Now())) {
    metrics_->Waited(w->cls, w->wait_s);
  }
}

std::optional<BindRefusal> ExtenderState::CheckBind(const ExtenderBindingArgs& args,
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

std::optional<BindRefusal> ExtenderState::Assume(const std::string& uid, int node, GpuSet* gpus) {
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
  // On the node its preemption made room on, a held pod takes its victims' GPUs unchecked.
  bool shrank = false;
  headroom_->Update(&shrank);
  const int cls = ClassOfRecord(options_.classes, *r);
  const std::string name = cluster.spec(node).name;
  const HeadroomPod headroom_pod = HeadroomOf(uid, cls);
  if (headroom_pod.held && headroom_->keeps_some() && name != r->meta.nominated_node) {
    const HeadroomGate gate = GateOf(headroom_pod);
    if (const Headroom::Shortfall why = gate.Place(node, request, gpus);
        why != Headroom::Shortfall::kNone) {
      const HeadroomIdle idle = gate.IdleOf(node);
      return BindRefusal{
          kRefused,
          "refused: " + (why == Headroom::Shortfall::kModel
                             ? ModelHeadroomText(*headroom_, cluster, idle.model, idle.model_idle)
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

StatusView ExtenderState::Status(bool with_fragmentation) const {
  StatusView v =
      MakeStatusView(model_, queue_, *headroom_, options_.classes, Now(), with_fragmentation);
  v.policy = options_.policy;
  v.api_mode = api_mode_;
  v.gate = Gate().value_or("");
  return v;
}

}  // namespace tessera::k8s
