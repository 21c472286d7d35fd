// The replay against queueing theory: single-GPU pods with Poisson arrivals and exponential
// durations on c one-GPU nodes are an M/M/c queue, whose waits Erlang C gives exactly. For c
// from 5 to 200, loaded by square-root staffing (a = c − 0.75·√c, so that about 40 % of the pods
// wait), the replay's probability of waiting, mean wait and p95 wait over ten draws fall within
// the three-sigma confidence interval of their mean around Erlang C's values; and `tessera plan`'s
// search (plan/planner.h) finds the GPU count that Erlang C says meets a p99 SLO, within one.

#include "plan/erlang.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "plan/planner.h"
#include "plan/slo.h"
#include "replay/replay_policy.h"
#include "replay/scenario_timeline.h"
#include "trace/scenario.h"

namespace tessera {
namespace {

constexpr double kServiceS = 100;  // mean duration of a pod

// The demand as a scenario (the planner's input format): one class of single-GPU pods at
// `arrival_per_s`, exponential durations, over `hours`, drawn with `seed`.
Timeline Demand(double arrival_per_s, double hours, uint64_t seed) {
  char yaml[1024];
  std::snprintf(yaml, sizeof yaml,
                "name: mmc\npods: 1\nseed: %llu\nhorizon_h: %.6f\n"
                "nodes:\n  - {name: g1, model: T4, gpus: 1, cpu_milli: 8000, memory_mib: 32768, "
                "count: 1}\n"
                "classes:\n  - name: job\n    cpu_milli: 1000\n    gpu_count: 1\n    qos: BE\n"
                "    share: 1\n    arrival: {rate_per_h: %.9f}\n"
                "    duration: {dist: exponential, mean_s: %.1f}\n",
                static_cast<unsigned long long>(seed), hours, arrival_per_s * 3600, kServiceS);
  Result<Scenario> s = ParseScenario(yaml, "mmc.yaml");
  EXPECT_TRUE(s.ok()) << s.error().message;
  return ScenarioTimeline(*s, 1.0);
}

NodeSpec OneGpuNode() {
  NodeSpec n;
  n.name = "g1";
  n.cpu_milli = 8000;
  n.memory_mib = 32768;
  n.gpu_count = 1;
  n.gpu_model = "T4";
  return n;
}

struct Waits {
  double p_wait = 0, mean = 0, p95 = 0;
};

// The waits of the pods that arrived after a warm-up of 20 mean durations (the replay starts
// empty); the horizon leaves every pod time to start.
Waits Measure(const Timeline& t, int servers, uint64_t seed) {
  std::vector<NodeSpec> nodes(static_cast<size_t>(servers), OneGpuNode());
  for (int i = 0; i < servers; ++i) nodes[static_cast<size_t>(i)].name = "g1-" + std::to_string(i);
  ReplayOptions options;
  options.samples = 0;
  options.seed = seed;
  options.horizon_s = t.pods.back().arrival_s + 100 * kServiceS;
  const ReplayResult r =
      RunReplayPolicy(nodes, t, ReplayPolicyByName("k8s-default").value(), options);
  std::vector<double> waits;
  for (size_t i = 0; i < t.pods.size(); ++i) {
    if (t.pods[i].arrival_s < 20 * kServiceS) continue;
    EXPECT_GE(r.pods[i].wait_s, 0) << "pod " << i << " never started";
    waits.push_back(r.pods[i].wait_s);
  }
  Waits w;
  for (double x : waits) {
    w.p_wait += x > 1e-9;
    w.mean += x;
  }
  w.p_wait /= static_cast<double>(waits.size());
  w.mean /= static_cast<double>(waits.size());
  std::sort(waits.begin(), waits.end());
  w.p95 = waits[static_cast<size_t>(std::ceil(0.95 * static_cast<double>(waits.size()))) - 1];
  return w;
}

// Mean and three-sigma half-width of the mean of `xs`.
std::pair<double, double> Interval(const std::vector<double>& xs) {
  double m = 0, v = 0;
  for (double x : xs) m += x;
  m /= static_cast<double>(xs.size());
  for (double x : xs) v += (x - m) * (x - m);
  v /= static_cast<double>(xs.size() - 1);
  return {m, 3 * std::sqrt(v / static_cast<double>(xs.size()))};
}

class ErlangC : public ::testing::TestWithParam<int> {};

TEST_P(ErlangC, ReplayWaitsMatchTheFormula) {
  const int c = GetParam();
  const double load = c - 0.75 * std::sqrt(c);
  const ErlangQueue q{c, load / kServiceS, kServiceS};
  // About 20,000 pods per draw.
  const double hours = 20000 / q.arrival_per_s / 3600;
  std::vector<double> p_wait, mean, p95;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const Waits w = Measure(Demand(q.arrival_per_s, hours, seed), c, seed);
    p_wait.push_back(w.p_wait);
    mean.push_back(w.mean);
    p95.push_back(w.p95);
  }
  const auto [pw, pw_ci] = Interval(p_wait);
  const auto [mw, mw_ci] = Interval(mean);
  const auto [qw, qw_ci] = Interval(p95);
  const double want_pw = ErlangWaitProbability(q);
  const double want_mw = ErlangMeanWait(q);
  const double want_qw = ErlangWaitQuantile(q, 0.95);
  std::printf(
      "[erlang c=%d a=%.2f] P(wait) %.4f ± %.4f (Erlang C %.4f), mean %.2f ± %.2f s (%.2f),"
      " p95 %.2f ± %.2f s (%.2f)\n",
      c, load, pw, pw_ci, want_pw, mw, mw_ci, want_mw, qw, qw_ci, want_qw);
  EXPECT_NEAR(pw, want_pw, pw_ci);
  EXPECT_NEAR(mw, want_mw, mw_ci);
  EXPECT_NEAR(qw, want_qw, qw_ci);
  EXPECT_GT(want_pw, 0.25);  // the load is one where waiting is common
}

INSTANTIATE_TEST_SUITE_P(Servers, ErlangC, ::testing::Values(5, 20, 50, 200));

// `tessera plan`'s search (plan/planner.h) on one node type of single-GPU nodes: the least
// count whose replays meet the class's wait SLO on every seed.
PlanSpec OneGpuPlan(int min_count, int max_count, const std::string& slo, double hours) {
  PlanSpec spec;
  NodeType t;
  t.name = "g1";
  t.model = "T4";
  t.gpus = 1;
  t.cpu_milli = OneGpuNode().cpu_milli;
  t.memory_mib = OneGpuNode().memory_mib;
  t.cost_per_hour = 1;
  t.min_count = min_count;
  t.max_count = max_count;
  spec.catalog.types = {t};
  spec.slos = {ParseSlo(slo).value()};
  spec.policies = {ReplayPolicyByName("k8s-default").value()};
  spec.seeds = {1, 2, 3};
  spec.check_seeds = {4};
  spec.sensitivity = {};
  spec.replay.horizon_s = hours * 3600;
  return spec;
}

Result<PlanResult> RunPlan(const PlanSpec& spec, double arrival, double hours) {
  DemandDraws demand([arrival, hours](uint64_t seed, double factor) {
    return Demand(arrival * factor, hours, seed);
  });
  std::vector<int> all;
  for (size_t i = 0; i < Units(spec).size(); ++i) all.push_back(static_cast<int>(i));
  return FinishPlan(spec, demand, RunUnits(spec, demand, all, 2, nullptr), 2);
}

TEST(ErlangSizing, ThePlannersCountIsTheErlangCountWithinOne) {
  const double arrival = 0.4;  // 40 Erlangs of single-GPU pods
  const double slo = 30;       // p99 wait <= 30 s
  const int want = ErlangLeastServers(arrival, kServiceS, 0.99, slo);
  const double hours = 40000 / arrival / 3600;
  const PlanSpec spec = OneGpuPlan(41, 80, "BE: p99 wait <= 30s", hours);
  Result<PlanResult> plan = RunPlan(spec, arrival, hours);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->chosen_counts.size(), 1u);
  const int got = plan->chosen_counts[0];
  std::cout << "[sizing] Erlang C " << want << " GPUs, tessera plan's search " << got
            << " (replayed";
  for (const Evaluation& e : plan->units[0].evaluated) {
    std::cout << " " << e.counts[0] << (e.meets ? ":meets" : ":misses");
  }
  std::cout << ")\n";
  EXPECT_LE(std::abs(got - want), 1);
}

