#include "k8s/extender/extender.h"

#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>
#include <span>
#include <unordered_set>
#include <utility>

#include "k8s/api/json_util.h"
#include "k8s/api/objects.h"
#include "k8s/extender/extender_internal.h"
#include "k8s/extender/metrics.h"
#include "k8s/extender/status.h"
#include "k8s/translate/translate.h"
#include "model/fit.h"
#include "model/topology.h"
#include "model/topology_text.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;

/// Node and pod list files may be far larger than one request body.
constexpr size_t kMaxListBytes = size_t{1} << 30;

/// Prioritize's scores (0..10, extender protocol): the engine's choice, and at most every
/// other candidate (ScoreCandidatesLocked).
constexpr int kPickScore = 10;
constexpr int kOthersMaxScore = 5;

/// The items of a v1 List ({"items": [...]}), a bare array, or a single object.
Result<std::vector<const Json*>> ListItems(const Json& doc, std::string_view what) {
  std::vector<const Json*> items;
  if (doc.is_array()) {
    for (const Json& item : doc) items.push_back(&item);
    return items;
  }
  if (!doc.is_object()) return TypeError(what, "object or array", doc);
  const Json* list = FindField(doc, "items");
  if (list == nullptr) {  // a single object
    items.push_back(&doc);
    return items;
  }
  if (list->is_null()) return items;
  if (!list->is_array()) return TypeError(PathKey(what, "items"), "array", *list);
  for (const Json& item : *list) items.push_back(&item);
  return items;
}

/// The path of item i for errors: "nodes: items[2]" (or "nodes: [2]" for a bare array).
std::string ItemPath(const Json& doc, std::string_view what, size_t i) {
  return std::string(what) + ": " + PathIndex(doc.is_array() ? "" : "items", i);
}

bool RequestsGpu(const PodSpec& spec) { return spec.gpu_count > 0 && spec.gpu_milli > 0; }

// Whether preemption may help (FailedNodes rather than FailedAndUnresolvableNodes). A topology
// shortfall may: ending pods in a domain frees it, and preempt's victim search checks the fit
// with the node's topology (a pod no domain of the node could ever hold gets no victims there).
bool Resolvable(FitReason reason) {
  return reason == FitReason::kCpu || reason == FitReason::kMemory || reason == FitReason::kGpu ||
         reason == FitReason::kGpuMemory || reason == FitReason::kTopology;
}

}  // namespace

/// Parses "0-3", "1,3", "0-1,4" into a GPU set over `gpu_count` GPUs.
Result<GpuSet> ParseGpuIndices(std::string_view text, int gpu_count) {
  GpuSet set = 0;
  const auto bad = [&](std::string_view why) {
    return Error{"annotation " + std::string(kGpuIndicesAnnotation) + " " + QuoteForError(text) +
                 ": " + std::string(why)};
  };
  if (text.empty()) return bad("empty");
  while (!text.empty()) {
    const size_t comma = text.find(',');
    std::string_view part = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    const size_t dash = part.find('-');
    std::string_view a = part.substr(0, dash);
    std::string_view b = dash == std::string_view::npos ? a : part.substr(dash + 1);
    int lo = -1;
    int hi = -1;
    auto r1 = std::from_chars(a.data(), a.data() + a.size(), lo);
    auto r2 = std::from_chars(b.data(), b.data() + b.size(), hi);
    if (a.empty() || b.empty() || r1.ec != std::errc() || r1.ptr != a.data() + a.size() ||
        r2.ec != std::errc() || r2.ptr != b.data() + b.size()) {
      return bad("expected GPU indices like \"0-3\" or \"1,3\"");
    }
    if (lo < 0 || hi < lo || hi >= gpu_count) {
      return bad("index out of range 0.." + std::to_string(gpu_count - 1));
    }
    for (int i = lo; i <= hi; ++i) {
      if (set & (GpuSet{1} << i)) return bad("index " + std::to_string(i) + " repeated");
      set |= GpuSet{1} << i;
    }
  }
  return set;
}

std::string FormatGpuIndices(GpuSet gpus) {
  std::string out;
  for (int i = 0; i < kMaxGpusPerNode;) {
    if (!(gpus & (GpuSet{1} << i))) {
      ++i;
      continue;
    }
    int j = i;
    while (j + 1 < kMaxGpusPerNode && (gpus & (GpuSet{1} << (j + 1)))) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(i);
    if (j > i) out += "-" + std::to_string(j);
    i = j + 1;
  }
  return out;
}

std::string FitExplanation(FitReason reason) {
  std::string name(FitReasonName(reason));
  switch (reason) {
    case FitReason::kGpuModel:
      return name + ": GPU model not allowed by the pod";
    case FitReason::kGpuCount:
      return name + ": node has fewer GPUs than the pod requests";
    case FitReason::kCpu:
      return name + ": not enough CPU left";
    case FitReason::kMemory:
      return name + ": not enough memory left";
    case FitReason::kGpu:
      return name + ": not enough GPU left";
    case FitReason::kGpuMemory:
      return name + ": not enough GPU memory left";
    case FitReason::kTopology:
      return name + ": no free GPUs inside the topology domains the pod requires";
    case FitReason::kFits:
      break;
  }
  return name;
}

std::string ModelRefusal(std::string_view node_model, std::string_view allowed) {
  return FitExplanation(FitReason::kGpuModel) + ": node has " +
         (node_model.empty() ? std::string("an unnamed model") : std::string(node_model)) +
         ", pod allows " + std::string(allowed);
}

