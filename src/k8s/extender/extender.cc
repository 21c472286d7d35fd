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

Extender::Extender(const ExtenderOptions& options, const LiveOptions& live)
    : options_(options),
      metrics_(std::make_unique<ExtenderMetrics>(options.classes)),
      state_(options_, live.api != nullptr, metrics_.get()),
      binder_(live) {}

Extender::~Extender() = default;

Result<std::unique_ptr<Extender>> Extender::FromJson(std::string_view nodes_json,
                                                     std::string_view pods_json,
                                                     const ExtenderOptions& options) {
  Result<Json> nodes_doc = ParseJson(nodes_json, kMaxListBytes, "nodes");
  if (!nodes_doc.ok()) return nodes_doc.error();
  Result<std::vector<JsonObject>> nodes = ListObjects(*nodes_doc, "nodes");
  if (!nodes.ok()) return nodes.error();
  Result<Json> pods_doc = Json();
  Result<std::vector<JsonObject>> pods = std::vector<JsonObject>();
  if (!pods_json.empty()) {
    pods_doc = ParseJson(pods_json, kMaxListBytes, "pods");
    if (!pods_doc.ok()) return pods_doc.error();
    pods = ListObjects(*pods_doc, "pods");
    if (!pods.ok()) return pods.error();
  }
  return FromObjects(*nodes, *pods, options);
}

Result<std::unique_ptr<Extender>> Extender::FromObjects(std::span<const JsonObject> nodes,
                                                        std::span<const JsonObject> pods,
                                                        const ExtenderOptions& options) {
  std::unique_ptr<Extender> ext(new Extender(options, LiveOptions{}));
  if (!IsPolicyName(options.policy)) {
    return Error{"unknown policy " + QuoteForError(options.policy) + " (known: " + KnownPolicies() +
                 ")"};
  }
  Result<FedObjects> fed = FeedObjects(*ext, nodes, pods);
  if (!fed.ok()) return fed.error();
  MutexLock lock(ext->mutex_);
  ClusterModel& model = ext->state_.model();
  for (std::string& warning : fed->warnings) model.AddWarning(std::move(warning));
  model.Load();
  const ModelView view = model.View();
  for (const ModelView::Unaccounted& u : view.unaccounted) {
    model.AddWarning(fed->path_of[u.uid] + " on node " + view.nodes[u.node].name + ": " + u.why);
  }
  return ext;
}

