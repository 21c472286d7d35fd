#include "k8s/extender/cluster_model.h"

#include <algorithm>
#include <utility>

#include "k8s/api/cluster_events.h"
#include "k8s/api/json_util.h"
#include "k8s/extender/extender_internal.h"
#include "k8s/hami/annotations.h"
#include "k8s/translate/translate.h"
#include "model/fit.h"
#include "model/topology_text.h"
#include "util/check.h"

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

ClusterModel::ClusterModel(Options options, std::function<void(const Cluster&)> rebuilt)
    : options_(std::move(options)), rebuilt_(std::move(rebuilt)) {}

uint8_t ClusterModel::FlagsOf(const NodeRecord& record) {
  uint8_t f = 0;
  if (record.unschedulable) f |= kCordoned;
  if (record.spec.gpu_count == 0) f |= kNoGpus;
  if (!(record.families & kTesseraFamily)) f |= kNoTessera;
  if (!(record.families & kNvidiaFamily)) f |= kNoNvidia;
  return f;
}

PodRecord ClusterModel::RecordOf(const Pod& pod, std::string* error) {
  return RecordOf(pod, PodToSpec(pod), error);
}

PodRecord ClusterModel::RecordOf(const Pod& pod, const Result<PodSpec>& spec, std::string* error) {
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

Result<ClusterModel::NodeRead> ClusterModel::ReadNode(const Node& node,
                                                      std::span<const NodePoolTopology> pools) {
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
  for (const NodePoolTopology& pool : pools) {
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
  return NodeRead{NodeRecord{*spec, node.unschedulable, HamiGpus(node, spec->gpu_count),
                             NodeGpuFamilies(node), 0, std::move(note)},
                  !topology_error.empty()};
}

void ClusterModel::Build() { Rebuild(); }

void ClusterModel::Load() {
  loaded_ = true;
  Rebuild();
}

void ClusterModel::Rebuild() {
  dirty_ = false;
  ++generation_;
  assignments_.clear();

  // Nodes in rank order (file mode: the node list's; API mode: all 0, so by name).
  std::vector<const NodeRecord*> order;
  for (const auto& [name, record] : nodes_) order.push_back(&record);
  std::stable_sort(order.begin(), order.end(),
                   [](const NodeRecord* a, const NodeRecord* b) { return a->rank < b->rank; });
  std::vector<NodeSpec> specs;
  std::vector<std::string> models;
  std::vector<std::string> names;
  flags_.clear();
  for (const NodeRecord* record : order) {
    if (record->spec.gpu_count > 0 &&
        std::find(models.begin(), models.end(), record->spec.gpu_model) == models.end()) {
      if (models.size() >= static_cast<size_t>(kMaxGpuModels)) continue;  // engine's limit
      models.push_back(record->spec.gpu_model);
    }
    names.push_back(record->spec.name);
    flags_.push_back(FlagsOf(*record));
    specs.push_back(record->spec);
  }
  names_.Rebuild(std::move(names));
  // M from the configured workload, else from the bound pods' decoded requests (file mode:
  // every pod of the file); the engine takes one whole GPU as M when there are none.
  std::vector<PodSpec> bound;
  if (options_.workload.empty()) {
    for (const auto& [uid, r] : pods_.records()) {
      if (r.estimated.empty() && r.opaque.empty() &&
          (!options_.api_mode || r.phase != PodPhase::kSeen)) {
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
  TESSERA_CHECK(engine.ok());  // the policy name was checked by the Extender's factories
  engine_ = std::move(*engine);
  cluster_ = &engine_->cluster();
  scheduler_ = &engine_->scheduler();
  rebuilt_(*cluster_);
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
  names_.ForEachName([&](const std::string& name) { PlaceNode(name); });
}

std::optional<GpuSet> ClusterModel::FactGpus(const PodRecord& r, int node, std::string* why) const {
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

void ClusterModel::PlaceNode(const std::string& name) {
  if (!loaded_ || dirty_ || scheduler_ == nullptr) return;
  const int node = names_.Find(name);
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
  flags_[node] &= static_cast<uint8_t>(~kBlocked);
  const auto unaccounted = [&](const std::string& uid, std::string why) {
    unaccounted_[node].emplace_back(uid, std::move(why));
  };
  const auto block = [&](const std::string& uid, const PodRecord& r, const std::string& why) {
    unaccounted(uid, "not placed: " + why);
    if (blocked.empty()) blocked = "pod " + r.key + " " + why;
  };
  const auto place = [&](const std::string& uid, const PodRecord& r, const PodRequest& request,
                         GpuSet gpus, GpuSource source) {
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
  if (!blocked.empty()) flags_[node] |= kBlocked;
}

void ClusterModel::PlaceNodes(const std::vector<std::string>& nodes) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (std::find(nodes.begin(), nodes.begin() + i, nodes[i]) != nodes.begin() + i) continue;
    PlaceNode(nodes[i]);
  }
}

bool ClusterModel::UpsertNode(NodeRead read) {
  NodeRecord& record = read.record;
  if (record.spec.topology != nullptr) {
    record.spec.topology = InternTopology(&topologies_, *record.spec.topology);
  }
  const std::string name = record.spec.name;
  auto it = nodes_.find(name);
  const std::string& last_note = it != nodes_.end() ? it->second.topology_note : std::string();
  const bool new_note = !record.topology_note.empty() && record.topology_note != last_note;
  if (it != nodes_.end() && SameCapacity(it->second.spec, record.spec)) {
    // Status heartbeats and label changes that do not touch capacity: no rebuild.
    NodeRecord& known = it->second;
    const bool devices_changed = known.gpus != record.gpus;
    known.unschedulable = record.unschedulable;
    known.families = record.families;
    known.gpus = std::move(record.gpus);
    known.topology_note = std::move(record.topology_note);
    const int index = names_.Find(name);
    if (!dirty_ && index >= 0) {
      flags_[index] = FlagsOf(known) | (flags_[index] & static_cast<uint8_t>(kBlocked));
      if (devices_changed) PlaceNode(name);  // HAMi facts read by UUID
    }
    return new_note;
  }
  if (!options_.api_mode) record.rank = static_cast<int64_t>(nodes_.size());
  if (it != nodes_.end()) record.rank = it->second.rank;
  nodes_.insert_or_assign(name, std::move(record));
  dirty_ = true;
  Refresh();
  return new_note;
}

void ClusterModel::DeleteNode(const std::string& name) {
  if (nodes_.erase(name) == 0) return;
  dirty_ = true;
  Refresh();
}

bool ClusterModel::See(const std::string& uid, PodRecord record) {
  const bool opaque = !record.opaque.empty();
  if (!pods_.See(uid, std::move(record))) return false;
  const PodRecord* seen = pods_.Find(uid);
  if (scheduler_ != nullptr && !opaque && seen != nullptr) {
    scheduler_->Observe(cluster_->MakeRequest(seen->spec));
  }
  return true;
}

void ClusterModel::Observe(const std::string& uid, PodRecord record) {
  PlaceNodes(pods_.Observe(uid, std::move(record)));
}

bool ClusterModel::Remove(const std::string& uid) {
  const std::vector<std::string> nodes = pods_.Remove(uid);
  PlaceNodes(nodes);
  return !nodes.empty();
}

void ClusterModel::Assume(const std::string& uid, const std::string& node, GpuSet gpus,
                          double now_s) {
  pods_.Assume(uid, node, gpus, now_s);
  PlaceNode(node);
}

void ClusterModel::Forget(const std::string& uid) { PlaceNodes({pods_.Forget(uid)}); }

void ClusterModel::EndList(const std::set<std::string>& uids, uint64_t list_version) {
  PlaceNodes(pods_.EndList(uids, list_version));
}

void ClusterModel::MergeNodeRead(const std::string& node, const ListPage& page) {
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

const NodeRecord* ClusterModel::node(const std::string& name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : &it->second;
}

const std::vector<int64_t>& ClusterModel::idle_gpus_by_model() const {
  static const std::vector<int64_t> kNone;
  return scheduler_ != nullptr ? scheduler_->idle_gpus_by_model() : kNone;
}

ModelView ClusterModel::View() const {
  ModelView v;
  v.nodes.reserve(static_cast<size_t>(cluster_->size()));
  for (int n = 0; n < cluster_->size(); ++n) {
    v.nodes.push_back({cluster_->spec(n).name, (flags_[n] & kCordoned) != 0, blocked_[n]});
    for (const auto& [uid, why] : unaccounted_[n]) {
      const PodRecord* r = pods_.Find(uid);
      v.unaccounted.push_back({uid, r ? r->key : "", n, why});
    }
  }
  v.placed.reserve(assignments_.size());
  for (const auto& [uid, a] : assignments_) {
    const PodRecord* r = pods_.Find(uid);
    v.placed.push_back({uid, a.pod, a.node, a.gpus, a.request.IsCpuOnly() ? 0 : a.request.gpu_milli,
                        r != nullptr && r->phase == PodPhase::kAssumed, a.source});
  }
  return v;
}

}  // namespace tessera::k8s