namespace {

/// FitExplanation of each reason, built once (Filter answers one per rejected node).
const std::string& CachedFitExplanation(FitReason reason) {
  static const std::array<std::string, kNumFitReasons> table = [] {
    std::array<std::string, kNumFitReasons> t;
    for (int r = 0; r < kNumFitReasons; ++r) t[r] = FitExplanation(static_cast<FitReason>(r));
    return t;
  }();
  return table[static_cast<int>(reason)];
}

}  // namespace

namespace {

/// The extender protocol's error field: empty when there is none.
std::string WireError(const Status& s) { return s.ok() ? std::string() : s.error().message; }

}  // namespace

/// The UID a pod is remembered by; "namespace/name" when the object carries no UID.
std::string PodUid(const Pod& pod) {
  if (!pod.uid.empty()) return pod.uid;
  return ObjectKey(pod.namespace_name, pod.name);
}

namespace {

// The headroom protects the classes with use_headroom: from the lowest of their priorities.
HeadroomOptions ProtectedHeadroom(HeadroomOptions h, const QosClasses& classes) {
  h.min_priority = HeadroomProtectedPriority(classes);
  return h;
}

}  // namespace

Extender::Extender(const ExtenderOptions& options)
    : options_(options),
      filter_passes_(options.filter_pass_seconds),
      metrics_(std::make_unique<Metrics>(options.classes)),
      queue_(options.classes, options.scheduler_names),
      headroom_(std::make_unique<Headroom>(ProtectedHeadroom(options.headroom, options.classes),
                                           ClockOrSystem(options.clock))) {}

HeadroomPod Extender::HeadroomOfLocked(const std::string& uid, int cls) const {
  if (cls < 0) return {};
  const QosClass& c = options_.classes.classes[static_cast<size_t>(cls)];
  if (!headroom_->Holds(c.priority, c.preemptible)) return {};  // the common case: no lookup
  const auto it = queue_.pods().find(uid);
  const std::optional<double> waited =
      it == queue_.pods().end() ? std::nullopt : std::optional(Now() - it->second.created_s);
  return ClassifyForHeadroom(*headroom_, c, waited);
}

int64_t Extender::IdleGpusLocked() const {
  return scheduler_ != nullptr ? scheduler_->idle_gpus() : 0;
}

const std::vector<int64_t>& Extender::IdleGpusByModelLocked() const {
  static const std::vector<int64_t> kNone;
  return scheduler_ != nullptr ? scheduler_->idle_gpus_by_model() : kNone;
}

std::string Extender::ModelHeadroomTextLocked(int model, int64_t idle) const {
  return "headroom: placing the pod here would take idle " +
         cluster_->models()[static_cast<size_t>(model)] +
         " GPUs kept for the classes that may use headroom (" +
         std::to_string(headroom_->model_target(model)) + " kept, " + std::to_string(idle) +
         " idle)";
}

void Extender::UpdateHeadroomLocked() {
  bool shrank = false;
  headroom_->Update(&shrank);
}

void Extender::NoteIdleChangeLocked(int64_t idle_before, int priority) {
  if (headroom_->options().mode != HeadroomOptions::Mode::kBacklog || cluster_ == nullptr) return;
  const int64_t idle_after = IdleGpusLocked();
  if (idle_after > idle_before) {
    headroom_->NoteRelease(static_cast<int>(idle_after - idle_before), priority);
  }
}

int Extender::ClassOfRecord(const PodRecord& r) const {
  auto it = r.meta.labels.find(std::string(kClassKey));
  return options_.classes.Classify(it == r.meta.labels.end() ? "" : it->second, r.meta.priority);
}

Extender::~Extender() = default;

Result<std::unique_ptr<Extender>> Extender::FromJson(std::string_view nodes_json,
                                                     std::string_view pods_json,
                                                     const ExtenderOptions& options) {
  Result<Json> nodes_doc = ParseJson(nodes_json, kMaxListBytes, "nodes");
  if (!nodes_doc.ok()) return nodes_doc.error();
  Result<std::vector<const Json*>> node_items = ListItems(*nodes_doc, "nodes");
  if (!node_items.ok()) return node_items.error();
  std::vector<JsonObject> nodes;
  for (size_t i = 0; i < node_items->size(); ++i) {
    nodes.push_back({(*node_items)[i], ItemPath(*nodes_doc, "nodes", i)});
  }
  std::vector<JsonObject> pods;
  Result<Json> pods_doc = Json();
  if (!pods_json.empty()) {
    pods_doc = ParseJson(pods_json, kMaxListBytes, "pods");
    if (!pods_doc.ok()) return pods_doc.error();
    Result<std::vector<const Json*>> pod_items = ListItems(*pods_doc, "pods");
    if (!pod_items.ok()) return pod_items.error();
    for (size_t i = 0; i < pod_items->size(); ++i) {
      pods.push_back({(*pod_items)[i], ItemPath(*pods_doc, "pods", i)});
    }
  }
  return FromObjects(nodes, pods, options);
}

