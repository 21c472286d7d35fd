// packing (GPU packing): first GPUs already shared, then partly used nodes, then the smallest
// idle nodes. Tiers, on the GPUs the generic (tightest-first) choice would take:
//   a sharing pod into partly used GPUs only: max(100 − ⌊Σ left·100/1000⌋ / 10, 50)  (91..100)
//   the choice opens t fully free GPUs on a node in use: max(50 − t, 33)
//   the node is completely idle, with f GPUs: max(33 − f, f)   (fewer GPUs win)
// CPU-only pods score 0 everywhere (the tie order decides).
#include <algorithm>
#include <array>
#include <numeric>

#include "model/fit.h"
#include "policy/builtin.h"

namespace tessera {
namespace {

class PackingPolicy final : public Policy {
 public:
  std::string_view name() const override { return "packing"; }
  NodeScore Score(const NodeView& node, const PodRequest& pod) const override {
    if (pod.IsCpuOnly()) return {0, 0};
    const int g = node.spec.gpu_count;
    int fully_free = 0;
    for (int i = 0; i < g; ++i) fully_free += node.state.gpu_free[i] == kMilliPerGpu;
    if (fully_free == g) return {static_cast<double>(std::max(33 - fully_free, fully_free)), 0};
    // Tightest-first (stable by index) choice of the GPUs.
    std::array<int, kMaxGpusPerNode> order{};
    std::iota(order.begin(), order.begin() + g, 0);
    std::stable_sort(order.begin(), order.begin() + g,
                     [&](int a, int b) { return node.state.gpu_free[a] < node.state.gpu_free[b]; });
    int taken = 0;
    int opened = 0;
    int64_t used_pct = 0;
    for (int k = 0; k < g && taken < pod.gpu_count; ++k) {
      const int i = order[k];
      if (!GpuHasRoom(node.state, i, pod)) continue;
      ++taken;
      opened += node.state.gpu_free[i] == kMilliPerGpu;
      used_pct += int64_t{node.state.gpu_free[i]} * 100 / kMilliPerGpu;
    }
    if (opened > 0) return {static_cast<double>(std::max(50 - opened, 33)), 0};
    return {static_cast<double>(std::max<int64_t>(100 - used_pct / 10, 50)), 0};
  }
};

}  // namespace

std::unique_ptr<Policy> MakePackingPolicy(const PolicyContext&) {
  return std::make_unique<PackingPolicy>();
}

}  // namespace tessera
