// fgd (Fragmentation Gradient Descent, USENIX ATC '23): the node and GPU that minimise the
// increase of the node's fragmentation F_n(M) against the target workload M. As published,
// the score is the integer ⌊100 · sigmoid(Δ / 1000)⌋, Δ = F_n before − F_n after (milli).
// A sharing pod tries every GPU with room and takes the first best by index; whole-GPU pods
// take the lowest-index free GPUs (which are also the tightest sufficient ones).
//
// ScoreBound: Δ is bounded per node state, class by class. Let p be the pod's GPU milli in
// all. A class m that the node cannot host before the placement cannot after (resources only
// shrink), and neither can CPU-only classes use a GPU: their fragment is R before and after,
// so Δ_m = p exactly. A class that the node can host loses nothing to the placement of a
// whole GPU (those GPUs were usable for m): Δ_m ≤ 0; for a sharing pod placed on GPU i,
// Δ_m ≤ p if f_i is below m's milli (f_i was fragment already) and Δ_m ≤ 0 otherwise. (If m
// no longer fits after, its fragment grows to R_after = R − p ≥ F_m + p·[f_i ≥ milli_m].) So
//   whole GPUs:  Δ ≤ p · (Σ p_m over the classes the node cannot host),
//   sharing:     Δ ≤ p · (that + Σ p_m over hostable classes whose milli exceeds f_min),
// f_min the least free milli among the GPUs with room for the pod (the placement tried that
// gives the largest bound), CPU-only pods Δ ≤ 0, and any pod Δ ≤ p. The score is monotone
// in Δ; a margin of 1e-6 milli covers the rounding of both sums (about 1e-10 milli).
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <vector>

#include "frag/target_workload.h"
#include "model/fit.h"
#include "policy/builtin.h"
#include "policy/hypothetical.h"
#include "util/check.h"

namespace tessera {
namespace {

int QuantizedScore(double before, double after) {
  const double x = (before - after) / 1000.0;
  return static_cast<int>(100.0 / (1.0 + std::exp(-x)));
}

// Slack added to a bound of Δ (milli) for the rounding of the sums on both sides.
constexpr double kBoundMargin = 1e-6;

class FgdPolicy final : public Policy {
 public:
  explicit FgdPolicy(const TargetWorkload* workload) : workload_(workload) {}
  std::string_view name() const override { return "fgd"; }

  NodeScore Score(const NodeView& node, const PodRequest& pod) const override {
    const int g = node.spec.gpu_count;
    const double before = workload_->NodeFragmentation(node.model_id, node.state.cpu_left,
                                                       node.state.gpu_free.data(), g);
    return BestHypotheticalPlacement(node, pod, [&](int64_t cpu_after, const int32_t* free) {
      return QuantizedScore(before,
                            workload_->NodeFragmentation(node.model_id, cpu_after, free, g));
    });
  }

  bool HasScoreBound() const override { return true; }

  int ScoreBound(const NodeView& node, const PodRequest& pod) const override {
    if (pod.IsCpuOnly()) return QuantizedScore(kBoundMargin, 0);
    const double p = static_cast<double>(pod.TotalGpuMilli());
    const bool sharing = pod.IsSharing();
    if (!sharing && pod.gpu_milli != kMilliPerGpu) return QuantizedScore(p + kBoundMargin, 0);
    // The least free milli among the GPUs with room (sharing pods only).
    int32_t f_min = kMilliPerGpu;
    if (sharing) {
      for (int i = 0; i < node.spec.gpu_count; ++i) {
        if (GpuHasRoom(node.state, i, pod)) f_min = std::min(f_min, node.state.gpu_free[i]);
      }
    }
    const std::vector<TargetClass>& classes = workload_->gpu_classes();
    double mass = 0;  // Σ p_m over the classes whose Δ_m may reach p
    if (classes.size() <= 64) {
      // The same sums in the same order with the memo as without it.
      double unhostable = 0;
      uint64_t hostable = 0;
      if (node.scratch == nullptr) {
        Hostable(node, &unhostable, &hostable);
      } else {
        if (!node.scratch->valid) {
          Hostable(node, &node.scratch->values[0], &node.scratch->bits);
          node.scratch->valid = true;
        }
        unhostable = node.scratch->values[0];
        hostable = node.scratch->bits;
      }
      mass = unhostable;
      if (sharing) {
        for (uint64_t b = hostable; b != 0; b &= b - 1) {
          const TargetClass& c = classes[std::countr_zero(b)];
          if (c.gpu_milli > f_min) mass += c.probability;
        }
      }
    } else {  // too many classes for the memo's bits
      mass = workload_->cpu_only_probability();
      for (const TargetClass& c : classes) {
        if (!CanHost(node, c) || (sharing && c.gpu_milli > f_min)) mass += c.probability;
      }
    }
    return QuantizedScore(p * mass + kBoundMargin, 0);
  }

 private:
  // Whether the node, as it is, can host class `c` (NodeFragmentation's test).
  static bool CanHost(const NodeView& node, const TargetClass& c) {
    if (node.model_id < 0 || ((c.models >> node.model_id) & 1) == 0 ||
        node.state.cpu_left < c.cpu_milli) {
      return false;
    }
    int fitting = 0;
    for (int i = 0; i < node.spec.gpu_count; ++i) fitting += node.state.gpu_free[i] >= c.gpu_milli;
    return fitting >= c.gpu_count;
  }
  // ScoreBound's memo of a node state: Σ p_m over the classes it cannot host (CPU-only
  // included) in *unhostable, the GPU classes it can host as bits (index in gpu_classes()).
  void Hostable(const NodeView& node, double* unhostable, uint64_t* hostable) const {
    const std::vector<TargetClass>& classes = workload_->gpu_classes();
    double mass = workload_->cpu_only_probability();
    uint64_t bits = 0;
    for (size_t i = 0; i < classes.size(); ++i) {
      if (CanHost(node, classes[i])) {
        bits |= uint64_t{1} << i;
      } else {
        mass += classes[i].probability;
      }
    }
    *unhostable = mass;
    *hostable = bits;
  }

  const TargetWorkload* workload_;
};

}  // namespace

std::unique_ptr<Policy> MakeFgdPolicy(const PolicyContext& context) {
  if (context.workload == nullptr) return nullptr;
  return std::make_unique<FgdPolicy>(context.workload);
}

}  // namespace tessera
