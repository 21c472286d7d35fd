#include "policy/tessera_policy.h"

#include <gtest/gtest.h>

#include <memory>

#include "frag/target_workload.h"
#include "model/cluster.h"
#include "sched/scheduler.h"
#include "sim/inflation.h"
#include "util/rng.h"

namespace tessera {
namespace {

/// Two runs of one seed made exactly the same choices, and placed more than 30 pods (so the
/// comparison is not vacuous).
void ExpectSameRunsWithPlacements(const RunResult& a, const RunResult& b) {
  ASSERT_EQ(a.placements.size(), b.placements.size());
  int placed = 0;
  for (size_t i = 0; i < a.placements.size(); ++i) {
    EXPECT_EQ(a.placements[i].node, b.placements[i].node);
    EXPECT_EQ(a.placements[i].gpus, b.placements[i].gpus);
    placed += a.placements[i].node >= 0;
  }
  EXPECT_GT(placed, 30);
}

PodSpec Pod(int64_t cpu, int gpus, int32_t milli) {
  PodSpec p;
  p.name = "p";
  p.cpu_milli = cpu;
  p.memory_mib = 1024;
  p.gpu_count = gpus;
  p.gpu_milli = milli;
  return p;
}

// Two nodes in use, 4 free GPUs each; the workload is 12-core one-GPU pods. A 4-core CPU-only
// pod leaves both nodes able to host such a pod, so FGD's fragmentation does not change on
// either (both score 50) and the node order decides. On node a (48 cores left) it takes CPU
// that one of the 4 GPU pods needed: 44 / 12 = 3.67 pods, 333 milli of GPU stranded. On node b
// (100 cores left) nothing is stranded. tessera takes b.
class CpuStranding : public ::testing::Test {
 protected:
  CpuStranding()
      : cluster_(
            {NodeSpec{"a", 52000, 262144, 4, "T4", 0}, NodeSpec{"b", 104000, 262144, 4, "T4", 0}}) {
    cluster_.Allocate(0, cluster_.MakeRequest(Pod(4000, 0, 0)), 0);
    cluster_.Allocate(1, cluster_.MakeRequest(Pod(4000, 0, 0)), 0);
    workload_ = TargetWorkload::FromPods({Pod(12000, 1, 1000)});
    workload_.Resolve(cluster_);
  }
  Decision Choose(const Policy& policy, const PodSpec& pod) {
    Cluster copy = cluster_;
    Scheduler s(&copy, &policy, {0, 1}, 1);
    return s.Decide(copy.MakeRequest(pod));
  }
  PolicyContext Context() {
    PolicyContext c;
    c.workload = &workload_;
    return c;
  }
  Cluster cluster_;
  TargetWorkload workload_;
};

TEST_F(CpuStranding, FgdTiesAndTakesTheFirstNode) {
  std::unique_ptr<Policy> fgd = MakePolicy("fgd", Context());
  const Decision d = Choose(*fgd, Pod(4000, 0, 0));
  EXPECT_EQ(d.node, 0);
  EXPECT_EQ(d.score, 50);
}

TEST_F(CpuStranding, TesseraTakesTheNodeWhereNoGpuIsStranded) {
  std::unique_ptr<Policy> t = MakePolicy("tessera", Context());
  const Decision d = Choose(*t, Pod(4000, 0, 0));
  EXPECT_EQ(d.node, 1);
  EXPECT_EQ(d.score / 1000, 50);  // FGD's score is the primary key
}

TEST_F(CpuStranding, WithoutTheStrandingIngredientItIsFgd) {
  TesseraParams params;
  params.cpu_stranding = false;
  std::unique_ptr<Policy> t = MakeTesseraPolicy(Context(), params);
  EXPECT_EQ(Choose(*t, Pod(4000, 0, 0)).node, 0);
}

// The primary key of tessera's score is FGD's published score, on any node state: without
// GPU-model constraints in the pod list (no model pressure), without hole fill and without the
// demand-weighted M, tessera only reorders FGD's ties; with hole fill (the default) it still
// does for pods that do not share a GPU, while idle nodes are plentiful (context bit 0 set:
// FGD's term is then over M itself).
TEST(TesseraPolicy, PrimaryScoreIsFgdsScore) {
  Rng rng(5);
  std::vector<NodeSpec> nodes;
  for (int i = 0; i < 40; ++i) {
    nodes.push_back(NodeSpec{"n" + std::to_string(i),
                             16000 * static_cast<int64_t>(1 + rng.Below(8)), 262144,
                             1 << rng.Below(4), i % 3 ? "T4" : "G2", 0});
  }
  Cluster c(nodes);
  std::vector<PodSpec> pods;
  for (int i = 0; i < 300; ++i) {
    const int kind = static_cast<int>(rng.Below(4));
    pods.push_back(
        Pod(1000 * static_cast<int64_t>(1 + rng.Below(16)), kind == 0 ? 0 : (kind == 3 ? 2 : 1),
            kind == 0 ? 0 : (kind == 1 ? 100 * static_cast<int32_t>(1 + rng.Below(9)) : 1000)));
  }
  TargetWorkload w = TargetWorkload::FromPods(pods);
  w.Resolve(c);
  PolicyContext ctx;
  ctx.workload = &w;
  std::unique_ptr<Policy> fgd = MakePolicy("fgd", ctx);
  TesseraParams no_hole_fill;
  no_hole_fill.hole_fill_primary = 0;
  no_hole_fill.demand_weight = 0;
  std::unique_ptr<Policy> t = MakeTesseraPolicy(ctx, no_hole_fill);
  std::unique_ptr<Policy> shipped = MakePolicy("tessera", ctx);
  int compared = 0;
  int sharing_differs = 0;
  for (const PodSpec& p : pods) {
    const PodRequest r = c.MakeRequest(p);
    for (int n = 0; n < c.size(); ++n) {
      if (c.Check(n, r) != FitReason::kFits) continue;
      const NodeView view{c.spec(n), c.model_id(n), c.state(n)};
      const auto fgd_score = static_cast<int64_t>(fgd->Score(view, r).score);
      ASSERT_EQ(static_cast<int64_t>(t->Score(view, r).score) / 1000, fgd_score);
      const NodeView plentiful{c.spec(n), c.model_id(n), c.state(n), 1};
      const auto shipped_primary = static_cast<int64_t>(shipped->Score(plentiful, r).score) / 1000;
      if (r.IsSharing()) {
        sharing_differs += shipped_primary != fgd_score;
      } else {
        ASSERT_EQ(shipped_primary, fgd_score);
      }
      ++compared;
    }
    // Fill the cluster as we go, so that states vary.
    for (int n = 0; n < c.size(); ++n) {
      if (c.Check(n, r) == FitReason::kFits) {
        c.Allocate(n, r, r.IsCpuOnly() ? 0 : DefaultGpuChoice(c.spec(n).gpu_count, c.state(n), r));
        break;
      }
    }
  }
  EXPECT_GT(compared, 1000);
  // Sharing sizes here are multiples of 100 milli, each frequent, so no hole is waste and hole
  // fill never moves the primary key (the HoleFill tests below show where it does).
  EXPECT_EQ(sharing_differs, 0);
}

// An idle node stays idle for a sharing pod when a used node can take it, so that whole idle
// nodes remain for multi-GPU pods: FGD's term over the demand-weighted classes sees the idle
// node broken for the 8-GPU class (sharing_open_cost, off by default, would add a charge).
TEST(TesseraPolicy, SharingPodPrefersAUsedNodeToAnIdleOne) {
  Cluster c(
      {NodeSpec{"idle", 96000, 393216, 8, "G2", 0}, NodeSpec{"used", 96000, 393216, 8, "G2", 0}});
  c.Allocate(1, c.MakeRequest(Pod(4000, 1, 500)), 0b1);
  TargetWorkload w = TargetWorkload::FromPods({Pod(4000, 1, 500), Pod(64000, 8, 1000)});
  w.Resolve(c);
  PolicyContext ctx;
  ctx.workload = &w;
  std::unique_ptr<Policy> t = MakePolicy("tessera", ctx);
  Scheduler s(&c, t.get(), {0, 1}, 1);
  const Decision d = s.Decide(c.MakeRequest(Pod(4000, 1, 500)));
  EXPECT_EQ(d.node, 1);
  EXPECT_EQ(d.gpus, 0b1u);  // completes the half-used GPU
}

// Hole fill: a node with two GPUs, one holding a 470-milli pod (530 free), one a 320-milli pod
// (680 free); the list's sharing pods ask for 470, 320 and 650 milli. A 320-milli pod next to
// the 470 leaves a 210-milli hole that none of them fits; next to the 320 it leaves 360, which
// another 320 closes. FGD's fragmentation prefers the first (ΔF −104 against −216, scores 47
// and 44); hole fill charges it waste(530) − waste(210) = 60 − 210 and the other 30 − 40,
// against a fresh GPU's 30 − 30, and takes the second.
class HoleFill : public ::testing::Test {
 protected:
  HoleFill() : cluster_({NodeSpec{"n", 96000, 393216, 2, "G2", 0}}) {
    cluster_.Allocate(0, cluster_.MakeRequest(Pod(4000, 1, 470)), 0b01);
    cluster_.Allocate(0, cluster_.MakeRequest(Pod(4000, 1, 320)), 0b10);
    std::vector<PodSpec> pods;
    for (int i = 0; i < 8; ++i) pods.push_back(Pod(4000, 1, 470));
    for (int i = 0; i < 8; ++i) pods.push_back(Pod(4000, 1, 320));
    for (int i = 0; i < 4; ++i) pods.push_back(Pod(4000, 1, 650));
    workload_ = TargetWorkload::FromPods(pods);
    workload_.Resolve(cluster_);
  }
  Decision Choose(const Policy& policy, const PodSpec& pod) {
    Cluster copy = cluster_;
    Scheduler s(&copy, &policy, {0}, 1);
    return s.Decide(copy.MakeRequest(pod));
  }
  std::unique_ptr<Policy> Tessera(double hole_fill_primary) {
    PolicyContext ctx;
    ctx.workload = &workload_;
    TesseraParams params;
    params.hole_fill_primary = hole_fill_primary;
    params.demand_weight = 0;  // FGD's term over M, as the fgd policy's here
    return MakeTesseraPolicy(ctx, params);
  }
  Cluster cluster_;
  TargetWorkload workload_;
};

TEST_F(HoleFill, FgdLeavesAHoleThatNoFrequentSizeFits) {
  PolicyContext ctx;
  ctx.workload = &workload_;
  std::unique_ptr<Policy> fgd = MakePolicy("fgd", ctx);
  const Decision d = Choose(*fgd, Pod(4000, 1, 320));
  EXPECT_EQ(d.gpus, 0b01u);
  EXPECT_EQ(d.score, 47);
  EXPECT_EQ(Choose(*Tessera(0), Pod(4000, 1, 320)).gpus, 0b01u);
}

TEST_F(HoleFill, TesseraLeavesTheHoleThatAFrequentSizeCloses) {
  const Decision d = Choose(*Tessera(1), Pod(4000, 1, 320));
  EXPECT_EQ(d.gpus, 0b10u);
  EXPECT_EQ(d.score / 1000, 44);  // FGD's 44 for this GPU, less 10 milli of waste
  EXPECT_EQ(Choose(*Tessera(2), Pod(4000, 1, 320)).gpus, 0b10u);
}

// A 650-milli pod fits only the 680 hole (waste 30 → 30, as on a fresh GPU): no charge, so the
// primary key is FGD's. Whole-GPU and CPU-only pods are never charged.
TEST_F(HoleFill, NoChargeWhereTheHoleIsNoWorseThanOnAFreshGpu) {
  PolicyContext ctx;
  ctx.workload = &workload_;
  std::unique_ptr<Policy> fgd = MakePolicy("fgd", ctx);
  std::unique_ptr<Policy> t = Tessera(2);
  for (const PodSpec& p : {Pod(4000, 1, 650), Pod(4000, 0, 0)}) {
    const PodRequest r = cluster_.MakeRequest(p);
    const NodeView view{cluster_.spec(0), cluster_.model_id(0), cluster_.state(0)};
    EXPECT_EQ(static_cast<int64_t>(t->Score(view, r).score) / 1000,
              static_cast<int64_t>(fgd->Score(view, r).score));
  }
}

// Adaptive idle-node protection: the context value says whether idle nodes are plentiful for
// the multi-GPU demand seen so far, projected to the end of the run.
TEST(TesseraPolicy, AdaptiveOpenContextFollowsTheProjectedIdleNodes) {
  std::vector<NodeSpec> nodes;
  for (int i = 0; i < 10; ++i)
    nodes.push_back(NodeSpec{"n" + std::to_string(i), 96000, 393216, 8, "G2", 0});
  Cluster c(nodes);
  TargetWorkload w = TargetWorkload::FromPods({Pod(4000, 1, 500), Pod(64000, 8, 1000)});
  w.Resolve(c);
  PolicyContext ctx;
  ctx.workload = &w;
  TesseraParams params;
  params.adaptive_open = false;
  EXPECT_FALSE(MakeTesseraPolicy(ctx, params)->UsesContext());  // off, no model constraints
  params.adaptive_open = true;                                  // the default
  std::unique_ptr<Policy> t = MakeTesseraPolicy(ctx, params);
  ASSERT_TRUE(t->UsesContext());
  ClusterSummary s;
  s.total_gpu_milli = s.free_gpu_milli = s.start_free_gpu_milli = 80000;
  s.idle_nodes_by_gpus[8] = s.start_idle_nodes_by_gpus[8] = 10;
  // Nothing seen yet: plentiful, and FGD's term stays over the demand-weighted classes until a
  // multi-GPU pod is seen (a bit above the model pressure's).
  EXPECT_EQ(t->ContextKey(s) & 1, 1);
  EXPECT_GT(t->ContextKey(s), 1);
  s.seen_gpu_milli_by_count[1] = 500;
  EXPECT_GT(t->ContextKey(s), 1);
  s.seen_gpu_milli_by_count[8] = 8000;
  EXPECT_EQ(t->ContextKey(s), 1);  // all nodes idle
  // Half the GPUs allocated, 8 of 10 nodes opened: at that opening rate (1.6 idle GPUs per
  // GPU allocated) and with half of it projected, the last 2 idle nodes will not last.
  s.free_gpu_milli = 40000;
  s.idle_nodes_by_gpus[8] = 2;
  EXPECT_EQ(t->ContextKey(s), 0);
  // 5 of 10 opened (rate 1.0): 40 idle GPUs − 0.5 · 40 = 20 ≥ the reserve for the expected
  // multi-GPU demand, open_reserve 0.5 · 0.94 · 40 GPUs = 18.8: still plentiful ...
  s.idle_nodes_by_gpus[8] = 5;
  EXPECT_EQ(t->ContextKey(s), 1);
  // ... unless the reserve is all of that demand.
  params.open_reserve = 1.0;
  EXPECT_EQ(MakeTesseraPolicy(ctx, params)->ContextKey(s), 0);
}

// While idle nodes are plentiful, a sharing pod sees an idle node at plentiful_open_cost (0)
// instead of sharing_open_cost (200 milli): only the tie-break score changes.
TEST(TesseraPolicy, AdaptiveOpenContextChangesTheIdleNodeScoreOfSharingPods) {
  Cluster c({NodeSpec{"idle", 96000, 393216, 8, "G2", 0}});
  TargetWorkload w = TargetWorkload::FromPods({Pod(4000, 1, 500), Pod(64000, 8, 1000)});
  w.Resolve(c);
  PolicyContext ctx;
  ctx.workload = &w;
  TesseraParams params;
  params.adaptive_open = true;
  params.demand_weight = 0;        // its own test below; here the context moves only the tie-break
  params.sharing_open_cost = 200;  // off by default (docs/POLICIES.md, ablation)
  std::unique_ptr<Policy> t = MakeTesseraPolicy(ctx, params);
  const PodRequest sharing = c.MakeRequest(Pod(4000, 1, 500));
  const PodRequest whole = c.MakeRequest(Pod(4000, 1, 1000));
  const auto score = [&](const Policy& p, const PodRequest& r, int64_t context) {
    return static_cast<int64_t>(
        p.Score(NodeView{c.spec(0), c.model_id(0), c.state(0), context}, r).score);
  };
  const int64_t scarce = score(*t, sharing, 0);
  const int64_t plentiful = score(*t, sharing, 1);
  EXPECT_EQ(scarce / 1000, plentiful / 1000);           // FGD's score is untouched
  EXPECT_EQ(plentiful % 1000, 500);                     // sigmoid(0): no cost
  EXPECT_LT(scarce % 1000, 500);                        // sigmoid(−200 / 1000)
  EXPECT_EQ(score(*t, whole, 0), score(*t, whole, 1));  // whole-GPU pods never paid it
}

// Demand-weighted M: while idle nodes are scarce (context bit 0 clear), FGD's term is over the
// list's classes weighed by count × GPU request, so the 8-GPU class that M's 95 % cut of the
// pods drops (3 pods of 100) weighs 3 · 8000 / (97 · 500 + 3 · 8000) of it; while plentiful
// (once a multi-GPU pod has been seen), over M.
TEST(TesseraPolicy, ScarceIdleNodesWeighTheClassesByTheirGpuRequest) {
  Cluster c(
      {NodeSpec{"idle", 96000, 393216, 8, "G2", 0}, NodeSpec{"used", 96000, 393216, 8, "G2", 0}});
  std::vector<PodSpec> pods(97, Pod(4000, 1, 500));
  for (int i = 0; i < 3; ++i) pods.push_back(Pod(64000, 8, 1000));
  TargetWorkload w = TargetWorkload::FromPods(pods);
  w.Resolve(c);
  ASSERT_EQ(w.classes().size(), 1u);  // the 8-GPU pods are not in M
  ASSERT_EQ(w.all_classes().size(), 2u);
  TargetClass share = w.all_classes()[0], big = w.all_classes()[1];
  ASSERT_EQ(big.gpu_count, 8);
  share.probability = 97.0 * 500 / (97.0 * 500 + 3.0 * 8000);
  big.probability = 3.0 * 8000 / (97.0 * 500 + 3.0 * 8000);
  TargetWorkload demand = TargetWorkload::FromClasses({share, big});
  demand.Resolve(c);
  PolicyContext ctx, demand_ctx;
  ctx.workload = &w;
  demand_ctx.workload = &demand;
  TesseraParams params;
  params.hole_fill_primary = 0;
  std::unique_ptr<Policy> t = MakeTesseraPolicy(ctx, params);
  std::unique_ptr<Policy> fgd = MakePolicy("fgd", ctx);
  std::unique_ptr<Policy> fgd_demand = MakePolicy("fgd", demand_ctx);
  const PodRequest sharing = c.MakeRequest(Pod(4000, 1, 500));
  c.Allocate(1, sharing, GpuSet{1});
  const auto primary = [&](int n, int64_t context) {
    return static_cast<int64_t>(
               t->Score(NodeView{c.spec(n), c.model_id(n), c.state(n), context}, sharing).score) /
           1000;
  };
  const auto fgd_score = [&](const Policy& p, int n) {
    return static_cast<int64_t>(
        p.Score(NodeView{c.spec(n), c.model_id(n), c.state(n)}, sharing).score);
  };
  // Plentiful before any multi-GPU pod is seen: still the demand-weighted classes.
  const int64_t early = t->ContextKey(ClusterSummary{});
  ASSERT_EQ(early & 1, 1);
  for (int n = 0; n < 2; ++n) {
    EXPECT_EQ(primary(n, 0), fgd_score(*fgd_demand, n)) << n;
    EXPECT_EQ(primary(n, early), fgd_score(*fgd_demand, n)) << n;
    EXPECT_EQ(primary(n, 1), fgd_score(*fgd, n)) << n;
  }
  // M sees no difference between opening the idle node and sharing the used one's GPU; the
  // demand-weighted classes see the idle node broken for the 8-GPU pods.
  EXPECT_EQ(fgd_score(*fgd, 0), fgd_score(*fgd, 1));
  EXPECT_GT(primary(1, 0), primary(0, 0));
}

PodSpec ConstrainedPod(int64_t cpu, int gpus, int32_t milli, const std::string& spec) {
  PodSpec p = Pod(cpu, gpus, milli);
  p.gpu_spec = spec;
  return p;
}

// Model pressure: the context level of a model is the list's model-constrained request share
// on it, times the free GPU milli of the cluster, over the model's free GPU milli, in steps of
// pressure_step (0.1), at most 15.
TEST(TesseraPolicy, ModelPressureLevelIsConstrainedRequestPerFreeGpuOfTheModel) {
  std::vector<NodeSpec> nodes;
  for (int i = 0; i < 4; ++i)
    nodes.push_back(NodeSpec{"t" + std::to_string(i), 64000, 262144, 2, "T4", 0});
  for (int i = 0; i < 4; ++i)
    nodes.push_back(NodeSpec{"g" + std::to_string(i), 96000, 262144, 8, "G2", 0});
  Cluster c(nodes);  // 8 T4 GPUs, 32 G2 GPUs
  // One T4-only pod in five: a constrained request share of 0.2 on T4.
  std::vector<PodSpec> pods = {ConstrainedPod(4000, 1, 1000, "T4")};
  for (int i = 0; i < 4; ++i) pods.push_back(Pod(4000, 1, 1000));
  TargetWorkload w = TargetWorkload::FromPods(pods);
  w.Resolve(c);
  PolicyContext ctx;
  ctx.workload = &w;
  TesseraParams params;
  params.adaptive_open = false;  // bit 0 stays 0; the T4 level is bits 1..4
  std::unique_ptr<Policy> t = MakeTesseraPolicy(ctx, params);
  ASSERT_TRUE(t->UsesContext());
  const int t4 = c.model_id(0);
  ClusterSummary s;
  s.total_gpu_milli = s.free_gpu_milli = s.start_free_gpu_milli = 40000;
  s.free_gpu_milli_by_model[t4] = 8000;
  s.free_gpu_milli_by_model[c.model_id(4)] = 32000;
  EXPECT_EQ(t->ContextKey(s), 10 << 1);  // 0.2 · 40 / 8 = 1.0
  s.free_gpu_milli = 20000;              // G2 GPUs taken, T4 kept: the pressure halves
  EXPECT_EQ(t->ContextKey(s), 5 << 1);
  s.free_gpu_milli_by_model[t4] = 1000;  // T4 nearly gone: capped at 15 steps
  EXPECT_EQ(t->ContextKey(s), 15 << 1);
  params.model_pressure = 0;
  EXPECT_FALSE(MakeTesseraPolicy(ctx, params)->UsesContext());
}

// The pressure enters FGD's score (the primary key) of pods that could use a less pressured
// model; pods that must use the model, CPU-only pods and other models' nodes are untouched.
TEST(TesseraPolicy, ModelPressureLowersFgdScoreOfPodsThatCouldGoElsewhere) {
  Cluster c({NodeSpec{"t4", 64000, 262144, 2, "T4", 0}, NodeSpec{"g2", 96000, 262144, 8, "G2", 0}});
  TargetWorkload w = TargetWorkload::FromPods(
      {ConstrainedPod(4000, 1, 1000, "T4"), Pod(4000, 1, 1000), Pod(4000, 0, 0)});
  w.Resolve(c);
  PolicyContext ctx;
  ctx.workload = &w;
  TesseraParams params;
  params.adaptive_open = false;
  std::unique_ptr<Policy> t = MakeTesseraPolicy(ctx, params);
  const auto score = [&](int node, const PodSpec& pod, int64_t t4_level) {
    const NodeView view{c.spec(node), c.model_id(node), c.state(node), t4_level << 1};
    return static_cast<int64_t>(t->Score(view, c.MakeRequest(pod)).score) / 1000;
  };
  const PodSpec anywhere = Pod(4000, 1, 1000);
  const PodSpec t4_only = ConstrainedPod(4000, 1, 1000, "T4");
  const PodSpec cpu_only = Pod(4000, 0, 0);
  EXPECT_LT(score(0, anywhere, 10), score(0, anywhere, 0));  // 1000 milli off ΔF
  EXPECT_EQ(score(0, t4_only, 10), score(0, t4_only, 0));
  EXPECT_EQ(score(0, cpu_only, 10), score(0, cpu_only, 0));
  EXPECT_EQ(score(1, anywhere, 10), score(1, anywhere, 0));
}

// A choice FGD leaves to the node order: one T4-only pod in 21 is outside FGD's target
// workload M (95 % coverage), so FGD scores the T4 and the G2 node alike and takes the first
// (T4). tessera sees the T4 request to come (level 1: 1/21 · 2 GPUs / 1 T4 GPU) and leaves
// the T4 GPU to it.
TEST(TesseraPolicy, ModelPressureLeavesTheScarceModelToItsConstrainedPods) {
  Cluster c({NodeSpec{"t4", 64000, 262144, 1, "T4", 0}, NodeSpec{"g2", 64000, 262144, 1, "G2", 0}});
  std::vector<PodSpec> pods(20, Pod(4000, 1, 1000));
  pods.push_back(ConstrainedPod(4000, 1, 1000, "T4"));
  TargetWorkload w = TargetWorkload::FromPods(pods);
  w.Resolve(c);
  ASSERT_EQ(w.classes().size(), 1u);
  PolicyContext ctx;
  ctx.workload = &w;
  std::unique_ptr<Policy> fgd = MakePolicy("fgd", ctx);
  std::unique_ptr<Policy> t = MakePolicy("tessera", ctx);
  for (const Policy* p : {fgd.get(), t.get()}) {
    Cluster copy = c;
    Scheduler s(&copy, p, {0, 1}, 1);
    EXPECT_EQ(s.Decide(copy.MakeRequest(Pod(4000, 1, 1000))).node, p == fgd.get() ? 0 : 1);
  }
}

// Runs with both contexts in use (adaptive_open and model pressure) repeat for a seed.
TEST(TesseraPolicy, ModelPressureRunsAreDeterministicForASeed) {
  std::vector<NodeSpec> nodes;
  for (int i = 0; i < 20; ++i) {
    nodes.push_back(NodeSpec{"n" + std::to_string(i), i % 2 ? 96000 : 32000, 262144, i % 3 ? 8 : 2,
                             i % 4 ? "G2" : "T4", 0});
  }
  std::vector<PodSpec> pods;
  for (int i = 0; i < 60; ++i) {
    PodSpec p = Pod(2000 + 1000 * (i % 9), i % 4 == 0 ? 0 : (i % 7 == 0 ? 8 : 1),
                    i % 4 == 0 ? 0 : (i % 3 ? 1000 : 250 + 50 * (i % 5)));
    if (i % 5 == 1) p.gpu_spec = "T4";
    pods.push_back(p);
  }
  TargetWorkload w = TargetWorkload::FromPods(pods);
  w.Resolve(Cluster(nodes));
  PolicyContext ctx;
  ctx.workload = &w;
  TesseraParams params;
  params.adaptive_open = true;
  std::unique_ptr<Policy> t = MakeTesseraPolicy(ctx, params);
  ASSERT_TRUE(t->UsesContext());
  InflationOptions options;
  RunResult a = RunInflation(nodes, pods, w, *t, 7, options);
  RunResult b = RunInflation(nodes, pods, w, *t, 7, options);
  ExpectSameRunsWithPlacements(a, b);
}

TEST(TesseraPolicy, AdaptiveOpenRunsAreDeterministicForASeed) {
  std::vector<NodeSpec> nodes;
  for (int i = 0; i < 20; ++i) {
    nodes.push_back(
        NodeSpec{"n" + std::to_string(i), i % 2 ? 96000 : 32000, 262144, i % 3 ? 8 : 2, "T4", 0});
  }
  std::vector<PodSpec> pods;
  for (int i = 0; i < 60; ++i) {
    pods.push_back(Pod(2000 + 1000 * (i % 9), i % 4 == 0 ? 0 : (i % 7 == 0 ? 8 : 1),
                       i % 4 == 0 ? 0 : (i % 3 ? 1000 : 250 + 50 * (i % 5))));
  }
  TargetWorkload w = TargetWorkload::FromPods(pods);
  w.Resolve(Cluster(nodes));
  PolicyContext ctx;
  ctx.workload = &w;
  TesseraParams params;
  params.adaptive_open = true;
  std::unique_ptr<Policy> t = MakeTesseraPolicy(ctx, params);
  InflationOptions options;
  RunResult a = RunInflation(nodes, pods, w, *t, 7, options);
  RunResult b = RunInflation(nodes, pods, w, *t, 7, options);
  ExpectSameRunsWithPlacements(a, b);
}

TEST(TesseraPolicy, RunsAreDeterministicForASeed) {
  std::vector<NodeSpec> nodes;
  for (int i = 0; i < 20; ++i) {
    nodes.push_back(
        NodeSpec{"n" + std::to_string(i), i % 2 ? 96000 : 32000, 262144, i % 3 ? 8 : 2, "T4", 0});
  }
  std::vector<PodSpec> pods;
  for (int i = 0; i < 60; ++i) {
    pods.push_back(Pod(2000 + 1000 * (i % 9), i % 4 == 0 ? 0 : (i % 7 == 0 ? 2 : 1),
                       i % 4 == 0 ? 0 : (i % 3 ? 1000 : 250 + 50 * (i % 5))));
  }
  TargetWorkload w = TargetWorkload::FromPods(pods);
  w.Resolve(Cluster(nodes));
  Result<RunResult> a = RunInflation(nodes, pods, w, "tessera", 7, {});
  Result<RunResult> b = RunInflation(nodes, pods, w, "tessera", 7, {});
  ASSERT_TRUE(a.ok() && b.ok());
  ExpectSameRunsWithPlacements(*a, *b);
}

// Measure evaluates F_n(M) and S_n through one per-threshold table and per-bucket prefix sums;
// reference_measure uses the plain per-class loops. Every score (and ScorePair's two) must be
// the same, on node states of every kind, for pods of every kind and under many context values
// (the sums' order differs: Combine snaps rounding-sized changes to none).
TEST(TesseraPolicy, FastMeasureGivesTheReferenceLoopsScores) {
  Rng rng(5);
  const char* models[] = {"T4", "P100", "V100M32"};
  const int gpu_counts[] = {1, 2, 4, 8};
  std::vector<NodeSpec> nodes;
  for (int i = 0; i < 40; ++i) {
    nodes.push_back(NodeSpec{"n" + std::to_string(i), 16000 * (1 + static_cast<int64_t>(i % 5)),
                             262144, gpu_counts[i % 4], models[i % 3], 0});
  }
  std::vector<PodSpec> pods;
  const int32_t millis[] = {50, 100, 250, 300, 500, 750, 1000};
  const char* specs[] = {"", "", "", "T4", "P100|V100M32", "V100M32"};
  for (int i = 0; i < 300; ++i) {
    const int kind = static_cast<int>(rng.Below(8));
    PodSpec p = Pod(500 * static_cast<int64_t>(1 + rng.Below(24)), kind == 0 ? 0 : 1,
                    kind == 0 ? 0 : millis[rng.Below(7)]);
    if (kind == 7) {
      p.gpu_count = 2 << rng.Below(3);
      p.gpu_milli = 1000;
    }
    if (kind != 0) p.gpu_spec = specs[rng.Below(6)];
    pods.push_back(p);
  }
  Cluster c(nodes);
  TargetWorkload w = TargetWorkload::FromPods(pods);
  w.Resolve(c);
  ASSERT_GT(w.all_classes().size(), w.classes().size());  // multi-GPU classes outside M too
  PolicyContext ctx;
  ctx.workload = &w;
  std::vector<TesseraParams> variants(4);
  variants[1].adaptive_open = true;
  variants[2].adaptive_open = true;
  variants[2].plentiful_drop_multi_gpu = false;
  variants[3].multi_gpu_classes = false;
  variants[3].model_pressure = 0;
  int compared = 0;
  for (const TesseraParams& params : variants) {
    TesseraParams reference_params = params;
    reference_params.reference_measure = true;
    std::unique_ptr<Policy> fast = MakeTesseraPolicy(ctx, params);
    std::unique_ptr<Policy> reference = MakeTesseraPolicy(ctx, reference_params);
    Cluster state = c;
    for (int step = 0; step < 120; ++step) {
      // Fill the cluster at random, so that states of every kind occur.
      const PodRequest add = state.MakeRequest(pods[rng.Below(pods.size())]);
      const int target = static_cast<int>(rng.Below(nodes.size()));
      if (state.Check(target, add) == FitReason::kFits) {
        state.Allocate(target, add,
                       add.IsCpuOnly()
                           ? GpuSet{0}
                           : DefaultGpuChoice(nodes[target].gpu_count, state.state(target), add));
      }
      const PodRequest r = state.MakeRequest(pods[rng.Below(pods.size())]);
      const int64_t context = static_cast<int64_t>(rng.Below(1 << 12));
      for (int n = 0; n < state.size(); ++n) {
        if (state.Check(n, r) != FitReason::kFits) continue;
        const NodeView view{state.spec(n), state.model_id(n), state.state(n), context};
        const NodeScore got = fast->Score(view, r);
        const NodeScore want = reference->Score(view, r);
        ASSERT_EQ(got.score, want.score) << "node " << n << " step " << step;
        ASSERT_EQ(got.gpus, want.gpus);
        if (fast->PairedContextBit() != 0) {
          NodeScore pair[2];
          fast->ScorePair(view, r, pair);
          for (int bit = 0; bit < 2; ++bit) {
            NodeView v = view;
            v.context = bit ? context | 1 : context & ~int64_t{1};
            const NodeScore one = reference->Score(v, r);
            ASSERT_EQ(pair[bit].score, one.score) << "node " << n << " step " << step;
            ASSERT_EQ(pair[bit].gpus, one.gpus);
          }
        }
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 2000);
}

}  // namespace
}  // namespace tessera
