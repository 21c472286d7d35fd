#include "k8s/translate/translate.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "k8s/api/json_util.h"
#include "k8s/hami/register.h"
#include "k8s/translate/node_topology.h"
#include "model/gpu_catalog.h"
#include "model/resources.h"
#include "model/topology_text.h"

namespace tessera::k8s {
namespace {

// The GPU request of one container.
struct ContainerGpu {
  int64_t count = 0;
  int64_t milli = 0;  // per GPU
  int64_t memory_mib = 0;
  int64_t memory_percent = 0;  // per GPU, of the GPU's memory; 0 = none (memory_mib wins)
};

// The compute a memory-only HAMi share reserves (see GpuOf).
constexpr int64_t kMemoryShareMilli = 1;

const Quantity* Find(const ResourceList& list, std::string_view name) {
  auto it = list.find(std::string(name));
  return it == list.end() ? nullptr : &it->second;
}

// Reads a whole-number resource in [lo, hi].
Result<int64_t> WholeIn(const Container& c, std::string_view name, const Quantity& q, int64_t lo,
                        int64_t hi, std::string_view what) {
  const std::string where = PathKey(PathKey(c.json_path, "resources"), name);
  Result<int64_t> v = ToInt(q);
  if (!v.ok()) return ErrorAt(where, v.error().message);
  if (*v < lo || *v > hi) {
    return ErrorAt(where, std::to_string(*v) + " " + std::string(what) + " is out of range " +
                              std::to_string(lo) + ".." + std::to_string(hi));
  }
  return *v;
}

// The GPU request rules (docs/EXTENDER.md, "What Tessera reads from a pod").
//
// tessera.io/*: tessera.io/gpu GPUs (1 when only a per-GPU resource is named), each
// tessera.io/gpu-milli of compute (absent: the whole GPU) and tessera.io/gpu-memory of memory
// (GpuMemoryToMiB: a unit suffix means bytes, a bare number MiB).
//
// nvidia.com/* (HAMi): HAMi's scheduler (pkg/device/nvidia/device.go, GenerateResourceRequests;
// fit_checks.go; docs/config.md) reads a container's nvidia.com/gpumem as MiB and
// nvidia.com/gpumem-percentage as a percentage of the device's memory; without either it takes
// the chart's defaultMem (0, meaning 100 % of the device's memory). Cores come from
// nvidia.com/gpucores, else the chart's defaultCores (0): a 0-core task reserves no compute and
// "may fit in any GPU with enough device memory", except that a device whose cores are all
// used (checkCardComputeExhausted) or held by a 100-core task (checkCardExclusive) refuses it.
// HAMi's webhook adds nvidia.com/gpu: defaultGPUNum (1) when only gpumem/gpucores are named.
// Tessera follows this:
//   - memory (gpumem or gpumem-percentage) without cores, or with gpucores: 0, on one GPU: a
//     share by memory with 1 milli of compute, the least a GPU must have free; so a GPU takes
//     such pods while its memory lasts, and refuses them once its compute is all taken, as HAMi
//     does. A multi-GPU request of this kind takes its GPUs whole (the engine shares single GPUs
//     only).
//   - gpucores: C (1..100) is C * 10 milli, with gpumem or a percentage if given.
//   - nvidia.com/gpu alone (or with gpucores: 0 and no memory) is the whole GPU: HAMi gives it
//     the device's whole memory, so nothing else fits beside it.
//   - gpucores without memory shares by compute only; HAMi's default would give such a task the
//     device's whole memory. Tessera keeps compute shares, and its bind annotation still tells
//     HAMi's device plugin the device's memory as the task's limit.
Result<ContainerGpu> GpuOf(const Container& c) {
  ContainerGpu g;
  const ResourceList& r = c.requests;
  const Quantity* t_count = Find(r, kTesseraGpu);
  const Quantity* t_milli = Find(r, kTesseraGpuMilli);
  const Quantity* t_mem = Find(r, kTesseraGpuMemory);
  const Quantity* h_count = Find(r, kNvidiaGpu);
  const Quantity* h_mem = Find(r, kHamiGpuMem);
  const Quantity* h_percent = Find(r, kHamiGpuMemPercent);
  const Quantity* h_cores = Find(r, kHamiGpuCores);
  const std::string where = PathKey(c.json_path, "resources");
  const Quantity* count = nullptr;
  const Quantity* per_gpu = nullptr;  // a per-GPU resource, for the zero-count check
  std::string_view per_gpu_name;
  if (t_count != nullptr || t_milli != nullptr || t_mem != nullptr) {
    count = t_count;
    g.milli = kMilliPerGpu;
    if (t_milli != nullptr) {
      TESSERA_ASSIGN_OR_RETURN(
          g.milli, WholeIn(c, kTesseraGpuMilli, *t_milli, 1, kMilliPerGpu, "milli-GPU"));
      per_gpu = t_milli;
      per_gpu_name = kTesseraGpuMilli;
    }
    if (t_mem != nullptr) {
      const std::string at = PathKey(where, kTesseraGpuMemory);
      Result<int64_t> mib =
          c.gpu_memory_text.empty() ? ToInt(*t_mem) : GpuMemoryToMiB(c.gpu_memory_text);
      if (!mib.ok()) return ErrorAt(at, mib.error().message);
      if (*mib < 0 || *mib > kMaxGpuMemoryMib) {
        return ErrorAt(at, std::to_string(*mib) + " MiB is out of range 0.." +
                               std::to_string(kMaxGpuMemoryMib));
      }
      g.memory_mib = *mib;
      per_gpu = t_mem;
      per_gpu_name = kTesseraGpuMemory;
    }
    g.count = 1;
    if (count != nullptr) {
      TESSERA_ASSIGN_OR_RETURN(g.count,
                               WholeIn(c, kTesseraGpu, *count, 0, kMaxGpusPerNode, "GPUs"));
    }
  } else if (h_count != nullptr || h_mem != nullptr || h_cores != nullptr || h_percent != nullptr) {
    count = h_count;
    int64_t cores = -1;  // absent
    if (h_cores != nullptr) {
      TESSERA_ASSIGN_OR_RETURN(cores, WholeIn(c, kHamiGpuCores, *h_cores, 0, 100, "percent"));
      per_gpu = h_cores;
      per_gpu_name = kHamiGpuCores;
    }
    if (h_mem != nullptr) {
      TESSERA_ASSIGN_OR_RETURN(g.memory_mib,
                               WholeIn(c, kHamiGpuMem, *h_mem, 0, kMaxGpuMemoryMib, "MiB"));
      per_gpu = h_mem;
      per_gpu_name = kHamiGpuMem;
    }
    if (h_percent != nullptr) {
      TESSERA_ASSIGN_OR_RETURN(g.memory_percent,
                               WholeIn(c, kHamiGpuMemPercent, *h_percent, 0, 100, "percent"));
      if (g.memory_mib > 0) g.memory_percent = 0;  // HAMi: gpumem wins over the percentage
      per_gpu = h_percent;
      per_gpu_name = kHamiGpuMemPercent;
    }
    g.count = 1;  // HAMi's admission webhook adds nvidia.com/gpu: 1 (its default) when absent
    if (count != nullptr) {
      TESSERA_ASSIGN_OR_RETURN(g.count, WholeIn(c, kNvidiaGpu, *count, 0, kMaxGpusPerNode, "GPUs"));
    }
    const bool memory = g.memory_mib > 0 || g.memory_percent > 0;
    if (cores > 0) {
      g.milli = cores * 10;
    } else if (memory && g.count == 1) {
      g.milli = kMemoryShareMilli;
    } else {
      g.milli = kMilliPerGpu;
    }
  } else {
    return g;  // no GPU
  }
  if (g.count == 0) {
    if (per_gpu != nullptr && per_gpu->nano != 0) {
      return ErrorAt(PathKey(where, per_gpu_name), "is set, but the GPU count is 0");
    }
    return ContainerGpu{};
  }
  if (g.count > 1 && g.milli != kMilliPerGpu) {
    return ErrorAt(where, "a multi-GPU request (" + std::to_string(g.count) +
                              " GPUs) must take whole GPUs, got " + std::to_string(g.milli) +
                              " milli-GPU each");
  }
  return g;
}

// A node quantity (allocatable or a label) by name; nullopt when absent.
Result<std::optional<int64_t>> NodeQuantity(const std::map<std::string, std::string>& map,
                                            std::string_view name, std::string_view map_path,
                                            Result<int64_t> (*convert)(std::string_view),
                                            int64_t max) {
  auto it = map.find(std::string(name));
  if (it == map.end()) return std::optional<int64_t>();
  const std::string where = PathKey(map_path, name);
  Result<int64_t> v = convert(it->second);
  if (!v.ok()) return ErrorAt(where, v.error().message);
  if (*v < 0 || *v > max) {
    return ErrorAt(where, std::to_string(*v) + " is out of range 0.." + std::to_string(max));
  }
  return std::optional<int64_t>(*v);
}

}  // namespace

Result<PodSpec> PodToSpec(const Pod& pod) {
  PodSpec s;
  s.name = ObjectKey(pod.namespace_name, pod.name);
  const std::string where = PathKey(pod.json_path, "spec");
  if (const Quantity* cpu = Find(pod.requests, kResourceCpu)) {
    Result<int64_t> v = ToMilli(*cpu);
    if (!v.ok() || *v > kMaxCpuMilli) {
      return ErrorAt(where, "total cpu request is over the limit of " +
                                std::to_string(kMaxCpuMilli) + " milli-CPU");
    }
    s.cpu_milli = *v;
  }
  if (const Quantity* mem = Find(pod.requests, kResourceMemory)) {
    Result<int64_t> v = ToMiB(*mem);
    if (!v.ok() || *v > kMaxMemoryMib) {
      return ErrorAt(where, "total memory request is over the limit of " +
                                std::to_string(kMaxMemoryMib) + " MiB");
    }
    s.memory_mib = *v;
  }

  // GPUs: per container, then combined.
  std::vector<std::pair<const Container*, ContainerGpu>> gpu_containers;
  for (const Container& c : pod.containers) {
    ContainerGpu g;
    TESSERA_ASSIGN_OR_RETURN(g, GpuOf(c));
    if (g.count > 0) gpu_containers.emplace_back(&c, g);
  }
  if (gpu_containers.size() == 1) {
    const ContainerGpu& g = gpu_containers[0].second;
    s.gpu_count = static_cast<int>(g.count);
    s.gpu_milli = static_cast<int32_t>(g.milli);
    s.gpu_memory_mib = g.memory_mib;
    s.gpu_memory_percent = static_cast<int32_t>(g.memory_percent);
  } else if (gpu_containers.size() > 1) {
    // Whole GPUs only; the count follows Kubernetes' rule (app and sidecars add up, each init
    // container runs alone beside the sidecars started before it).
    int64_t sum = 0, sidecars = 0, init_max = 0, memory = 0, percent = 0;
    for (const auto& [c, g] : gpu_containers) {
      if (g.milli != kMilliPerGpu) {
        return ErrorAt(PathKey(c->json_path, "resources"),
                       "shares a GPU (" + std::to_string(g.milli) +
                           " milli-GPU) while other containers of the pod also request GPUs; "
                           "only whole GPUs can be split across containers");
      }
      memory = std::max(memory, g.memory_mib);
      percent = std::max(percent, g.memory_percent);
    }
    for (const Container& c : pod.containers) {
      int64_t n = 0;
      for (const auto& [gc, g] : gpu_containers) {
        if (gc == &c) n = g.count;
      }
      switch (c.kind) {
        case Container::Kind::kApp:
          sum += n;
          break;
        case Container::Kind::kSidecar:
          sum += n;
          sidecars += n;
          init_max = std::max(init_max, sidecars);
          break;
        case Container::Kind::kInit:
          init_max = std::max(init_max, n + sidecars);
          break;
      }
    }
    const int64_t count = std::max(sum, init_max);
    if (count > kMaxGpusPerNode) {
      return ErrorAt(where, "the containers request " + std::to_string(count) +
                                " GPUs in total, more than " + std::to_string(kMaxGpusPerNode));
    }
    s.gpu_count = static_cast<int>(count);
    s.gpu_milli = kMilliPerGpu;
    s.gpu_memory_mib = memory;
    s.gpu_memory_percent = memory > 0 ? 0 : static_cast<int32_t>(percent);
  }

  if (auto it = pod.annotations.find(std::string(kGpuModelKey)); it != pod.annotations.end()) {
    s.gpu_spec = CanonicalGpuModels(it->second);
  }
  if (auto it = pod.labels.find(std::string(kClassKey));
      it != pod.labels.end() && !it->second.empty()) {
    s.qos = it->second;
  } else if (auto at = pod.annotations.find(std::string(kClassKey));
             at != pod.annotations.end() && !at->second.empty()) {
    s.qos = at->second;
  } else {
    s.qos = pod.qos_class;
  }
  if (auto it = pod.annotations.find(std::string(kPodTopologyAnnotation));
      it != pod.annotations.end()) {
    Result<TopologyRequest> t = ParseTopologyRequest(it->second);
    if (!t.ok()) {
      return ErrorAt(PathKey(PathKey(PathKey(pod.json_path, "metadata"), "annotations"),
                             kPodTopologyAnnotation),
                     t.error().message);
    }
    s.topology = *t;
  }
  return s;
}

Result<NodeSpec> NodeToSpec(const Node& node, std::string* topology_error) {
  NodeSpec s;
  s.name = node.name;
  const std::string alloc_path = PathKey(PathKey(node.json_path, "status"), "allocatable");
  const std::string labels_path = PathKey(PathKey(node.json_path, "metadata"), "labels");
  const std::string ann_path = PathKey(PathKey(node.json_path, "metadata"), "annotations");
  std::optional<int64_t> v;
  TESSERA_ASSIGN_OR_RETURN(
      v, NodeQuantity(node.allocatable, kResourceCpu, alloc_path, QuantityToMilli, kMaxCpuMilli));
  s.cpu_milli = v.value_or(0);
  TESSERA_ASSIGN_OR_RETURN(
      v, NodeQuantity(node.allocatable, kResourceMemory, alloc_path, QuantityToMiB, kMaxMemoryMib));
  s.memory_mib = v.value_or(0);

  if (topology_error != nullptr) topology_error->clear();
  std::vector<HamiDevice> healthy;
  bool has_hami = false;
  if (auto it = node.annotations.find(std::string(kHamiRegisterAnnotation));
      it != node.annotations.end()) {
    Result<std::vector<HamiDevice>> devices = ParseHamiNodeRegister(it->second);
    if (!devices.ok()) {
      return ErrorAt(PathKey(ann_path, kHamiRegisterAnnotation), devices.error().message);
    }
    has_hami = true;
    for (HamiDevice& d : *devices) {
      if (d.healthy) healthy.push_back(std::move(d));
    }
  }

  std::optional<int64_t> count;
  TESSERA_ASSIGN_OR_RETURN(count, NodeQuantity(node.allocatable, kTesseraGpu, alloc_path,
                                               QuantityToInt, kMaxGpusPerNode));
  if (!count && has_hami) {
    if (healthy.size() > static_cast<size_t>(kMaxGpusPerNode)) {
      return ErrorAt(PathKey(ann_path, kHamiRegisterAnnotation),
                     std::to_string(healthy.size()) + " healthy GPUs, more than " +
                         std::to_string(kMaxGpusPerNode));
    }
    count = static_cast<int64_t>(healthy.size());
  }
  if (!count) {
    TESSERA_ASSIGN_OR_RETURN(count, NodeQuantity(node.allocatable, kNvidiaGpu, alloc_path,
                                                 QuantityToInt, kMaxGpusPerNode));
  }
  s.gpu_count = static_cast<int>(count.value_or(0));
  if (s.gpu_count == 0) return s;

  // Model.
  if (auto it = node.labels.find(std::string(kGpuModelKey)); it != node.labels.end()) {
    s.gpu_model = CanonicalGpuModel(it->second);
  } else if (auto p = node.labels.find(std::string(kNvidiaProductLabel)); p != node.labels.end()) {
    s.gpu_model = CanonicalGpuModel(p->second);
  } else if (!healthy.empty()) {
    for (const HamiDevice& d : healthy) {
      if (d.type != healthy[0].type) {
        return ErrorAt(PathKey(ann_path, kHamiRegisterAnnotation),
                       "mixed GPU types " + QuoteForError(healthy[0].type) + " and " +
                           QuoteForError(d.type) + " on one node are not supported");
      }
    }
    s.gpu_model = CanonicalGpuModel(healthy[0].type);
  }

  // Per-GPU memory.
  std::optional<int64_t> memory;
  TESSERA_ASSIGN_OR_RETURN(memory, NodeQuantity(node.labels, kGpuMemoryLabel, labels_path,
                                                GpuMemoryToMiB, kMaxGpuMemoryMib));
  if (!memory && !healthy.empty()) {
    int64_t smallest = healthy[0].memory_mib;
    for (const HamiDevice& d : healthy) smallest = std::min(smallest, d.memory_mib);
    memory = smallest;
  }
  if (!memory) {
    TESSERA_ASSIGN_OR_RETURN(memory, NodeQuantity(node.labels, kNvidiaMemoryLabel, labels_path,
                                                  QuantityToInt, kMaxGpuMemoryMib));
  }
  s.gpu_memory_mib = memory ? *memory : KnownGpuMemoryMib(s.gpu_model);

  Result<TopologyPtr> topology = NodeTopology(node, s);
  if (topology.ok()) {
    s.topology = std::move(*topology);
  } else if (topology_error != nullptr) {
    *topology_error = topology.error().message;
  }
  return s;
}

uint8_t PodGpuFamilies(const Pod& pod) {
  uint8_t families = kNoGpuFamily;
  for (const Container& c : pod.containers) {
    for (const auto& [name, q] : c.requests) {
      if (q.nano == 0) continue;
      if (name.rfind("tessera.io/gpu", 0) == 0) families |= kTesseraFamily;
      if (name.rfind("nvidia.com/gpu", 0) == 0) families |= kNvidiaFamily;
    }
  }
  return families;
}

uint8_t NodeGpuFamilies(const Node& node) {
  const auto offers = [&](std::string_view name) {
    auto it = node.allocatable.find(std::string(name));
    if (it == node.allocatable.end()) return false;
    Result<int64_t> n = QuantityToInt(it->second);
    return n.ok() && *n > 0;
  };
  uint8_t families = kNoGpuFamily;
  if (offers(kTesseraGpu)) families |= kTesseraFamily;
  if (offers(kNvidiaGpu) || node.annotations.count(std::string(kHamiRegisterAnnotation)) > 0) {
    families |= kNvidiaFamily;
  }
  return families;
}

PodSpec FailClosedSpec(const Pod& pod) {
  PodSpec s;
  s.name = ObjectKey(pod.namespace_name, pod.name);
  if (const Quantity* cpu = Find(pod.requests, kResourceCpu)) {
    Result<int64_t> v = ToMilli(*cpu);
    s.cpu_milli = v.ok() ? std::clamp<int64_t>(*v, 0, kMaxCpuMilli) : 0;
  }
  if (const Quantity* mem = Find(pod.requests, kResourceMemory)) {
    Result<int64_t> v = ToMiB(*mem);
    s.memory_mib = v.ok() ? std::clamp<int64_t>(*v, 0, kMaxMemoryMib) : 0;
  }
  int64_t gpus = 0;
  for (const Container& c : pod.containers) {
    int64_t most = 0;
    bool named = false;
    for (const auto& [name, q] : c.requests) {
      if (name.rfind("tessera.io/gpu", 0) != 0 && name.rfind("nvidia.com/gpu", 0) != 0) continue;
      if (q.nano == 0) continue;
      named = true;
      if (name == kTesseraGpu || name == kNvidiaGpu) {
        Result<int64_t> n = ToInt(q);
        // A count that does not read as a whole number is taken as the most a node can hold.
        most = std::max(most, n.ok() ? *n : int64_t{kMaxGpusPerNode});
      }
    }
    if (named) gpus += std::max<int64_t>(most, 1);
  }
  s.gpu_count = static_cast<int>(std::clamp<int64_t>(gpus, 0, kMaxGpusPerNode));
  s.gpu_milli = s.gpu_count > 0 ? kMilliPerGpu : 0;
  if (auto it = pod.annotations.find(std::string(kGpuModelKey)); it != pod.annotations.end()) {
    s.gpu_spec = CanonicalGpuModels(it->second);
  }
  if (auto it = pod.labels.find(std::string(kClassKey));
      it != pod.labels.end() && !it->second.empty()) {
    s.qos = it->second;
  } else {
    s.qos = pod.qos_class;
  }
  if (auto it = pod.annotations.find(std::string(kPodTopologyAnnotation));
      it != pod.annotations.end()) {
    Result<TopologyRequest> t = ParseTopologyRequest(it->second);
    if (t.ok()) s.topology = *t;
  }
  return s;
}

}  // namespace tessera::k8s
