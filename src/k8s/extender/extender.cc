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

Extender::Extender(const ExtenderOptions& options, bool api_mode)
    : options_(options),
      api_mode_(api_mode),
      model_({options.policy, options.seed, options.workload, api_mode},
             // Called by the model under this extender's lock: the headroom never asks for more
             // than the cluster (or a model) has, and its model floors follow the new model ids.
             [this](const Cluster& cluster)
                 TESSERA_NO_THREAD_SAFETY_ANALYSIS { headroom_->SetCluster(cluster); }),
      filter_passes_(options.filter_pass_seconds),
      metrics_(std::make_unique<Metrics>(options.classes)),
      queue_(options.classes, options.scheduler_names),
      headroom_(std::make_unique<Headroom>(ProtectedHeadroom(options.headroom, options.classes),
                                           ClockOrSystem(options.clock))),
      preemptor_(options.classes) {}

HeadroomPod Extender::HeadroomOfLocked(const std::string& uid, int cls) const {
  if (cls < 0) return {};
  const QosClass& c = options_.classes.classes[static_cast<size_t>(cls)];
  if (!headroom_->Holds(c.priority, c.preemptible)) return {};  // the common case: no lookup
  const auto it = queue_.pods().find(uid);
  const std::optional<double> waited =
      it == queue_.pods().end() ? std::nullopt : std::optional(Now() - it->second.created_s);
  return ClassifyForHeadroom(*headroom_, c, waited);
}

HeadroomGate Extender::GateOfLocked(const HeadroomPod& pod) const {
  return HeadroomGate(*headroom_, model_.cluster(), pod, model_.idle_gpus(),
                      model_.idle_gpus_by_model());
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
  std::unique_ptr<Extender> ext(new Extender(options, false));
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
      ext->model_.AddWarning(path_of[uid] + ": bound to unknown node " +
                             QuoteForError(pod->node_name) + " (ignored)");
    }
  }
  MutexLock lock(ext->mutex_);
  ext->model_.Load();
  const ModelView view = ext->model_.View();
  for (const ModelView::Unaccounted& u : view.unaccounted) {
    ext->model_.AddWarning(path_of[u.uid] + " on node " + view.nodes[u.node].name + ": " + u.why);
  }
  return ext;
}

