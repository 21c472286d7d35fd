#include "sim/inflation.h"

#include <gtest/gtest.h>

#include <map>

#include "model/cluster.h"

namespace tessera {
namespace {

std::vector<PodSpec> Pods() {
  std::vector<PodSpec> pods;
  for (int i = 0; i < 50; ++i) {
    PodSpec p;
    p.name = "p" + std::to_string(i);
    p.cpu_milli = 2000;
    p.memory_mib = 1024;
    p.gpu_count = i % 5 == 0 ? 0 : 1;
    p.gpu_milli = i % 5 == 0 ? 0 : (i % 2 ? 1000 : 250);
    pods.push_back(p);
  }
  return pods;
}

std::vector<NodeSpec> Nodes() {
  std::vector<NodeSpec> nodes;
  for (int i = 0; i < 8; ++i)
    nodes.push_back(NodeSpec{"n" + std::to_string(i), 64000, 262144, 4, "T4", 0});
  return nodes;
}

TEST(InflatedSequence, ShufflesOriginalsThenAppendsClonesUpToTheTarget) {
  const std::vector<PodSpec> pods = Pods();
  const int64_t capacity = 32000;
  const auto seq = InflatedSequence(pods, capacity, 42, 130);
  std::map<int, int> originals;
  int64_t total = 0;
  bool ordered = true;
  for (size_t k = 0; k < seq.size(); ++k) {
    total += pods[seq[k].first].TotalGpuMilli();
    if (seq[k].second == 0) originals[seq[k].first]++;
    if (k < pods.size() && seq[k].second != 0) ordered = false;
  }
  EXPECT_EQ(originals.size(), pods.size());  // every original exactly once, first
  EXPECT_TRUE(ordered);
  EXPECT_LE(total, capacity * 13 / 10);
  EXPECT_GT(total, capacity * 13 / 10 - 1000);  // stops only when a clone would overshoot
  EXPECT_EQ(seq, InflatedSequence(pods, capacity, 42, 130));
  EXPECT_NE(seq, InflatedSequence(pods, capacity, 43, 130));
}

TEST(InflatedSequence, RemovesPodsWhenTheListExceedsTheTarget) {
  const std::vector<PodSpec> pods = Pods();
  const auto seq = InflatedSequence(pods, 10000, 42, 100);
  int64_t total = 0;
  for (const auto& [pod, clone] : seq) {
    EXPECT_EQ(clone, 0);
    total += pods[pod].TotalGpuMilli();
  }
  EXPECT_LE(total, 10000);
  EXPECT_LT(seq.size(), pods.size());
}

TEST(RunInflation, CurveHasEveryLevelAndIsDeterministic) {
  const std::vector<NodeSpec> nodes = Nodes();
  const std::vector<PodSpec> pods = Pods();
  TargetWorkload w = TargetWorkload::FromPods(pods);
  w.Resolve(Cluster(nodes));
  const InflationOptions options;
  Result<RunResult> a = RunInflation(nodes, pods, w, "fgd", 42, options);
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->curve.size(), 131u);
  EXPECT_DOUBLE_EQ(a->curve[0].unallocated_pct, 100.0);
  for (size_t i = 1; i < a->curve.size(); ++i) {
    EXPECT_GE(a->curve[i].arrived_pct, a->curve[i - 1].arrived_pct);
    EXPECT_GE(a->curve[i].allocated_milli, a->curve[i - 1].allocated_milli);
  }
  EXPECT_EQ(a->submitted, static_cast<int>(a->placements.size()));
  int failed = 0;
  for (const PlacementRecord& p : a->placements) failed += p.node < 0;
  EXPECT_EQ(failed, a->failed);
  EXPECT_GT(a->failed, 0);  // 130 % of capacity cannot all fit
  Result<RunResult> b = RunInflation(nodes, pods, w, "fgd", 42, options);
  ASSERT_EQ(a->placements.size(), b->placements.size());
  for (size_t i = 0; i < a->placements.size(); ++i) {
    EXPECT_EQ(a->placements[i].node, b->placements[i].node);
    EXPECT_EQ(a->placements[i].gpus, b->placements[i].gpus);
  }
  EXPECT_FALSE(RunInflation(nodes, pods, w, "no-such-policy", 42, options).ok());
}

}  // namespace
}  // namespace tessera
