// The grouped, cached scheduler must decide exactly as a plain loop over every node would.
#include "sched/scheduler.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>

#include "frag/target_workload.h"
#include "policy/tessera_policy.h"
#include "sched/headroom.h"
#include "util/rng.h"

namespace tessera {
namespace {

// The cluster-wide summary computed from scratch; what was seen and the start state are kept
// by the caller in `seen`.
ClusterSummary SummaryFromScratch(const Cluster& c, const ClusterSummary& seen) {
  ClusterSummary s = seen;
  s.idle_nodes_by_gpus = {};
  s.free_gpu_milli_by_model = {};
  for (int n = 0; n < c.size(); ++n) {
    bool idle = c.state(n).cpu_left == c.spec(n).cpu_milli;
    for (int i = 0; i < c.spec(n).gpu_count; ++i) {
      idle = idle && c.state(n).gpu_free[i] == 1000;
      if (c.model_id(n) >= 0) s.free_gpu_milli_by_model[c.model_id(n)] += c.state(n).gpu_free[i];
    }
    if (idle) ++s.idle_nodes_by_gpus[c.spec(n).gpu_count];
  }
  s.total_gpu_milli = c.total_gpu_milli();
  s.free_gpu_milli = c.total_gpu_milli() - c.allocated_gpu_milli();
  return s;
}

// Reference: score every node from scratch (with the policy's context value computed from
// scratch), normalise if asked, first max in order wins.
Decision Reference(const Cluster& c, const Policy& p, const std::vector<int>& order,
                   const PodRequest& r, const ClusterSummary& seen) {
  const int64_t context = p.UsesContext() ? p.ContextKey(SummaryFromScratch(c, seen)) : 0;
  std::vector<std::pair<int, NodeScore>> feasible;
  for (int n : order) {
    if (c.Check(n, r) != FitReason::kFits) continue;
    feasible.emplace_back(n, p.Score(NodeView{c.spec(n), c.model_id(n), c.state(n), context}, r));
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

// A policy whose scores depend on the cluster as a whole, and change with it often: the
// context value is the number of idle nodes modulo 6, and it decides whether the policy packs
// (most-allocated node first) or spreads. Exercises the scheduler's cache invalidation.
class FlipFlopPolicy final : public Policy {
 public:
  std::string_view name() const override { return "flipflop"; }
  bool UsesContext() const override { return true; }
  int64_t ContextKey(const ClusterSummary& s) const override {
    int idle = 0;
    for (int v : s.idle_nodes_by_gpus) idle += v;
    return idle % 6;  // more values than the scheduler has cache slots for
  }
  NodeScore Score(const NodeView& node, const PodRequest&) const override {
    int64_t free = 0;
    for (int i = 0; i < node.spec.gpu_count; ++i) free += node.state.gpu_free[i];
    const double used = 1.0 - static_cast<double>(node.state.cpu_left) / node.spec.cpu_milli;
    const double s = node.context == 0 ? 100.0 * used : 100.0 - 100.0 * used;
    return NodeScore{std::floor(s) + static_cast<double>(free % 7), 0};
  }
};

// The same, but only nodes of GPU model 0 see the context (Policy::ContextFor says so): the
// scheduler keeps the other nodes' cached scores across context changes.
class FlipFlopByModelPolicy final : public Policy {
 public:
  std::string_view name() const override { return "flipflop-by-model"; }
  bool UsesContext() const override { return true; }
  int64_t ContextKey(const ClusterSummary& s) const override { return flip_.ContextKey(s); }
  int64_t ContextFor(int64_t context, int model_id, const PodRequest&) const override {
    return model_id == 0 ? context : -1;
  }
  NodeScore Score(const NodeView& node, const PodRequest& pod) const override {
    NodeView view = node;
    if (node.model_id != 0) view.context = 0;
    return flip_.Score(view, pod);
  }

 private:
  FlipFlopPolicy flip_;
};

// The flip-flop policy with its context's lowest bit paired (Policy::PairedContextBit; the
// default ScorePair, two Score calls): the scheduler caches both values of the bit at once.
class FlipFlopPairedPolicy final : public Policy {
 public:
  std::string_view name() const override { return "flipflop-paired"; }
  bool UsesContext() const override { return true; }
  int64_t ContextKey(const ClusterSummary& s) const override { return flip_.ContextKey(s); }
  int64_t PairedContextBit() const override { return 1; }
  NodeScore Score(const NodeView& node, const PodRequest& pod) const override {
    NodeView view = node;
    view.context = node.context & 1;  // spread or pack by the bit alone
    NodeScore s = flip_.Score(view, pod);
    s.score += static_cast<double>(node.context >> 1);  // the rest shifts every score alike
    return s;
  }

 private:
  FlipFlopPolicy flip_;
};

// tessera with only the adaptive idle-node protection, only the model pressure (as shipped),
// neither, or both, and the flip-flop policies above.
std::unique_ptr<Policy> MakeTestPolicy(const std::string& name, const PolicyContext& ctx) {
  if (name == "flipflop") return std::make_unique<FlipFlopPolicy>();
  if (name == "flipflop-by-model") return std::make_unique<FlipFlopByModelPolicy>();
  if (name == "flipflop-paired") return std::make_unique<FlipFlopPairedPolicy>();
  if (name == "tessera-adaptive-pressure") {  // both context users of tessera at once
    TesseraParams params;
    params.adaptive_open = true;
    return MakeTesseraPolicy(ctx, params);
  }
  if (name == "tessera-pressure-only" || name == "tessera-static") {
    TesseraParams params;  // as shipped: the model pressure only
    if (name == "tessera-static") params.model_pressure = 0;
    return MakeTesseraPolicy(ctx, params);
  }
  if (name.starts_with("tessera-adaptive")) {
    TesseraParams params;
    params.adaptive_open = true;
    params.model_pressure = 0;
    params.open_reserve = 1.0;
    params.plentiful_drop_multi_gpu = name.ends_with("-drop");
    return MakeTesseraPolicy(ctx, params);
  }
  return MakePolicy(name, ctx);
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
      p.gpu_count = kind < 9 ? 1 : 2 + 2 * static_cast<int>(rng.Below(2)) * (1 + (i % 2));
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
  std::unique_ptr<Policy> policy = MakeTestPolicy(GetParam(), ctx);
  std::vector<int> order(nodes.size());
  std::iota(order.begin(), order.end(), 0);
  rng.Shuffle(order);
  Scheduler s(&grouped, policy.get(), order, 9);
  int placed = 0;
  struct Bound {
    int node;
    PodRequest request;
    GpuSet gpus;
  };
  std::vector<Bound> bound;
  // What the reference has seen (the scheduler counts on its own), and the start state.
  ClusterSummary seen = SummaryFromScratch(plain, ClusterSummary{});
  seen.start_idle_nodes_by_gpus = seen.idle_nodes_by_gpus;
  seen.start_free_gpu_milli = seen.free_gpu_milli;
  for (const PodSpec& p : pods) {
    const PodRequest r = grouped.MakeRequest(p);
    seen.seen_gpu_milli_by_count[r.gpu_count] += int64_t{r.gpu_milli} * r.gpu_count;
    ++seen.seen_pods;
    const Decision got = s.Decide(r);
    const Decision want = Reference(plain, *policy, order, r, seen);
    ASSERT_EQ(got.node, want.node) << p.name;
    ASSERT_EQ(got.gpus, want.gpus) << p.name;
    ASSERT_EQ(got.score, want.score) << p.name;
    if (got.ok()) {
      s.Bind(got.node, r, got.gpus);
      plain.Allocate(want.node, r, want.gpus);
      bound.push_back({got.node, r, got.gpus});
      ++placed;
    }
  }
  EXPECT_GT(placed, 100);
  EXPECT_LT(placed, 400);  // the cluster filled up: failures were exercised too
  // The running idle-GPU counts (what the headroom reads) are those of a pass over the nodes,
  // after the binds and after unbinding every other pod.
  std::vector<int64_t> by_model;
  EXPECT_EQ(s.idle_gpus(), CountIdleGpus(plain, &by_model));
  EXPECT_EQ(s.idle_gpus_by_model(), by_model);
  for (size_t i = 0; i < bound.size(); i += 2) {
    s.Unbind(bound[i].node, bound[i].request, bound[i].gpus);
    plain.Release(bound[i].node, bound[i].request, bound[i].gpus);
  }
  EXPECT_EQ(s.idle_gpus(), CountIdleGpus(plain, &by_model));
  EXPECT_EQ(s.idle_gpus_by_model(), by_model);
  EXPECT_GT(s.idle_gpus(), 0);
  if (policy->UsesContext()) {
    EXPECT_GT(s.context_changes(), 0);  // the cache invalidation was exercised
    const ClusterSummary want = SummaryFromScratch(plain, seen);
    EXPECT_EQ(s.summary().idle_nodes_by_gpus, want.idle_nodes_by_gpus);
    EXPECT_EQ(s.summary().seen_gpu_milli_by_count, want.seen_gpu_milli_by_count);
    EXPECT_EQ(s.summary().seen_pods, want.seen_pods);
    EXPECT_EQ(s.summary().free_gpu_milli_by_model, want.free_gpu_milli_by_model);
  }
}

INSTANTIATE_TEST_SUITE_P(AllScoredPolicies, SchedulerEquivalence,
                         ::testing::Values("tessera", "fgd", "bestfit", "packing", "clustering",
                                           "dotprod", "k8s-default", "tessera-adaptive",
                                           "tessera-adaptive-drop", "tessera-pressure-only",
                                           "tessera-static", "tessera-adaptive-pressure",
                                           "flipflop", "flipflop-by-model", "flipflop-paired"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& ch : n) ch = ch == '-' ? '_' : ch;
                           return n;
                         });

// The rejections of the plain loop: CheckFit of every node.
std::array<int, kNumFitReasons> PlainRejections(const Cluster& c, const PodRequest& r) {
  std::array<int, kNumFitReasons> out{};
  for (int n = 0; n < c.size(); ++n) ++out[static_cast<int>(c.Check(n, r))];
  out[static_cast<int>(FitReason::kFits)] = 0;
  return out;
}

// ScoreNodes of the plain loop: every node of `nodes` that fits, scored from scratch and
// normalised over them.
std::vector<std::pair<int, int>> PlainScoreNodes(const Cluster& c, const Policy& p,
                                                 const PodRequest& r, const std::vector<int>& nodes,
                                                 int64_t context) {
  std::vector<std::pair<int, double>> raw;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (int n : nodes) {
    if (c.Check(n, r) != FitReason::kFits) continue;
    const double s =
        p.mode() == ScoreMode::kUniformRandom
            ? 0
            : p.Score(NodeView{c.spec(n), c.model_id(n), c.state(n), context}, r).score;
    raw.emplace_back(n, s);
    lo = std::min(lo, s);
    hi = std::max(hi, s);
  }
  std::vector<std::pair<int, int>> out;
  for (const auto& [n, s] : raw) {
    int score = p.mode() == ScoreMode::kInteger ? static_cast<int>(s) : 0;
    if (p.mode() == ScoreMode::kMinMax) {
      score = hi > lo ? static_cast<int>(std::floor(100.0 * (s - lo) / (hi - lo))) : 0;
    }
    out.emplace_back(n, score);
  }
  return out;
}

// Large clusters placed at random, so that nearly every node is its own state: the decisions
// (node, GPUs, score, and the rejections of pods that fit nowhere) and ScoreNodes equal the
// plain loop's, for pods of every kind: CPU-only, sharing, whole GPUs, several GPUs of a share
// each, with GPU memory, restricted to GPU models, and too large for any node. Exercises the
// scheduler's per-group summaries, its score columns and (fgd) the policy's score bounds.
class SchedulerEquivalenceLarge : public ::testing::TestWithParam<std::string> {};

TEST_P(SchedulerEquivalenceLarge, RandomClustersDecideAsThePlainLoop) {
  Rng rng(2024);
  const char* models[] = {"T4", "P100", "V100M32", "A10"};
  const int gpu_counts[] = {0, 1, 2, 4, 8};
  std::vector<NodeSpec> nodes;
  for (int i = 0; i < 2000; ++i) {
    const int g = gpu_counts[rng.Below(5)];
    const int m = static_cast<int>(rng.Below(4));
    nodes.push_back(NodeSpec{"n" + std::to_string(i),
                             8000 * static_cast<int64_t>(1 + rng.Below(12)),
                             16384 * static_cast<int64_t>(1 + rng.Below(16)), g,
                             g == 0 ? "" : models[m], g == 0 || m < 2 ? 0 : 16384 * (m - 1)});
  }
  const auto random_pod = [&](int i) {
    PodSpec p;
    p.name = "p" + std::to_string(i);
    p.cpu_milli = 500 * static_cast<int64_t>(1 + rng.Below(24));
    p.memory_mib = 1024 * static_cast<int64_t>(rng.Below(32));
    switch (rng.Below(10)) {
      case 0:  // CPU-only
        break;
      case 1:
      case 2:
      case 3:  // sharing
        p.gpu_count = 1;
        p.gpu_milli = 50 * static_cast<int32_t>(1 + rng.Below(19));
        break;
      case 4:
      case 5:
      case 6:  // whole GPUs
        p.gpu_count = 1 << rng.Below(4);
        p.gpu_milli = 1000;
        break;
      case 7:  // several GPUs, a share of each
        p.gpu_count = 2;
        p.gpu_milli = 100 * static_cast<int32_t>(1 + rng.Below(9));
        break;
      case 8:  // sharing with GPU memory
        p.gpu_count = 1;
        p.gpu_milli = 100 * static_cast<int32_t>(1 + rng.Below(9));
        p.gpu_memory_mib = 1024 * static_cast<int64_t>(1 + rng.Below(24));
        break;
      default:  // too large for every node
        p.cpu_milli = 200000;
        p.gpu_count = static_cast<int>(rng.Below(2));
        p.gpu_milli = p.gpu_count * 1000;
        break;
    }
    if (p.gpu_count > 0 && rng.Below(4) == 0) p.gpu_spec = rng.Below(2) ? "T4|A10" : "P100";
    return p;
  };
  std::vector<PodSpec> pods;
  for (int i = 0; i < 600; ++i) pods.push_back(random_pod(i));
  Cluster grouped(nodes);
  TargetWorkload w = TargetWorkload::FromPods(pods);
  w.Resolve(grouped);
  PolicyContext ctx;
  ctx.workload = &w;
  std::unique_ptr<Policy> policy = MakeTestPolicy(GetParam(), ctx);
  std::vector<int> order(nodes.size());
  std::iota(order.begin(), order.end(), 0);
  rng.Shuffle(order);
  Scheduler s(&grouped, policy.get(), order, 9);
  // Half of the GPUs taken by pods placed at random (as Bind calls: the scheduler's groups
  // follow), the first 400 pods' shapes.
  struct Placed {
    int node;
    PodRequest request;
    GpuSet gpus;
  };
  std::vector<Placed> placed;
  while (grouped.allocated_gpu_milli() * 2 < grouped.total_gpu_milli()) {
    const PodRequest r = grouped.MakeRequest(pods[rng.Below(400)]);
    const int n = static_cast<int>(rng.Below(nodes.size()));
    if (grouped.Check(n, r) != FitReason::kFits) continue;
    const GpuSet gpus =
        r.IsCpuOnly() ? 0 : DefaultGpuChoice(nodes[n].gpu_count, grouped.state(n), r);
    s.Bind(n, r, gpus);
    placed.push_back({n, r, gpus});
  }
  EXPECT_GT(s.distinct_states(), 1000);
  Cluster plain = grouped;
  ClusterSummary seen = s.summary();
  int decided = 0;
  int failed = 0;
  for (int i = 0; i < 300; ++i) {
    const PodSpec& p = pods[rng.Below(pods.size())];
    const PodRequest r = grouped.MakeRequest(p);
    if (policy->UsesContext()) {
      seen.seen_gpu_milli_by_count[r.gpu_count] += int64_t{r.gpu_milli} * r.gpu_count;
      ++seen.seen_pods;
    }
    const Decision got = s.Decide(r);
    const Decision want = Reference(plain, *policy, order, r, seen);
    ASSERT_EQ(got.node, want.node) << i << " " << p.name;
    ASSERT_EQ(got.gpus, want.gpus) << i << " " << p.name;
    ASSERT_EQ(got.score, want.score) << i << " " << p.name;
    if (got.ok()) {  // the GPU choice of the front doors is Decide's
      ASSERT_EQ(s.ChooseGpus(got.node, r), got.gpus) << i << " " << p.name;
    }
    if (!got.ok()) {
      ASSERT_EQ(got.rejected, PlainRejections(plain, r)) << i << " " << p.name;
      ++failed;
    } else if (rng.Below(2) == 0) {  // keep it, or give back an earlier pod
      s.Bind(got.node, r, got.gpus);
      plain.Allocate(got.node, r, got.gpus);
      placed.push_back({got.node, r, got.gpus});
      ++decided;
    } else {
      const size_t k = rng.Below(placed.size());
      s.Unbind(placed[k].node, placed[k].request, placed[k].gpus);
      plain.Release(placed[k].node, placed[k].request, placed[k].gpus);
      placed[k] = placed.back();
      placed.pop_back();
    }
    if (i % 10 == 0) {  // ScoreNodes over a random fifth of the nodes
      std::vector<int> some;
      for (int n = 0; n < plain.size(); ++n) {
        if (rng.Below(5) == 0) some.push_back(n);
      }
      const int64_t context =
          policy->UsesContext() ? policy->ContextKey(SummaryFromScratch(plain, seen)) : 0;
      ASSERT_EQ(s.ScoreNodes(r, some), PlainScoreNodes(plain, *policy, r, some, context)) << i;
    }
  }
  EXPECT_GT(decided, 50);
  EXPECT_GT(failed, 10);
}

INSTANTIATE_TEST_SUITE_P(ScoredPolicies, SchedulerEquivalenceLarge,
                         ::testing::Values("fgd", "bestfit", "packing", "clustering", "dotprod",
                                           "k8s-default", "tessera", "flipflop-by-model"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& ch : n) ch = ch == '-' ? '_' : ch;
                           return n;
                         });

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

// A pod asked about again (the replay's retries) is not counted again: the context of a
// context-using policy sees each pod once, as the extender counts each pod UID once.
TEST(Scheduler, DecideWithoutObservingCountsNothing) {
  Cluster c({NodeSpec{"a", 96000, 393216, 8, "G2", 0}});
  PodSpec pod;
  pod.cpu_milli = 4000;
  pod.memory_mib = 1024;
  pod.gpu_count = 1;
  pod.gpu_milli = 500;
  TargetWorkload w = TargetWorkload::FromPods({pod});
  w.Resolve(c);
  PolicyContext ctx;
  ctx.workload = &w;
  std::unique_ptr<Policy> p = MakePolicy("tessera", ctx);
  ASSERT_TRUE(p->UsesContext());
  Scheduler s(&c, p.get(), {0}, 1);
  const PodRequest r = c.MakeRequest(pod);
  EXPECT_TRUE(s.Decide(r).ok());
  EXPECT_EQ(s.summary().seen_pods, 1);
  EXPECT_EQ(s.summary().seen_gpu_milli_by_count[1], 500);
  EXPECT_TRUE(s.Decide(r, /*observe=*/false).ok());
  EXPECT_EQ(s.summary().seen_pods, 1);
  s.Observe(r);
  EXPECT_EQ(s.summary().seen_pods, 2);
  EXPECT_EQ(s.summary().seen_gpu_milli_by_count[1], 1000);
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

// A pod shape that fits no node is answered from what the scheduler remembers of it; binds and
// unbinds keep its rejection counts those of CheckFit on every node, and once a node can take
// it again it is decided as before.
TEST(Scheduler, AShapeThatFitsNowhereIsDecidedAgainWhenANodeFrees) {
  for (const char* name : {"fgd", "bestfit", "tessera"}) {
    SCOPED_TRACE(name);
    Cluster c({NodeSpec{"a", 8000, 16384, 1, "T4", 0}, NodeSpec{"b", 8000, 16384, 1, "T4", 0},
               NodeSpec{"c", 8000, 16384, 0, "", 0}});
    PodSpec whole;
    whole.cpu_milli = 1000;
    whole.memory_mib = 1024;
    whole.gpu_count = 1;
    whole.gpu_milli = 1000;
    PodSpec cpu;
    cpu.cpu_milli = 6500;
    TargetWorkload w = TargetWorkload::FromPods({whole, cpu});
    w.Resolve(c);
    PolicyContext ctx;
    ctx.workload = &w;
    std::unique_ptr<Policy> p = MakeTestPolicy(name, ctx);
    Scheduler s(&c, p.get(), {0, 1, 2}, 1);
    const PodRequest g = c.MakeRequest(whole);
    const PodRequest big = c.MakeRequest(cpu);
    const Decision first = s.Decide(g);
    ASSERT_TRUE(first.ok());
    s.Bind(first.node, g, first.gpus);
    const Decision second = s.Decide(g);
    ASSERT_TRUE(second.ok());
    s.Bind(second.node, g, second.gpus);
    // Both GPUs taken: no room on a or b; c has no GPU (of any model).
    Decision none = s.Decide(g);
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.rejected, PlainRejections(c, g));
    EXPECT_EQ(none.rejected[static_cast<int>(FitReason::kGpu)], 2);
    EXPECT_EQ(none.rejected[static_cast<int>(FitReason::kGpuModel)], 1);
    // A CPU-only pod on a: a's reason becomes CPU (checked first), the shape still fits nowhere.
    s.Bind(first.node, big, 0);
    none = s.Decide(g);
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.rejected, PlainRejections(c, g));
    EXPECT_EQ(none.rejected[static_cast<int>(FitReason::kCpu)], 1);
    // b's GPU freed: the pod goes there.
    s.Unbind(second.node, g, second.gpus);
    const Decision again = s.Decide(g);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again.node, second.node);
    EXPECT_EQ(again.gpus, second.gpus);
  }
}

}  // namespace
}  // namespace tessera