Result<std::unique_ptr<Extender>> Extender::FromObjects(std::span<const JsonObject> nodes,
                                                        std::span<const JsonObject> pods,
                                                        const ExtenderOptions& options) {
  std::unique_ptr<Extender> ext(new Extender(options));
  if (!IsPolicyName(options.policy)) {
    return Error{"unknown policy " + QuoteForError(options.policy) + " (known: " + KnownPolicies() +
                 ")"};
  }

  // Nodes.
  std::set<std::string> names;
  for (const JsonObject& object : nodes) {
    const std::string& path = object.path;
    Result<Node> node = DecodeNode(*object.json, path);
    if (!node.ok()) return node.error();
    Result<NodeSpec> spec = NodeToSpec(*node);
    if (!spec.ok()) return Error{path + ": " + spec.error().message};
    if (spec->name.empty()) return Error{path + ": node without metadata.name"};
    if (!names.insert(spec->name).second) {
      return Error{path + ": duplicate node " + QuoteForError(spec->name)};
    }
    Status s = ext->UpsertNode(*node);
    if (!s.ok()) return Error{path + ": " + s.error().message};
  }
  if (names.empty()) return Error{"nodes: no nodes"};

  // Pods: accounted as the API's would be (fail closed); what is not applied as given is a
  // warning that names the item.
  std::set<std::string> uids;
  std::map<std::string, std::string> path_of;  // UID → item path, for the warnings
  for (const JsonObject& object : pods) {
    const std::string& path = object.path;
    const Json& item = *object.json;
    Result<Pod> pod = DecodePod(item, path);
    const PodIdentity id = ReadPodIdentity(item);
    const std::string uid = pod.ok() ? PodUid(*pod) : id.uid;
    if (!uid.empty() && !uids.insert(uid).second) {
      return Error{path + ": duplicate pod UID " + uid};
    }
    if (!pod.ok()) {
      if (uid.empty()) return pod.error();
      path_of[uid] = path;
      ext->UndecodablePod(id, pod.error().message);
      continue;
    }
    path_of[uid] = path + " (" + ObjectKey(pod->namespace_name, pod->name) + ")";
    (void)ext->UpsertPod(*pod);  // what is not applied as given is listed below
    if (!pod->node_name.empty() && !names.count(pod->node_name) && !PodEnded(pod->phase)) {
      MutexLock lock(ext->mutex_);
      ext->warnings_.push_back(path_of[uid] + ": bound to unknown node " +
                               QuoteForError(pod->node_name) + " (ignored)");
    }
  }
  MutexLock lock(ext->mutex_);
  ext->loaded_ = true;
  ext->Rebuild();
  for (size_t n = 0; n < ext->unaccounted_.size(); ++n) {
    for (const auto& [uid, why] : ext->unaccounted_[n]) {
      ext->warnings_.push_back(path_of[uid] + " on node " + ext->cluster_->spec(n).name + ": " +
                               why);
    }
  }
  return ext;
}

void Extender::KeepOwnNominationLocked(const std::string& uid, PodRecord* record) {
  auto it = own_nominations_.find(uid);
  if (it == own_nominations_.end()) return;
  if (record->meta.nominated_node.empty()) {
    record->meta.nominated_node = it->second;
  } else {
    own_nominations_.erase(it);
  }
}

void Extender::SeeLocked(const Pod& pod, const PodSpec& spec) {
  const std::string uid = PodUid(pod);
  const PodRecord* known = pods_.Find(uid);
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
  PodRecord r = RecordOf(pod, spec, nullptr);
  r.node.clear();
  KeepOwnNominationLocked(uid, &r);
  if (pods_.See(uid, std::move(r)) && scheduler_) {
    // The engine counts each pod once (Scheduler::Decide in frag, the replay when the pod
    // arrives); here that is the first sighting of its UID, so that context-using policies see
    // the same history.
    scheduler_->Observe(cluster_->MakeRequest(spec));
  }
}

namespace {}  // namespace

const std::string& Extender::ReasonText(int reason) {
  static const std::array<std::string, kReasonFit> kTexts = {
      "unknown node",
      "unschedulable: node is cordoned",
      "not-synced: Tessera is not in sync with the Kubernetes API (see its /readyz); no GPU "
      "is offered until it is",
      "blocked: a pod bound to this node cannot be fully accounted for (see Tessera's /state)",
      "gpu-model: node has no GPUs",
      "gpu-memory: every GPU of the node has less memory than the pod requests per GPU",
      "device-plugin: node does not offer tessera.io/gpu, which the pod requests",
      "device-plugin: node does not offer nvidia.com/gpu, which the pod requests",
      "headroom: placing the pod here would take idle GPUs kept for the classes that may use "
      "headroom (see Tessera's /state)",
      "nominated: the GPUs left here are held for a pod of equal or higher priority that "
      "preemption nominated to this node",
  };
  if (reason < kReasonFit) return kTexts[reason];
  return CachedFitExplanation(static_cast<FitReason>(reason - kReasonFit));
}

const PaddedStrings& Extender::QuotedReasons() {
  static const PaddedStrings table = [] {
    PaddedStrings t;
    for (int r = 0; r < kReasonFit + kNumFitReasons; ++r) {
      std::string quoted = ":";
      AppendJsonString(&quoted, ReasonText(r));
      t.Add(quoted);
    }
    return t;
  }();
  return table;
}

namespace {}  // namespace