TEST(ErlangSizing, AnSloNoCountMeetsNamesTheClassTheBestWaitAndWhere) {
  const PlanSpec spec = OneGpuPlan(10, 30, "BE: p99 wait <= 1s", 2);  // 40 Erlangs: never enough
  Result<PlanResult> plan = RunPlan(spec, 0.4, 2);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.error().message.find("class BE: no mix up to the catalog's maximum meets"),
            std::string::npos)
      << plan.error().message;
  EXPECT_NE(plan.error().message.find("by k8s-default on 30*g1 (30 GPUs)"), std::string::npos)
      << plan.error().message;
}

TEST(ErlangFormula, KnownValues) {
  // Textbook values: c = 2, a = 1 (ρ = 0.5): C = 1/3; c = 10, a = 8: C ≈ 0.4092.
  EXPECT_NEAR(ErlangWaitProbability({2, 1.0, 1.0}), 1.0 / 3, 1e-12);
  EXPECT_NEAR(ErlangWaitProbability({10, 8.0, 1.0}), 0.40918, 1e-4);
  EXPECT_NEAR(ErlangMeanWait({2, 1.0, 1.0}), (1.0 / 3) / (2 - 1), 1e-12);
  EXPECT_EQ(ErlangWaitProbability({4, 5.0, 1.0}), 1);  // unstable
  EXPECT_TRUE(std::isinf(ErlangMeanWait({4, 4.0, 1.0})));
  EXPECT_EQ(ErlangLeastServers(8.0, 1.0, 0.99, 1e9), 9);
}

}  // namespace
}  // namespace tessera
