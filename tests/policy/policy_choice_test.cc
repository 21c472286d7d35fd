// Each policy's choice on a small hand-made cluster, with the scores worked out by hand in
// the comments (formulas at the top of each policy file).
#include <gtest/gtest.h>

#include <memory>
#include <numeric>

#include "frag/target_workload.h"
#include "model/cluster.h"
#include "policy/policy.h"
#include "sched/scheduler.h"

namespace tessera {
namespace {

PodSpec Pod(int64_t cpu, int64_t mem, int gpus, int32_t milli) {
  PodSpec p;
  p.name = "p";
  p.cpu_milli = cpu;
  p.memory_mib = mem;
  p.gpu_count = gpus;
  p.gpu_milli = milli;
  return p;
}

// n0: idle 8-GPU node, 96 cores.          n1: idle 2-GPU node, 32 cores.
// n2: 4 GPUs, 64 cores; a 700-milli sharing pod on GPU 0 (300 free there).
// n3: 8 GPUs, 40 cores; four 1-GPU pods (8 cores each) on GPUs 0-3.
class SmallCluster : public ::testing::Test {
 protected:
  SmallCluster()
      : cluster_({NodeSpec{"n0", 96000, 393216, 8, "T4", 0},
                  NodeSpec{"n1", 32000, 131072, 2, "T4", 0},
                  NodeSpec{"n2", 64000, 262144, 4, "T4", 0},
                  NodeSpec{"n3", 40000, 262144, 8, "T4", 0}}) {
    cluster_.Allocate(2, cluster_.MakeRequest(Pod(0, 0, 1, 700)), 0b1);
    for (int g = 0; g < 4; ++g)
      cluster_.Allocate(3, cluster_.MakeRequest(Pod(8000, 0, 1, 1000)), 1u << g);
    workload_ = TargetWorkload::FromPods({Pod(4000, 0, 1, 250)});
    workload_.Resolve(cluster_);
  }

  Decision Choose(const std::string& policy_name, const PodSpec& pod,
                  std::vector<int> order = {0, 1, 2, 3}) {
    PolicyContext ctx;
    ctx.workload = &workload_;
    std::unique_ptr<Policy> policy = MakePolicy(policy_name, ctx);
    EXPECT_NE(policy, nullptr);
    Cluster copy = cluster_;
    Scheduler s(&copy, policy.get(), order, 1);
    return s.Decide(copy.MakeRequest(pod));
  }