template <typename Visit>
Status Extender::FilterCandidatesLocked(const Pod& pod, const Result<PodSpec>& spec,
                                        std::span<const std::string_view> names, uint64_t names_id,
                                        std::vector<std::string>* details, Visit&& visit) {
  EnsureModel();
  if (!spec.ok()) {
    metrics_->bad_pods->Increment();
    return spec.error();
  }
  const std::span<const int> resolved = node_names_.Resolve(names, names_id);
  if (GateLocked()) {
    for (size_t i = 0; i < names.size(); ++i) {
      visit(i, names[i], resolved[i], Candidate::kUnresolvable, kReasonNotSynced);
    }
    metrics_->rejections[kReasonNotSynced]->Increment(static_cast<double>(names.size()));
    return {};
  }
  SeeLocked(pod, *spec);
  const PodRequest request = cluster_->MakeRequest(*spec);
  UpdateHeadroomLocked();
  const std::string uid = PodUid(pod);
  const HeadroomPod headroom_pod = HeadroomOfLocked(uid, ClassOfPod(options_.classes, pod));
  const HeadroomGate gate(*headroom_, *cluster_, headroom_pod, IdleGpusLocked(),
                          IdleGpusByModelLocked());
  // (model id, detail code) of each model whose headroom floor refused a node: its text in
  // `details`, counted as kReasonHeadroom.
  std::vector<std::pair<int, int>> model_reasons;
  // (node GPU model, detail code) of each model the pod's model constraint refused: its text
  // names both, counted as FitReason::kGpuModel.
  std::vector<std::pair<std::string_view, int>> model_refusals;
  const uint8_t mask = RequestMask(request, PodGpuFamilies(pod));
  std::vector<uint64_t>* passed =
      filter_passes_.Begin(PodUid(pod), Now(), model_generation_, node_names_.QuotedNames());
  std::array<int64_t, kReasonFit + kNumFitReasons> rejected{};
  if (++group_fit_stamp_ == 0) {  // wrapped: forget every stamp
    std::fill(group_fit_.begin(), group_fit_.end(), GroupFit{});
    group_fit_stamp_ = 1;
  }
  const uint32_t stamp = group_fit_stamp_;
  const bool evict = options_.preemption == PreemptionMode::kEvict && evictor_ != nullptr;
  bool any_fits = false;
  preempt_nodes_.clear();
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string_view name = names[i];
    const int node = resolved[i];
    int reason = kReasonFit;
    bool never = false;
    if (node < 0) {
      reason = kReasonUnknown;
    } else if (const uint8_t flags = node_flags_[node] & mask; flags != 0) [[unlikely]] {
      reason = FlagReason(flags);
    } else {
      // Nodes of one scheduler group (same capacity type and state) fit alike: checked once
      // per group and request.
      const auto group = static_cast<size_t>(scheduler_->group_of(node));
      if (group >= group_fit_.size()) group_fit_.resize(group + 1);
      GroupFit& memo = group_fit_[group];
      if (memo.stamp != stamp) {
        memo.stamp = stamp;
        memo.never = false;
        const FitReason fit = cluster_->Check(node, request);
        memo.reason = kReasonFit + static_cast<int>(fit);
        if (fit == FitReason::kGpuModel) {
          const std::string_view model = cluster_->spec(node).gpu_model;
          auto it = std::find_if(model_refusals.begin(), model_refusals.end(),
                                 [&](const auto& m) { return m.first == model; });
          if (it == model_refusals.end()) {
            model_refusals.emplace_back(model, kReasonDetail + static_cast<int>(details->size()));
            details->push_back(ModelRefusal(model, spec->gpu_spec));
            it = model_refusals.end() - 1;
          }
          memo.reason = it->second;
        } else if (fit == FitReason::kGpuMemory) {
          const NodeSpec& ns = cluster_->spec(node);
          if (ns.gpu_memory_mib > 0 && request.gpu_memory_mib > ns.gpu_memory_mib) {
            memo.reason = kReasonGpuMemoryCapacity;
          }
        } else if (fit == FitReason::kTopology) [[unlikely]] {
          const NodeSpec& ns = cluster_->spec(node);
          if (ns.topology != nullptr) {
            memo.reason = kReasonDetail + static_cast<int>(details->size());
            details->push_back(
                TopologyShortfall(*ns.topology, ns.gpu_count, cluster_->state(node), request));
            // Would preemption help? Only if the pod fits the topology with every GPU free.
            NodeState empty = cluster_->state(node);
            for (int g = 0; g < ns.gpu_count; ++g) {
              empty.gpu_free[g] = kMilliPerGpu;
              empty.gpu_mem_free[g] = static_cast<int32_t>(ns.gpu_memory_mib);
            }
            memo.never = !TopologyFits(*ns.topology, ns.gpu_count, empty, request);
          }
        }
        // The headroom depends on the node's state and model too (a group has one of each):
        // once per group as well.
        const Headroom::Shortfall why =
            memo.reason == kReasonFit ? gate.MayUse(node, request) : Headroom::Shortfall::kNone;
        memo.keeps_headroom = why == Headroom::Shortfall::kNone;
        memo.headroom_reason = kReasonHeadroom;
        if (why == Headroom::Shortfall::kModel) {
          const HeadroomIdle node_idle = gate.IdleOf(node);
          const int model = node_idle.model;
          auto it = std::find_if(model_reasons.begin(), model_reasons.end(),
                                 [&](const auto& m) { return m.first == model; });
          if (it == model_reasons.end()) {
            model_reasons.emplace_back(model, kReasonDetail + static_cast<int>(details->size()));
            details->push_back(ModelHeadroomTextLocked(model, node_idle.model_idle));
            it = model_reasons.end() - 1;
          }
          memo.headroom_reason = it->second;
        }
      }
      reason = memo.reason;
      never = memo.never && reason >= kReasonDetail;
      if (!memo.keeps_headroom && name != pod.nominated_node_name) {
        reason = memo.headroom_reason;
        never = false;
      }
      // Room that preemption made for a pod nominated here is not for pods of lower priority.
      if (reason == kReasonFit && pods_.any_nominated() &&
          !FitsBesideNominatedLocked(node, std::string(name), uid, pod.priority, request))
          [[unlikely]] {
        reason = kReasonNominated;
      }
    }
    if (reason == kReasonFit) {  // kReasonFit + FitReason::kFits
      if (passed != nullptr) (*passed)[node >> 6] |= uint64_t{1} << (node & 63);
      any_fits = true;
      visit(i, name, node, Candidate::kFits, kReasonUnknown);
      continue;
    }
    // A node's own reason (kReasonDetail + k) is a topology shortfall, a model's headroom
    // floor or a model the pod does not allow.
    int counted = reason;
    if (reason >= kReasonDetail) {
      counted = kReasonFit + static_cast<int>(FitReason::kTopology);
      for (const auto& [model, code] : model_reasons) {
        if (code == reason) counted = kReasonHeadroom;
      }
      for (const auto& [model, code] : model_refusals) {
        if (code == reason) counted = kReasonFit + static_cast<int>(FitReason::kGpuModel);
      }
    }
    ++rejected[counted];
    const bool resolvable =
        !never &&
        (counted == kReasonHeadroom || counted == kReasonNominated ||
         (counted >= kReasonFit && Resolvable(static_cast<FitReason>(counted - kReasonFit))));
    // A pod held back by the headroom preempts instead where its class has an SLO and the
    // headroom says so (HeadroomOptions::slo_classes_preempt), as in the replay.
    if (evict && resolvable && (counted != kReasonHeadroom || headroom_pod.preempts)) {
      preempt_nodes_.push_back(node);
    }
    visit(i, name, node, resolvable ? Candidate::kFailed : Candidate::kUnresolvable, reason);
  }
  for (int r = 0; r < kReasonFit + kNumFitReasons; ++r) {
    if (rejected[r] > 0) metrics_->rejections[r]->Increment(static_cast<double>(rejected[r]));
  }
  if (evict && !any_fits && !preempt_nodes_.empty()) {
    PreemptAtFilterLocked(pod, request, preempt_nodes_);
  }
  return {};
}

