// k8s-default: what kube-scheduler's default scoring does for a pod that asks for
// `nvidia.com/gpu`: GPU-blind. NodeResourcesFit LeastAllocated over CPU and memory
// (⌊100 · free-after / capacity⌋ per resource, averaged) plus NodeResourcesBalancedAllocation
// (⌊100 · (1 − |cpu fraction − memory fraction| / 2)⌋). GPUs: the generic choice.
#include <algorithm>
#include <cmath>

#include "policy/builtin.h"

namespace tessera {
namespace {

int64_t LeastAllocated(int64_t capacity, int64_t free_after) {
  if (capacity <= 0 || free_after < 0) return 0;
  return free_after * 100 / capacity;
}

double Fraction(int64_t capacity, int64_t used) {
  if (capacity <= 0) return 1.0;
  return std::min(1.0, static_cast<double>(used) / static_cast<double>(capacity));
}

class K8sDefaultPolicy final : public Policy {
 public:
  std::string_view name() const override { return "k8s-default"; }
  NodeScore Score(const NodeView& node, const PodRequest& pod) const override {
    const int64_t cpu_free_after = node.state.cpu_left - pod.cpu_milli;
    const int64_t mem_free_after = node.state.memory_left - pod.memory_mib;
    const int64_t least = (LeastAllocated(node.spec.cpu_milli, cpu_free_after) +
                           LeastAllocated(node.spec.memory_mib, mem_free_after)) /
                          2;
    const double cpu_frac = Fraction(node.spec.cpu_milli, node.spec.cpu_milli - cpu_free_after);
    const double mem_frac = Fraction(node.spec.memory_mib, node.spec.memory_mib - mem_free_after);
    const auto balanced = static_cast<int64_t>((1.0 - std::abs(cpu_frac - mem_frac) / 2.0) * 100);
    return {static_cast<double>(least + balanced), 0};
  }
};

}  // namespace

std::unique_ptr<Policy> MakeK8sDefaultPolicy(const PolicyContext&) {
  return std::make_unique<K8sDefaultPolicy>();
}

}  // namespace tessera
