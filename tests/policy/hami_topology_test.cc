// hami-topology (src/policy/hami_topology.cc) on hand-made nodes: a 2×4 NVLink node with
// HAMi-scale link scores (100 per NVLink pair inside an island, 10 across the CPU sockets), on
// which a 4-GPU pod gets one island, a 2-GPU pod an NVLink pair and a single GPU or a share
// the worst-linked card, where hami-binpack's choice would split the islands; and without a
// topology it places exactly as hami-binpack.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "frag/target_workload.h"
#include "model/cluster.h"
#include "policy/policy.h"
#include "sched/scheduler.h"

namespace tessera {
namespace {

// Two 4-GPU NVLink islands (GPUs 0-3 and 4-7), each on its own NUMA node: 100 inside an
// island, 10 across (HAMi's P2PLinkCrossCPU).
TopologyPtr TwoIslands() {
  auto t = std::make_shared<GpuTopology>();
  t->gpu_count = 8;
  for (int i = 0; i < 8; ++i) {
    t->nvlink[i] = static_cast<uint8_t>(i / 4);
    t->numa[i] = static_cast<uint8_t>(i / 4);
    for (int j = 0; j < 8; ++j) {
      if (i != j) t->link[i][j] = i / 4 == j / 4 ? 100 : 10;
    }
  }
  return t;
}

NodeSpec Node(const std::string& name, TopologyPtr topology) {
  NodeSpec n{name, 96000, 393216, 8, "V100M32", 32768};
  n.topology = std::move(topology);
  return n;
}

PodSpec Pod(int gpus, int32_t milli = 1000) {
  PodSpec p;
  p.name = "p";
  p.cpu_milli = 4000;
  p.memory_mib = 8192;
  p.gpu_count = gpus;
  p.gpu_milli = milli;
  return p;
}

GpuSet Gpus(std::initializer_list<int> idx) {
  GpuSet s = 0;
  for (int i : idx) s |= GpuSet{1} << i;
  return s;
}

// One node; the GPUs in `taken` each hold a 1-GPU pod; then `pod` is decided by `policy`.
Decision DecideAfter(const std::string& policy_name, TopologyPtr topology, GpuSet taken,
                     const PodSpec& pod) {
  Cluster cluster({Node("n0", std::move(topology))});
  TargetWorkload workload = TargetWorkload::FromPods({Pod(1), pod});
  workload.Resolve(cluster);
  PolicyContext ctx;
  ctx.workload = &workload;
  std::unique_ptr<Policy> policy = MakePolicy(policy_name, ctx);
  EXPECT_NE(policy, nullptr);
  Scheduler s(&cluster, policy.get(), {0}, 1);
  const PodRequest one = cluster.MakeRequest(Pod(1));
  for (int i = 0; i < 8; ++i) {
    if (taken & (GpuSet{1} << i)) s.Bind(0, one, GpuSet{1} << i);
  }
  return s.Decide(cluster.MakeRequest(pod));
}

TEST(HamiTopology, FourGpuPodGetsOneIsland) {
  // GPU 1 is taken: island 0-3 has three GPUs free, island 4-7 four.
  const Decision d = DecideAfter("hami-topology", TwoIslands(), Gpus({1}), Pod(4));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.gpus, Gpus({4, 5, 6, 7}));
  // hami-binpack takes the first free GPUs by index, across the islands.
  const Decision b = DecideAfter("hami-binpack", TwoIslands(), Gpus({1}), Pod(4));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b.gpus, Gpus({0, 2, 3, 4}));
}

// Both islands are free: HAMi's Fit meets the highest NUMA node's GPUs first and keeps the
// first best combination.
TEST(HamiTopology, FourGpuPodOnAnIdleNodeTakesTheLastNumaNodesIsland) {
  const Decision d = DecideAfter("hami-topology", TwoIslands(), 0, Pod(4));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.gpus, Gpus({4, 5, 6, 7}));
}

TEST(HamiTopology, TwoGpuPodGetsAnNvlinkPair) {
  // GPUs 0-2 taken: 3 is alone in its island; the best pair is 4+5 (100), not 3+4 (10).
  const Decision d = DecideAfter("hami-topology", TwoIslands(), Gpus({0, 1, 2}), Pod(2));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.gpus, Gpus({4, 5}));
  const Decision b = DecideAfter("hami-binpack", TwoIslands(), Gpus({0, 1, 2}), Pod(2));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b.gpus, Gpus({3, 4}));
}

