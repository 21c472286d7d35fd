// The Extender's API mode: a model kept current from API objects (fed by the ClusterCache), and
// Bind through the API (assume, annotate, bind, confirm from the watch). See extender.h.

#include <algorithm>
#include <numeric>
#include <utility>

#include "k8s/api/json_util.h"
#include "k8s/extender/extender.h"
#include "k8s/extender/extender_internal.h"

namespace tessera::k8s {
namespace {

bool SameCapacity(const NodeSpec& a, const NodeSpec& b) {
  return a.name == b.name && a.cpu_milli == b.cpu_milli && a.memory_mib == b.memory_mib &&
         a.gpu_count == b.gpu_count && a.gpu_model == b.gpu_model &&
         a.gpu_memory_mib == b.gpu_memory_mib;
}

std::string PodName(const std::string& ns, const std::string& name) {
  return ns.empty() ? name : ns + "/" + name;
}

/// HAMi's devices of a node by GPU index (the healthy devices in annotation order, as
/// NodeToSpec numbers them); empty when the node has no register annotation or its healthy
/// devices do not match the node's GPU count.
std::vector<HamiDevice> HamiGpus(const Node& node, int gpu_count) {
  auto it = node.annotations.find(std::string(kHamiRegisterAnnotation));
  if (it == node.annotations.end()) return {};
  Result<std::vector<HamiDevice>> devices = ParseHamiNodeRegister(it->second);
  if (!devices.ok()) return {};
  std::vector<HamiDevice> healthy;
  for (const HamiDevice& d : *devices) {
    if (d.healthy) healthy.push_back(d);
  }
  if (static_cast<int>(healthy.size()) != gpu_count) return {};
  return healthy;
}

/// GPUs a container asks for, by the family rule of PodToSpec: tessera.io/gpu, else 1 when it
/// names another tessera.io/gpu-* resource; else the same with HAMi's nvidia.com names.
int ContainerGpus(const Container& c) {
  const auto count = [&](std::string_view name, std::initializer_list<std::string_view> per_gpu) {
    auto it = c.requests.find(std::string(name));
    if (it != c.requests.end()) {
      Result<int64_t> n = ToInt(it->second);
      return n.ok() ? static_cast<int>(std::clamp<int64_t>(*n, 0, kMaxGpusPerNode)) : 0;
    }
    for (std::string_view p : per_gpu) {
      if (c.requests.count(std::string(p))) return 1;
    }
    return -1;
  };
  int n = count(kTesseraGpu, {kTesseraGpuMilli, kTesseraGpuMemory});
  if (n < 0) n = count(kNvidiaGpu, {kHamiGpuMem, kHamiGpuCores, kHamiGpuMemPercent});
  return std::max(n, 0);
}

/// HAMi's hami.io/vgpu-devices-to-allocate: per container (init containers first, then app
/// containers, as HAMi's device plugin indexes them) "UUID,NVIDIA,memMiB,cores:" per device,
/// then ";". App containers and sidecars take the pod's GPUs in turn; a regular init
/// container runs alone and takes them from the first. Without a known layout, one entry.
std::string HamiDevicesValue(const std::vector<std::pair<int, bool>>* layout, GpuSet gpus,
                             const std::vector<HamiDevice>& devices, const PodRequest& request) {
  std::vector<int> indices;
  for (int g = 0; g < kMaxGpusPerNode; ++g) {
    if (gpus & (GpuSet{1} << g)) indices.push_back(g);
  }
  const auto device = [&](int g) {
    const HamiDevice& d = devices[g];
    const int64_t mem = request.gpu_memory_mib > 0 ? request.gpu_memory_mib : d.memory_mib;
    return d.uuid + ",NVIDIA," + std::to_string(mem) + "," +
           std::to_string(request.gpu_milli / 10) + ":";
  };
  std::string value;
  if (layout == nullptr) {
    for (int g : indices) value += device(g);
    return value + ";";
  }
  size_t next = 0;
  for (const auto& [count, alone] : *layout) {
    size_t from = alone ? 0 : next;
    for (int k = 0; k < count && from < indices.size(); ++k) value += device(indices[from++]);
    if (!alone) next = from;
    value += ";";
  }
  return value;
}

}  // namespace

void Extender::RememberContainers(const std::string& uid, const Pod& pod) {
  if (!api_mode_) return;
  std::vector<std::pair<int, bool>> layout;
  for (const Container& c : pod.containers) {
    if (c.kind != Container::Kind::kApp) {
      layout.emplace_back(ContainerGpus(c), c.kind == Container::Kind::kInit);
    }
  }
  for (const Container& c : pod.containers) {
    if (c.kind == Container::Kind::kApp) layout.emplace_back(ContainerGpus(c), false);
  }
  container_gpus_.insert_or_assign(uid, std::move(layout));
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

Result<std::unique_ptr<Extender>> Extender::Create(const ExtenderOptions& options,
                                                   const LiveOptions& live) {
  if (live.api == nullptr) return Error{"API mode needs a Kubernetes API client"};
  PolicyContext probe_context;
  TargetWorkload probe = TargetWorkload::FromClasses({});
  probe_context.workload = &probe;
  if (MakePolicy(options.policy, probe_context) == nullptr) {
    std::string known;
    for (const std::string& n : PolicyNames()) known += (known.empty() ? "" : ", ") + n;
    return Error{"unknown policy " + QuoteForError(options.policy) + " (known: " + known + ")"};
  }
  std::unique_ptr<Extender> ext(new Extender());
  ext->options_ = options;
  ext->live_ = live;
  ext->api_mode_ = true;
  std::lock_guard<std::mutex> lock(ext->mutex_);
  ext->Rebuild();
  return ext;
}

double Extender::Now() const {
  static const SystemClock system_clock;
  return (live_.clock != nullptr ? live_.clock : &system_clock)->NowSeconds();
}

void Extender::EnsureModel() {
  if (api_mode_ && dirty_) Rebuild();
}

void Extender::Rebuild() {
  dirty_ = false;
  // Assumed allocations survive a rebuild on their node, with the same GPUs, if still room.
  struct Carried {
    std::string uid;
    std::string node;
    GpuSet gpus;
    double expires;
  };
  std::vector<Carried> carried;
  for (const std::string& uid : assumed_) {
    auto it = assignments_.find(uid);
    if (it == assignments_.end()) continue;
    carried.push_back(
        {uid, cluster_->spec(it->second.node).name, it->second.gpus, it->second.expires});
  }
  assignments_.clear();
  assumed_.clear();

  std::vector<NodeSpec> specs;
  std::vector<std::string> models;
  node_index_.clear();
  quoted_names_.reset();
  host_entries_.reset();
  for (ResolvedList& r : resolved_) r.names_id = 0;  // node indices change
  unschedulable_.clear();
  for (const auto& [name, record] : nodes_) {
    if (record.spec.gpu_count > 0 &&
        std::find(models.begin(), models.end(), record.spec.gpu_model) == models.end()) {
      if (models.size() >= static_cast<size_t>(kMaxGpuModels)) continue;  // engine's limit
      models.push_back(record.spec.gpu_model);
    }
    node_index_.emplace(name, static_cast<int>(specs.size()));
    unschedulable_.push_back(record.unschedulable);
    specs.push_back(record.spec);
  }
  scheduler_.reset();  // it points into the policy and the cluster
  policy_.reset();
  cluster_ = std::make_unique<Cluster>(std::move(specs));
  std::vector<PodSpec> bound;
  for (const auto& [uid, record] : pods_) bound.push_back(record.spec);
  if (bound.empty()) {
    TargetClass whole_gpu;
    whole_gpu.gpu_milli = kMilliPerGpu;
    whole_gpu.gpu_count = 1;
    whole_gpu.probability = 1;
    whole_gpu.count = 1;
    workload_ = std::make_unique<TargetWorkload>(TargetWorkload::FromClasses({whole_gpu}));
  } else {
    workload_ = std::make_unique<TargetWorkload>(TargetWorkload::FromPods(bound));
  }
  workload_->Resolve(*cluster_);
  PolicyContext context;
  context.workload = workload_.get();
  policy_ = MakePolicy(options_.policy, context);  // checked by Create
  std::vector<int> order(cluster_->size());
  std::iota(order.begin(), order.end(), 0);
  scheduler_ = std::make_unique<Scheduler>(cluster_.get(), policy_.get(), order, options_.seed);
  // The pods seen so far, again (the ones still remembered), in the order they came.
  for (const std::string& uid : seen_order_) {
    auto seen = seen_.find(uid);
    if (seen != seen_.end()) scheduler_->Observe(cluster_->MakeRequest(seen->second));
  }

  for (const auto& [uid, record] : pods_) {
    (void)AllocateBound(uid, record);  // its error was reported when the pod came
  }
  for (const Carried& c : carried) {
    if (assignments_.count(c.uid)) continue;
    auto node = node_index_.find(c.node);
    auto seen = seen_.find(c.uid);
    if (node == node_index_.end() || seen == seen_.end()) continue;
    const PodRequest request = cluster_->MakeRequest(seen->second);
    if (cluster_->Check(node->second, request) != FitReason::kFits) continue;
    bool room = true;
    for (int g = 0; g < kMaxGpusPerNode; ++g) {
      if ((c.gpus & (GpuSet{1} << g)) && (g >= cluster_->spec(node->second).gpu_count ||
                                          !GpuHasRoom(cluster_->state(node->second), g, request))) {
        room = false;
      }
    }
    if (!room) continue;
    scheduler_->Bind(node->second, request, c.gpus);
    assignments_.emplace(c.uid, Assignment{seen->second.name, node->second, request, c.gpus,
                                           SeenMeta(c.uid), true, c.expires});
    assumed_.insert(c.uid);
  }
}

Status Extender::AllocateBound(const std::string& uid, const PodRecord& record) {
  auto it = node_index_.find(record.node);
  if (it == node_index_.end()) return {};  // waits for its node
  const int node = it->second;
  const std::string where = "pod " + record.spec.name + " on node " + record.node;
  const PodRequest request = cluster_->MakeRequest(record.spec);
  const FitReason fit = cluster_->Check(node, request);
  if (fit != FitReason::kFits) {
    return Error{where + ": does not fit in the model: " + FitExplanation(fit)};
  }
  GpuSet gpus = 0;
  if (!request.IsCpuOnly()) {
    const int gpu_count = cluster_->spec(node).gpu_count;
    if (record.indices.has_value()) {
      Result<GpuSet> set = ParseGpuIndices(*record.indices, gpu_count);
      if (!set.ok()) return Error{where + ": " + set.error().message};
      gpus = *set;
      int count = 0;
      for (int g = 0; g < gpu_count; ++g) {
        if (!(gpus & (GpuSet{1} << g))) continue;
        ++count;
        if (!GpuHasRoom(cluster_->state(node), g, request)) {
          return Error{where + ": GPU " + std::to_string(g) + " has no room left for it"};
        }
      }
      if (count != request.gpu_count) {
        return Error{where + ": annotation " + std::string(kGpuIndicesAnnotation) + " names " +
                     std::to_string(count) + " GPUs, the pod requests " +
                     std::to_string(request.gpu_count)};
      }
    } else {
      gpus = DefaultGpuChoice(gpu_count, cluster_->state(node), request);
    }
  }
  scheduler_->Bind(node, request, gpus);
  assignments_.emplace(uid, Assignment{record.spec.name, node, request, gpus, record.meta});
  return {};
}

void Extender::Release(const std::string& uid) {
  auto it = assignments_.find(uid);
  if (it != assignments_.end()) {
    scheduler_->Unbind(it->second.node, it->second.request, it->second.gpus);
    assignments_.erase(it);
  }
  assumed_.erase(uid);
}

Status Extender::UpsertNode(const Node& node) {
  Result<NodeSpec> spec = NodeToSpec(node);
  if (!spec.ok()) return Error{"node " + QuoteForError(node.name) + ": " + spec.error().message};
  if (spec->name.empty()) return Error{"node without metadata.name"};
  NodeRecord record{*spec, node.unschedulable, HamiGpus(node, spec->gpu_count)};
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = nodes_.find(spec->name);
  if (it != nodes_.end() && SameCapacity(it->second.spec, record.spec)) {
    // Status heartbeats and label changes that do not touch capacity: no rebuild.
    it->second.unschedulable = record.unschedulable;
    it->second.gpus = std::move(record.gpus);
    auto index = node_index_.find(spec->name);
    if (!dirty_ && index != node_index_.end()) {
      unschedulable_[index->second] = it->second.unschedulable;
    }
    return {};
  }
  nodes_.insert_or_assign(spec->name, std::move(record));
  dirty_ = true;
  if (synced_) Rebuild();
  return {};
}

void Extender::DeleteNode(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (nodes_.erase(name) == 0) return;
  dirty_ = true;
  if (synced_) Rebuild();
}

Status Extender::UpsertPod(const Pod& pod) {
  const std::string uid = PodUid(pod);
  const std::string name = PodName(pod.namespace_name, pod.name);
  const bool ended = pod.phase == "Succeeded" || pod.phase == "Failed";
  Result<PodSpec> spec = PodToSpec(pod);
  std::lock_guard<std::mutex> lock(mutex_);
  EnsureModel();
  ExpireAssumedLocked();
  if (pod.node_name.empty() || ended) {
    pods_.erase(uid);
    auto it = assignments_.find(uid);
    // Our own annotation patch shows the pod still unbound: keep the assumption.
    if (it != assignments_.end() && (ended || !it->second.assumed)) Release(uid);
    if (!ended && spec.ok()) {
      Remember(uid, *spec, pod);
      RememberContainers(uid, pod);
    }
    return {};
  }
  if (!spec.ok()) {
    pods_.erase(uid);
    Release(uid);
    return Error{"pod " + name + " on node " + pod.node_name + ": " + spec.error().message};
  }
  PodRecord record{std::move(*spec), pod.node_name, std::nullopt, MetaOf(pod)};
  auto ann = pod.annotations.find(std::string(kGpuIndicesAnnotation));
  if (ann != pod.annotations.end()) record.indices = ann->second;
  auto it = assignments_.find(uid);
  if (it != assignments_.end()) {
    if (cluster_->spec(it->second.node).name == pod.node_name) {
      it->second.assumed = false;  // confirmed by the API: no second allocation
      assumed_.erase(uid);
      pods_.insert_or_assign(uid, std::move(record));
      return {};
    }
    Release(uid);  // bound elsewhere than we assumed: the API server is right
  }
  auto [pos, inserted] = pods_.insert_or_assign(uid, std::move(record));
  return AllocateBound(uid, pos->second);
}

void Extender::DeletePod(const std::string& uid) {
  std::lock_guard<std::mutex> lock(mutex_);
  EnsureModel();
  pods_.erase(uid);
  Release(uid);
}

void Extender::MarkSynced() {
  std::lock_guard<std::mutex> lock(mutex_);
  synced_ = true;
  Rebuild();  // M from every bound pod of the initial list
}

bool Extender::ready() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !api_mode_ || synced_;
}

int Extender::ExpireAssumed() {
  std::lock_guard<std::mutex> lock(mutex_);
  EnsureModel();
  return ExpireAssumedLocked();
}

int Extender::assumed_pods() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(assumed_.size());
}

