#include "k8s/extender.h"

#include "k8s/extender_internal.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <numeric>
#include <utility>

#include "k8s/json_util.h"
#include "k8s/objects.h"
#include "model/fit.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;

/// Node and pod list files may be far larger than one request body.
constexpr size_t kMaxListBytes = size_t{1} << 30;
/// How many pods Filter/Prioritize remember for Bind (the oldest are forgotten first).
constexpr size_t kMaxRememberedPods = 65536;

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

bool Resolvable(FitReason reason) {
  return reason == FitReason::kCpu || reason == FitReason::kMemory || reason == FitReason::kGpu ||
         reason == FitReason::kGpuMemory;
}

std::string PodKey(const ExtenderBindingArgs& args) {
  return args.pod_namespace.empty() ? args.pod_name : args.pod_namespace + "/" + args.pod_name;
}

std::string FormatDouble(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

/// A Prometheus label value, escaped (\\, \", \n).
std::string LabelValue(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
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
    case FitReason::kFits:
      break;
  }
  return name;
}

/// The UID a pod is remembered by; "namespace/name" when the object carries no UID.
std::string PodUid(const Pod& pod) {
  if (!pod.uid.empty()) return pod.uid;
  return pod.namespace_name.empty() ? pod.name : pod.namespace_name + "/" + pod.name;
}

Extender::~Extender() = default;

