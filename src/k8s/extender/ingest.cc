// The Extender's model from the API's objects: nodes and pods as the cache (or a file) gives
// them, the pod-state transitions they cause, and each node's placement (facts before guesses,
// fail closed). See extender.h and pod_state.h.

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
namespace {

bool SameCapacity(const NodeSpec& a, const NodeSpec& b) {
  const bool same_topology =
      a.topology == b.topology ||
      (a.topology != nullptr && b.topology != nullptr && *a.topology == *b.topology);
  return a.name == b.name && a.cpu_milli == b.cpu_milli && a.memory_mib == b.memory_mib &&
         a.gpu_count == b.gpu_count && a.gpu_model == b.gpu_model &&
         a.gpu_memory_mib == b.gpu_memory_mib && same_topology;
}

std::string GpuList(GpuSet gpus) {
  const std::string list = FormatGpuIndices(gpus);
  return list.empty() ? "none" : list;
}

}  // namespace

uint8_t Extender::FlagsOf(const NodeRecord& record) {
  uint8_t f = 0;
  if (record.unschedulable) f |= kCordoned;
  if (record.spec.gpu_count == 0) f |= kNoGpus;
  if (!(record.families & kTesseraFamily)) f |= kNoTessera;
  if (!(record.families & kNvidiaFamily)) f |= kNoNvidia;
  return f;
}

uint8_t Extender::RequestMask(const PodRequest& request, uint8_t families) {
  uint8_t m = kCordoned | kBlocked;
  if (!request.IsCpuOnly()) m |= kNoGpus;
  if (families & kTesseraFamily) m |= kNoTessera;
  if (families & kNvidiaFamily) m |= kNoNvidia;
  return m;
}

int Extender::FlagReason(uint8_t flags) {
  if (flags & kCordoned) return kReasonCordoned;
  if (flags & kBlocked) return kReasonBlocked;
  if (flags & kNoGpus) return kReasonNoGpus;
  return flags & kNoTessera ? kReasonTesseraFamily : kReasonNvidiaFamily;
}

uint64_t NumericVersion(std::string_view rv) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(rv.data(), rv.data() + rv.size(), v);
  return ec == std::errc() && p == rv.data() + rv.size() ? v : 0;
}

PodRecord Extender::RecordOf(const Pod& pod, std::string* error) {
  return RecordOf(pod, PodToSpec(pod), error);
}

PodRecord Extender::RecordOf(const Pod& pod, const Result<PodSpec>& spec, std::string* error) {
  PodRecord r;
  r.key = ObjectKey(pod.namespace_name, pod.name);
  r.node = pod.node_name;
  if (spec.ok()) {
    r.spec = *spec;
  } else {
    r.spec = FailClosedSpec(pod);
    r.estimated = spec.error().message;
    if (error != nullptr) *error = spec.error().message;
  }
  if (auto it = pod.annotations.find(std::string(kGpuIndicesAnnotation));
      it != pod.annotations.end()) {
    r.gpu_indices = it->second;
  }
  if (auto it = pod.annotations.find(std::string(kHamiDevicesAllocated));
      it != pod.annotations.end()) {
    r.hami_allocated = it->second;
  }
  r.meta = PodMeta{pod.namespace_name,
                   pod.name,
                   pod.priority,
                   pod.labels,
                   pod.nominated_node_name,
                   pod.disruption_target,
                   Rfc3339Seconds(pod.start_timestamp).value_or(-1),
                   pod.deleting,
                   pod.preempt_never};
  r.gpu_families = PodGpuFamilies(pod);
  r.layout = HamiLayout(pod);
  r.resource_version = NumericVersion(pod.resource_version);
  return r;
}