  Cluster cluster_;
  TargetWorkload workload_;
};

const PodSpec kShare = Pod(4000, 16384, 1, 250);

TEST_F(SmallCluster, PackingPrefersThePartlyUsedGpu) {
  // n2: 100 − ⌊300·100/1000⌋/10 = 97; n3 opens one free GPU: 49; idle n0: 33−8 = 25, n1: 31.
  const Decision d = Choose("packing", kShare);
  EXPECT_EQ(d.node, 2);
  EXPECT_EQ(d.gpus, 0b1u);
  EXPECT_EQ(d.score, 97);
}

TEST_F(SmallCluster, BestFitPrefersTheLeastLeftover) {
  // leftover: n0 .84375 → 15, n1 .21875 → 78, n2 .425 → 57, n3 .25 → 75; normalised n1 = 100.
  const Decision d = Choose("bestfit", kShare);
  EXPECT_EQ(d.node, 1);
  EXPECT_EQ(d.score, 100);
  EXPECT_EQ(d.gpus, 0b1u);
}

TEST_F(SmallCluster, DotProdTieGoesToTheFirstNodeInOrder) {
  // dot/2: n0 .02734 → 97, n1 .00781 → 99, n2 .01426 → 98, n3 .00879 → 99: n1 and n3 tie.
  EXPECT_EQ(Choose("dotprod", kShare).node, 1);
  EXPECT_EQ(Choose("dotprod", kShare).score, 99);
  EXPECT_EQ(Choose("dotprod", kShare, {3, 2, 1, 0}).node, 3);
}

TEST_F(SmallCluster, ClusteringPrefersNodesWithTheSameTag) {
  // share tag: n2 holds only share pods: 75 + ⌊25·4700/8000⌋ = 89; n1: 25 + 18 = 43;
  // n0: 25 + 0; n3 holds only 1-gpu pods: 0 + 12.
  const Decision d = Choose("clustering", kShare);
  EXPECT_EQ(d.node, 2);
  EXPECT_EQ(d.score, 89);
  // A 1-GPU pod goes with the 1-GPU pods: n3 = 75 + 12 = 87 beats n1's 25 + 18.
  EXPECT_EQ(Choose("clustering", Pod(1000, 0, 1, 1000)).node, 3);
}

TEST_F(SmallCluster, K8sDefaultSpreadsToTheLeastAllocated) {
  // CPU-only 4 cores 16 GiB: n0 least 95 + balanced 100 = 195; n1 87 + 100 = 187;
  // n2 (64 cores, 256 GiB) 93 + 100 = 193; n3 (8 of 40 cores used) lower.
  const Decision d = Choose("k8s-default", Pod(4000, 16384, 0, 0));
  EXPECT_EQ(d.node, 0);
  EXPECT_EQ(d.score, 195);
}

TEST_F(SmallCluster, RandomDrawsFeasibleNodesUniformly) {
  PolicyContext ctx;
  std::unique_ptr<Policy> policy = MakePolicy("random", ctx);
  Cluster copy = cluster_;
  Scheduler s(&copy, policy.get(), {0, 1, 2, 3}, 7);
  std::vector<int> hits(4, 0);
  // A 4-GPU pod fits n0 and n3 only (n1 has 2 GPUs, n2 three fully free ones).
  const PodRequest r = copy.MakeRequest(Pod(1000, 0, 4, 1000));
  for (int i = 0; i < 4000; ++i) hits[s.Decide(r).node]++;
  EXPECT_EQ(hits[1], 0);  // 2 GPUs
  EXPECT_EQ(hits[2], 0);  // 3 fully free GPUs
  EXPECT_NEAR(hits[0], 2000, 200);
  EXPECT_NEAR(hits[3], 2000, 200);
}

// FGD against a one-class workload (1 core, 500 milli): a 300-milli pod on a GPU with 500
// free leaves 200 that the class cannot use (Δ = −200 → ⌊100·σ(−0.2)⌋ = 45), on a free GPU it
// leaves 700 (Δ = 0 → 50). So FGD takes the free GPU, where the tightest-fit rule would not.
TEST(FgdPolicy, AvoidsCreatingHolesTooSmallForTheWorkload) {
  Cluster c({NodeSpec{"a", 64000, 65536, 2, "T4", 0}, NodeSpec{"b", 64000, 65536, 1, "T4", 0}});
  c.Allocate(0, c.MakeRequest(Pod(0, 0, 1, 500)), 0b01);  // a: GPU0 500 free, GPU1 1000
  c.Allocate(1, c.MakeRequest(Pod(0, 0, 1, 500)), 0b1);   // b: GPU0 500 free
  TargetWorkload w = TargetWorkload::FromPods({Pod(1000, 0, 1, 500)});
  w.Resolve(c);
  PolicyContext ctx;
  ctx.workload = &w;
  std::unique_ptr<Policy> fgd = MakePolicy("fgd", ctx);
  Scheduler s(&c, fgd.get(), {1, 0}, 1);  // b first in the tie order
  const Decision d = s.Decide(c.MakeRequest(Pod(1000, 0, 1, 300)));
  EXPECT_EQ(d.node, 0);
  EXPECT_EQ(d.gpus, 0b10u);
  EXPECT_EQ(d.score, 50);
}

TEST(PolicyRegistry, KnowsEveryPolicy) {
  TargetWorkload w;
  PolicyContext ctx;
  ctx.workload = &w;
  EXPECT_EQ(PolicyNames().size(), 12u);
  EXPECT_EQ(DefaultPolicyNames().size(), 8u);
  for (const std::string& name : PolicyNames()) {
    std::unique_ptr<Policy> p = MakePolicy(name, ctx);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_EQ(p->name(), name);
  }
  EXPECT_EQ(MakePolicy("nope", ctx), nullptr);
}

}  // namespace
}  // namespace tessera
