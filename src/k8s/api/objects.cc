#include "k8s/api/objects.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "k8s/api/json_util.h"
#include "model/gpu_catalog.h"
#include "model/resources.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;

Error At(std::string_view path, std::string_view what) {
  return Error{std::string(path) + ": " + std::string(what)};
}

// ----------------------------------------------------------------------------- decoding

// Reads one quantity value (a string, or a number as Quantity.UnmarshalJSON accepts).
Result<Quantity> ReadQuantity(const Json& v, std::string_view path) {
  std::string text;
  if (v.is_string()) {
    text = v.get_ref<const std::string&>();
  } else if (v.is_number()) {
    text = v.dump();
  } else {
    return TypeError(path, "quantity string", v);
  }
  Result<Quantity> q = ParseQuantity(text);
  if (!q.ok()) return At(path, q.error().message);
  if (q->nano < 0) return At(path, "negative quantity " + QuoteForError(text));
  return q;
}

// Reads a map of quantities (resources.requests, status.allocatable) into *out as exact values
// and, when `text` is given, as their text.
Status ReadResourceMap(const Json* v, std::string_view path, ResourceList* out,
                       std::map<std::string, std::string>* text = nullptr) {
  if (v == nullptr || v->is_null()) return Status();
  if (!v->is_object()) return TypeError(path, "object of quantities", *v);
  for (auto it = v->begin(); it != v->end(); ++it) {
    if (it->is_null()) continue;
    const std::string item_path = PathKey(path, it.key());
    Result<Quantity> q = ReadQuantity(*it, item_path);
    if (!q.ok()) return q.error();
    if (out != nullptr) (*out)[it.key()] = *q;
    if (text != nullptr) {
      (*text)[it.key()] = it->is_string() ? it->get<std::string>() : it->dump();
    }
  }
  return Status();
}

// Adds every amount of `b` into `a`.
Status AddInto(ResourceList* a, const ResourceList& b, std::string_view path) {
  for (const auto& [name, q] : b) {
    Result<Quantity> sum = AddQuantities((*a)[name], q);
    if (!sum.ok()) return At(path, "total of " + QuoteForError(name) + ": " + sum.error().message);
    (*a)[name] = *sum;
  }
  return Status();
}

// Raises every amount of `a` to at least that of `b`.
void MaxInto(ResourceList* a, const ResourceList& b) {
  for (const auto& [name, q] : b) {
    auto it = a->find(name);
    if (it == a->end()) {
      a->emplace(name, q);
    } else if (it->second < q) {
      it->second = q;
    }
  }
}

Result<Container> DecodeContainer(const Json& j, std::string path, Container::Kind kind) {
  if (!j.is_object()) return TypeError(path, "container object", j);
  Container c;
  c.kind = kind;
  c.json_path = path;
  TESSERA_K8S_RETURN_IF_ERROR(ReadString(FindField(j, "name"), PathKey(path, "name"), &c.name));
  if (kind != Container::Kind::kApp) {
    std::string restart_policy;
    TESSERA_K8S_RETURN_IF_ERROR(
        ReadString(FindField(j, "restartPolicy"), PathKey(path, "restartPolicy"), &restart_policy));
    if (restart_policy == "Always") c.kind = Container::Kind::kSidecar;
  }
  const Json* resources = nullptr;
  TESSERA_K8S_ASSIGN(resources, ObjectField(j, "resources", path));
  if (resources != nullptr) {
    const std::string rpath = PathKey(path, "resources");
    TESSERA_K8S_RETURN_IF_ERROR(ReadResourceMap(FindField(*resources, "requests"),
                                                PathKey(rpath, "requests"), &c.requests));
    TESSERA_K8S_RETURN_IF_ERROR(
        ReadResourceMap(FindField(*resources, "limits"), PathKey(rpath, "limits"), &c.limits));
  }
  for (const auto& [name, q] : c.limits) c.requests.emplace(name, q);  // request defaults to limit
  return c;
}