Result<std::unique_ptr<Extender>> Extender::Create(const ExtenderOptions& options,
                                                   const LiveOptions& live) {
  if (live.api == nullptr) return Error{"API mode needs a Kubernetes API client"};
  if (!IsPolicyName(options.policy)) {
    return Error{"unknown policy " + QuoteForError(options.policy) + " (known: " + KnownPolicies() +
                 ")"};
  }
  std::unique_ptr<Extender> ext(new Extender(options));
  ext->live_ = live;
  {
    MutexLock lock(ext->mutex_);
    ext->api_mode_ = true;
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
          const PodRecord* r = self->pods_.Find(e.preemptor.uid);
          if (r != nullptr && r->meta.nominated_node == e.node) {
            self->pods_.Nominate(e.preemptor.uid, "");
          }
          self->own_nominations_.erase(e.preemptor.uid);
          for (const PodRef& v : e.victims) self->evicting_.erase(v.uid);
        });
  }
  MutexLock lock(ext->mutex_);
  ext->Rebuild();  // an empty model, so that the verbs have something to refuse on
  return ext;
}

double Extender::Now() const { return ClockOrSystem(options_.clock)->NowSeconds(); }

std::optional<std::string> Extender::GateLocked() const {
  if (!api_mode_) return std::nullopt;
  if (!sync_.synced) return "not in sync with the Kubernetes API: " + sync_.reason;
  if (!loaded_) return "not in sync with the Kubernetes API: the model is not built yet";
  return std::nullopt;
}

void Extender::EnsureModel() {
  if (loaded_ && dirty_) Rebuild();
}

void Extender::Rebuild() {
  dirty_ = false;
  ++model_generation_;
  assignments_.clear();

  // Nodes in rank order (file mode: the node list's; API mode: all 0, so by name).
  std::vector<const NodeRecord*> order;
  for (const auto& [name, record] : nodes_) order.push_back(&record);
  std::stable_sort(order.begin(), order.end(),
                   [](const NodeRecord* a, const NodeRecord* b) { return a->rank < b->rank; });
  std::vector<NodeSpec> specs;
  std::vector<std::string> models;
  std::vector<std::string> names;
  node_flags_.clear();
  for (const NodeRecord* record : order) {
    if (record->spec.gpu_count > 0 &&
        std::find(models.begin(), models.end(), record->spec.gpu_model) == models.end()) {
      if (models.size() >= static_cast<size_t>(kMaxGpuModels)) continue;  // engine's limit
      models.push_back(record->spec.gpu_model);
    }
    names.push_back(record->spec.name);
    node_flags_.push_back(FlagsOf(*record));
    specs.push_back(record->spec);
  }
  node_names_.Rebuild(std::move(names));
  // M from the configured workload, else from the bound pods' decoded requests (file mode:
  // every pod of the file); the engine takes one whole GPU as M when there are none.
  std::vector<PodSpec> bound;
  if (options_.workload.empty()) {
    for (const auto& [uid, r] : pods_.records()) {
      if (r.estimated.empty() && r.opaque.empty() && (!api_mode_ || r.phase != PodPhase::kSeen)) {
        bound.push_back(r.spec);
      }
    }
  }
  scheduler_ = nullptr;
  cluster_ = nullptr;
  engine_.reset();
  Result<std::unique_ptr<Engine>> engine =
      Engine::Create(std::move(specs), options_.workload.empty() ? bound : options_.workload,
                     options_.policy, options_.seed);
  TESSERA_CHECK(engine.ok());  // the policy name was checked by Create / FromJson
  engine_ = std::move(*engine);
  cluster_ = &engine_->cluster();
  scheduler_ = &engine_->scheduler();
  // The headroom never asks for more than the cluster (or a model) has; its model floors
  // follow the new model ids.
  headroom_->SetCluster(*cluster_);
  blocked_.assign(cluster_->size(), std::string());
  placed_.assign(cluster_->size(), {});
  unaccounted_.assign(cluster_->size(), {});
  // The pending pods seen so far count for the policy's context, as the engine counts each pod
  // it is asked about once.
  for (const auto& [uid, r] : pods_.records()) {
    if (r.phase == PodPhase::kSeen && r.opaque.empty()) {
      scheduler_->Observe(cluster_->MakeRequest(r.spec));
    }
  }
  if (!loaded_) return;
  // Called at once, under this function's lock: the analysis does not follow a lambda into a
  // template.
  node_names_.ForEachName([&](const std::string& name)
                              TESSERA_NO_THREAD_SAFETY_ANALYSIS { PlaceNode(name); });
}

