#include "k8s/live.h"

#include <algorithm>
#include <array>

namespace tessera::k8s::testing {

std::string ApiOverAllocation(const FakeApiServer& fake) {
  return OverAllocation(fake.Objects("nodes"), fake.Objects("pods"));
}

std::string OverAllocation(const std::vector<Json>& nodes, const std::vector<Json>& pods) {
  std::map<std::string, int> gpus_of;
  for (const Json& node : nodes) {
    Result<Node> n = DecodeNode(node, "node");
    if (!n.ok()) continue;
    int gpus = 0;
    for (const char* resource : {"tessera.io/gpu", "nvidia.com/gpu"}) {
      auto it = n->allocatable.find(resource);
      if (it != n->allocatable.end()) gpus = std::max(gpus, std::stoi(it->second));
    }
    gpus_of[n->name] = gpus;
  }
  struct Loose {
    std::string pod;
    int count;
    int milli;
  };
  std::map<std::string, std::array<int, kMaxGpusPerNode>> used;
  std::map<std::string, std::vector<Loose>> loose;
  for (const Json& object : pods) {
    Result<Pod> pod = DecodePod(object, "pod");
    if (!pod.ok() || pod->node_name.empty() || pod->phase == "Succeeded" ||
        pod->phase == "Failed") {
      continue;
    }
    Result<PodSpec> spec = PodToSpec(*pod);
    const PodSpec s = spec.ok() ? *spec : FailClosedSpec(*pod);
    if (s.gpu_count == 0 || s.gpu_milli == 0) continue;
    const std::string where = pod->namespace_name + "/" + pod->name + " on " + pod->node_name;
    auto node = gpus_of.find(pod->node_name);
    if (node == gpus_of.end()) return where + ": unknown node";
    used.try_emplace(pod->node_name);
    auto ann = pod->annotations.find(std::string(kGpuIndicesAnnotation));
    if (ann == pod->annotations.end()) {
      loose[pod->node_name].push_back({where, s.gpu_count, s.gpu_milli});
      continue;
    }
    Result<GpuSet> set = ParseGpuIndices(ann->second, node->second);
    if (!set.ok()) return where + ": " + set.error().message;
    int count = 0;
    for (int g = 0; g < node->second; ++g) {
      if (!(*set & (GpuSet{1} << g))) continue;
      ++count;
      used[pod->node_name][g] += s.gpu_milli;
      if (used[pod->node_name][g] > kMilliPerGpu) {
        return where + ": GPU " + std::to_string(g) + " over-allocated (" +
               std::to_string(used[pod->node_name][g]) + " milli)";
      }
    }
    if (count != s.gpu_count) return where + ": " + std::to_string(count) + " GPUs named";
  }
  for (auto& [node, pods] : loose) {
    std::array<int, kMaxGpusPerNode>& u = used[node];
    const int gpus = gpus_of[node];
    std::sort(pods.begin(), pods.end(),
              [](const Loose& a, const Loose& b) { return a.milli * a.count > b.milli * b.count; });
    for (const Loose& p : pods) {
      int need = p.count;
      for (int g = 0; g < gpus && need > 0; ++g) {
        if (p.milli == kMilliPerGpu ? u[g] == 0 : u[g] + p.milli <= kMilliPerGpu) {
          u[g] += p.milli;
          --need;
        }
      }
      if (need > 0) return p.pod + " (no GPU indices): no room left for it on its node";
    }
  }
  return "";
}

}  // namespace tessera::k8s::testing