// *a += b, held at kMaxNano (only compared afterwards, so saturation is harmless).
void SaturatingAdd(Quantity* a, Quantity b) {
  Result<Quantity> sum = AddQuantities(*a, b);
  *a = sum.ok() ? *sum : Quantity{Quantity::kMaxNano};
}

// The Kubernetes QoS class (pkg/apis/core/v1/helper/qos), from defaulted requests.
std::string ComputeQosClass(const std::vector<Container>& containers) {
  ResourceList requests;
  ResourceList limits;
  bool guaranteed = true;
  for (const Container& c : containers) {
    for (const auto& [name, q] : c.requests) {
      if ((name == kResourceCpu || name == kResourceMemory) && q.nano != 0) {
        SaturatingAdd(&requests[name], q);
      }
    }
    int limits_found = 0;
    for (const auto& [name, q] : c.limits) {
      if ((name == kResourceCpu || name == kResourceMemory) && q.nano != 0) {
        ++limits_found;
        SaturatingAdd(&limits[name], q);
      }
    }
    if (limits_found != 2) guaranteed = false;
  }
  if (requests.empty() && limits.empty()) return "BestEffort";
  if (guaranteed) {
    for (const auto& [name, q] : requests) {
      auto it = limits.find(name);
      if (it == limits.end() || it->second != q) {
        guaranteed = false;
        break;
      }
    }
  }
  return guaranteed && requests.size() == limits.size() ? "Guaranteed" : "Burstable";
}

// The pod's effective request (k8s.io/component-helpers/resource PodRequests).
Result<ResourceList> EffectiveRequests(const std::vector<Container>& containers,
                                       const ResourceList& overhead, std::string_view path) {
  ResourceList sum;
  ResourceList sidecars;
  ResourceList init_max;
  for (const Container& c : containers) {
    switch (c.kind) {
      case Container::Kind::kApp:
        TESSERA_K8S_RETURN_IF_ERROR(AddInto(&sum, c.requests, path));
        break;
      case Container::Kind::kSidecar:
        TESSERA_K8S_RETURN_IF_ERROR(AddInto(&sum, c.requests, path));
        TESSERA_K8S_RETURN_IF_ERROR(AddInto(&sidecars, c.requests, path));
        MaxInto(&init_max, sidecars);
        break;
      case Container::Kind::kInit: {
        ResourceList with_sidecars = c.requests;
        TESSERA_K8S_RETURN_IF_ERROR(AddInto(&with_sidecars, sidecars, path));
        MaxInto(&init_max, with_sidecars);
        break;
      }
    }
  }
  MaxInto(&sum, init_max);
  TESSERA_K8S_RETURN_IF_ERROR(AddInto(&sum, overhead, path));
  return sum;
}

Status DecodeMetadata(const Json& obj, std::string_view path, std::string* uid, std::string* name,
                      std::string* ns, std::string* resource_version,
                      std::map<std::string, std::string>* labels,
                      std::map<std::string, std::string>* annotations, bool* deleting) {
  const Json* m = nullptr;
  TESSERA_K8S_ASSIGN(m, ObjectField(obj, "metadata", path));
  if (m == nullptr) return Status();
  const std::string mpath = PathKey(path, "metadata");
  TESSERA_K8S_RETURN_IF_ERROR(ReadString(FindField(*m, "uid"), PathKey(mpath, "uid"), uid));
  TESSERA_K8S_RETURN_IF_ERROR(ReadString(FindField(*m, "name"), PathKey(mpath, "name"), name));
  if (ns != nullptr) {
    TESSERA_K8S_RETURN_IF_ERROR(
        ReadString(FindField(*m, "namespace"), PathKey(mpath, "namespace"), ns));
  }
  TESSERA_K8S_RETURN_IF_ERROR(ReadString(FindField(*m, "resourceVersion"),
                                         PathKey(mpath, "resourceVersion"), resource_version));
  TESSERA_K8S_RETURN_IF_ERROR(
      ReadStringMap(FindField(*m, "labels"), PathKey(mpath, "labels"), labels));
  TESSERA_K8S_RETURN_IF_ERROR(
      ReadStringMap(FindField(*m, "annotations"), PathKey(mpath, "annotations"), annotations));
  if (deleting != nullptr) {
    std::string deletion;
    const Json* d = FindField(*m, "deletionTimestamp");
    TESSERA_K8S_RETURN_IF_ERROR(ReadString(d, PathKey(mpath, "deletionTimestamp"), &deletion));
    *deleting = d != nullptr && !d->is_null();
  }
  return Status();
}

