// fgd (Fragmentation Gradient Descent, USENIX ATC '23): the node and GPU that minimise the
// increase of the node's fragmentation F_n(M) against the target workload M. As published,
// the score is the integer ⌊100 · sigmoid(Δ / 1000)⌋, Δ = F_n before − F_n after (milli).
// A sharing pod tries every GPU with room and takes the first best by index; whole-GPU pods
// take the lowest-index free GPUs (which are also the tightest sufficient ones).
#include <array>
#include <bit>
#include <cmath>

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

 private:
  const TargetWorkload* workload_;
};

}  // namespace

std::unique_ptr<Policy> MakeFgdPolicy(const PolicyContext& context) {
  if (context.workload == nullptr) return nullptr;
  return std::make_unique<FgdPolicy>(context.workload);
}

}  // namespace tessera