std::optional<GpuSet> Extender::FactGpus(const PodRecord& r, int node, std::string* why) const {
  const int gpu_count = cluster_->spec(node).gpu_count;
  if (r.phase == PodPhase::kAssumed && r.assumed_gpus != 0) return r.assumed_gpus;
  if (r.gpu_indices.has_value()) {
    Result<GpuSet> set = ParseGpuIndices(*r.gpu_indices, gpu_count);
    if (set.ok()) return *set;
    *why = set.error().message;
  } else if (r.hami_allocated.has_value()) {
    auto rec = nodes_.find(cluster_->spec(node).name);
    if (rec != nodes_.end() && !rec->second.gpus.empty()) {
      Result<GpuSet> set = HamiAllocatedGpus(*r.hami_allocated, rec->second.gpus);
      if (set.ok()) return *set;
      *why = set.error().message;
    }
  }
  if (r.assumed_gpus != 0) return r.assumed_gpus;  // bound by us, annotation gone
  return std::nullopt;
}

void Extender::PlaceNode(const std::string& name) {
  if (!loaded_ || dirty_ || scheduler_ == nullptr) return;
  const int node = node_names_.Find(name);
  if (node < 0) return;  // its pods wait for it
  for (const std::string& uid : placed_[node]) {
    auto a = assignments_.find(uid);
    if (a == assignments_.end()) continue;
    scheduler_->Unbind(node, a->second.request, a->second.gpus);
    assignments_.erase(a);
  }
  placed_[node].clear();
  unaccounted_[node].clear();
  std::string& blocked = blocked_[node];
  blocked.clear();
  node_flags_[node] &= static_cast<uint8_t>(~kBlocked);
  const auto unaccounted = [&](const std::string& uid, std::string why) TESSERA_REQUIRES(mutex_) {
    unaccounted_[node].emplace_back(uid, std::move(why));
  };
  const auto block = [&](const std::string& uid, const PodRecord& r, const std::string& why)
                         TESSERA_REQUIRES(mutex_) {
                           unaccounted(uid, "not placed: " + why);
                           if (blocked.empty()) blocked = "pod " + r.key + " " + why;
                         };
  const auto place = [&](const std::string& uid, const PodRecord& r, const PodRequest& request,
                         GpuSet gpus, GpuSource source) TESSERA_REQUIRES(mutex_) {
    scheduler_->Bind(node, request, gpus);
    assignments_[uid] = Assignment{r.key, node, request, gpus, source};
    placed_[node].push_back(uid);
  };

  // Facts (and CPU-only pods) first, then guesses, each in UID order (OnNode's order).
  struct Guess {
    const std::string* uid;
    const PodRecord* record;
    PodRequest request;
  };
  std::vector<Guess> guesses;
  const std::vector<std::string> uids = pods_.OnNode(name);
  for (const std::string& uid : uids) {
    const PodRecord& r = *pods_.Find(uid);
    if (!r.opaque.empty()) {
      unaccounted(uid, "unreadable: " + r.opaque);
      if (blocked.empty()) blocked = "pod " + r.key + " could not be read: " + r.opaque;
      continue;
    }
    // The pod runs here whatever model it allows: its model constraint is not checked.
    PodRequest request = cluster_->MakeRequest(r.spec);
    request.models = kAnyModel;
    if (!r.estimated.empty()) unaccounted(uid, "estimated as whole GPUs: " + r.estimated);
    const FitReason fit = cluster_->Check(node, request);
    if (request.IsCpuOnly()) {
      if (fit != FitReason::kFits) {
        block(uid, r, "does not fit on the node: " + FitExplanation(fit));
      } else {
        place(uid, r, request, 0, GpuSource::kGuess);
      }
      continue;
    }
    std::string why;
    const std::optional<GpuSet> fact = FactGpus(r, node, &why);
    if (!why.empty()) {
      // Its GPUs are named, but not in a way that fits this node (malformed, or devices the
      // node no longer has): which GPUs it holds is unknown.
      block(uid, r, "has a GPU annotation that cannot be used here: " + why);
      continue;
    }
    if (!fact.has_value()) {
      guesses.push_back({&uid, &r, request});
      continue;
    }
    // A fact: exactly its GPUs, or the node is blocked.
    if (fit != FitReason::kFits && fit != FitReason::kGpu && fit != FitReason::kGpuMemory) {
      block(uid, r, "does not fit on the node: " + FitExplanation(fit));
      continue;
    }
    int count = 0;
    std::string taken;
    for (int g = 0; g < kMaxGpusPerNode; ++g) {
      if (!(*fact & (GpuSet{1} << g))) continue;
      ++count;
      if (g >= cluster_->spec(node).gpu_count || !GpuHasRoom(cluster_->state(node), g, request)) {
        taken += (taken.empty() ? "" : ",") + std::to_string(g);
      }
    }
    if (!taken.empty()) {
      block(uid, r, "holds GPU(s) " + taken + " that are taken or do not exist on the node");
      continue;
    }
    if (count != request.gpu_count) {
      block(uid, r,
            "is assigned " + std::to_string(count) + " GPU(s) (" + GpuList(*fact) +
                ") but requests " + std::to_string(request.gpu_count));
      continue;
    }
    const bool annotated =
        r.phase == PodPhase::kBound && (r.gpu_indices.has_value() || r.hami_allocated.has_value());
    place(uid, r, request, *fact, annotated ? GpuSource::kAnnotation : GpuSource::kTessera);
  }
  for (const Guess& g : guesses) {
    const FitReason fit = cluster_->Check(node, g.request);
    if (fit != FitReason::kFits) {
      block(*g.uid, *g.record,
            "(no GPU annotation) does not fit beside the others: " + FitExplanation(fit));
      continue;
    }
    const GpuSet gpus = DefaultGpuChoice(cluster_->spec(node).gpu_count, cluster_->state(node),
                                         g.request, cluster_->topology(node));
    place(*g.uid, *g.record, g.request, gpus,
          g.record->estimated.empty() ? GpuSource::kGuess : GpuSource::kEstimate);
  }
  if (!blocked.empty()) node_flags_[node] |= kBlocked;
}