template <typename Visit>
Status Extender::FilterCandidatesLocked(const Pod& pod, const Result<PodSpec>& spec,
                                        std::span<const std::string_view> names, uint64_t names_id,
                                        std::vector<std::string>* details, Visit&& visit) {
  state_.model().Refresh();
  if (!spec.ok()) {
    metrics_->bad_pods->Increment();
    return spec.error();
  }
  const std::span<const int> resolved = state_.model().names().Resolve(names, names_id);
  if (state_.Gate()) {
    for (size_t i = 0; i < names.size(); ++i) {
      visit(i, names[i], resolved[i], FilterSection::kUnresolvable, kReasonNotSynced);
    }
    metrics_->rejections[kReasonNotSynced]->Increment(static_cast<double>(names.size()));
    return {};
  }
  state_.See(pod, *spec);
  const PodRequest request = state_.model().cluster().MakeRequest(*spec);
  bool shrank = false;
  state_.headroom().Update(&shrank);
  const std::string uid = PodUid(pod);
  const HeadroomPod headroom_pod = state_.HeadroomOf(uid, ClassOfPod(options_.classes, pod));
  const HeadroomGate gate = state_.GateOf(headroom_pod);
  verdicts_.Begin(state_.model(), state_.headroom(), request, spec->gpu_spec, gate, details);
  const uint8_t mask = RequestMask(request, PodGpuFamilies(pod));
  std::vector<uint64_t>* passed = state_.filter_passes().Begin(
      uid, state_.Now(), state_.model().generation(), state_.model().names().QuotedNames());
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
    } else if (const uint8_t flags = state_.model().flags(node) & mask; flags != 0) [[unlikely]] {
      reason = FlagReason(flags);
    } else {
      const GroupVerdicts::Verdict& v = verdicts_.Of(node);
      reason = v.reason;
      never = v.never && reason >= kReasonDetail;
      if (!v.keeps_headroom && name != pod.nominated_node_name) {
        reason = v.headroom_reason;
        never = false;
      }
      // Room that preemption made for a pod nominated here is not for pods of lower priority.
      if (reason == kReasonFit && state_.model().pods().any_nominated() &&
          !state_.preemptor().FitsBesideNominated(state_.model(), node, std::string(name), uid,
                                                  pod.priority, request)) [[unlikely]] {
        reason = kReasonNominated;
      }
    }
    if (reason == kReasonFit) {  // kReasonFit + FitReason::kFits
      if (passed != nullptr) (*passed)[node >> 6] |= uint64_t{1} << (node & 63);
      any_fits = true;
      visit(i, name, node, FilterSection::kFits, kReasonUnknown);
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
    visit(i, name, node, resolvable ? FilterSection::kFailed : FilterSection::kUnresolvable,
          reason);
  }
  for (int r = 0; r < kReasonDetail; ++r) {
    if (rejected[r] > 0) metrics_->rejections[r]->Increment(static_cast<double>(rejected[r]));
  }
  if (evict && !any_fits && !preempt_nodes_.empty()) {
    if (std::optional<Eviction> e = state_.preemptor().AtFilter(state_.model(), pod, request,
                                                                preempt_nodes_, state_.Now())) {
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
  result.error = WireError(FilterCandidatesLocked(
      args.pod, spec, names, 0, &details,
      [&](size_t i, std::string_view name, int, FilterSection c, int reason) {
        switch (c) {
          case FilterSection::kFits:
            result.node_names.emplace_back(name);
            if (result.nodes_json && i < args.nodes_json.size()) {
              result.nodes_json->push_back(args.nodes_json[i]);
            }
            break;
          case FilterSection::kFailed:
            result.failed_nodes.emplace(name, text(reason));
            break;
          case FilterSection::kUnresolvable:
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
  // Each candidate is decided first (node, section, reason) into the builder's lists, and the
  // answer's size summed; then the answer is written (wire.h) into one buffer of that size.
  // Only deciding needs the lock: the answer is written after it is released, from this
  // thread's section lists and the model's immutable quoted names, so that a second request
  // waits for the decisions only.
  const Result<PodSpec> spec = PodToSpec(pod);
  FilterAnswerBuilder answer(names.size(), nodes_json);
  // Nodes' own reasons (topology shortfalls), one per scheduler group that has one.
  std::vector<std::string> details;
  std::string error;
  {
    MutexLock lock(mutex_, std::chrono::microseconds(options_.spin_us));
    state_.model().Refresh();  // before QuotedNames: a rebuild would make its names the old model's
    answer.SetNames(state_.model().names().QuotedNames());
    error = WireError(FilterCandidatesLocked(
        pod, spec, names, names_id, &details,
        [&](size_t i, std::string_view name, int node, FilterSection section, int reason)
            __attribute__((always_inline)) {
              answer.Add(i, name, node, section, reason, details);
            }));
  }
  return answer.Write(error);
}

template <typename Visit>
void Extender::ScoreCandidatesLocked(const Pod& pod, std::span<const std::string_view> names,
                                     uint64_t names_id, Visit&& visit) {
  Result<PodSpec> spec = PodToSpec(pod);
  if (!spec.ok()) return;
  state_.model().Refresh();
  const std::span<const int> node_of =
      state_.model().names().Resolve(names, names_id);  // -1: unknown
  if (state_.Gate()) {
    for (size_t i = 0; i < names.size(); ++i) visit(i, names[i], node_of[i], 0);
    return;
  }
  state_.See(pod, *spec);
  const PodRequest request = state_.model().cluster().MakeRequest(*spec);
  scores_.Score(state_.model(), request, RequestMask(request, PodGpuFamilies(pod)), node_of,
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
    state_.model()
        .Refresh();  // before HostEntries: a rebuild would make its entries the old model's
    host_entries = state_.model().names().HostEntries();
    ScoreCandidatesLocked(
        pod, names, names_id,
        [&](size_t, std::string_view, int node, int64_t score) __attribute__((always_inline)) {
          *scored_end++ = ScoredCandidate{node, static_cast<int>(score)};
        });
  }
  return WritePrioritizeAnswer(std::span<const ScoredCandidate>(scored.data(), scored_end),
                               *host_entries, names);
}

ExtenderBindingResult Extender::Bind(const ExtenderBindingArgs& args) {
  MutexLock lock(mutex_);
  return binder_.Bind(args, mutex_, state_, *metrics_);
}

bool Extender::Unbind(const std::string& uid) {
  MutexLock lock(mutex_);
  return state_.model().Remove(uid);
}

void Extender::RecordRequest(std::string_view verb, double seconds) {
  metrics_->Request(verb, seconds);
}

std::vector<prometheus::MetricFamily> Extender::CollectMetrics() const {
  std::vector<prometheus::MetricFamily> out = metrics_->registry.Collect();
  MutexLock lock(mutex_);
  AppendModelGauges(state_.Status(true), &out);
  return out;
}

prometheus::Registry* Extender::metrics_registry() { return &metrics_->registry; }

std::string Extender::MetricsText() const {
  return prometheus::TextSerializer().Serialize(CollectMetrics());
}

ModelView Extender::View() const {
  MutexLock lock(mutex_);
  return state_.model().View();
}

std::string Extender::StateJson() const {
  MutexLock lock(mutex_);
  return WriteStateJson(state_.Status(false));
}

int64_t Extender::gpu_allocated_milli() const {
  MutexLock lock(mutex_);
  return state_.model().cluster().allocated_gpu_milli();
}

int64_t Extender::gpu_capacity_milli() const {
  MutexLock lock(mutex_);
  return state_.model().cluster().total_gpu_milli();
}

std::vector<int> Extender::pending_gpu_pods() const {
  MutexLock lock(mutex_);
  return state_.queue().CountByClass();
}

TopologyPtr Extender::node_topology(const std::string& name) const {
  MutexLock lock(mutex_);
  const NodeRecord* record = state_.model().node(name);
  return record == nullptr ? TopologyPtr{} : record->spec.topology;
}

int Extender::bound_pods() const {
  MutexLock lock(mutex_);
  return static_cast<int>(state_.model().assignments().size());
}

}  // namespace tessera::k8s
