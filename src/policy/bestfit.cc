// bestfit: the least leftover 0.5·(CPU left − req)/128000 + 0.5·(GPU left − req)/8000,
// as the integer ⌊100 · (1 − leftover)⌋, min–max normalised across feasible nodes by the
// scheduler. CPU-only pods are scored too (they lean to GPU-poor nodes).
#include "policy/builtin.h"

namespace tessera {
namespace {

class BestFitPolicy final : public Policy {
 public:
  std::string_view name() const override { return "bestfit"; }
  ScoreMode mode() const override { return ScoreMode::kMinMax; }
  NodeScore Score(const NodeView& node, const PodRequest& pod) const override {
    const double leftover =
        0.5 * static_cast<double>(node.state.cpu_left - pod.cpu_milli) / kSpecCpuMilli +
        0.5 * static_cast<double>(GpuMilliLeft(node) - pod.TotalGpuMilli()) / kSpecGpuMilli;
    return {static_cast<double>(static_cast<int64_t>((1.0 - leftover) * 100.0)), 0};
  }
};

}  // namespace

std::unique_ptr<Policy> MakeBestFitPolicy(const PolicyContext&) {
  return std::make_unique<BestFitPolicy>();
}

}  // namespace tessera