Result<std::unique_ptr<Extender>> Extender::FromJson(std::string_view nodes_json,
                                                     std::string_view pods_json,
                                                     const ExtenderOptions& options) {
  std::unique_ptr<Extender> ext(new Extender());
  ext->options_ = options;

  // Nodes.
  Result<Json> nodes_doc = ParseJson(nodes_json, kMaxListBytes, "nodes");
  if (!nodes_doc.ok()) return nodes_doc.error();
  Result<std::vector<const Json*>> node_items = ListItems(*nodes_doc, "nodes");
  if (!node_items.ok()) return node_items.error();
  std::vector<NodeSpec> specs;
  for (size_t i = 0; i < node_items->size(); ++i) {
    const std::string path = ItemPath(*nodes_doc, "nodes", i);
    Result<Node> node = DecodeNode(*(*node_items)[i], path);
    if (!node.ok()) return node.error();
    Result<NodeSpec> spec = NodeToSpec(*node);
    if (!spec.ok()) return Error{path + ": " + spec.error().message};
    if (spec->name.empty()) return Error{path + ": node without metadata.name"};
    if (!ext->node_index_.emplace(spec->name, static_cast<int>(specs.size())).second) {
      return Error{path + ": duplicate node " + QuoteForError(spec->name)};
    }
    ext->unschedulable_.push_back(node->unschedulable);
    specs.push_back(std::move(*spec));
  }
  if (specs.empty()) return Error{"nodes: no nodes"};
  ext->cluster_ = std::make_unique<Cluster>(std::move(specs));

  // Pods: decoded first, so that M can be built before the policy and the scheduler.
  struct Bound {
    std::string uid;
    std::string path;
    PodSpec spec;
    int node;
    std::string indices;  // annotation value, empty = generic choice
    bool has_indices;
  };
  std::vector<Bound> bound;
  std::vector<PodSpec> all_specs;
  if (!pods_json.empty()) {
    Result<Json> pods_doc = ParseJson(pods_json, kMaxListBytes, "pods");
    if (!pods_doc.ok()) return pods_doc.error();
    Result<std::vector<const Json*>> pod_items = ListItems(*pods_doc, "pods");
    if (!pod_items.ok()) return pod_items.error();
    for (size_t i = 0; i < pod_items->size(); ++i) {
      const std::string path = ItemPath(*pods_doc, "pods", i);
      Result<Pod> pod = DecodePod(*(*pod_items)[i], path);
      if (!pod.ok()) return pod.error();
      Result<PodSpec> spec = PodToSpec(*pod);
      if (!spec.ok()) return spec.error();
      all_specs.push_back(*spec);
      if (pod->node_name.empty() || pod->phase == "Succeeded" || pod->phase == "Failed") continue;
      auto it = ext->node_index_.find(pod->node_name);
      if (it == ext->node_index_.end()) {
        return Error{path + ": bound to unknown node " + QuoteForError(pod->node_name)};
      }
      auto ann = pod->annotations.find(std::string(kGpuIndicesAnnotation));
      const bool has = ann != pod->annotations.end();
      bound.push_back(
          Bound{PodUid(*pod), path, std::move(*spec), it->second, has ? ann->second : "", has});
    }
  }

  if (all_specs.empty()) {
    TargetClass whole_gpu;
    whole_gpu.gpu_milli = kMilliPerGpu;
    whole_gpu.gpu_count = 1;
    whole_gpu.probability = 1;
    whole_gpu.count = 1;
    ext->workload_ = std::make_unique<TargetWorkload>(TargetWorkload::FromClasses({whole_gpu}));
  } else {
    ext->workload_ = std::make_unique<TargetWorkload>(TargetWorkload::FromPods(all_specs));
  }
  ext->workload_->Resolve(*ext->cluster_);
  PolicyContext context;
  context.workload = ext->workload_.get();
  ext->policy_ = MakePolicy(options.policy, context);
  if (ext->policy_ == nullptr) {
    std::string known;
    for (const std::string& n : PolicyNames()) known += (known.empty() ? "" : ", ") + n;
    return Error{"unknown policy " + QuoteForError(options.policy) + " (known: " + known + ")"};
  }
  std::vector<int> order(ext->cluster_->size());
  std::iota(order.begin(), order.end(), 0);
  ext->scheduler_ =
      std::make_unique<Scheduler>(ext->cluster_.get(), ext->policy_.get(), order, options.seed);

  for (Bound& b : bound) {
    const PodRequest request = ext->cluster_->MakeRequest(b.spec);
    const FitReason fit = ext->cluster_->Check(b.node, request);
    const std::string where = b.path + " (" + b.spec.name + ")";
    if (fit != FitReason::kFits) {
      return Error{where + ": does not fit node " + ext->cluster_->spec(b.node).name + ": " +
                   FitExplanation(fit)};
    }
    GpuSet gpus = 0;
    if (!request.IsCpuOnly()) {
      if (b.has_indices) {
        Result<GpuSet> set = ParseGpuIndices(b.indices, ext->cluster_->spec(b.node).gpu_count);
        if (!set.ok()) return Error{where + ": " + set.error().message};
        gpus = *set;
        int count = 0;
        for (int i = 0; i < kMaxGpusPerNode; ++i) {
          if (!(gpus & (GpuSet{1} << i))) continue;
          ++count;
          if (!GpuHasRoom(ext->cluster_->state(b.node), i, request)) {
            return Error{where + ": GPU " + std::to_string(i) + " of node " +
                         ext->cluster_->spec(b.node).name + " has no room left for it"};
          }
        }
        if (count != request.gpu_count) {
          return Error{where + ": annotation " + std::string(kGpuIndicesAnnotation) + " names " +
                       std::to_string(count) + " GPUs, the pod requests " +
                       std::to_string(request.gpu_count)};
        }
      } else {
        gpus = DefaultGpuChoice(ext->cluster_->spec(b.node).gpu_count, ext->cluster_->state(b.node),
                                request);
      }
    }
    if (ext->assignments_.count(b.uid)) return Error{where + ": duplicate pod UID " + b.uid};
    ext->scheduler_->Bind(b.node, request, gpus);
    ext->assignments_.emplace(b.uid, Assignment{b.spec.name, b.node, request, gpus});
  }
  return ext;
}