// ----------------------------------------------------------------------------- PodToSpec

// The GPU request of one container.
struct ContainerGpu {
  int64_t count = 0;
  int64_t milli = 0;  // per GPU
  int64_t memory_mib = 0;
};

const Quantity* Find(const ResourceList& list, std::string_view name) {
  auto it = list.find(std::string(name));
  return it == list.end() ? nullptr : &it->second;
}

// Reads a whole-number resource in [lo, hi].
Result<int64_t> WholeIn(const Container& c, std::string_view name, const Quantity& q, int64_t lo,
                        int64_t hi, std::string_view what) {
  const std::string where = PathKey(PathKey(c.json_path, "resources"), name);
  Result<int64_t> v = ToInt(q);
  if (!v.ok()) return At(where, v.error().message);
  if (*v < lo || *v > hi) {
    return At(where, std::to_string(*v) + " " + std::string(what) + " is out of range " +
                         std::to_string(lo) + ".." + std::to_string(hi));
  }
  return *v;
}

Result<ContainerGpu> GpuOf(const Container& c) {
  ContainerGpu g;
  const ResourceList& r = c.requests;
  const Quantity* t_count = Find(r, kTesseraGpu);
  const Quantity* t_milli = Find(r, kTesseraGpuMilli);
  const Quantity* t_mem = Find(r, kTesseraGpuMemory);
  const Quantity* h_count = Find(r, kNvidiaGpu);
  const Quantity* h_mem = Find(r, kHamiGpuMem);
  const Quantity* h_cores = Find(r, kHamiGpuCores);
  const std::string where = PathKey(c.json_path, "resources");
  const Quantity* count = nullptr;
  const Quantity* per_gpu = nullptr;  // a per-GPU resource, for the zero-count check
  std::string_view per_gpu_name;
  if (t_count != nullptr || t_milli != nullptr || t_mem != nullptr) {
    count = t_count;
    g.milli = kMilliPerGpu;
    if (t_milli != nullptr) {
      TESSERA_K8S_ASSIGN(g.milli,
                         WholeIn(c, kTesseraGpuMilli, *t_milli, 1, kMilliPerGpu, "milli-GPU"));
      per_gpu = t_milli;
      per_gpu_name = kTesseraGpuMilli;
    }
    if (t_mem != nullptr) {
      TESSERA_K8S_ASSIGN(g.memory_mib,
                         WholeIn(c, kTesseraGpuMemory, *t_mem, 0, kMaxGpuMemoryMib, "MiB"));
      per_gpu = t_mem;
      per_gpu_name = kTesseraGpuMemory;
    }
    g.count = 1;
    if (count != nullptr) {
      TESSERA_K8S_ASSIGN(g.count, WholeIn(c, kTesseraGpu, *count, 0, kMaxGpusPerNode, "GPUs"));
    }
  } else if (h_count != nullptr || h_mem != nullptr || h_cores != nullptr) {
    if (Find(r, kHamiGpuMemPercent) != nullptr) {
      return At(PathKey(where, kHamiGpuMemPercent),
                "not supported; request GPU memory with nvidia.com/gpumem (MiB)");
    }
    count = h_count;
    g.milli = kMilliPerGpu;
    if (h_cores != nullptr) {
      int64_t cores = 0;
      TESSERA_K8S_ASSIGN(cores, WholeIn(c, kHamiGpuCores, *h_cores, 0, 100, "percent"));
      if (cores > 0) g.milli = cores * 10;
      per_gpu = h_cores;
      per_gpu_name = kHamiGpuCores;
    }
    if (h_mem != nullptr) {
      TESSERA_K8S_ASSIGN(g.memory_mib, WholeIn(c, kHamiGpuMem, *h_mem, 0, kMaxGpuMemoryMib, "MiB"));
      per_gpu = h_mem;
      per_gpu_name = kHamiGpuMem;
    }
    g.count = 1;  // HAMi's admission webhook adds nvidia.com/gpu: 1 (its default) when absent
    if (count != nullptr) {
      TESSERA_K8S_ASSIGN(g.count, WholeIn(c, kNvidiaGpu, *count, 0, kMaxGpusPerNode, "GPUs"));
    }
  } else {
    return g;  // no GPU
  }
  if (g.count == 0) {
    if (per_gpu != nullptr && per_gpu->nano != 0) {
      return At(PathKey(where, per_gpu_name), "is set, but the GPU count is 0");
    }
    return ContainerGpu{};
  }
  if (g.count > 1 && g.milli != kMilliPerGpu) {
    return At(where, "a multi-GPU request (" + std::to_string(g.count) +
                         " GPUs) must take whole GPUs, got " + std::to_string(g.milli) +
                         " milli-GPU each");
  }
  return g;
}

