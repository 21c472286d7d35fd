#include "k8s/hami/annotations.h"

#include <algorithm>
#include <initializer_list>

#include "k8s/api/json_util.h"

namespace tessera::k8s {
namespace {

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

}  // namespace

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

HamiContainerLayout HamiLayout(const Pod& pod) {
  HamiContainerLayout layout;
  for (const Container& c : pod.containers) {
    if (c.kind != Container::Kind::kApp) {
      layout.emplace_back(ContainerGpus(c), c.kind == Container::Kind::kInit);
    }
  }
  for (const Container& c : pod.containers) {
    if (c.kind == Container::Kind::kApp) layout.emplace_back(ContainerGpus(c), false);
  }
  return layout;
}

std::map<std::string, std::string> HamiBindAnnotations(
    const HamiContainerLayout* layout, GpuSet gpus, const std::vector<HamiDevice>& devices,
    const PodRequest& request, const std::string& node, int64_t unix_seconds) {
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
    value += ";";
  } else {
    size_t next = 0;
    for (const auto& [count, alone] : *layout) {
      size_t from = alone ? 0 : next;
      for (int k = 0; k < count && from < indices.size(); ++k) value += device(indices[from++]);
      if (!alone) next = from;
      value += ";";
    }
  }
  const std::string now = std::to_string(unix_seconds);
  return {{std::string(kHamiDevicesToAllocate), value},
          {std::string(kHamiDevicesAllocated), value},
          {std::string(kHamiVgpuNode), node},
          {std::string(kHamiVgpuTime), now},
          {std::string(kHamiBindTime), now},
          {std::string(kHamiBindPhase), "allocating"}};
}

Result<GpuSet> HamiAllocatedGpus(std::string_view value, const std::vector<HamiDevice>& devices) {
  GpuSet gpus = 0;
  const std::string where = std::string(kHamiDevicesAllocated) + " " + QuoteForError(value, 200);
  // Containers separated by ';', devices by ':', fields by ','; the UUID is the first field.
  size_t start = 0;
  while (start < value.size()) {
    size_t end = value.find_first_of(";:", start);
    if (end == std::string_view::npos) end = value.size();
    const std::string_view entry = value.substr(start, end - start);
    start = end + 1;
    if (entry.find_first_not_of(" \t\n") == std::string_view::npos) continue;
    const std::string_view uuid = entry.substr(0, entry.find(','));
    if (uuid.empty() || entry.find(',') == std::string_view::npos) {
      return Error{where + ": expected \"UUID,NVIDIA,memMiB,cores\" per device"};
    }
    auto it = std::find_if(devices.begin(), devices.end(),
                           [&](const HamiDevice& d) { return d.uuid == uuid; });
    if (it == devices.end()) {
      return Error{where + ": device " + QuoteForError(uuid) + " is not registered on the node"};
    }
    gpus |= GpuSet{1} << (it - devices.begin());
  }
  return gpus;
}

}  // namespace tessera::k8s
