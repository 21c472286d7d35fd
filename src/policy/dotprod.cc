// dotprod: node vector [CPU left / 128000, GPU milli left / 8000], pod vector the same for
// the request; the smallest dot product wins: score ⌊100 · (1 − dot / 2)⌋.
#include "policy/builtin.h"

namespace tessera {
namespace {

class DotProdPolicy final : public Policy {
 public:
  std::string_view name() const override { return "dotprod"; }
  NodeScore Score(const NodeView& node, const PodRequest& pod) const override {
    const double dot = (static_cast<double>(node.state.cpu_left) / kSpecCpuMilli) *
                           (static_cast<double>(pod.cpu_milli) / kSpecCpuMilli) +
                       (static_cast<double>(GpuMilliLeft(node)) / kSpecGpuMilli) *
                           (static_cast<double>(pod.TotalGpuMilli()) / kSpecGpuMilli);
    return {static_cast<double>(static_cast<int64_t>(100.0 * (1.0 - dot / 2.0))), 0};
  }
};

}  // namespace

std::unique_ptr<Policy> MakeDotProdPolicy(const PolicyContext&) {
  return std::make_unique<DotProdPolicy>();
}

}  // namespace tessera
