#include "model/cluster.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <unordered_map>

#include "util/check.h"

namespace tessera {

Cluster::Cluster(std::vector<NodeSpec> nodes) : specs_(std::move(nodes)) {
  states_.resize(specs_.size());
  model_ids_.assign(specs_.size(), -1);
  for (size_t n = 0; n < specs_.size(); ++n) {
    const NodeSpec& spec = specs_[n];
    TESSERA_CHECK(spec.gpu_count >= 0 && spec.gpu_count <= kMaxGpusPerNode);
    NodeState& s = states_[n];
    s.cpu_left = spec.cpu_milli;
    s.memory_left = spec.memory_mib;
    for (int i = 0; i < spec.gpu_count; ++i) {
      s.gpu_free[i] = kMilliPerGpu;
      s.gpu_mem_free[i] = static_cast<int32_t>(spec.gpu_memory_mib);
    }
    total_gpu_milli_ += int64_t{spec.gpu_count} * kMilliPerGpu;
    if (spec.gpu_count > 0) {
      auto it = std::find(models_.begin(), models_.end(), spec.gpu_model);
      if (it == models_.end()) {
        TESSERA_CHECK(models_.size() < static_cast<size_t>(kMaxGpuModels));
        models_.push_back(spec.gpu_model);
        it = models_.end() - 1;
      }
      model_ids_[n] = static_cast<int>(it - models_.begin());
    }
  }
  InternTopologies();
}

namespace {

size_t HashTopology(const GpuTopology& t) {
  size_t h = std::hash<int>()(t.gpu_count) ^ static_cast<size_t>(t.kubelet) << 8;
  const auto mix = [&h](uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  for (int i = 0; i < kMaxGpusPerNode; ++i) {
    mix(uint64_t{t.nvlink[i]} | uint64_t{t.numa[i]} << 8);
    mix(static_cast<uint64_t>(t.numa_cpu_milli[i]));
    for (int j = 0; j < kMaxGpusPerNode; ++j) mix(t.link[i][j]);
  }
  return h;
}

}  // namespace

void Cluster::InternTopologies() {
  std::unordered_map<size_t, std::vector<int>> by_hash;  // hash -> indices in topologies_
  for (size_t n = 0; n < specs_.size(); ++n) {
    TopologyPtr& t = specs_[n].topology;
    if (t == nullptr) continue;
    if (topology_ids_.empty()) topology_ids_.assign(specs_.size(), 0);
    std::vector<int>& same = by_hash[HashTopology(*t)];
    int id = -1;
    for (int i : same) {
      if (*topologies_[i] == *t) id = i;
    }
    if (id < 0) {
      TESSERA_CHECK(topologies_.size() < 65535);
      id = static_cast<int>(topologies_.size());
      topologies_.push_back(t);
      same.push_back(id);
    }
    t = topologies_[id];
    topology_ids_[n] = static_cast<uint16_t>(id + 1);
  }
}

ModelMask Cluster::ResolveModels(std::string_view gpu_spec) const {
  if (gpu_spec.empty()) return kAnyModel;
  ModelMask mask = 0;
  size_t start = 0;
  while (start <= gpu_spec.size()) {
    size_t end = gpu_spec.find('|', start);
    if (end == std::string_view::npos) end = gpu_spec.size();
    const std::string_view name = gpu_spec.substr(start, end - start);
    for (size_t m = 0; m < models_.size(); ++m) {
      if (models_[m] == name) mask |= ModelMask{1} << m;
    }
    start = end + 1;
  }
  return mask;
}

PodRequest Cluster::MakeRequest(const PodSpec& pod) const {
  PodRequest r;
  r.cpu_milli = pod.cpu_milli;
  r.memory_mib = pod.memory_mib;
  r.gpu_count = pod.gpu_count;
  r.gpu_milli = pod.gpu_count == 0 ? 0 : pod.gpu_milli;
  r.gpu_memory_mib = pod.gpu_memory_mib;
  r.models = ResolveModels(pod.gpu_spec);
  r.topology = pod.topology;
  if (pod.gpu_memory_mib == 0 && pod.gpu_memory_percent > 0 && r.gpu_count > 0) {
    // A share of "the GPU's memory": of the largest GPU among the models the pod allows, so
    // that it never takes less than its share of any GPU (it takes its share exactly where
    // the GPUs are all alike). At least 1 MiB: like any pod that asks for GPU memory, it fits
    // no GPU whose memory is unknown (0), rather than packing onto it without a limit.
    int64_t largest = 0;
    for (size_t n = 0; n < specs_.size(); ++n) {
      if (model_ids_[n] >= 0 && ((r.models >> model_ids_[n]) & 1) != 0) {
        largest = std::max(largest, specs_[n].gpu_memory_mib);
      }
    }
    r.gpu_memory_mib = std::max<int64_t>(1, (largest * pod.gpu_memory_percent + 99) / 100);
  }
  if (r.IsCpuOnly()) {
    r.gpu_count = 0;
    r.gpu_milli = 0;
    r.gpu_memory_mib = 0;
    r.models = kAnyModel;
  }
  return r;
}

void Cluster::Allocate(int node, const PodRequest& pod, GpuSet gpus) {
  NodeState& s = states_[node];
  const NodeSpec& spec = specs_[node];
  TESSERA_CHECK(s.cpu_left >= pod.cpu_milli && s.memory_left >= pod.memory_mib);
  TESSERA_CHECK(std::popcount(gpus) == (pod.IsCpuOnly() ? 0 : pod.gpu_count));
  TESSERA_CHECK(spec.gpu_count == kMaxGpusPerNode || (gpus >> spec.gpu_count) == 0);
  s.cpu_left -= pod.cpu_milli;
  s.memory_left -= pod.memory_mib;
  for (GpuSet g = gpus; g != 0; g &= g - 1) {
    const int i = std::countr_zero(g);
    TESSERA_CHECK(GpuHasRoom(s, i, pod));
    s.gpu_free[i] -= pod.gpu_milli;
    if (pod.gpu_memory_mib > 0) s.gpu_mem_free[i] -= static_cast<int32_t>(pod.gpu_memory_mib);
  }
  s.pods_by_tag[static_cast<int>(pod.Tag())]++;
  allocated_gpu_milli_ += pod.TotalGpuMilli();
}

void Cluster::Release(int node, const PodRequest& pod, GpuSet gpus) {
  NodeState& s = states_[node];
  const NodeSpec& spec = specs_[node];
  TESSERA_CHECK(s.cpu_left + pod.cpu_milli <= spec.cpu_milli);
  TESSERA_CHECK(s.memory_left + pod.memory_mib <= spec.memory_mib);
  TESSERA_CHECK(s.pods_by_tag[static_cast<int>(pod.Tag())] > 0);
  TESSERA_CHECK(std::popcount(gpus) == (pod.IsCpuOnly() ? 0 : pod.gpu_count));
  s.cpu_left += pod.cpu_milli;
  s.memory_left += pod.memory_mib;
  for (GpuSet g = gpus; g != 0; g &= g - 1) {
    const int i = std::countr_zero(g);
    TESSERA_CHECK(i < spec.gpu_count && s.gpu_free[i] + pod.gpu_milli <= kMilliPerGpu);
    s.gpu_free[i] += pod.gpu_milli;
    if (pod.gpu_memory_mib > 0) s.gpu_mem_free[i] += static_cast<int32_t>(pod.gpu_memory_mib);
  }
  s.pods_by_tag[static_cast<int>(pod.Tag())]--;
  allocated_gpu_milli_ -= pod.TotalGpuMilli();
}

}  // namespace tessera
