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
    // The GPUs a pod takes, read from its JSON here (not by Tessera's translation): per
    // container the count (tessera.io/gpu or nvidia.com/gpu; 1 when only another GPU resource
    // is named) and the share (tessera.io/gpu-milli, nvidia.com/gpucores x 10, else a whole GPU).
    PodSpec s;
    for (const Json& c : object["spec"].value("containers", Json::array())) {
      const Json resources = c.value("resources", Json::object());
      Json r = resources.value("limits", Json::object());
      const Json requests = resources.value("requests", Json::object());
      for (auto& [k, v] : requests.items()) r[k] = v;
      int count = 0;
      bool named = false;
      int milli = kMilliPerGpu;
      for (auto& [k, v] : r.items()) {
        const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
        if (k.rfind("tessera.io/gpu", 0) == 0 || k.rfind("nvidia.com/gpu", 0) == 0) named = true;
        if (k == "tessera.io/gpu" || k == "nvidia.com/gpu") count = std::stoi(text);
        if (k == "tessera.io/gpu-milli") milli = std::stoi(text);
        if (k == "nvidia.com/gpucores" && std::stoi(text) > 0) milli = 10 * std::stoi(text);
      }
      if (named && count == 0) count = 1;
      if (count > 0) {
        s.gpu_count += count;
        s.gpu_milli = s.gpu_count > count ? kMilliPerGpu : milli;
      }
    }
    if (s.gpu_count == 0) continue;
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
