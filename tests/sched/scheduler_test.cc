// The grouped, cached scheduler must decide exactly as a plain loop over every node would.
#include "sched/scheduler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <numeric>

#include "frag/target_workload.h"
#include "util/rng.h"

namespace tessera {
namespace {

// Reference: score every node from scratch, normalise if asked, first max in order wins.
Decision Reference(const Cluster& c, const Policy& p, const std::vector<int>& order,
                   const PodRequest& r) {
  std::vector<std::pair<int, NodeScore>> feasible;
  for (int n : order) {
    if (c.Check(n, r) != FitReason::kFits) continue;
    feasible.emplace_back(n, p.Score(NodeView{c.spec(n), c.model_id(n), c.state(n)}, r));
  }
  Decision d;
  if (feasible.empty()) return d;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (auto& [n, s] : feasible) {
    lo = std::min(lo, s.score);
    hi = std::max(hi, s.score);
  }
  int best = std::numeric_limits<int>::min();
  for (auto& [n, s] : feasible) {
    int score = static_cast<int>(s.score);
    if (p.mode() == ScoreMode::kMinMax) {
      score = hi > lo ? static_cast<int>(std::floor(100.0 * (s.score - lo) / (hi - lo))) : 0;
    }
    if (score > best) {
      best = score;
      d.node = n;
      d.score = score;
      d.gpus = s.gpus != 0 || r.IsCpuOnly() ? s.gpus
                                            : DefaultGpuChoice(c.spec(n).gpu_count, c.state(n), r);
    }
  }
  return d;
}

class SchedulerEquivalence : public ::testing::TestWithParam<std::string> {};

TEST_P(SchedulerEquivalence, GroupedDecisionsEqualThePlainLoop) {
  Rng rng(123);
  const char* models[] = {"T4", "P100", "V100M32"};
  const int gpu_counts[] = {1, 2, 4, 8};
  std::vector<NodeSpec> nodes;
  for (int i = 0; i < 60; ++i) {  // few node types, so groups are large
    const int t = static_cast<int>(rng.Below(6));
    nodes.push_back(NodeSpec{"n" + std::to_string(i), 16000 + 16000 * (t % 3), 65536 * (1 + t % 2),
                             gpu_counts[t % 4], models[t % 3], 0});
  }
  std::vector<PodSpec> pods;
  const int32_t millis[] = {100, 250, 500, 800, 1000};
  for (int i = 0; i < 400; ++i) {
    PodSpec p;
    p.name = "p" + std::to_string(i);
    p.cpu_milli = 1000 * static_cast<int64_t>(1 + rng.Below(8));
    p.memory_mib = 1024 * static_cast<int64_t>(rng.Below(16));
    const int kind = static_cast<int>(rng.Below(10));
    if (kind == 0) {
      p.gpu_count = 0;
    } else if (kind < 5) {
      p.gpu_count = 1;
      p.gpu_milli = millis[rng.Below(4)];
    } else {
      p.gpu_count = kind < 9 ? 1 : 2;
      p.gpu_milli = 1000;
    }
    if (rng.Below(5) == 0) p.gpu_spec = "T4|P100";
    pods.push_back(p);
  }
  Cluster grouped(nodes);
  Cluster plain(nodes);
  TargetWorkload w = TargetWorkload::FromPods(pods);
  w.Resolve(grouped);
  PolicyContext ctx;
  ctx.workload = &w;
  std::unique_ptr<Policy> policy = MakePolicy(GetParam(), ctx);
  std::vector<int> order(nodes.size());
  std::iota(order.begin(), order.end(), 0);
  rng.Shuffle(order);
  Scheduler s(&grouped, policy.get(), order, 9);
  int placed = 0;
  for (const PodSpec& p : pods) {
    const PodRequest r = grouped.MakeRequest(p);
    const Decision got = s.Decide(r);
    const Decision want = Reference(plain, *policy, order, r);
    ASSERT_EQ(got.node, want.node) << p.name;
    ASSERT_EQ(got.gpus, want.gpus) << p.name;
    ASSERT_EQ(got.score, want.score) << p.name;
    if (got.ok()) {
      s.Bind(got.node, r, got.gpus);
      plain.Allocate(want.node, r, want.gpus);
      ++placed;
    }
  }
  EXPECT_GT(placed, 100);
  EXPECT_LT(placed, 400);  // the cluster filled up: failures were exercised too
}

INSTANTIATE_TEST_SUITE_P(AllScoredPolicies, SchedulerEquivalence,
                         ::testing::Values("tessera", "fgd", "bestfit", "packing", "clustering",
                                           "dotprod", "k8s-default"));

TEST(Scheduler, FailureCountsRejectionsPerFilter) {
  Cluster c({NodeSpec{"a", 1000, 1024, 1, "T4", 0}, NodeSpec{"b", 64000, 1024, 1, "T4", 0},
             NodeSpec{"c", 64000, 65536, 1, "P100", 0}});
  TargetWorkload w;
  PolicyContext ctx;
  ctx.workload = &w;
  std::unique_ptr<Policy> p = MakePolicy("bestfit", ctx);
  Scheduler s(&c, p.get(), {0, 1, 2}, 1);
  PodSpec pod;
  pod.cpu_milli = 2000;
  pod.memory_mib = 2048;
  pod.gpu_count = 1;
  pod.gpu_milli = 1000;
  pod.gpu_spec = "T4";
  const Decision d = s.Decide(c.MakeRequest(pod));
  EXPECT_FALSE(d.ok());
  EXPECT_EQ(d.rejected[static_cast<int>(FitReason::kCpu)], 1);
  EXPECT_EQ(d.rejected[static_cast<int>(FitReason::kMemory)], 1);
  EXPECT_EQ(d.rejected[static_cast<int>(FitReason::kGpuModel)], 1);
}

TEST(Scheduler, EqualNodesShareOneGroupUntilTheyDiffer) {
  std::vector<NodeSpec> nodes;
  for (int i = 0; i < 1000; ++i)
    nodes.push_back(NodeSpec{"n" + std::to_string(i), 64000, 65536, 8, "T4", 0});
  Cluster c(nodes);
  TargetWorkload w;
  PolicyContext ctx;
  ctx.workload = &w;
  std::unique_ptr<Policy> p = MakePolicy("bestfit", ctx);
  std::vector<int> order(nodes.size());
  std::iota(order.begin(), order.end(), 0);
  Scheduler s(&c, p.get(), order, 1);
  EXPECT_EQ(s.distinct_states(), 1);
  PodSpec pod;
  pod.cpu_milli = 1000;
  pod.gpu_count = 1;
  pod.gpu_milli = 1000;
  const PodRequest r = c.MakeRequest(pod);
  const Decision d = s.Decide(r);
  EXPECT_EQ(d.node, 0);
  s.Bind(d.node, r, d.gpus);
  EXPECT_EQ(s.distinct_states(), 2);
  s.Unbind(d.node, r, d.gpus);
  EXPECT_EQ(s.distinct_states(), 1);
}

}  // namespace
}  // namespace tessera