void Extender::Remember(const std::string& uid, const PodSpec& spec) {
  auto [it, inserted] = seen_.insert_or_assign(uid, spec);
  if (!inserted) return;
  seen_order_.push_back(uid);
  while (seen_order_.size() > kMaxRememberedPods) {
    seen_.erase(seen_order_.front());
    container_gpus_.erase(seen_order_.front());
    seen_order_.pop_front();
  }
}

GpuSet Extender::ChooseGpus(int node, const PodRequest& request) const {
  if (request.IsCpuOnly()) return 0;
  const NodeSpec& spec = cluster_->spec(node);
  const NodeState& state = cluster_->state(node);
  GpuSet gpus = 0;
  if (policy_->mode() != ScoreMode::kUniformRandom) {
    gpus = policy_->Score(NodeView{spec, cluster_->model_id(node), state}, request).gpus;
  }
  if (gpus == 0) gpus = DefaultGpuChoice(spec.gpu_count, state, request);
  return gpus;
}

ExtenderFilterResult Extender::Filter(const ExtenderArgs& args) {
  ExtenderFilterResult result;
  Result<PodSpec> spec = PodToSpec(args.pod);
  std::lock_guard<std::mutex> lock(mutex_);
  EnsureModel();
  ExpireAssumedLocked();
  if (!spec.ok()) {
    result.error = spec.error().message;
    ++rejections_["bad-pod"];
    return result;
  }
  Remember(PodUid(args.pod), *spec);
  RememberContainers(PodUid(args.pod), args.pod);
  const PodRequest request = cluster_->MakeRequest(*spec);
  const std::vector<std::string> names = args.CandidateNames();
  // Candidates come from Nodes only when NodeNames is absent; then answer in Nodes as well.
  if (args.nodes.has_value() && !args.node_names.has_value()) result.nodes_json.emplace();
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    auto it = node_index_.find(name);
    if (it == node_index_.end()) {
      result.failed_and_unresolvable_nodes[name] = "unknown node";
      ++rejections_["unknown-node"];
      continue;
    }
    if (unschedulable_[it->second]) {
      result.failed_and_unresolvable_nodes[name] = "unschedulable: node is cordoned";
      ++rejections_["unschedulable"];
      continue;
    }
    const FitReason fit = cluster_->Check(it->second, request);
    if (fit == FitReason::kFits) {
      result.node_names.push_back(name);
      if (result.nodes_json && i < args.nodes_json.size()) {
        result.nodes_json->push_back(args.nodes_json[i]);
      }
      continue;
    }
    ++rejections_[std::string(FitReasonName(fit))];
    (Resolvable(fit) ? result.failed_nodes : result.failed_and_unresolvable_nodes)[name] =
        FitExplanation(fit);
  }
  return result;
}

HostPriorityList Extender::Prioritize(const ExtenderArgs& args) {
  HostPriorityList list;
  Result<PodSpec> spec = PodToSpec(args.pod);
  if (!spec.ok()) return list;
  std::lock_guard<std::mutex> lock(mutex_);
  EnsureModel();
  ExpireAssumedLocked();
  Remember(PodUid(args.pod), *spec);
  RememberContainers(PodUid(args.pod), args.pod);
  const PodRequest request = cluster_->MakeRequest(*spec);
  const std::vector<std::string> names = args.CandidateNames();
  std::vector<int> nodes;
  for (const std::string& name : names) {
    auto it = node_index_.find(name);
    if (it != node_index_.end() && !unschedulable_[it->second]) nodes.push_back(it->second);
  }
  std::unordered_map<int, int> score_of;
  int lo = 0;
  int hi = 0;
  bool first = true;
  for (const auto& [node, score] : scheduler_->ScoreNodes(request, nodes)) {
    score_of[node] = score;
    lo = first ? score : std::min(lo, score);
    hi = first ? score : std::max(hi, score);
    first = false;
  }
  for (const std::string& name : names) {
    HostPriority hp{name, 0};
    auto it = node_index_.find(name);
    if (it != node_index_.end()) {
      auto s = score_of.find(it->second);
      if (s != score_of.end()) {
        // Integer floor of 10 * (s - lo) / (hi - lo); all equal → 10.
        hp.score = hi > lo ? int64_t{10} * (s->second - lo) / (hi - lo) : 10;
      }
    }
    list.push_back(std::move(hp));
  }
  return list;
}