std::string NormalizeModels(std::string_view spec) {
  std::string out;
  while (true) {
    const size_t bar = spec.find('|');
    std::string_view token = spec.substr(0, bar);
    while (!token.empty() && (token.front() == ' ' || token.front() == '\t'))
      token.remove_prefix(1);
    while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.remove_suffix(1);
    if (!token.empty()) {
      if (!out.empty()) out.push_back('|');
      out.append(token);
    }
    if (bar == std::string_view::npos) break;
    spec.remove_prefix(bar + 1);
  }
  return out;
}

// ----------------------------------------------------------------------------- HAMi

bool ParseInt(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data() + (s[0] == '+' ? 1 : 0), end, *out);
  return ec == std::errc() && p == end;
}

// Go's strconv.ParseBool.
bool ParseGoBool(std::string_view s, bool* out) {
  if (s == "1" || s == "t" || s == "T" || s == "true" || s == "TRUE" || s == "True") {
    *out = true;
    return true;
  }
  if (s == "0" || s == "f" || s == "F" || s == "false" || s == "FALSE" || s == "False") {
    *out = false;
    return true;
  }
  return false;
}

Status CheckDevice(const HamiDevice& d, std::string_view where) {
  if (d.uuid.empty()) return At(where, "empty device id");
  if (d.split_count < 0) return At(where, "negative split count");
  if (d.memory_mib < 0 || d.memory_mib > kMaxGpuMemoryMib) {
    return At(where, "memory " + std::to_string(d.memory_mib) + " MiB is out of range");
  }
  if (d.cores < 0) return At(where, "negative core limit");
  if (d.index < 0) return At(where, "negative device index");
  return Status();
}

Result<std::vector<HamiDevice>> ParseHamiJson(std::string_view value) {
  Result<Json> parsed = ParseJson(value, kDefaultMaxBodyBytes, "HAMi device list");
  if (!parsed.ok()) return parsed.error();
  const Json& list = *parsed;
  if (!list.is_array()) return TypeError("HAMi device list", "array", list);
  std::vector<HamiDevice> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = PathIndex("device", i);
    const Json& d = list[i];
    if (!d.is_object()) return TypeError(path, "object", d);
    HamiDevice dev;
    int64_t v = 0;
    constexpr int64_t kI32 = std::numeric_limits<int32_t>::max();
    TESSERA_K8S_RETURN_IF_ERROR(ReadString(FindField(d, "id"), PathKey(path, "id"), &dev.uuid));
    v = static_cast<int64_t>(i);  // HAMi omits index 0 (omitempty); absent = its position
    TESSERA_K8S_RETURN_IF_ERROR(
        ReadInt64(FindField(d, "index"), PathKey(path, "index"), 0, kI32, &v));
    dev.index = static_cast<int32_t>(v);
    v = 0;
    TESSERA_K8S_RETURN_IF_ERROR(
        ReadInt64(FindField(d, "count"), PathKey(path, "count"), 0, kI32, &v));
    dev.split_count = static_cast<int32_t>(v);
    v = 0;
    TESSERA_K8S_RETURN_IF_ERROR(
        ReadInt64(FindField(d, "devmem"), PathKey(path, "devmem"), 0, kI32, &v));
    dev.memory_mib = v;
    v = 0;
    TESSERA_K8S_RETURN_IF_ERROR(
        ReadInt64(FindField(d, "devcore"), PathKey(path, "devcore"), 0, kI32, &v));
    dev.cores = static_cast<int32_t>(v);
    TESSERA_K8S_RETURN_IF_ERROR(ReadString(FindField(d, "type"), PathKey(path, "type"), &dev.type));
    v = 0;
    TESSERA_K8S_RETURN_IF_ERROR(
        ReadInt64(FindField(d, "numa"), PathKey(path, "numa"), -kI32, kI32, &v));
    dev.numa = static_cast<int32_t>(v);
    dev.mode = "hami-core";
    TESSERA_K8S_RETURN_IF_ERROR(ReadString(FindField(d, "mode"), PathKey(path, "mode"), &dev.mode));
    TESSERA_K8S_RETURN_IF_ERROR(
        ReadBool(FindField(d, "health"), PathKey(path, "health"), &dev.healthy));
    TESSERA_K8S_RETURN_IF_ERROR(CheckDevice(dev, path));
    out.push_back(std::move(dev));
  }
  return out;
}