void Extender::PlaceNodes(const std::vector<std::string>& nodes) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (std::find(nodes.begin(), nodes.begin() + i, nodes[i]) != nodes.begin() + i) continue;
    PlaceNode(nodes[i]);
  }
}

Status Extender::UpsertNode(const Node& node) {
  std::string topology_error;
  Result<NodeSpec> spec = NodeToSpec(node, &topology_error);
  if (!spec.ok()) return Error{"node " + QuoteForError(node.name) + ": " + spec.error().message};
  if (spec->name.empty()) return Error{"node without metadata.name"};
  // The node pool's kubelet policy (the first pool whose selector matches).
  std::string note;
  if (topology_error.rfind(node.json_path, 0) == 0) {
    // Named from the node itself ("metadata.annotations[...]"): the same in every watch event,
    // so that an error is logged and counted once, not on every heartbeat.
    topology_error.erase(0, node.json_path.size());
    if (!topology_error.empty() && topology_error[0] == '.') topology_error.erase(0, 1);
  }
  if (!topology_error.empty()) {
    note = "node " + QuoteForError(node.name) +
           ": topology annotation ignored, the node has no topology: " + topology_error;
  }
  for (const NodePoolTopology& pool : options_.topology_pools) {
    bool match = true;
    for (const auto& [key, value] : pool.match_labels) {
      auto label = node.labels.find(key);
      match = match && label != node.labels.end() && label->second == value;
    }
    if (!match) continue;
    if (spec->topology != nullptr) {
      spec->topology = WithKubeletPolicy(spec->topology, pool.kubelet);
    } else if (pool.kubelet != KubeletTopologyPolicy::kNone && spec->gpu_count > 0 &&
               topology_error.empty()) {
      note = "node " + QuoteForError(node.name) + ": kubelet topology policy " +
             std::string(KubeletPolicyName(pool.kubelet)) +
             " cannot be honoured: the node's GPU topology is not known";
    }
    break;
  }
  NodeRecord record{
      *spec, node.unschedulable, HamiGpus(node, spec->gpu_count), NodeGpuFamilies(node), 0, note};
  MutexLock lock(mutex_);
  if (record.spec.topology != nullptr) {
    record.spec.topology = InternTopology(&topologies_, *record.spec.topology);
  }
  auto it = nodes_.find(spec->name);
  const std::string& last_note = it != nodes_.end() ? it->second.topology_note : std::string();
  if (!note.empty() && note != last_note) {
    // Logged (and an error counted) once per node and distinct message, not on every heartbeat.
    if (!topology_error.empty()) metrics_->topology_annotation_errors->Increment();
    std::string fields = "{\"node\":";
    AppendJsonString(&fields, node.name);
    fields += "}";
    LogJson(topology_error.empty() ? "info" : "warn", note, fields);
  }
  if (it != nodes_.end() && SameCapacity(it->second.spec, record.spec)) {
    // Status heartbeats and label changes that do not touch capacity: no rebuild.
    NodeRecord& known = it->second;
    const bool devices_changed = known.gpus != record.gpus;
    known.unschedulable = record.unschedulable;
    known.families = record.families;
    known.gpus = std::move(record.gpus);
    known.topology_note = std::move(record.topology_note);
    const int index = node_names_.Find(spec->name);
    if (!dirty_ && index >= 0) {
      node_flags_[index] = FlagsOf(known) | (node_flags_[index] & static_cast<uint8_t>(kBlocked));
      if (devices_changed) PlaceNode(spec->name);  // HAMi facts read by UUID
    }
    return {};
  }
  if (!api_mode_) record.rank = static_cast<int64_t>(nodes_.size());
  if (it != nodes_.end()) record.rank = it->second.rank;
  nodes_.insert_or_assign(spec->name, std::move(record));
  dirty_ = true;
  EnsureModel();
  return {};
}

