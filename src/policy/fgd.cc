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
    const int64_t cpu_after = node.state.cpu_left - pod.cpu_milli;
    const double before = workload_->NodeFragmentation(node.model_id, node.state.cpu_left,
                                                       node.state.gpu_free.data(), g);
    std::array<int32_t, kMaxGpusPerNode> free = node.state.gpu_free;
    if (pod.IsSharing()) {
      int best_score = -1;
      int best_gpu = -1;
      int32_t tried[kMaxGpusPerNode];
      int tried_score[kMaxGpusPerNode];
      int num_tried = 0;
      for (int i = 0; i < g; ++i) {
        if (!GpuHasRoom(node.state, i, pod)) continue;
        int score = -1;
        for (int k = 0; k < num_tried; ++k) {
          if (tried[k] == free[i]) score = tried_score[k];
        }
        if (score < 0) {
          free[i] -= pod.gpu_milli;
          score = QuantizedScore(
              before, workload_->NodeFragmentation(node.model_id, cpu_after, free.data(), g));
          free[i] += pod.gpu_milli;
          tried[num_tried] = free[i];
          tried_score[num_tried++] = score;
        }
        if (score > best_score) {
          best_score = score;
          best_gpu = i;
        }
      }
      TESSERA_CHECK(best_gpu >= 0);
      return {static_cast<double>(best_score), GpuSet{1} << best_gpu};
    }
    GpuSet gpus = 0;
    if (!pod.IsCpuOnly()) {
      gpus = DefaultGpuChoice(g, node.state, pod);
      for (GpuSet s = gpus; s != 0; s &= s - 1) free[std::countr_zero(s)] -= pod.gpu_milli;
    }
    const double after = workload_->NodeFragmentation(node.model_id, cpu_after, free.data(), g);
    return {static_cast<double>(QuantizedScore(before, after)), gpus};
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