Result<std::vector<HamiDevice>> ParseHamiColon(std::string_view value) {
  if (value.find(':') == std::string_view::npos) return Error{"missing device separator ':'"};
  std::vector<HamiDevice> out;
  size_t position = 0;
  while (!value.empty()) {
    const size_t colon = value.find(':');
    const std::string_view segment = value.substr(0, colon);
    value = colon == std::string_view::npos ? std::string_view() : value.substr(colon + 1);
    if (segment.empty()) continue;
    const std::string where = "device " + std::to_string(position) + " " + QuoteForError(segment);
    std::vector<std::string_view> f;
    for (std::string_view rest = segment;;) {
      const size_t comma = rest.find(',');
      f.push_back(rest.substr(0, comma));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    if (f.size() != 7 && f.size() != 9) {
      return At(where, "has " + std::to_string(f.size()) + " fields, expected 7 or 9");
    }
    HamiDevice d;
    int64_t count = 0, mem = 0, cores = 0, numa = 0, index = static_cast<int64_t>(position);
    constexpr int64_t kI32 = std::numeric_limits<int32_t>::max();
    d.uuid = std::string(f[0]);
    if (!ParseInt(f[1], &count) || count < 0 || count > kI32) {
      return At(where, "invalid split count " + QuoteForError(f[1]));
    }
    if (!ParseInt(f[2], &mem) || mem < 0 || mem > kI32) {
      return At(where, "invalid memory " + QuoteForError(f[2]));
    }
    if (!ParseInt(f[3], &cores) || cores < 0 || cores > kI32) {
      return At(where, "invalid core limit " + QuoteForError(f[3]));
    }
    d.type = std::string(f[4]);
    if (!ParseInt(f[5], &numa) || numa < -kI32 || numa > kI32) {
      return At(where, "invalid numa " + QuoteForError(f[5]));
    }
    if (!ParseGoBool(f[6], &d.healthy)) return At(where, "invalid health " + QuoteForError(f[6]));
    d.mode = "hami-core";
    if (f.size() == 9) {
      if (!ParseInt(f[7], &index) || index < 0 || index > kI32) {
        return At(where, "invalid index " + QuoteForError(f[7]));
      }
      d.mode = std::string(f[8]);
    }
    d.split_count = static_cast<int32_t>(count);
    d.memory_mib = mem;
    d.cores = static_cast<int32_t>(cores);
    d.numa = static_cast<int32_t>(numa);
    d.index = static_cast<int32_t>(index);
    TESSERA_K8S_RETURN_IF_ERROR(CheckDevice(d, where));
    out.push_back(std::move(d));
    ++position;
  }
  return out;
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
  if (!v.ok()) return At(where, v.error().message);
  if (*v < 0 || *v > max) {
    return At(where, std::to_string(*v) + " is out of range 0.." + std::to_string(max));
  }
  return std::optional<int64_t>(*v);
}

}  // namespace

