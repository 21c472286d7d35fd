// fgd's Policy::ScoreBound: never below the score (the scheduler's decisions depend on it),
// the same with the scheduler's memo as without, and below the score's upper limit often
// enough to prune.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "frag/target_workload.h"
#include "model/cluster.h"
#include "model/fit.h"
#include "policy/policy.h"
#include "util/rng.h"

namespace tessera {
namespace {

TEST(FgdScoreBound, IsAnUpperBoundOfTheScore) {
  Rng rng(5);
  std::vector<NodeSpec> nodes;
  const char* models[] = {"T4", "P100", "A10"};
  for (int i = 0; i < 3; ++i) nodes.push_back(NodeSpec{models[i], 96000, 1 << 20, 8, models[i], 0});
  nodes.push_back(NodeSpec{"cpu", 96000, 1 << 20, 0, "", 0});
  const Cluster cluster(nodes);
  // A workload of many classes: CPU-only, shares, whole GPUs, several GPUs, model-restricted.
  std::vector<PodSpec> pods;
  for (int i = 0; i < 400; ++i) {
    PodSpec p;
    p.name = "p" + std::to_string(i);
    p.cpu_milli = 1000 * static_cast<int64_t>(1 + rng.Below(32));
    const uint64_t kind = rng.Below(4);
    p.gpu_count = kind == 0 ? 0 : kind == 1 ? 1 : 1 << rng.Below(4);
    p.gpu_milli = kind == 0 ? 0 : kind == 1 ? 100 * static_cast<int32_t>(1 + rng.Below(9)) : 1000;
    if (kind != 0 && rng.Below(5) == 0) p.gpu_spec = "T4|A10";
    pods.push_back(p);
  }
  TargetWorkload w = TargetWorkload::FromPods(pods, 1.0);
  w.Resolve(cluster);
  ASSERT_GT(w.gpu_classes().size(), 20u);
  PolicyContext ctx;
  ctx.workload = &w;
  const std::unique_ptr<Policy> fgd = MakePolicy("fgd", ctx);
  ASSERT_TRUE(fgd->HasScoreBound());
  int checked = 0;
  int tight = 0;    // bound == score
  int pruning = 0;  // bound below the largest score any node could get for the pod
  for (int it = 0; it < 40000; ++it) {
    const int n = static_cast<int>(rng.Below(nodes.size()));
    const NodeSpec& spec = cluster.spec(n);
    NodeState st = cluster.state(n);
    st.cpu_left = 1000 * static_cast<int64_t>(rng.Below(97));
    for (int i = 0; i < spec.gpu_count; ++i) {
      const uint64_t k = rng.Below(3);
      st.gpu_free[i] = k == 0 ? 1000 : k == 1 ? 0 : 50 * static_cast<int32_t>(rng.Below(21));
    }
    PodSpec ps = pods[rng.Below(pods.size())];
    if (rng.Below(3) == 0)
      ps.gpu_milli =
          ps.gpu_count == 1 ? 50 * static_cast<int32_t>(1 + rng.Below(19)) : ps.gpu_milli;
    if (rng.Below(8) == 0 && ps.gpu_count > 1) ps.gpu_milli = 500;  // several GPUs, a share of each
    const PodRequest r = cluster.MakeRequest(ps);
    if (CheckFit(spec.gpu_count, cluster.model_id(n), st, r) != FitReason::kFits) continue;
    const NodeView plain{spec, cluster.model_id(n), st, 0};
    PolicyScratch scratch;
    const NodeView memo{spec, cluster.model_id(n), st, 0, &scratch};
    const int score = static_cast<int>(fgd->Score(plain, r).score);
    const int bound = fgd->ScoreBound(plain, r);
    ASSERT_GE(bound, score) << it;
    ASSERT_EQ(fgd->ScoreBound(memo, r), bound) << it;  // fills the memo
    ASSERT_EQ(fgd->ScoreBound(memo, r), bound) << it;  // reads it
    ++checked;
    tight += bound == score;
    // Δ ≤ the pod's GPU milli for any node: the score's limit.
    const double p = static_cast<double>(r.TotalGpuMilli());
    pruning += bound < static_cast<int>(100.0 / (1.0 + std::exp(-p / 1000.0)));
  }
  EXPECT_GT(checked, 10000);
  EXPECT_GT(tight, checked / 10);
  EXPECT_GT(pruning, checked / 10);
}

}  // namespace
}  // namespace tessera