void Extender::DeleteNode(const std::string& name) {
  MutexLock lock(mutex_);
  if (nodes_.erase(name) == 0) return;
  dirty_ = true;
  EnsureModel();
}

Status Extender::UpsertPod(const Pod& pod) {
  const std::string uid = PodUid(pod);
  std::string error;
  PodRecord record = RecordOf(pod, &error);
  MutexLock lock(mutex_);
  EnsureModel();
  if (PodEnded(pod.phase)) {
    queue_.Remove(uid);
    RemovePodLocked(uid);
    return {};
  }
  if (pod.node_name.empty()) {
    // In the GPU queue unless this extender's Binding of it is in flight or done (an assumed
    // pod shown pending: the object predates the Binding).
    const PodRecord* known = pods_.Find(uid);
    if (known == nullptr || known->phase == PodPhase::kSeen) {
      queue_.Pending(uid, pod, record.spec.gpu_count > 0 && record.spec.gpu_milli > 0, false,
                     Now());
    }
    // Pending: remembered for Bind. A pod we assumed stays assumed (this object predates our
    // Binding).
    KeepOwnNominationLocked(uid, &record);
    const bool fresh = pods_.See(uid, record);
    if (fresh && scheduler_ && record.opaque.empty()) {
      scheduler_->Observe(cluster_->MakeRequest(record.spec));
    }
    return {};
  }
  WaitEndedLocked(uid);  // bound: a queued pod's wait ends when the watch first shows it
  own_nominations_.erase(uid);
  PlaceNodes(pods_.Observe(uid, std::move(record)));
  if (!error.empty()) {
    return Error{"pod " + ObjectKey(pod.namespace_name, pod.name) + " on node " + pod.node_name +
                 ": counted as whole GPUs: " + error};
  }
  return {};
}