int Extender::ExpireAssumedLocked() {
  if (assumed_.empty()) return 0;
  const double now = Now();
  std::vector<std::string> expired;
  for (const std::string& uid : assumed_) {
    if (binding_.count(uid)) continue;
    auto it = assignments_.find(uid);
    if (it == assignments_.end() || it->second.expires <= now) expired.push_back(uid);
  }
  for (const std::string& uid : expired) Release(uid);
  return static_cast<int>(expired.size());
}

ExtenderBindingResult Extender::BindThroughApi(const ExtenderBindingArgs& args,
                                               std::unique_lock<std::mutex>& lock) {
  const std::string& uid = args.pod_uid;
  const std::string pod = PodName(args.pod_namespace, args.pod_name);
  // The scheduler may retry while our first attempt is still talking to the API.
  bind_done_.wait(lock, [&] { return binding_.count(uid) == 0; });
  EnsureModel();
  ExpireAssumedLocked();
  BindAllocation allocation;
  std::string error = BindLocked(args, pod, true, Now() + live_.assume_ttl_seconds, &allocation);
  if (!error.empty() || !allocation.allocated) return {std::move(error)};
  const GpuSet gpus = allocation.gpus;
  const PodRequest& request = allocation.request;
  assumed_.insert(uid);
  binding_.insert(uid);

  // The handoff to the node: ours always, HAMi's when the node registers its GPUs with HAMi.
  std::map<std::string, std::string> annotations;
  if (gpus != 0) {
    annotations[std::string(kGpuIndicesAnnotation)] = FormatGpuIndices(gpus);
    const std::vector<HamiDevice>& devices = nodes_.at(args.node).gpus;
    if (!devices.empty()) {
      auto layout = container_gpus_.find(uid);
      annotations[std::string(kHamiDevicesToAllocate)] = HamiDevicesValue(
          layout == container_gpus_.end() ? nullptr : &layout->second, gpus, devices, request);
      annotations[std::string(kHamiDevicesAllocated)] =
          annotations[std::string(kHamiDevicesToAllocate)];
      annotations[std::string(kHamiVgpuNode)] = args.node;
      const std::string now = std::to_string(static_cast<int64_t>(Now()));
      annotations[std::string(kHamiVgpuTime)] = now;
      annotations[std::string(kHamiBindTime)] = now;
      annotations[std::string(kHamiBindPhase)] = "allocating";
    }
  }
  KubeApi* api = live_.api;
  lock.unlock();
  ApiStatus status = api->PatchPodAnnotations(args.pod_namespace, args.pod_name, uid, annotations);
  if (status.ok()) status = api->BindPod(args.pod_namespace, args.pod_name, uid, args.node);
  lock.lock();
  binding_.erase(uid);
  bind_done_.notify_all();
  auto it = assignments_.find(uid);
  if (!status.ok()) {
    if (it != assignments_.end() && it->second.assumed) Release(uid);
    return {"bind " + pod + " to node " + args.node + ": " + status.error};
  }
  if (it != assignments_.end() && it->second.assumed) {
    it->second.expires = Now() + live_.assume_ttl_seconds;
  }
  ++pods_bound_total_;
  return {};
}

}  // namespace tessera::k8s
