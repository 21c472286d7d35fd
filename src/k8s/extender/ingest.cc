// The Extender as the cluster cache's sink (ClusterEventSink; file mode feeds itself through the
// same methods): each object goes to the extender's state (extender_state.h: the cluster model
// and the queue, headroom and preemptions beside it). Also the API mode's factory. See
// extender.h.

#include <charconv>
#include <utility>

#include "k8s/api/json_util.h"
#include "k8s/api/log.h"
#include "k8s/api/objects.h"
#include "k8s/extender/extender.h"
#include "k8s/extender/extender_internal.h"
#include "k8s/extender/metrics.h"

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
  std::unique_ptr<Extender> ext(new Extender(options, live));
  if (options.preemption == PreemptionMode::kEvict) {
    Extender* self = ext.get();
    ext->evictor_ = std::make_unique<Evictor>(
        live.api,
        options.scheduler_names.empty() ? "tessera-scheduler" : options.scheduler_names.front(),
        [self](const Eviction& e, const std::string&) {
          // The preemptor was not nominated (it is gone, or the write was refused): the room
          // held for it is let go; nothing was evicted for it.
          MutexLock lock(self->mutex_);
          ClusterModel& model = self->state_.model();
          const PodRecord* r = model.pods().Find(e.preemptor.uid);
          if (r != nullptr && r->meta.nominated_node == e.node) model.Nominate(e.preemptor.uid, "");
          self->state_.preemptor().NotNominated(e);
        });
  }
  MutexLock lock(ext->mutex_);
  ext->state_.model().Build();  // an empty model, so that the verbs have something to refuse on
  return ext;
}

Status Extender::UpsertNode(const Node& node) {
  Result<ClusterModel::NodeRead> read = ClusterModel::ReadNode(node, options_.topology_pools);
  if (!read.ok()) return read.error();
  const std::string note = read->record.topology_note;
  const bool error = read->note_is_error;
  MutexLock lock(mutex_);
  if (state_.model().UpsertNode(std::move(*read))) {
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
  state_.model().DeleteNode(name);
}

Status Extender::UpsertPod(const Pod& pod) {
  std::string error;
  PodRecord record = ClusterModel::RecordOf(pod, &error);
  MutexLock lock(mutex_);
  state_.UpsertPod(pod, std::move(record));
  if (!error.empty() && !pod.node_name.empty() && !PodEnded(pod.phase)) {
    return Error{"pod " + ObjectKey(pod.namespace_name, pod.name) + " on node " + pod.node_name +
                 ": counted as whole GPUs: " + error};
  }
  return {};
}

void Extender::UndecodablePod(const PodIdentity& pod, const std::string& error) {
  MutexLock lock(mutex_);
  state_.UndecodablePod(pod, error);
}

void Extender::DeletePod(const std::string& uid) {
  MutexLock lock(mutex_);
  state_.DeletePod(uid);
}

void Extender::BeginPodList() {
  MutexLock lock(mutex_);
  state_.model().BeginList();
}

void Extender::EndPodList(const std::set<std::string>& uids, const std::string& resource_version) {
  MutexLock lock(mutex_);
  state_.EndPodList(uids, NumericVersion(resource_version));
}

void Extender::SetDisruptionBudgets(std::vector<PodDisruptionBudget> pdbs) {
  MutexLock lock(mutex_);
  state_.preemptor().SetBudgets(std::move(pdbs));
}

void Extender::SyncChanged(const SyncStatus& status) {
  MutexLock lock(mutex_);
  state_.SyncChanged(status);
}

bool Extender::ready() const {
  MutexLock lock(mutex_);
  return !state_.Gate();
}

std::string Extender::not_ready_reason() const {
  MutexLock lock(mutex_);
  return state_.Gate().value_or("");
}

int Extender::assumed_pods() const {
  MutexLock lock(mutex_);
  return state_.model().pods().assumed();
}

std::vector<std::string> Extender::warnings() const {
  MutexLock lock(mutex_);
  return state_.model().warnings();
}

}  // namespace tessera::k8s