// ----------------------------------------------------------------------------- public

Result<Pod> DecodePod(const Json& j, std::string_view path) {
  if (!j.is_object()) return TypeError(path, "Pod object", j);
  Pod pod;
  pod.json_path = std::string(path);
  TESSERA_K8S_RETURN_IF_ERROR(DecodeMetadata(j, path, &pod.uid, &pod.name, &pod.namespace_name,
                                             &pod.resource_version, &pod.labels, &pod.annotations,
                                             &pod.deleting));
  const Json* spec = nullptr;
  TESSERA_K8S_ASSIGN(spec, ObjectField(j, "spec", path));
  ResourceList overhead;
  if (spec != nullptr) {
    const std::string spath = PathKey(path, "spec");
    TESSERA_K8S_RETURN_IF_ERROR(
        ReadString(FindField(*spec, "nodeName"), PathKey(spath, "nodeName"), &pod.node_name));
    TESSERA_K8S_RETURN_IF_ERROR(ReadString(FindField(*spec, "schedulerName"),
                                           PathKey(spath, "schedulerName"), &pod.scheduler_name));
    int64_t priority = 0;
    TESSERA_K8S_RETURN_IF_ERROR(ReadInt64(FindField(*spec, "priority"), PathKey(spath, "priority"),
                                          std::numeric_limits<int32_t>::min(),
                                          std::numeric_limits<int32_t>::max(), &priority));
    pod.priority = static_cast<int32_t>(priority);
    const std::pair<std::string_view, Container::Kind> lists[] = {
        {"containers", Container::Kind::kApp}, {"initContainers", Container::Kind::kInit}};
    for (const auto& [key, kind] : lists) {
      const Json* list = nullptr;
      TESSERA_K8S_ASSIGN(list, ArrayField(*spec, key, spath));
      if (list == nullptr) continue;
      const std::string lpath = PathKey(spath, key);
      for (size_t i = 0; i < list->size(); ++i) {
        Container c;
        TESSERA_K8S_ASSIGN(c, DecodeContainer((*list)[i], PathIndex(lpath, i), kind));
        pod.containers.push_back(std::move(c));
      }
    }
    TESSERA_K8S_RETURN_IF_ERROR(
        ReadResourceMap(FindField(*spec, "overhead"), PathKey(spath, "overhead"), &overhead));
  }
  const Json* status = nullptr;
  TESSERA_K8S_ASSIGN(status, ObjectField(j, "status", path));
  if (status != nullptr) {
    const std::string stpath = PathKey(path, "status");
    TESSERA_K8S_RETURN_IF_ERROR(
        ReadString(FindField(*status, "phase"), PathKey(stpath, "phase"), &pod.phase));
    TESSERA_K8S_RETURN_IF_ERROR(
        ReadString(FindField(*status, "qosClass"), PathKey(stpath, "qosClass"), &pod.qos_class));
  }
  if (pod.qos_class.empty()) pod.qos_class = ComputeQosClass(pod.containers);
  TESSERA_K8S_ASSIGN(pod.requests,
                     EffectiveRequests(pod.containers, overhead, PathKey(path, "spec")));
  return pod;
}

Result<Node> DecodeNode(const Json& j, std::string_view path) {
  if (!j.is_object()) return TypeError(path, "Node object", j);
  Node node;
  node.json_path = std::string(path);
  TESSERA_K8S_RETURN_IF_ERROR(DecodeMetadata(j, path, &node.uid, &node.name, nullptr,
                                             &node.resource_version, &node.labels,
                                             &node.annotations, nullptr));
  const Json* spec = nullptr;
  TESSERA_K8S_ASSIGN(spec, ObjectField(j, "spec", path));
  if (spec != nullptr) {
    TESSERA_K8S_RETURN_IF_ERROR(ReadBool(FindField(*spec, "unschedulable"),
                                         PathKey(PathKey(path, "spec"), "unschedulable"),
                                         &node.unschedulable));
  }
  const Json* status = nullptr;
  TESSERA_K8S_ASSIGN(status, ObjectField(j, "status", path));
  if (status != nullptr) {
    const std::string stpath = PathKey(path, "status");
    TESSERA_K8S_RETURN_IF_ERROR(ReadResourceMap(FindField(*status, "allocatable"),
                                                PathKey(stpath, "allocatable"), nullptr,
                                                &node.allocatable));
    TESSERA_K8S_RETURN_IF_ERROR(ReadResourceMap(
        FindField(*status, "capacity"), PathKey(stpath, "capacity"), nullptr, &node.capacity));
  }
  return node;
}