ExtenderFilterResult Extender::Filter(const ExtenderArgs& args) {
  ExtenderFilterResult result;
  // Candidates come from Nodes only when NodeNames is absent; then answer in Nodes as well.
  if (args.nodes.has_value() && !args.node_names.has_value()) result.nodes_json.emplace();
  const std::vector<std::string_view> names = args.CandidateNameViews();
  const Result<PodSpec> spec = PodToSpec(args.pod);
  MutexLock lock(mutex_);
  std::vector<std::string> details;
  const auto text = [&](int reason) -> const std::string& {
    return reason < kReasonDetail ? ReasonText(reason) : details[reason - kReasonDetail];
  };
  result.error = WireError(
      FilterCandidatesLocked(args.pod, spec, names, 0, &details,
                             [&](size_t i, std::string_view name, int, Candidate c, int reason) {
                               switch (c) {
                                 case Candidate::kFits:
                                   result.node_names.emplace_back(name);
                                   if (result.nodes_json && i < args.nodes_json.size()) {
                                     result.nodes_json->push_back(args.nodes_json[i]);
                                   }
                                   break;
                                 case Candidate::kFailed:
                                   result.failed_nodes.emplace(name, text(reason));
                                   break;
                                 case Candidate::kUnresolvable:
                                   result.failed_and_unresolvable_nodes.emplace(name, text(reason));
                                   break;
                               }
                             }));
  if (!result.error.empty()) result.nodes_json.reset();
  return result;
}

std::string Extender::FilterJson(const ExtenderArgs& args) {
  const bool with_nodes = args.nodes.has_value() && !args.node_names.has_value();
  return FilterJsonOf(args.pod, args.CandidateNameViews(), 0,
                      with_nodes ? &args.nodes_json : nullptr);
}

std::string Extender::FilterJson(const ExtenderArgsRef& args) {
  const bool with_nodes = args.args.nodes.has_value() && !args.has_node_names;
  return FilterJsonOf(args.args.pod, args.names, args.names_id,
                      with_nodes ? &args.args.nodes_json : nullptr);
}

