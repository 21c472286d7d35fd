// hami-binpack, hami-spread: the node and GPU scoring of HAMi's scheduler (its
// pkg/scheduler/policy: node_policy.go, gpu_policy.go; score.go), the comparison policies of
// docs/GPU_MEMORY.md, with HAMi's node-scheduler-policy and gpu-scheduler-policy both set to
// binpack or both to spread.
//
// Node score, before the placement (HAMi's ComputeDefaultScore; NVIDIA devices add no
// override score):
//   10 · (Σ tasks / Σ split count + Σ used cores / Σ cores + Σ used memory / Σ memory)
// over the node's GPUs, with HAMi's default split count of 10 tasks per GPU; tasks are the
// node's GPU pods (a k-GPU pod counts k), used cores the allocated milli, used memory each
// GPU's memory less its free MiB, all of it for a GPU without free compute (HAMi gives a task
// without a memory request the device's whole memory). binpack takes the highest score (the
// most used node), spread the lowest; ties fall to the per-seed node order (HAMi sorts with
// Go's unstable sort).
//
// GPU choice (HAMi's DeviceListsScore.ComputeScore, after adding the request):
//   10 · ((request cores + used cores) / 100 + (request memory + used memory) / memory)
// binpack takes the highest-scoring GPUs with room, spread the lowest (lowest index among
// equals). HAMi's third term, (tasks + 1) / split count, needs the tasks per GPU, which
// Tessera does not keep; it is left out. A request without memory counts as the whole
// device's memory for a whole GPU and as none for a compute share (Tessera's request rules,
// docs/GPU_MEMORY.md). Node memory unknown (0): the memory terms are 0.
#include "policy/hami.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <numeric>

#include "model/fit.h"
#include "policy/builtin.h"

namespace tessera {
namespace {

constexpr double kWeight = 10.0;     // HAMi's util.Weight
constexpr int kSplitCount = 10;      // HAMi's default deviceSplitCount
constexpr double kResolution = 1e4;  // integer scores: 1e-4 of HAMi's float score

// HAMi's used memory of a GPU: all of it when its compute is all taken.
int64_t UsedMib(int32_t free, int32_t mem, int64_t cap) {
  if (cap <= 0) return 0;
  if (free <= 0) return cap;
  return std::clamp<int64_t>(cap - mem, 0, cap);
}

constexpr int64_t kMaxScore = 1 << 24;  // above 30 · kResolution

class HamiPolicy final : public Policy {
 public:
  explicit HamiPolicy(bool binpack) : binpack_(binpack) {}
  std::string_view name() const override { return binpack_ ? "hami-binpack" : "hami-spread"; }

  NodeScore Score(const NodeView& node, const PodRequest& pod) const override {
    const int64_t score = HamiNodeScore(node, binpack_);
    if (pod.IsCpuOnly()) return {static_cast<double>(score), 0};
    std::array<int, kMaxGpusPerNode> order{};
    const int n = HamiGpuOrder(node, pod, binpack_, order);
    GpuSet gpus = 0;
    for (int k = 0; k < n && k < pod.gpu_count; ++k) gpus |= GpuSet{1} << order[k];
    if (std::popcount(gpus) < pod.gpu_count) gpus = 0;  // not expected: the pod fits
    return {static_cast<double>(score), gpus};
  }

 private:
  bool binpack_;
};

}  // namespace

int64_t HamiNodeScore(const NodeView& node, bool binpack) {
  const int g = node.spec.gpu_count;
  const NodeState& s = node.state;
  const int64_t cap = node.spec.gpu_memory_mib;
  double node_score = 0;
  if (g > 0) {
    const auto& t = s.pods_by_tag;
    const int64_t tasks = t[static_cast<int>(PodTypeTag::kShareGpu)] +
                          t[static_cast<int>(PodTypeTag::kOneGpu)] +
                          2 * t[static_cast<int>(PodTypeTag::kTwoGpu)] +
                          4 * t[static_cast<int>(PodTypeTag::kFourGpu)] +
                          8 * t[static_cast<int>(PodTypeTag::kEightGpu)];
    int64_t used_milli = 0;
    int64_t used_mem = 0;
    for (int i = 0; i < g; ++i) {
      used_milli += kMilliPerGpu - s.gpu_free[i];
      used_mem += UsedMib(s.gpu_free[i], s.gpu_mem_free[i], cap);
    }
    node_score = static_cast<double>(tasks) / (kSplitCount * g) +
                 static_cast<double>(used_milli) / (static_cast<double>(kMilliPerGpu) * g);
    if (cap > 0) node_score += static_cast<double>(used_mem) / static_cast<double>(cap * g);
    node_score *= kWeight;
  }
  const auto quantized = static_cast<int64_t>(std::llround(node_score * kResolution));
  return binpack ? quantized : kMaxScore - quantized;
}

int HamiGpuOrder(const NodeView& node, const PodRequest& pod, bool binpack,
                 std::array<int, kMaxGpusPerNode>& order) {
  const int g = node.spec.gpu_count;
  const NodeState& s = node.state;
  const int64_t cap = node.spec.gpu_memory_mib;
  std::array<double, kMaxGpusPerNode> gpu_score{};
  int n = 0;
  const int64_t req_mem = pod.gpu_memory_mib > 0 ? pod.gpu_memory_mib : (pod.IsSharing() ? 0 : cap);
  for (int i = 0; i < g; ++i) {
    if (!GpuHasRoom(s, i, pod)) continue;
    double v = static_cast<double>(pod.gpu_milli + kMilliPerGpu - s.gpu_free[i]) / kMilliPerGpu;
    if (cap > 0) {
      v += static_cast<double>(req_mem + UsedMib(s.gpu_free[i], s.gpu_mem_free[i], cap)) /
           static_cast<double>(cap);
    }
    gpu_score[i] = kWeight * v;
    order[n++] = i;
  }
  std::stable_sort(order.begin(), order.begin() + n, [&](int a, int b) {
    return binpack ? gpu_score[a] > gpu_score[b] : gpu_score[a] < gpu_score[b];
  });
  return n;
}

std::unique_ptr<Policy> MakeHamiBinpackPolicy(const PolicyContext&) {
  return std::make_unique<HamiPolicy>(true);
}
std::unique_ptr<Policy> MakeHamiSpreadPolicy(const PolicyContext&) {
  return std::make_unique<HamiPolicy>(false);
}

}  // namespace tessera
