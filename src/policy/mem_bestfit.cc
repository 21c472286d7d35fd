// mem-bestfit: GPU memory best-fit, the comparison policy of docs/GPU_MEMORY.md. The node and
// GPU that leave the least usable GPU memory on the node after the placement win:
//   leftover = Σ_i u_i after the placement, u_i = free MiB of GPU i if it has free compute,
//              else 0 (nothing can start on a GPU without free compute);
//   a sharing pod takes the GPU with room whose u_i is least after it (then the least free
//   milli after it, then the lowest index); whole-GPU pods the lowest-index GPUs with room.
// The score is the integer −leftover (MiB); ties fall to the per-seed node order. On a node
// whose GPU memory is unknown, u_i is the free milli times 16.384 (as if the GPU had 16 GiB),
// so such nodes neither always win nor always lose. CPU-only pods are scored the same way
// (their placement leaves the GPUs as they are: GPU-poor nodes do not win for them).
#include <bit>
#include <cstdint>

#include "model/fit.h"
#include "policy/builtin.h"

namespace tessera {
namespace {

// Usable MiB of GPU i with `free` milli and `mem` MiB free on a node of `cap` MiB per GPU.
int64_t UsableMib(int32_t free, int32_t mem, int64_t cap) {
  if (free <= 0) return 0;
  if (cap <= 0) return static_cast<int64_t>(free) * 16384 / kMilliPerGpu;
  return mem > 0 ? mem : 0;
}

class MemBestFitPolicy final : public Policy {
 public:
  std::string_view name() const override { return "mem-bestfit"; }
  NodeScore Score(const NodeView& node, const PodRequest& pod) const override {
    const int g = node.spec.gpu_count;
    const int64_t cap = node.spec.gpu_memory_mib;
    const NodeState& s = node.state;
    int64_t total = 0;
    for (int i = 0; i < g; ++i) total += UsableMib(s.gpu_free[i], s.gpu_mem_free[i], cap);
    const auto pod_mem = static_cast<int32_t>(pod.gpu_memory_mib);
    if (pod.IsCpuOnly()) return {static_cast<double>(-total), 0};
    if (pod.IsSharing()) {
      int best = -1;
      int64_t best_after = 0;
      int32_t best_free = 0;
      for (int i = 0; i < g; ++i) {
        if (!GpuHasRoom(s, i, pod)) continue;
        const int32_t free_after = s.gpu_free[i] - pod.gpu_milli;
        const int64_t after = UsableMib(free_after, s.gpu_mem_free[i] - pod_mem, cap);
        if (best < 0 || after < best_after || (after == best_after && free_after < best_free)) {
          best = i;
          best_after = after;
          best_free = free_after;
        }
      }
      if (best < 0) return {static_cast<double>(-total), 0};  // not expected: the pod fits
      const int64_t before = UsableMib(s.gpu_free[best], s.gpu_mem_free[best], cap);
      return {static_cast<double>(-(total - before + best_after)), GpuSet{1} << best};
    }
    const GpuSet gpus = DefaultGpuChoice(g, s, pod, node.spec.topology.get());
    int64_t left = total;
    for (GpuSet rest = gpus; rest != 0; rest &= rest - 1) {
      const int i = std::countr_zero(rest);
      left -= UsableMib(s.gpu_free[i], s.gpu_mem_free[i], cap);
      left += UsableMib(s.gpu_free[i] - pod.gpu_milli, s.gpu_mem_free[i] - pod_mem, cap);
    }
    return {static_cast<double>(-left), gpus};
  }
};

}  // namespace

std::unique_ptr<Policy> MakeMemBestFitPolicy(const PolicyContext&) {
  return std::make_unique<MemBestFitPolicy>();
}

}  // namespace tessera