std::string Extender::FilterJsonOf(const Pod& pod, std::span<const std::string_view> names,
                                   uint64_t names_id, const std::vector<std::string>* nodes_json) {
  // Each candidate is decided first (node, section, reason) into one of three lists kept
  // between requests, and the answer's size summed; then the answer is written (wire.h,
  // WriteFilterAnswer) into one buffer of that size. Names are copied from their JSON form
  // made once per model (QuotedNames), reasons from theirs (QuotedReasons); only unknown names
  // are escaped here.
  // Only deciding needs the lock: the answer is written after it is released, from this
  // thread's section lists and the model's immutable quoted names, so that a second request
  // waits for the decisions only.
  const Result<PodSpec> spec = PodToSpec(pod);
  const PaddedStrings& reasons = QuotedReasons();
  std::vector<std::string> unknown_quoted;
  // This thread's sections (fits, FailedNodes, FailedAndUnresolvableNodes), kept between
  // requests so that their memory is not allocated each time; only the first entries count.
  thread_local std::vector<Decided> fits_list, failed_list, unresolvable_list;
  for (std::vector<Decided>* list : {&fits_list, &failed_list, &unresolvable_list}) {
    if (list->size() < names.size()) list->resize(names.size());
  }
  Decided* fits_end = fits_list.data();
  Decided* failed_end = failed_list.data();
  Decided* unresolvable_end = unresolvable_list.data();
  // A name the request lists twice is one key of a failure map: listed once, the first time
  // (as Filter's maps keep it); NodeNames keeps every fit, as Filter does. Known nodes are
  // marked with this request's stamp by node index, unknown names kept in a set.
  thread_local std::vector<uint32_t> rejected_stamp;
  thread_local uint32_t request_stamp = 0;
  if (++request_stamp == 0) {  // wrapped: forget every mark
    std::fill(rejected_stamp.begin(), rejected_stamp.end(), 0);
    request_stamp = 1;
  }
  std::unordered_set<std::string_view> rejected_unknown;
  size_t bytes = 0;  // names, reasons, nodes and their commas (one too many per section)
  std::shared_ptr<const PaddedStrings> quoted_names;
  std::string error;
  // Nodes' own reasons (topology shortfalls), one per scheduler group that has one, and
  // their JSON form as QuotedReasons has it (':' and the string).
  std::vector<std::string> details;
  PaddedStrings quoted_details;
  {
    MutexLock lock(mutex_, std::chrono::microseconds(options_.spin_us));
    EnsureModel();  // before QuotedNames: a rebuild would make its names the old model's
    quoted_names = node_names_.QuotedNames();
    const PaddedStrings& quoted = *quoted_names;
    const auto reason_length = [&](int reason) -> size_t {
      if (reason < kReasonDetail) [[likely]] {
        return reasons.length(reason);
      }
      while (quoted_details.size() < details.size()) {
        std::string q = ":";
        AppendJsonString(&q, details[quoted_details.size()]);
        quoted_details.Add(q);
      }
      return quoted_details.length(reason - kReasonDetail);
    };
    error = WireError(FilterCandidatesLocked(
        pod, spec, names, names_id, &details,
        [&](size_t i, std::string_view name, int node, Candidate c, int reason)
            __attribute__((always_inline)) {
              if (c != Candidate::kFits) {
                if (node >= 0) [[likely]] {
                  if (static_cast<size_t>(node) >= rejected_stamp.size()) {
                    rejected_stamp.resize(static_cast<size_t>(node) + 1);
                  }
                  if (rejected_stamp[node] == request_stamp) return;
                  rejected_stamp[node] = request_stamp;
                } else if (!rejected_unknown.insert(name).second) {
                  return;
                }
              }
              int q = node;
              if (node >= 0) [[likely]] {
                bytes += quoted.length(node) + 1;
              } else {
                q = -1 - static_cast<int>(unknown_quoted.size());
                AppendJsonString(&unknown_quoted.emplace_back(), name);
                bytes += unknown_quoted.back().size() + 1;
              }
              const Decided d{q, static_cast<uint32_t>(i), reason};
              switch (c) {
                case Candidate::kFits:
                  *fits_end++ = d;
                  if (nodes_json != nullptr && i < nodes_json->size()) {
                    bytes += (*nodes_json)[i].size() + 1;
                  }
                  break;
                case Candidate::kFailed:
                  *failed_end++ = d;
                  bytes += reason_length(reason);
                  break;
                case Candidate::kUnresolvable:
                  *unresolvable_end++ = d;
                  bytes += reason_length(reason);
                  break;
              }
            }));
  }
  return WriteFilterAnswer({std::span<const Decided>(fits_list.data(), fits_end),
                            std::span<const Decided>(failed_list.data(), failed_end),
                            std::span<const Decided>(unresolvable_list.data(), unresolvable_end),
                            *quoted_names, unknown_quoted, QuotedReasons(), kReasonDetail,
                            quoted_details, nodes_json, bytes, error});
}

