// clustering (GPU clustering): prefer nodes whose resident GPU pods have the pod's type tag
// (share-gpu, 1-gpu, 2-gpu, 4-gpu, 8-gpu, other; CPU-only pods are not counted):
// band 75 if only that tag is present, 50 if it is among others, 25 if the node holds no GPU
// pod, 0 if only other tags; plus ⌊25 · (8000 − GPU milli left) / 8000⌋.
// CPU-only pods score 0 everywhere (the tie order decides).
#include "policy/builtin.h"

namespace tessera {
namespace {

class ClusteringPolicy final : public Policy {
 public:
  std::string_view name() const override { return "clustering"; }
  NodeScore Score(const NodeView& node, const PodRequest& pod) const override {
    if (pod.IsCpuOnly()) return {0, 0};
    const int tag = static_cast<int>(pod.Tag());
    int present = 0;
    for (int t = static_cast<int>(PodTypeTag::kShareGpu); t < kNumPodTypeTags; ++t) {
      present += node.state.pods_by_tag[t] > 0;
    }
    int band;
    if (node.state.pods_by_tag[tag] > 0) {
      band = present == 1 ? 75 : 50;
    } else {
      band = present == 0 ? 25 : 0;
    }
    const int64_t fill = 25 * (static_cast<int64_t>(kSpecGpuMilli) - GpuMilliLeft(node)) /
                         static_cast<int64_t>(kSpecGpuMilli);
    return {static_cast<double>(band + fill), 0};
  }
};

}  // namespace

std::unique_ptr<Policy> MakeClusteringPolicy(const PolicyContext&) {
  return std::make_unique<ClusteringPolicy>();
}

}  // namespace tessera