Result<Pod> ParsePodJson(std::string_view text) {
  Result<Json> j = ParseJson(text, kDefaultMaxBodyBytes, "Pod");
  if (!j.ok()) return j.error();
  return DecodePod(*j, "Pod");
}

Result<Node> ParseNodeJson(std::string_view text) {
  Result<Json> j = ParseJson(text, kDefaultMaxBodyBytes, "Node");
  if (!j.ok()) return j.error();
  return DecodeNode(*j, "Node");
}

Result<std::vector<HamiDevice>> ParseHamiNodeRegister(std::string_view value) {
  std::string_view v = value;
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t' || v.front() == '\n')) {
    v.remove_prefix(1);
  }
  if (v.empty()) return Error{"empty device list"};
  return v.front() == '[' ? ParseHamiJson(v) : ParseHamiColon(v);
}

Result<PodSpec> PodToSpec(const Pod& pod) {
  PodSpec s;
  s.name = pod.namespace_name.empty() ? pod.name : pod.namespace_name + "/" + pod.name;
  const std::string where = PathKey(pod.json_path, "spec");
  if (const Quantity* cpu = Find(pod.requests, kResourceCpu)) {
    Result<int64_t> v = ToMilli(*cpu);
    if (!v.ok() || *v > kMaxCpuMilli) {
      return At(where, "total cpu request is over the limit of " + std::to_string(kMaxCpuMilli) +
                           " milli-CPU");
    }
    s.cpu_milli = *v;
  }
  if (const Quantity* mem = Find(pod.requests, kResourceMemory)) {
    Result<int64_t> v = ToMiB(*mem);
    if (!v.ok() || *v > kMaxMemoryMib) {
      return At(where, "total memory request is over the limit of " +
                           std::to_string(kMaxMemoryMib) + " MiB");
    }
    s.memory_mib = *v;
  }

  // GPUs: per container, then combined.
  std::vector<std::pair<const Container*, ContainerGpu>> gpu_containers;
  for (const Container& c : pod.containers) {
    ContainerGpu g;
    TESSERA_K8S_ASSIGN(g, GpuOf(c));
    if (g.count > 0) gpu_containers.emplace_back(&c, g);
  }
  if (gpu_containers.size() == 1) {
    const ContainerGpu& g = gpu_containers[0].second;
    s.gpu_count = static_cast<int>(g.count);
    s.gpu_milli = static_cast<int32_t>(g.milli);
    s.gpu_memory_mib = g.memory_mib;
  } else if (gpu_containers.size() > 1) {
    // Whole GPUs only; the count follows Kubernetes' rule (app and sidecars add up, each init
    // container runs alone beside the sidecars started before it).
    int64_t sum = 0, sidecars = 0, init_max = 0, memory = 0;
    for (const auto& [c, g] : gpu_containers) {
      if (g.milli != kMilliPerGpu) {
        return At(PathKey(c->json_path, "resources"),
                  "shares a GPU (" + std::to_string(g.milli) +
                      " milli-GPU) while other containers of the pod also request GPUs; "
                      "only whole GPUs can be split across containers");
      }
      memory = std::max(memory, g.memory_mib);
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
      return At(where, "the containers request " + std::to_string(count) +
                           " GPUs in total, more than " + std::to_string(kMaxGpusPerNode));
    }
    s.gpu_count = static_cast<int>(count);
    s.gpu_milli = kMilliPerGpu;
    s.gpu_memory_mib = memory;
  }

  if (auto it = pod.annotations.find(std::string(kGpuModelKey)); it != pod.annotations.end()) {
    s.gpu_spec = NormalizeModels(it->second);
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
  return s;
}

Result<NodeSpec> NodeToSpec(const Node& node) {
  NodeSpec s;
  s.name = node.name;
  const std::string alloc_path = PathKey(PathKey(node.json_path, "status"), "allocatable");
  const std::string labels_path = PathKey(PathKey(node.json_path, "metadata"), "labels");
  const std::string ann_path = PathKey(PathKey(node.json_path, "metadata"), "annotations");
  std::optional<int64_t> v;
  TESSERA_K8S_ASSIGN(
      v, NodeQuantity(node.allocatable, kResourceCpu, alloc_path, QuantityToMilli, kMaxCpuMilli));
  s.cpu_milli = v.value_or(0);
  TESSERA_K8S_ASSIGN(
      v, NodeQuantity(node.allocatable, kResourceMemory, alloc_path, QuantityToMiB, kMaxMemoryMib));
  s.memory_mib = v.value_or(0);

  std::vector<HamiDevice> healthy;
  bool has_hami = false;
  if (auto it = node.annotations.find(std::string(kHamiRegisterAnnotation));
      it != node.annotations.end()) {
    Result<std::vector<HamiDevice>> devices = ParseHamiNodeRegister(it->second);
    if (!devices.ok()) {
      return At(PathKey(ann_path, kHamiRegisterAnnotation), devices.error().message);
    }
    has_hami = true;
    for (HamiDevice& d : *devices) {
      if (d.healthy) healthy.push_back(std::move(d));
    }
  }

  std::optional<int64_t> count;
  TESSERA_K8S_ASSIGN(count, NodeQuantity(node.allocatable, kTesseraGpu, alloc_path, QuantityToInt,
                                         kMaxGpusPerNode));
  if (!count && has_hami) {
    if (healthy.size() > static_cast<size_t>(kMaxGpusPerNode)) {
      return At(PathKey(ann_path, kHamiRegisterAnnotation), std::to_string(healthy.size()) +
                                                                " healthy GPUs, more than " +
                                                                std::to_string(kMaxGpusPerNode));
    }
    count = static_cast<int64_t>(healthy.size());
  }
  if (!count) {
    TESSERA_K8S_ASSIGN(count, NodeQuantity(node.allocatable, kNvidiaGpu, alloc_path, QuantityToInt,
                                           kMaxGpusPerNode));
  }
  s.gpu_count = static_cast<int>(count.value_or(0));
  if (s.gpu_count == 0) return s;

  // Model.
  if (auto it = node.labels.find(std::string(kGpuModelKey)); it != node.labels.end()) {
    s.gpu_model = it->second;
  } else if (auto p = node.labels.find(std::string(kNvidiaProductLabel)); p != node.labels.end()) {
    s.gpu_model = p->second;
  } else if (!healthy.empty()) {
    for (const HamiDevice& d : healthy) {
      if (d.type != healthy[0].type) {
        return At(PathKey(ann_path, kHamiRegisterAnnotation),
                  "mixed GPU types " + QuoteForError(healthy[0].type) + " and " +
                      QuoteForError(d.type) + " on one node are not supported");
      }
    }
    s.gpu_model = healthy[0].type;
  }

  // Per-GPU memory.
  std::optional<int64_t> memory;
  TESSERA_K8S_ASSIGN(memory, NodeQuantity(node.labels, kGpuMemoryLabel, labels_path, QuantityToInt,
                                          kMaxGpuMemoryMib));
  if (!memory && !healthy.empty()) {
    int64_t smallest = healthy[0].memory_mib;
    for (const HamiDevice& d : healthy) smallest = std::min(smallest, d.memory_mib);
    memory = smallest;
  }
  if (!memory) {
    TESSERA_K8S_ASSIGN(memory, NodeQuantity(node.labels, kNvidiaMemoryLabel, labels_path,
                                            QuantityToInt, kMaxGpuMemoryMib));
  }
  s.gpu_memory_mib = memory ? *memory : KnownGpuMemoryMib(s.gpu_model);
  return s;
}

}  // namespace tessera::k8s