TEST(HamiTopology, SingleGpuTakesTheWorstLinkedCard) {
  // GPUs 5-7 taken: free 0-3 (each 3·100 + 10 to the others) and 4 (4·10 = 40): GPU 4 is
  // the worst-linked card, and taking it leaves island 0-3 whole.
  const Decision d = DecideAfter("hami-topology", TwoIslands(), Gpus({5, 6, 7}), Pod(1));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.gpus, Gpus({4}));
  const Decision b = DecideAfter("hami-binpack", TwoIslands(), Gpus({5, 6, 7}), Pod(1));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b.gpus, Gpus({0}));
}

TEST(HamiTopology, ShareTakesTheWorstLinkedCard) {
  const Decision d = DecideAfter("hami-topology", TwoIslands(), Gpus({5, 6, 7}), Pod(1, 300));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.gpus, Gpus({4}));
}

// On a node whose GPUs are linked alike every share candidate is equally "worst", and HAMi's
// spread order (the least used GPU first) decides: the second share opens an idle GPU, where
// hami-binpack stacks it on the first.
TEST(HamiTopology, SharesAmongAlikeGpusSpread) {
  auto pcie = std::make_shared<GpuTopology>();
  pcie->gpu_count = 8;
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) pcie->link[i][j] = i == j ? 0 : 20;
  }
  for (const char* name : {"hami-topology", "hami-binpack"}) {
    Cluster cluster({Node("n0", pcie)});
    TargetWorkload workload = TargetWorkload::FromPods({Pod(1, 300)});
    workload.Resolve(cluster);
    PolicyContext ctx;
    ctx.workload = &workload;
    std::unique_ptr<Policy> policy = MakePolicy(name, ctx);
    Scheduler s(&cluster, policy.get(), {0}, 1);
    const PodRequest share = cluster.MakeRequest(Pod(1, 300));
    s.Bind(0, share, Gpus({0}));
    const Decision d = s.Decide(share);
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(d.gpus, std::string(name) == "hami-topology" ? Gpus({1}) : Gpus({0})) << name;
  }
}

TEST(HamiTopology, TakesAllWhenExactlyEnoughAreFree) {
  // Only 3 and 4 are free: HAMi takes the candidates as they are, across the islands.
  const Decision d = DecideAfter("hami-topology", TwoIslands(), Gpus({0, 1, 2, 5, 6, 7}), Pod(2));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.gpus, Gpus({3, 4}));
}

// The node choice is HAMi's binpack: the more used node wins, topology or not.
TEST(HamiTopology, NodeChoiceIsBinpack) {
  for (const char* name : {"hami-topology", "hami-binpack"}) {
    Cluster cluster({Node("n0", TwoIslands()), Node("n1", TwoIslands())});
    TargetWorkload workload = TargetWorkload::FromPods({Pod(1), Pod(2)});
    workload.Resolve(cluster);
    PolicyContext ctx;
    ctx.workload = &workload;
    std::unique_ptr<Policy> policy = MakePolicy(name, ctx);
    Scheduler s(&cluster, policy.get(), {0, 1}, 1);
    s.Bind(1, cluster.MakeRequest(Pod(1)), Gpus({7}));
    const Decision d = s.Decide(cluster.MakeRequest(Pod(2)));
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(d.node, 1) << name;
  }
}

// Without a topology the policy is hami-binpack, decision by decision.
TEST(HamiTopology, WithoutTopologyPlacesAsBinpack) {
  std::vector<NodeSpec> nodes;
  for (int i = 0; i < 4; ++i) nodes.push_back(Node("n" + std::to_string(i), nullptr));
  const std::vector<PodSpec> pods = {Pod(1, 300), Pod(2), Pod(1),      Pod(4), Pod(1, 500),
                                     Pod(8),      Pod(2), Pod(1, 200), Pod(1), Pod(4)};
  std::vector<std::vector<std::pair<int, GpuSet>>> got;
  for (const char* name : {"hami-topology", "hami-binpack"}) {
    Cluster cluster(nodes);
    TargetWorkload workload = TargetWorkload::FromPods(pods);
    workload.Resolve(cluster);
    PolicyContext ctx;
    ctx.workload = &workload;
    std::unique_ptr<Policy> policy = MakePolicy(name, ctx);
    Scheduler s(&cluster, policy.get(), {2, 0, 3, 1}, 7);
    got.emplace_back();
    for (const PodSpec& p : pods) {
      const PodRequest r = cluster.MakeRequest(p);
      const Decision d = s.Decide(r);
      ASSERT_TRUE(d.ok()) << name;
      s.Bind(d.node, r, d.gpus);
      got.back().emplace_back(d.node, d.gpus);
    }
  }
  EXPECT_EQ(got[0], got[1]);
}

}  // namespace
}  // namespace tessera