ExtenderBindingResult Extender::Bind(const ExtenderBindingArgs& args) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (api_mode_) return BindThroughApi(args, lock);
  auto done = assignments_.find(args.pod_uid);
  if (done != assignments_.end()) {
    const std::string& bound_to = cluster_->spec(done->second.node).name;
    if (bound_to == args.node) return {};
    return {"pod " + PodKey(args) + " (UID " + args.pod_uid + ") is already bound to node " +
            bound_to};
  }
  auto seen = seen_.find(args.pod_uid);
  if (seen == seen_.end()) {
    return {"unknown pod " + PodKey(args) + " (UID " + args.pod_uid +
            "): no filter or prioritize request seen for it"};
  }
  auto node_it = node_index_.find(args.node);
  if (node_it == node_index_.end()) return {"unknown node " + QuoteForError(args.node)};
  const int node = node_it->second;
  const PodRequest request = cluster_->MakeRequest(seen->second);
  const FitReason fit = cluster_->Check(node, request);
  if (fit != FitReason::kFits) return {"does not fit: " + FitExplanation(fit)};
  const GpuSet gpus = ChooseGpus(node, request);
  scheduler_->Bind(node, request, gpus);
  assignments_.emplace(args.pod_uid, Assignment{seen->second.name, node, request, gpus});
  ++pods_bound_total_;
  return {};
}

bool Extender::Unbind(const std::string& uid) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = assignments_.find(uid);
  if (it == assignments_.end()) return false;
  scheduler_->Unbind(it->second.node, it->second.request, it->second.gpus);
  assignments_.erase(it);
  assumed_.erase(uid);
  return true;
}

void Extender::RecordRequest(std::string_view verb, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = verbs_.find(verb);
  if (it == verbs_.end()) it = verbs_.emplace(std::string(verb), VerbStats{}).first;
  VerbStats& v = it->second;
  ++v.count;
  v.sum_seconds += seconds;
  for (size_t b = 0; b < kRequestDurationBuckets.size(); ++b) {
    if (seconds <= kRequestDurationBuckets[b]) {
      ++v.buckets[b];
      break;
    }
  }
}

std::string Extender::StateJson() const {
  std::lock_guard<std::mutex> lock(mutex_);
  nlohmann::ordered_json j;
  j["policy"] = options_.policy;
  j["gpu_capacity_milli"] = cluster_->total_gpu_milli();
  j["gpu_allocated_milli"] = cluster_->allocated_gpu_milli();
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  for (int n = 0; n < cluster_->size(); ++n) {
    const NodeSpec& s = cluster_->spec(n);
    const NodeState& st = cluster_->state(n);
    nlohmann::ordered_json node;
    node["name"] = s.name;
    node["gpu_model"] = s.gpu_model;
    node["gpu_count"] = s.gpu_count;
    node["unschedulable"] = static_cast<bool>(unschedulable_[n]);
    node["cpu_left_milli"] = st.cpu_left;
    node["memory_left_mib"] = st.memory_left;
    nlohmann::ordered_json free = nlohmann::ordered_json::array();
    for (int g = 0; g < s.gpu_count; ++g) free.push_back(st.gpu_free[g]);
    node["gpu_free_milli"] = std::move(free);
    nodes.push_back(std::move(node));
  }
  j["nodes"] = std::move(nodes);
  nlohmann::ordered_json assignments = nlohmann::ordered_json::array();
  for (const auto& [uid, a] : assignments_) {
    nlohmann::ordered_json e;
    e["uid"] = uid;
    e["pod"] = a.pod;
    e["node"] = cluster_->spec(a.node).name;
    nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
    for (int g = 0; g < kMaxGpusPerNode; ++g) {
      if (a.gpus & (GpuSet{1} << g)) gpus.push_back(g);
    }
    e["gpus"] = std::move(gpus);
    e["gpu_milli"] = a.request.IsCpuOnly() ? 0 : a.request.gpu_milli;
    assignments.push_back(std::move(e));
  }
  j["assignments"] = std::move(assignments);
  return DumpJson(j);
}

