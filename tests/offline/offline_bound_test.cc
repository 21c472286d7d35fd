#include "offline/offline_bound.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>

#include "model/cluster.h"
#include "policy/policy.h"
#include "sim/inflation.h"

namespace tessera {
namespace {

PodSpec Pod(int64_t cpu, int gpus, int32_t milli, std::string spec = "", int64_t memory = 1024) {
  static int next = 0;
  PodSpec p;
  p.name = "p" + std::to_string(next++);
  p.cpu_milli = cpu;
  p.memory_mib = memory;
  p.gpu_count = gpus;
  p.gpu_milli = gpus == 0 ? 0 : milli;
  p.gpu_spec = std::move(spec);
  return p;
}

NodeSpec Node(int64_t cpu, int gpus, std::string model = "T4", int64_t memory = 262144) {
  return NodeSpec{"n", cpu, memory, gpus, std::move(model), 0};
}

// The bound with every pod of `pods` arrived once.
OfflineBound BoundAll(const std::vector<NodeSpec>& nodes, const std::vector<PodSpec>& pods) {
  std::vector<int> all(pods.size());
  for (size_t i = 0; i < pods.size(); ++i) all[i] = static_cast<int>(i);
  Result<OfflineBound> b = ComputeOfflineBound(nodes, pods, all);
  EXPECT_TRUE(b.ok()) << (b.ok() ? "" : b.error().message);
  return b.ok() ? *b : OfflineBound{};
}

TEST(OfflineBound, EverythingFitsGivesZero) {
  const OfflineBound b =
      BoundAll({Node(64000, 2), Node(64000, 2)},
               {Pod(1000, 2, 1000), Pod(1000, 1, 1000), Pod(1000, 1, 500), Pod(1000, 1, 500)});
  EXPECT_EQ(b.capacity_milli, 4000);
  EXPECT_EQ(b.arrived_milli, 4000);
  EXPECT_EQ(b.node_types, 1);
  EXPECT_EQ(b.pod_shapes, 3);
  EXPECT_TRUE(b.converged);
  EXPECT_NEAR(b.max_placed_milli, 4000, 1e-6);
  EXPECT_NEAR(b.unallocated_pct, 0, 1e-9);
}

TEST(OfflineBound, TwoSixHundredMilliPodsNeverShareAGpu) {
  // Pooled milli would allow 1200 ≤ 2 · 1000 on two nodes, but each GPU holds one of them.
  OfflineBound b = BoundAll({Node(64000, 1)}, {Pod(1000, 1, 600), Pod(1000, 1, 600)});
  EXPECT_NEAR(b.max_placed_milli, 600, 1e-6);
  EXPECT_NEAR(b.unallocated_pct, 40, 1e-6);
  // Plus a 400: 600 + 400 fill the GPU exactly.
  b = BoundAll({Node(64000, 1)}, {Pod(1000, 1, 600), Pod(1000, 1, 600), Pod(1000, 1, 400)});
  EXPECT_NEAR(b.unallocated_pct, 0, 1e-6);
}

TEST(OfflineBound, MixedPatternsNeedColumnGeneration) {
  // 700+300 and 300+300+400 fill two GPUs; neither is a single-value starting pattern.
  const OfflineBound b = BoundAll(
      {Node(64000, 2)},
      {Pod(100, 1, 700), Pod(100, 1, 300), Pod(100, 1, 300), Pod(100, 1, 300), Pod(100, 1, 400)});
  EXPECT_NEAR(b.unallocated_pct, 0, 1e-6);
  EXPECT_GT(b.rounds, 1);
  EXPECT_TRUE(b.converged);
}

TEST(OfflineBound, LeavesOutASharingPodForAWholeOneAndSaysSo) {
  // One GPU, an 810-milli pod and a whole-GPU pod: the bound places the whole one and leaves
  // the share out (0 % unallocated), which a scheduler that placed the share first cannot.
  const std::vector<NodeSpec> nodes = {Node(64000, 1)};
  const std::vector<PodSpec> pods = {Pod(1000, 1, 810), Pod(1000, 1, 1000)};
  const std::vector<int> all = {0, 1};
  const OfflineBound b = BoundAll(nodes, pods);
  EXPECT_NEAR(b.unallocated_pct, 0, 1e-6);
  ASSERT_EQ(b.classes.size(), 2u);
  EXPECT_EQ(b.classes[0].gpu_count, 1);
  EXPECT_EQ(b.classes[0].gpu_milli, 810);
  EXPECT_EQ(b.classes[0].arrived, 1);
  EXPECT_NEAR(b.classes[0].placed, 0, 1e-9);
  EXPECT_EQ(b.classes[1].gpu_milli, 1000);
  EXPECT_NEAR(b.classes[1].placed, 1, 1e-9);

  // Bounding only the placements that place every sharing pod: the 810 takes the GPU.
  OfflineBoundOptions every_share;
  every_share.min_sharing_placed = 1;
  Result<OfflineBound> placed = ComputeOfflineBound(nodes, pods, all, every_share);
  ASSERT_TRUE(placed.ok()) << placed.error().message;
  EXPECT_NEAR(placed->unallocated_pct, 19, 1e-6);
  EXPECT_NEAR(placed->classes[0].placed, 1, 1e-9);
  EXPECT_NEAR(placed->classes[1].placed, 0, 1e-9);
  // Half of them: the LP may place half the share, and half the GPU goes to the whole pod.
  OfflineBoundOptions half;
  half.min_sharing_placed = 0.5;
  Result<OfflineBound> h = ComputeOfflineBound(nodes, pods, all, half);
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_NEAR(h->unallocated_pct, 9.5, 1e-6);
}

TEST(OfflineBound, SharingPodsThatCannotAllBePlacedOrABadShareAreErrors) {
  const std::vector<NodeSpec> nodes = {Node(64000, 1)};
  // Two 600-milli pods never share the one GPU; a 700 that fits no node (a T4-only cluster
  // asked for a V100) is not required.
  const std::vector<PodSpec> pods = {Pod(1000, 1, 600), Pod(1000, 1, 600),
                                     Pod(1000, 1, 700, "V100M32")};
  const std::vector<int> all = {0, 1, 2};
  OfflineBoundOptions o;
  o.min_sharing_placed = 0.5;
  Result<OfflineBound> ok = ComputeOfflineBound(nodes, pods, all, o);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_NEAR(ok->unallocated_pct, 40, 1e-6);
  o.min_sharing_placed = 1;
  Result<OfflineBound> none = ComputeOfflineBound(nodes, pods, all, o);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message,
            "offline bound: no placement places 100 % of the pods of every GPU-sharing shape (the "
            "cluster cannot hold them)");
  // Without the second 600 every sharing pod that fits some node can be placed.
  Result<OfflineBound> fits = ComputeOfflineBound(nodes, pods, {0, 2}, o);
  ASSERT_TRUE(fits.ok()) << fits.error().message;
  EXPECT_NEAR(fits->unallocated_pct, 40, 1e-6);
  o.min_sharing_placed = 1.5;
  Result<OfflineBound> bad = ComputeOfflineBound(nodes, pods, all, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "offline bound: the share of sharing pods to place must be within 0-1, not 1.5");
}

TEST(OfflineBound, CpuLimitedNode) {
  // Two whole GPUs, but each pod needs 3 of the node's 4 cores: one pod only.
  OfflineBound b = BoundAll({Node(4000, 2)}, {Pod(3000, 1, 1000), Pod(3000, 1, 1000)});
  EXPECT_NEAR(b.unallocated_pct, 50, 1e-6);
  EXPECT_GT(b.unallocated_pct, 0);
  // CPU pooled over two nodes of the type: 2 · 4000 cores for three 3000-core pods and 4 GPUs.
  b = BoundAll({Node(4000, 2), Node(4000, 2)},
               {Pod(3000, 1, 1000), Pod(3000, 1, 1000), Pod(3000, 1, 1000)});
  EXPECT_NEAR(b.unallocated_pct, 50, 1e-6);  // the cut: at most one big-CPU pod per node
  // A pod that needs more CPU than any node has is never placed.
  b = BoundAll({Node(4000, 1)}, {Pod(5000, 1, 1000)});
  EXPECT_NEAR(b.unallocated_pct, 100, 1e-6);
}

TEST(OfflineBound, MemoryLimitedType) {
  // Four 1-GPU pods of 40 GiB on two 2-GPU nodes of 64 GiB: one per node.
  const OfflineBound b = BoundAll({Node(64000, 2, "T4", 65536), Node(64000, 2, "T4", 65536)},
                                  {Pod(1000, 1, 1000, "", 40960), Pod(1000, 1, 1000, "", 40960),
                                   Pod(1000, 1, 1000, "", 40960), Pod(1000, 1, 1000, "", 40960)});
  EXPECT_NEAR(b.unallocated_pct, 50, 1e-6);
}

TEST(OfflineBound, GpuModelConstraint) {
  // Two T4-only pods; one T4 GPU and one V100 GPU.
  OfflineBound b = BoundAll({Node(64000, 1, "T4"), Node(64000, 1, "V100M16")},
                            {Pod(1000, 1, 1000, "T4"), Pod(1000, 1, 1000, "T4")});
  EXPECT_EQ(b.node_types, 2);
  EXPECT_NEAR(b.unallocated_pct, 50, 1e-6);
  // "T4|V100M16" may use both.
  b = BoundAll({Node(64000, 1, "T4"), Node(64000, 1, "V100M16")},
               {Pod(1000, 1, 1000, "T4"), Pod(1000, 1, 1000, "T4|V100M16")});
  EXPECT_NEAR(b.unallocated_pct, 0, 1e-6);
  // A model no node has.
  b = BoundAll({Node(64000, 1, "T4")}, {Pod(1000, 1, 1000, "A100")});
  EXPECT_NEAR(b.unallocated_pct, 100, 1e-6);
}

TEST(OfflineBound, MultiGpuPodsNeedWholeGpusOnOneNode) {
  // A 4-GPU pod does not fit 2-GPU nodes, whatever their number.
  OfflineBound b = BoundAll({Node(64000, 2), Node(64000, 2)}, {Pod(1000, 4, 1000)});
  EXPECT_NEAR(b.unallocated_pct, 100, 1e-6);
  // Two 3-GPU pods on one 4-GPU node: one (the more-than-half-the-GPUs cut).
  b = BoundAll({Node(64000, 4)}, {Pod(1000, 3, 1000), Pod(1000, 3, 1000)});
  EXPECT_NEAR(b.unallocated_pct, 25, 1e-6);
  // A sharing pod keeps a GPU from whole-GPU pods.
  b = BoundAll({Node(64000, 2)}, {Pod(1000, 2, 1000), Pod(1000, 1, 500)});
  EXPECT_NEAR(b.max_placed_milli, 2000, 1e-6);  // the 2-GPU pod alone is better
}

TEST(OfflineBound, GpuMemoryOfSharingPods) {
  // Two 300-milli pods asking 10 GiB each on one 16 GiB GPU: compute fits, memory does not.
  NodeSpec n = Node(64000, 1);
  n.gpu_memory_mib = 16384;
  PodSpec a = Pod(1000, 1, 300);
  a.gpu_memory_mib = 10240;
  const OfflineBound b = BoundAll({n}, {a, a});
  EXPECT_NEAR(b.max_placed_milli, 300 * 16384.0 / 10240.0, 1e-6);  // pooled: 1.6 pods
  EXPECT_LT(b.max_placed_milli, 600);
}

TEST(OfflineBound, CpuOnlyPodsAndGpuLessNodesAreLeftOut) {
  const OfflineBound b = BoundAll({Node(64000, 1), NodeSpec{"cpu", 64000, 262144, 0, "", 0}},
                                  {Pod(60000, 0, 0), Pod(60000, 0, 0), Pod(1000, 1, 1000)});
  EXPECT_EQ(b.pods, 3);
  EXPECT_EQ(b.pod_shapes, 1);
  EXPECT_EQ(b.node_types, 1);
  EXPECT_NEAR(b.unallocated_pct, 0, 1e-6);
}

TEST(OfflineBound, EmptyMultisetOrNoFit) {
  OfflineBound b = BoundAll({Node(64000, 2)}, {});
  EXPECT_NEAR(b.unallocated_pct, 100, 1e-9);
  b = BoundAll({Node(64000, 2)}, {Pod(1000, 0, 0)});
  EXPECT_NEAR(b.unallocated_pct, 100, 1e-9);
}

TEST(OfflineBound, RoundLimitKeepsAValidBound) {
  std::vector<PodSpec> pods;
  for (int32_t m : {130, 170, 230, 290, 310, 370, 410, 470, 530, 590}) {
    for (int k = 0; k < 3; ++k) pods.push_back(Pod(100, 1, m));
  }
  const std::vector<NodeSpec> nodes(3, Node(64000, 4));
  std::vector<int> all(pods.size());
  for (size_t i = 0; i < pods.size(); ++i) all[i] = static_cast<int>(i);
  Result<OfflineBound> full = ComputeOfflineBound(nodes, pods, all);
  OfflineBoundOptions one;
  one.max_rounds = 1;
  Result<OfflineBound> cut = ComputeOfflineBound(nodes, pods, all, one);
  ASSERT_TRUE(full.ok() && cut.ok());
  EXPECT_TRUE(full->converged);
  EXPECT_GT(full->rounds, 1);
  EXPECT_FALSE(cut->converged);
  // The capped LP adds the Lagrangian term: never below the converged bound's placed milli.
  EXPECT_GE(cut->max_placed_milli, full->max_placed_milli - 1e-6);
}

// Every pod placed on any node in any way: the most GPU milli, by exhaustive search. Whole-GPU
// pods take the lowest fully free GPUs (free GPUs of a node are interchangeable).
int64_t BestPlacement(const std::vector<NodeSpec>& nodes, const std::vector<PodSpec>& pods) {
  Cluster cluster(nodes);
  std::vector<PodRequest> req;
  for (const PodSpec& p : pods) req.push_back(cluster.MakeRequest(p));
  int64_t best = 0;
  std::function<void(size_t)> go = [&](size_t i) {
    best = std::max(best, cluster.allocated_gpu_milli());
    if (i == req.size()) return;
    go(i + 1);  // leave pod i out
    const PodRequest& r = req[i];
    if (r.IsCpuOnly()) return;
    for (int n = 0; n < cluster.size(); ++n) {
      if (cluster.Check(n, r) != FitReason::kFits) continue;
      std::vector<GpuSet> choices;
      if (r.IsSharing()) {
        for (int g = 0; g < cluster.spec(n).gpu_count; ++g) {
          if (GpuHasRoom(cluster.state(n), g, r)) choices.push_back(GpuSet{1} << g);
        }
      } else {
        choices.push_back(DefaultGpuChoice(cluster.spec(n).gpu_count, cluster.state(n), r));
      }
      for (GpuSet g : choices) {
        cluster.Allocate(n, r, g);
        go(i + 1);
        cluster.Release(n, r, g);
      }
    }
  };
  go(0);
  return best;
}

struct Instance {
  std::vector<NodeSpec> nodes;
  std::vector<PodSpec> pods;
};

Instance RandomInstance(std::mt19937_64& rng, int max_nodes, int max_pods) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  Instance in;
  const int num_nodes = 1 + pick(max_nodes);
  const std::vector<std::string> models = {"T4", "V100M16"};
  for (int i = 0; i < num_nodes; ++i) {
    const int gpus = std::vector<int>{1, 2, 4, 8}[pick(4)];
    in.nodes.push_back(NodeSpec{"n" + std::to_string(i), 4000 * (1 + pick(8)),
                                16384 * (1 + pick(8)), gpus, models[pick(2)], 0});
  }
  const int num_pods = 1 + pick(max_pods);
  const std::vector<int32_t> shares = {100, 250, 300, 470, 500, 600, 810};
  for (int i = 0; i < num_pods; ++i) {
    const int kind = pick(10);
    const int gpus = kind < 5 ? 1 : kind < 8 ? 1 : kind == 8 ? 2 : (kind == 9 ? 4 : 0);
    const int32_t milli = kind < 5 ? shares[pick(static_cast<int>(shares.size()))] : 1000;
    const std::string spec = pick(4) == 0 ? models[pick(2)] : "";
    in.pods.push_back(
        Pod(1000 * (1 + pick(12)), pick(12) == 0 ? 0 : gpus, milli, spec, 4096 * (1 + pick(12))));
  }
  return in;
}

