// fgd (Fragmentation Gradient Descent, USENIX ATC '23): the node and GPU that minimise the
// increase of the node's fragmentation F_n(M) against the target workload M. As published,
// the score is the integer ⌊100 · sigmoid(Δ / 1000)⌋, Δ = F_n before − F_n after (milli).
// A sharing pod tries every GPU with room and takes the first best by index; whole-GPU pods
// take the lowest-index free GPUs (which are also the tightest sufficient ones).
//
// ScoreBound: Δ is bounded per node state, class by class. Let p be the pod's GPU milli in
// all. A class m that the node cannot host before the placement cannot after (resources only
// shrink), and neither can CPU-only classes use a GPU: their fragment is R before and after,
// so Δ_m = p exactly. For a class m that the node can host, placing a whole GPU costs nothing
// (those GPUs were usable for m): Δ_m ≤ 0; placing a share on GPU i gives Δ_m ≤ p if f_i is
// below m's milli (f_i was fragment already) and Δ_m ≤ 0 otherwise. (If m still fits after,
// only GPU i's term changes; if not, Δ_m = p − U_m with U_m = R − F_m the milli usable for m,
// and U_m ≥ f_i ≥ p when GPU i, or the whole GPUs taken, are usable for m.) So
//   whole GPUs:  Δ ≤ p · (Σ p_m over the classes the node cannot host),
//   sharing:     Δ ≤ p · (that + Σ p_m over hostable classes whose milli exceeds f_min),
// f_min the least free milli among the GPUs with room for the pod (the placement tried that
// gives the largest bound), CPU-only pods Δ ≤ 0, and any pod Δ ≤ p. The score is monotone
// in Δ; a margin of 1e-6 milli covers the rounding of both sums (about 1e-10 milli). The sums
// of p_m run over sets of classes as bit masks, by tables of the sums of each byte's classes
// (built once, class order within a byte, bytes in order: the same for every caller).
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
  explicit FgdPolicy(const TargetWorkload* workload) : workload_(workload) {
    const std::vector<TargetClass>& classes = workload_->gpu_classes();
    if (classes.size() > 64) return;  // no bounds by mask: ScoreBound takes the plain loop
    for (size_t i = 0; i < classes.size(); ++i) {
      all_ |= uint64_t{1} << i;
      for (int32_t f = 0; f <= kMilliPerGpu; ++f) {
        if (classes[i].gpu_milli > f) above_[f] |= uint64_t{1} << i;
      }
    }
    for (size_t byte = 0; byte < 8; ++byte) {
      for (int v = 0; v < 256; ++v) {
        double sum = 0;
        for (int bit = 0; bit < 8; ++bit) {
          const size_t c = byte * 8 + bit;
          if (((v >> bit) & 1) != 0 && c < classes.size()) sum += classes[c].probability;
        }
        sums_[byte][v] = sum;
      }
    }
  }
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
    double mass = workload_->cpu_only_probability();  // Σ p_m of the classes where Δ_m may be p
    if (all_ != 0) {
      // The classes the node can host, memoised per node state by the scheduler.
      uint64_t hostable;
      if (node.scratch == nullptr) {
        hostable = Hostable(node);
      } else {
        if (!node.scratch->valid) {
          node.scratch->bits = Hostable(node);
          node.scratch->valid = true;
        }
        hostable = node.scratch->bits;
      }
      uint64_t counted = all_ & ~hostable;
      if (sharing) counted |= hostable & above_[f_min];
      for (size_t byte = 0; counted != 0; ++byte, counted >>= 8) mass += sums_[byte][counted & 255];
    } else {  // too many classes for masks
      for (const TargetClass& c : workload_->gpu_classes()) {
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
  // The GPU classes the node can host, as bits (index in gpu_classes()).
  uint64_t Hostable(const NodeView& node) const {
    const std::vector<TargetClass>& classes = workload_->gpu_classes();
    uint64_t bits = 0;
    for (size_t i = 0; i < classes.size(); ++i) {
      if (CanHost(node, classes[i])) bits |= uint64_t{1} << i;
    }
    return bits;
  }

  const TargetWorkload* workload_;
  uint64_t all_ = 0;  // every GPU class, as bits (0: more than 64 classes)
  std::array<uint64_t, kMilliPerGpu + 1> above_{};  // by milli f: the classes above f
  std::array<std::array<double, 256>, 8> sums_{};   // Σ p of the classes of one byte's bits
};

}  // namespace

std::unique_ptr<Policy> MakeFgdPolicy(const PolicyContext& context) {
  if (context.workload == nullptr) return nullptr;
  return std::make_unique<FgdPolicy>(context.workload);
}

}  // namespace tessera