template <typename Visit>
void Extender::ScoreCandidatesLocked(const Pod& pod, std::span<const std::string_view> names,
                                     uint64_t names_id, Visit&& visit) {
  Result<PodSpec> spec = PodToSpec(pod);
  if (!spec.ok()) return;
  EnsureModel();
  const std::span<const int> node_of = node_names_.Resolve(names, names_id);  // -1 if unknown
  if (GateLocked()) {
    for (size_t i = 0; i < names.size(); ++i) visit(i, names[i], node_of[i], 0);
    return;
  }
  SeeLocked(pod, *spec);
  const PodRequest request = cluster_->MakeRequest(*spec);
  const uint8_t mask = RequestMask(request, PodGpuFamilies(pod));
  // Nodes of one scheduler group get the same score (the scheduler scores groups, and
  // normalises over the scores it saw, which one node per group gives alike): the first
  // candidate of each group is scored for all of them.
  if (++group_fit_stamp_ == 0) {  // wrapped: forget every stamp
    std::fill(group_fit_.begin(), group_fit_.end(), GroupFit{});
    group_fit_stamp_ = 1;
  }
  const uint32_t stamp = group_fit_stamp_;
  constexpr int kNoScore = std::numeric_limits<int>::min();
  std::vector<int>& nodes = score_nodes_;         // one per group
  std::vector<int>& group_of = candidate_group_;  // by candidate; -1: no score
  nodes.clear();
  group_of.resize(node_of.size());
  for (size_t i = 0; i < node_of.size(); ++i) {
    const int node = node_of[i];
    int group = -1;
    if (node >= 0 && (node_flags_[node] & mask) == 0) {
      group = scheduler_->group_of(node);
      if (static_cast<size_t>(group) >= group_fit_.size()) group_fit_.resize(group + 1);
      GroupFit& g = group_fit_[group];
      if (g.stamp != stamp) {
        g.stamp = stamp;
        g.score = kNoScore;
        nodes.push_back(node);
      }
    }
    group_of[i] = group;
  }
  const std::vector<std::pair<int, int>> scored = scheduler_->ScoreNodes(request, nodes);
  for (const auto& [node, score] : scored) group_fit_[scheduler_->group_of(node)].score = score;
  int lo = 0;
  int hi = 0;
  for (size_t k = 0; k < scored.size(); ++k) {
    lo = k == 0 ? scored[k].second : std::min(lo, scored[k].second);
    hi = k == 0 ? scored[k].second : std::max(hi, scored[k].second);
  }
  // The engine's own choice among the candidates — the best score, then the lowest rank in
  // the tie order, as Scheduler::Decide and the replay choose — scores kPickScore; every other
  // candidate at most kOthersMaxScore. kube-scheduler adds the extender's score times its
  // weight times 10 to its own plugins' scores and breaks ties at random: with deploy/'s
  // weight 5 the gap of 5 is worth 250 points, more than its resource plugins can differ by
  // (NodeResourcesFit and BalancedAllocation, 100 each at weight 1), so the node the engine
  // chose is the node bound unless the pod's own preferences (affinity, spread) outweigh it.
  // (A node named twice is one candidate: both entries get its score.)
  int pick = -1;  // node index
  int pick_score = 0;
  for (size_t i = 0; i < node_of.size(); ++i) {
    if (group_of[i] < 0) continue;
    const int s = group_fit_[group_of[i]].score;
    if (s == kNoScore) continue;
    if (pick < 0 || PicksBefore(s, engine_->rank(node_of[i]), pick_score, engine_->rank(pick))) {
      pick = node_of[i];
      pick_score = s;
    }
  }
  // The others: integer floor of kOthersMaxScore * (s - lo) / (hi - lo); all equal →
  // kOthersMaxScore. By table for the usual ranges (scores 0..100): a division per candidate
  // costs more than the rest of its work.
  const auto scale = [&](int s) -> int64_t {
    return hi > lo ? int64_t{kOthersMaxScore} * (s - lo) / (hi - lo) : kOthersMaxScore;
  };
  constexpr int kTableRange = 1024;
  const bool by_table = int64_t{hi} - lo < kTableRange;
  std::array<int8_t, kTableRange> table;
  if (by_table) {
    for (int s = lo; s <= hi; ++s) table[s - lo] = static_cast<int8_t>(scale(s));
  }
  for (size_t i = 0; i < names.size(); ++i) {
    int64_t score = 0;
    if (pick >= 0 && node_of[i] == pick) {
      score = kPickScore;
    } else if (group_of[i] >= 0) {
      const int s = group_fit_[group_of[i]].score;
      if (s != kNoScore) score = by_table ? table[s - lo] : scale(s);
    }
    visit(i, names[i], node_of[i], score);
  }
}

HostPriorityList Extender::Prioritize(const ExtenderArgs& args) {
  HostPriorityList list;
  const std::vector<std::string_view> names = args.CandidateNameViews();
  list.reserve(names.size());
  MutexLock lock(mutex_);
  ScoreCandidatesLocked(args.pod, names, 0, [&](size_t, std::string_view name, int, int64_t score) {
    list.push_back(HostPriority{std::string(name), score});
  });
  return list;
}

std::string Extender::PrioritizeJson(const ExtenderArgs& args) {
  return PrioritizeJsonOf(args.pod, args.CandidateNameViews(), 0);
}

std::string Extender::PrioritizeJson(const ExtenderArgsRef& args) {
  return PrioritizeJsonOf(args.args.pod, args.names, args.names_id);
}

std::string Extender::PrioritizeJsonOf(const Pod& pod, std::span<const std::string_view> names,
                                       uint64_t names_id) {
  // Scored under the lock into this thread's list (kept between requests); written after it
  // is released (wire.h, WritePrioritizeAnswer), from the model's immutable host entries.
  thread_local std::vector<ScoredCandidate> scored;
  if (scored.size() < names.size()) scored.resize(names.size());
  ScoredCandidate* scored_end = scored.data();
  std::shared_ptr<const PaddedStrings> host_entries;
  {
    MutexLock lock(mutex_, std::chrono::microseconds(options_.spin_us));
    EnsureModel();  // before HostEntries: a rebuild would make its entries the old model's
    host_entries = node_names_.HostEntries();
    ScoreCandidatesLocked(
        pod, names, names_id,
        [&](size_t, std::string_view, int node, int64_t score) __attribute__((always_inline)) {
          *scored_end++ = ScoredCandidate{node, static_cast<int>(score)};
        });
  }
  return WritePrioritizeAnswer(std::span<const ScoredCandidate>(scored.data(), scored_end),
                               *host_entries, names);
}

void Extender::RecordRequest(std::string_view verb, double seconds) {
  metrics_->Request(verb, seconds);
}

