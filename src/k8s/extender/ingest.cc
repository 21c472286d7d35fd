// The Extender as the cluster cache's sink (ClusterEventSink; file mode feeds itself through the
// same methods): each object goes to the cluster model (cluster_model.h), and to what the verbs
// keep beside it — the GPU queue and its waits, the headroom's releases, the preemptions under
// way. Also the API mode's factory and the sync gate. See extender.h.

#include <algorithm>
#include <charconv>
#include <climits>
#include <numeric>
#include <utility>

#include "k8s/api/json_util.h"
#include "k8s/api/log.h"
#include "k8s/api/objects.h"
#include "k8s/extender/extender.h"
#include "k8s/extender/extender_internal.h"
#include "k8s/extender/metrics.h"
#include "k8s/hami/annotations.h"
#include "model/topology_text.h"

namespace tessera::k8s {
uint64_t NumericVersion(std::string_view rv) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(rv.data(), rv.data() + rv.size(), v);
  return ec == std::errc() && p == rv.data() + rv.size() ? v : 0;
}

Result<std::unique_ptr<Extender>> Extender::Create(const ExtenderOptions& options,
                                                   const LiveOptions& live) {
  if (live.api == nullptr) return Error{"API mode needs a Kubernetes API client"};
  if (!IsPolicyName(options.policy)) {
    return Error{"unknown policy " + QuoteForError(options.policy) + " (known: " + KnownPolicies() +
                 ")"};
  }
  std::unique_ptr<Extender> ext(new Extender(options, true));
  ext->live_ = live;
  {
    MutexLock lock(ext->mutex_);
    ext->sync_ = {false, "initial lists of nodes and pods not received yet"};
  }
  if (options.preemption == PreemptionMode::kEvict) {
    Extender* self = ext.get();
    ext->evictor_ = std::make_unique<Evictor>(
        live.api,
        options.scheduler_names.empty() ? "tessera-scheduler" : options.scheduler_names.front(),
        [self](const Eviction& e, const std::string&) {
          // The preemptor was not nominated (it is gone, or the write was refused): the room
          // held for it is let go; nothing was evicted for it.
          MutexLock lock(self->mutex_);
          const PodRecord* r = self->model_.pods().Find(e.preemptor.uid);
          if (r != nullptr && r->meta.nominated_node == e.node) {
            self->model_.Nominate(e.preemptor.uid, "");
          }
          self->preemptor_.NotNominated(e);
        });
  }
  MutexLock lock(ext->mutex_);
  ext->model_.Build();  // an empty model, so that the verbs have something to refuse on
  return ext;
}

double Extender::Now() const { return ClockOrSystem(options_.clock)->NowSeconds(); }

std::optional<std::string> Extender::GateLocked() const {
  if (!api_mode_) return std::nullopt;
  if (!sync_.synced) return "not in sync with the Kubernetes API: " + sync_.reason;
  if (!model_.loaded()) return "not in sync with the Kubernetes API: the model is not built yet";
  return std::nullopt;
}

Status Extender::UpsertNode(const Node& node) {
  Result<ClusterModel::NodeRead> read = ClusterModel::ReadNode(node, options_.topology_pools);
  if (!read.ok()) return read.error();
  const std::string note = read->record.topology_note;
  const bool error = read->note_is_error;
  MutexLock lock(mutex_);
  if (model_.UpsertNode(std::move(*read))) {
    // Logged (and an error counted) once per node and distinct message, not on every heartbeat.
    if (error) metrics_->topology_annotation_errors->Increment();
    std::string fields = "{\"node\":";
    AppendJsonString(&fields, node.name);
    fields += "}";
    LogJson(error ? "warn" : "info", note, fields);
  }
  return {};
}

void Extender::DeleteNode(const std::string& name) {
  MutexLock lock(mutex_);
  model_.DeleteNode(name);
}

Status Extender::UpsertPod(const Pod& pod) {
  const std::string uid = PodUid(pod);
  std::string error;
  PodRecord record = ClusterModel::RecordOf(pod, &error);
  MutexLock lock(mutex_);
  model_.Refresh();
  if (PodEnded(pod.phase)) {
    queue_.Remove(uid);
    RemovePodLocked(uid);
    return {};
  }
  if (pod.node_name.empty()) {
    // In the GPU queue unless this extender's Binding of it is in flight or done (an assumed
    // pod shown pending: the object predates the Binding).
    const PodRecord* known = model_.pods().Find(uid);
    if (known == nullptr || known->phase == PodPhase::kSeen) {
      queue_.Pending(uid, pod, record.spec.gpu_count > 0 && record.spec.gpu_milli > 0, false,
                     Now());
    }
    // Pending: remembered for Bind. A pod we assumed stays assumed (this object predates our
    // Binding).
    preemptor_.KeepOwnNomination(uid, &record);
    model_.See(uid, std::move(record));
    return {};
  }
  WaitEndedLocked(uid);  // bound: a queued pod's wait ends when the watch first shows it
  preemptor_.Bound(uid);
  model_.Observe(uid, std::move(record));
  if (!error.empty()) {
    return Error{"pod " + ObjectKey(pod.namespace_name, pod.name) + " on node " + pod.node_name +
                 ": counted as whole GPUs: " + error};
  }
  return {};
}

void Extender::UndecodablePod(const PodIdentity& pod, const std::string& error) {
  MutexLock lock(mutex_);
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
  WaitEndedLocked(pod.uid);
  PodRecord record;
  record.key = ObjectKey(pod.namespace_name, pod.name);
  record.node = pod.node_name;
  record.opaque = error;
  record.meta = PodMeta{pod.namespace_name, pod.name, 0, {}, {}, false};
  record.resource_version = NumericVersion(pod.resource_version);
  model_.Observe(pod.uid, std::move(record));
}

void Extender::DeletePod(const std::string& uid) {
  MutexLock lock(mutex_);
  model_.Refresh();
  queue_.Remove(uid);
  RemovePodLocked(uid);
}

void Extender::RemovePodLocked(const std::string& uid) {
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

void Extender::BeginPodList() {
  MutexLock lock(mutex_);
  model_.BeginList();
}

void Extender::EndPodList(const std::set<std::string>& uids, const std::string& resource_version) {
  MutexLock lock(mutex_);
  model_.Refresh();
  model_.EndList(uids, NumericVersion(resource_version));
  // Called at once, under this function's lock: the analysis does not follow a lambda into a
  // template.
  queue_.RemoveUnless([&](const std::string& uid) TESSERA_NO_THREAD_SAFETY_ANALYSIS {
    return model_.pods().Find(uid) != nullptr;
  });
}

void Extender::SyncChanged(const SyncStatus& status) {
  MutexLock lock(mutex_);
  sync_ = status;
  if (status.synced && !model_.loaded()) model_.Load();  // the initial lists are in
}

bool Extender::ready() const {
  MutexLock lock(mutex_);
  return !GateLocked();
}

std::string Extender::not_ready_reason() const {
  MutexLock lock(mutex_);
  return GateLocked().value_or("");
}

int Extender::assumed_pods() const {
  MutexLock lock(mutex_);
  return model_.pods().assumed();
}

std::vector<std::string> Extender::warnings() const {
  MutexLock lock(mutex_);
  return model_.warnings();
}

}  // namespace tessera::k8s