TEST(OfflineBound, NeverAboveTheBestPlacementOfTinyInstances) {
  std::mt19937_64 rng(7);
  int exact = 0, limited = 0;
  for (int trial = 0; trial < 150; ++trial) {
    const Instance in = RandomInstance(rng, 3, 7);
    const OfflineBound b = BoundAll(in.nodes, in.pods);
    const int64_t best = BestPlacement(in.nodes, in.pods);
    ASSERT_GE(b.max_placed_milli, static_cast<double>(best) - 1e-6) << "trial " << trial;
    ASSERT_TRUE(b.converged);
    exact += b.max_placed_milli < static_cast<double>(best) + 1e-6;
    limited += b.max_placed_milli < static_cast<double>(b.arrived_milli) - 1e-6;
  }
  // Not vacuous: the bound is often exact, and often below what arrived.
  EXPECT_GT(exact, 75);
  EXPECT_GT(limited, 30);
}

TEST(OfflineBound, NeverAboveAnyPolicyAtFullArrival) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 25; ++trial) {
    const Instance in = RandomInstance(rng, 6, 25);
    const Cluster empty(in.nodes);
    TargetWorkload workload = TargetWorkload::FromPods(in.pods);
    workload.Resolve(empty);
    InflationOptions options;
    options.record_placements = false;
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      const std::vector<int> arrived =
          ArrivedPods(in.pods, empty.total_gpu_milli(), seed, options.max_arrival_pct, 100);
      Result<OfflineBound> b = ComputeOfflineBound(in.nodes, in.pods, arrived);
      ASSERT_TRUE(b.ok());
      for (const std::string& policy : PolicyNames()) {
        Result<RunResult> run = RunInflation(in.nodes, in.pods, workload, policy, seed, options);
        ASSERT_TRUE(run.ok());
        const CurvePoint& at100 = run->curve[100];
        // The bound's multiset is what the run had submitted when it reached 100 %, the pod
        // that crossed the level included (the curve point interpolates across that pod, so
        // its allocation is at most the allocation after it, which the bound limits).
        EXPECT_GE(
            100.0 * static_cast<double>(b->arrived_milli) / static_cast<double>(b->capacity_milli),
            at100.arrived_pct - 1e-9);
        EXPECT_LE(b->unallocated_pct, at100.unallocated_pct + 1e-6)
            << "trial " << trial << " seed " << seed << " policy " << policy;
      }
    }
  }
}

TEST(ArrivedPods, IsThePrefixUpToTheLevel) {
  std::vector<PodSpec> pods = {Pod(1000, 1, 1000), Pod(1000, 1, 500), Pod(1000, 0, 0)};
  const int64_t capacity = 4000;
  const auto seq = InflatedSequence(pods, capacity, 5, 130);
  const std::vector<int> arrived = ArrivedPods(pods, capacity, 5, 130, 100);
  ASSERT_LE(arrived.size(), seq.size());
  int64_t total = 0;
  for (size_t i = 0; i < arrived.size(); ++i) {
    EXPECT_EQ(arrived[i], seq[i].first);
    total += pods[arrived[i]].TotalGpuMilli();
  }
  EXPECT_GE(total, capacity);
  EXPECT_LT(total - pods[arrived.back()].TotalGpuMilli(), capacity);
  EXPECT_TRUE(ArrivedPods(pods, capacity, 5, 130, 0).empty());
  // A level the sequence never reaches: all of it.
  EXPECT_EQ(ArrivedPods(pods, capacity, 5, 50, 100).size(),
            InflatedSequence(pods, capacity, 5, 50).size());
}

}  // namespace
}  // namespace tessera