void Extender::UndecodablePod(const PodIdentity& pod, const std::string& error) {
  MutexLock lock(mutex_);
  EnsureModel();
  if (PodEnded(pod.phase)) {
    queue_.Remove(pod.uid);
    PlaceNodes(pods_.Remove(pod.uid));
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
  PlaceNodes(pods_.Observe(pod.uid, std::move(record)));
}

void Extender::DeletePod(const std::string& uid) {
  MutexLock lock(mutex_);
  EnsureModel();
  queue_.Remove(uid);
  RemovePodLocked(uid);
}

void Extender::RemovePodLocked(const std::string& uid) {
  // A preemption victim's GPUs go to its preemptor: they refill no headroom (as in the replay).
  const PodRecord* known = pods_.Find(uid);
  const bool backlog = headroom_->options().mode == HeadroomOptions::Mode::kBacklog &&
                       cluster_ != nullptr &&
                       (known == nullptr || (!known->meta.victim && evicting_.count(uid) == 0));
  const int64_t idle_before = backlog ? IdleGpusLocked() : 0;
  // The departed pod's priority: a protected pod's departure lowers what protected pods hold.
  int priority = INT_MIN;
  if (known != nullptr) {
    const int cls = ClassOfRecord(*known);
    if (cls >= 0) priority = options_.classes.classes[static_cast<size_t>(cls)].priority;
  }
  evicting_.erase(uid);
  own_nominations_.erase(uid);
  PlaceNodes(pods_.Remove(uid));
  if (backlog) NoteIdleChangeLocked(idle_before, priority);
}

void Extender::BeginPodList() {
  MutexLock lock(mutex_);
  pods_.BeginList();
}

void Extender::EndPodList(const std::set<std::string>& uids, const std::string& resource_version) {
  MutexLock lock(mutex_);
  EnsureModel();
  PlaceNodes(pods_.EndList(uids, NumericVersion(resource_version)));
  // Called at once, under this function's lock (as in Rebuild).
  queue_.RemoveUnless([&](const std::string& uid)
                          TESSERA_NO_THREAD_SAFETY_ANALYSIS { return pods_.Find(uid) != nullptr; });
}

void Extender::SyncChanged(const SyncStatus& status) {
  MutexLock lock(mutex_);
  sync_ = status;
  if (status.synced && !loaded_) {
    loaded_ = true;  // the initial lists are in: build the model from them
    Rebuild();
  }
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
  return pods_.assumed();
}

std::vector<std::string> Extender::warnings() const {
  MutexLock lock(mutex_);
  return warnings_;
}

void Extender::MergeNodeReadLocked(const std::string& node, const ListPage& page) {
  std::vector<std::string> changed;
  for (size_t i = 0; i < page.items.size(); ++i) {
    const std::string where = "read of node " + node + "'s pods: items[" + std::to_string(i) + "]";
    Result<Pod> pod = DecodePod(page.items[i], where);
    if (!pod.ok()) {
      const PodIdentity id = ReadPodIdentity(page.items[i]);
      if (id.uid.empty() || id.node_name != node || pods_.Removed(id.uid)) continue;
      const PodRecord* known = pods_.Find(id.uid);
      if (known != nullptr && known->phase == PodPhase::kBound) continue;
      PodRecord record;
      record.key = ObjectKey(id.namespace_name, id.name);
      record.node = node;
      record.opaque = pod.error().message;
      record.resource_version = NumericVersion(id.resource_version);
      for (std::string& n : pods_.Observe(id.uid, std::move(record))) changed.push_back(n);
      continue;
    }
    const std::string uid = PodUid(*pod);
    if (pod->node_name != node || pods_.Removed(uid)) continue;
    if (PodEnded(pod->phase)) {
      for (std::string& n : pods_.Remove(uid)) changed.push_back(std::move(n));
      continue;
    }
    const PodRecord* known = pods_.Find(uid);
    const uint64_t rv = NumericVersion(pod->resource_version);
    // What the watch delivered is at least as new: keep it.
    if (known != nullptr && known->phase == PodPhase::kBound &&
        (rv == 0 || known->resource_version >= rv)) {
      continue;
    }
    for (std::string& n : pods_.Observe(uid, RecordOf(*pod, nullptr))) changed.push_back(n);
  }
  PlaceNodes(changed);
}

}  // namespace tessera::k8s
