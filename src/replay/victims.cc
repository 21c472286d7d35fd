#include "replay/victims.h"

#include <algorithm>
#include <bit>
#include <tuple>

#include "model/fit.h"

namespace tessera {
namespace {

// Adds (sign +1) or takes (sign −1) `pod`'s resources on `gpus` to a hypothetical state.
void Apply(NodeState* s, const PodRequest& pod, GpuSet gpus, int sign) {
  s->cpu_left += sign * pod.cpu_milli;
  s->memory_left += sign * pod.memory_mib;
  for (GpuSet g = gpus; g != 0; g &= g - 1) {
    const int i = std::countr_zero(g);
    s->gpu_free[i] += sign * pod.gpu_milli;
    if (pod.gpu_memory_mib > 0)
      s->gpu_mem_free[i] += sign * static_cast<int32_t>(pod.gpu_memory_mib);
  }
}

}  // namespace

bool VictimsOnNode(const Cluster& cluster, int node, const PodRequest& pod,
                   std::vector<VictimCandidate> candidates, std::vector<int>* victims) {
  victims->clear();
  const int gpu_count = cluster.spec(node).gpu_count;
  const int model = cluster.model_id(node);
  NodeState s = cluster.state(node);
  for (const VictimCandidate& c : candidates) Apply(&s, c.request, c.gpus, +1);
  if (CheckFit(gpu_count, model, s, pod) != FitReason::kFits) return false;
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const VictimCandidate& a, const VictimCandidate& b) {
                     if (a.priority != b.priority) return a.priority > b.priority;
                     return a.request.TotalGpuMilli() < b.request.TotalGpuMilli();
                   });
  for (const VictimCandidate& c : candidates) {
    Apply(&s, c.request, c.gpus, -1);  // reprieve c
    if (CheckFit(gpu_count, model, s, pod) != FitReason::kFits) {
      Apply(&s, c.request, c.gpus, +1);
      victims->push_back(c.id);
    }
  }
  return true;
}

bool VictimCost::operator<(const VictimCost& o) const {
  return std::tie(max_priority, count, gpu_milli) < std::tie(o.max_priority, o.count, o.gpu_milli);
}

}  // namespace tessera