std::string Extender::MetricsText() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  out += "# HELP tessera_requests_total Extender HTTP requests, by verb.\n";
  out += "# TYPE tessera_requests_total counter\n";
  for (const auto& [verb, v] : verbs_) {
    out += "tessera_requests_total{verb=\"" + LabelValue(verb) + "\"} " + std::to_string(v.count) +
           "\n";
  }
  out += "# HELP tessera_request_duration_seconds Time to answer an extender request.\n";
  out += "# TYPE tessera_request_duration_seconds histogram\n";
  for (const auto& [verb, v] : verbs_) {
    const std::string label = "verb=\"" + LabelValue(verb) + "\"";
    int64_t cumulative = 0;
    for (size_t b = 0; b < kRequestDurationBuckets.size(); ++b) {
      cumulative += v.buckets[b];
      out += "tessera_request_duration_seconds_bucket{" + label + ",le=\"" +
             FormatDouble(kRequestDurationBuckets[b]) + "\"} " + std::to_string(cumulative) + "\n";
    }
    out += "tessera_request_duration_seconds_bucket{" + label + ",le=\"+Inf\"} " +
           std::to_string(v.count) + "\n";
    out +=
        "tessera_request_duration_seconds_sum{" + label + "} " + FormatDouble(v.sum_seconds) + "\n";
    out +=
        "tessera_request_duration_seconds_count{" + label + "} " + std::to_string(v.count) + "\n";
  }
  out += "# HELP tessera_pods_bound_total Pods bound by this extender.\n";
  out += "# TYPE tessera_pods_bound_total counter\n";
  out += "tessera_pods_bound_total " + std::to_string(pods_bound_total_) + "\n";
  out += "# HELP tessera_filter_rejections_total Candidate nodes rejected by filter, by reason.\n";
  out += "# TYPE tessera_filter_rejections_total counter\n";
  for (const auto& [reason, count] : rejections_) {
    out += "tessera_filter_rejections_total{reason=\"" + LabelValue(reason) + "\"} " +
           std::to_string(count) + "\n";
  }
  out += "# HELP tessera_gpu_allocated_milli GPU allocated in the cluster model, milli-GPU.\n";
  out += "# TYPE tessera_gpu_allocated_milli gauge\n";
  out += "tessera_gpu_allocated_milli " + std::to_string(cluster_->allocated_gpu_milli()) + "\n";
  out += "# HELP tessera_gpu_capacity_milli GPU capacity of the cluster model, milli-GPU.\n";
  out += "# TYPE tessera_gpu_capacity_milli gauge\n";
  out += "tessera_gpu_capacity_milli " + std::to_string(cluster_->total_gpu_milli()) + "\n";
  out += "# HELP tessera_node_gpu_free_milli Free GPU on each node, milli-GPU.\n";
  out += "# TYPE tessera_node_gpu_free_milli gauge\n";
  for (int n = 0; n < cluster_->size(); ++n) {
    int64_t free = 0;
    for (int g = 0; g < cluster_->spec(n).gpu_count; ++g) free += cluster_->state(n).gpu_free[g];
    out += "tessera_node_gpu_free_milli{node=\"" + LabelValue(cluster_->spec(n).name) + "\"} " +
           std::to_string(free) + "\n";
  }
  return out;
}

int64_t Extender::gpu_allocated_milli() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cluster_->allocated_gpu_milli();
}

int64_t Extender::gpu_capacity_milli() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cluster_->total_gpu_milli();
}

int Extender::bound_pods() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(assignments_.size());
}

}  // namespace tessera::k8s