std::vector<prometheus::MetricFamily> Extender::CollectMetrics() const {
  std::vector<prometheus::MetricFamily> out = metrics_->registry.Collect();
  MutexLock lock(mutex_);
  AppendModelGauges(StatusLocked(true), &out);
  return out;
}

prometheus::Registry* Extender::metrics_registry() { return &metrics_->registry; }

std::string Extender::MetricsText() const {
  return prometheus::TextSerializer().Serialize(CollectMetrics());
}

Extender::ModelView Extender::View() const {
  MutexLock lock(mutex_);
  return ViewLocked();
}

Extender::ModelView Extender::ViewLocked() const {
  ModelView v;
  v.nodes.reserve(static_cast<size_t>(cluster_->size()));
  for (int n = 0; n < cluster_->size(); ++n) {
    v.nodes.push_back({cluster_->spec(n).name, (node_flags_[n] & kCordoned) != 0, blocked_[n]});
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

StatusView Extender::StatusLocked(bool with_fragmentation) const {
  StatusView v;
  v.policy = options_.policy;
  v.api_mode = api_mode_;
  v.gate = GateLocked().value_or("");
  v.assumed_pods = pods_.assumed();
  v.gpu_capacity_milli = cluster_->total_gpu_milli();
  v.gpu_allocated_milli = cluster_->allocated_gpu_milli();
  v.model = ViewLocked();
  v.models = cluster_->models();
  const TargetWorkload* m =
      with_fragmentation && engine_ != nullptr ? engine_->workload() : nullptr;
  v.nodes.reserve(static_cast<size_t>(cluster_->size()));
  for (int n = 0; n < cluster_->size(); ++n) {
    const NodeSpec& s = cluster_->spec(n);
    const NodeState& st = cluster_->state(n);
    StatusView::Node& node = v.nodes.emplace_back();
    node.gpu_model = s.gpu_model;
    node.gpu_count = s.gpu_count;
    node.cpu_left_milli = st.cpu_left;
    node.memory_left_mib = st.memory_left;
    node.gpu_free_milli.assign(st.gpu_free.begin(), st.gpu_free.begin() + s.gpu_count);
    if (s.topology != nullptr) node.topology = FormatCompactTopology(*s.topology);
    node.model_id = cluster_->model_id(n);
    if (m != nullptr) {
      node.fragmentation_milli = m->NodeFragmentation(*cluster_, n);
      node.stranded_milli = m->NodeStranded(*cluster_, n);
    }
  }
  const std::vector<int> depth = queue_.CountByClass();
  const QosClasses& qc = queue_.classes();
  for (size_t c = 0; c < qc.classes.size(); ++c) v.classes.push_back({qc.classes[c], depth[c]});
  std::vector<std::pair<const std::string*, const PendingQueue::Entry*>> queued;
  for (const auto& [uid, e] : queue_.pods()) queued.emplace_back(&uid, &e);
  std::sort(queued.begin(), queued.end(), [](const auto& a, const auto& b) {
    return a.second->created_s != b.second->created_s ? a.second->created_s < b.second->created_s
                                                      : *a.first < *b.first;
  });
  const double now = Now();
  for (const auto& [uid, e] : queued) {
    const PodRecord* r = pods_.Find(*uid);
    v.pending.push_back({*uid, e->key, qc.classes[e->cls].name, std::max(0.0, now - e->created_s),
                         r != nullptr ? r->meta.nominated_node : std::string()});
  }
  v.headroom.mode = headroom_->options().mode;
  v.headroom.target_gpus = headroom_->target();
  const std::vector<int64_t>& by_model = IdleGpusByModelLocked();  // idle GPUs per model id
  v.headroom.idle_gpus = IdleGpusLocked();
  for (size_t k = 0; k < by_model.size(); ++k) {
    v.headroom.models.push_back(
        {v.models[k], headroom_->model_target(static_cast<int>(k)), by_model[k], true});
  }
  for (const auto& [name, gpus] : headroom_->options().model_gpus) {
    if (std::find(v.models.begin(), v.models.end(), name) == v.models.end()) {
      v.headroom.models.push_back({name, 0, 0, false});
    }
  }
  for (const QosClass& k : options_.classes.classes) {
    if (k.use_headroom) v.headroom.classes.push_back(k.name);
  }
  return v;
}

std::string Extender::StateJson() const {
  MutexLock lock(mutex_);
  return WriteStateJson(StatusLocked(false));
}

int64_t Extender::gpu_allocated_milli() const {
  MutexLock lock(mutex_);
  return cluster_->allocated_gpu_milli();
}

int64_t Extender::gpu_capacity_milli() const {
  MutexLock lock(mutex_);
  return cluster_->total_gpu_milli();
}

std::vector<int> Extender::pending_gpu_pods() const {
  MutexLock lock(mutex_);
  return queue_.CountByClass();
}

void Extender::WaitEndedLocked(const std::string& uid) {
  if (const std::optional<PendingQueue::Waited> w = queue_.Bound(uid, Now())) {
    metrics_->Waited(w->cls, w->wait_s);
  }
}

TopologyPtr Extender::node_topology(const std::string& name) const {
  MutexLock lock(mutex_);
  auto it = nodes_.find(name);
  return it == nodes_.end() ? TopologyPtr{} : it->second.spec.topology;
}

int Extender::bound_pods() const {
  MutexLock lock(mutex_);
  return static_cast<int>(assignments_.size());
}

}  // namespace tessera::k8s