void Extender::SeeLocked(const Pod& pod, const PodSpec& spec) {
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

template <typename Visit>
Status Extender::FilterCandidatesLocked(const Pod& pod, const Result<PodSpec>& spec,
                                        std::span<const std::string_view> names, uint64_t names_id,
                                        std::vector<std::string>* details, Visit&& visit) {
  model_.Refresh();
  if (!spec.ok()) {
    metrics_->bad_pods->Increment();
    return spec.error();
  }
  const std::span<const int> resolved = model_.names().Resolve(names, names_id);
  if (GateLocked()) {
    for (size_t i = 0; i < names.size(); ++i) {
      visit(i, names[i], resolved[i], Candidate::kUnresolvable, kReasonNotSynced);
    }
    metrics_->rejections[kReasonNotSynced]->Increment(static_cast<double>(names.size()));
    return {};
  }
  SeeLocked(pod, *spec);
  const PodRequest request = model_.cluster().MakeRequest(*spec);
  bool shrank = false;
  headroom_->Update(&shrank);
  const std::string uid = PodUid(pod);
  const HeadroomPod headroom_pod = HeadroomOfLocked(uid, ClassOfPod(options_.classes, pod));
  const HeadroomGate gate = GateOfLocked(headroom_pod);
  verdicts_.Begin(request, spec->gpu_spec, gate, details);
  const uint8_t mask = RequestMask(request, PodGpuFamilies(pod));
  std::vector<uint64_t>* passed =
      filter_passes_.Begin(uid, Now(), model_.generation(), model_.names().QuotedNames());
  std::array<int64_t, kReasonDetail> rejected{};
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
    } else if (const uint8_t flags = model_.flags(node) & mask; flags != 0) [[unlikely]] {
      reason = FlagReason(flags);
    } else {
      const GroupVerdicts::Verdict& v = verdicts_.Of(model_, *headroom_, node);
      reason = v.reason;
      never = v.never && reason >= kReasonDetail;
      if (!v.keeps_headroom && name != pod.nominated_node_name) {
        reason = v.headroom_reason;
        never = false;
      }
      // Room that preemption made for a pod nominated here is not for pods of lower priority.
      if (reason == kReasonFit && model_.pods().any_nominated() &&
          !preemptor_.FitsBesideNominated(model_, node, std::string(name), uid, pod.priority,
                                          request)) [[unlikely]] {
        reason = kReasonNominated;
      }
    }
    if (reason == kReasonFit) {  // kReasonFit + FitReason::kFits
      if (passed != nullptr) (*passed)[node >> 6] |= uint64_t{1} << (node & 63);
      any_fits = true;
      visit(i, name, node, Candidate::kFits, kReasonUnknown);
      continue;
    }
    // A node's own reason (kReasonDetail + k) counts as its kind.
    const int counted = verdicts_.Counted(reason);
    ++rejected[counted];
    const bool resolvable = !never && ResolvableReason(counted);
    // A pod held back by the headroom preempts instead where its class has an SLO and the
    // headroom says so (HeadroomOptions::slo_classes_preempt), as in the replay.
    if (evict && resolvable && (counted != kReasonHeadroom || headroom_pod.preempts)) {
      preempt_nodes_.push_back(node);
    }
    visit(i, name, node, resolvable ? Candidate::kFailed : Candidate::kUnresolvable, reason);
  }
  for (int r = 0; r < kReasonDetail; ++r) {
    if (rejected[r] > 0) metrics_->rejections[r]->Increment(static_cast<double>(rejected[r]));
  }
  if (evict && !any_fits && !preempt_nodes_.empty()) {
    if (std::optional<Eviction> e =
            preemptor_.AtFilter(model_, pod, request, preempt_nodes_, Now())) {
      metrics_->preempt_nodes->Increment();
      metrics_->preempt_victims->Increment(static_cast<double>(e->victims.size()));
      evictor_->Enqueue(std::move(*e));
    }
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
    model_.Refresh();  // before QuotedNames: a rebuild would make its names the old model's
    quoted_names = model_.names().QuotedNames();
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
  model_.Refresh();
  const std::span<const int> node_of = model_.names().Resolve(names, names_id);  // -1: unknown
  if (GateLocked()) {
    for (size_t i = 0; i < names.size(); ++i) visit(i, names[i], node_of[i], 0);
    return;
  }
  SeeLocked(pod, *spec);
  const PodRequest request = model_.cluster().MakeRequest(*spec);
  scores_.Score(model_, request, RequestMask(request, PodGpuFamilies(pod)), node_of,
                [&](size_t i, int64_t score) { visit(i, names[i], node_of[i], score); });
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
    model_.Refresh();  // before HostEntries: a rebuild would make its entries the old model's
    host_entries = model_.names().HostEntries();
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

ModelView Extender::View() const {
  MutexLock lock(mutex_);
  return model_.View();
}

StatusView Extender::StatusLocked(bool with_fragmentation) const {
  StatusView v =
      MakeStatusView(model_, queue_, *headroom_, options_.classes, Now(), with_fragmentation);
  v.policy = options_.policy;
  v.api_mode = api_mode_;
  v.gate = GateLocked().value_or("");
  return v;
}

std::string Extender::StateJson() const {
  MutexLock lock(mutex_);
  return WriteStateJson(StatusLocked(false));
}

int64_t Extender::gpu_allocated_milli() const {
  MutexLock lock(mutex_);
  return model_.cluster().allocated_gpu_milli();
}

int64_t Extender::gpu_capacity_milli() const {
  MutexLock lock(mutex_);
  return model_.cluster().total_gpu_milli();
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
  const NodeRecord* record = model_.node(name);
  return record == nullptr ? TopologyPtr{} : record->spec.topology;
}

int Extender::bound_pods() const {
  MutexLock lock(mutex_);
  return static_cast<int>(model_.assignments().size());
}

}  // namespace tessera::k8s
