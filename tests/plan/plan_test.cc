// The planner's pieces: the catalog and SLO parsers' errors, the demand transforms, the
// baselines' mixes, and the search on a small scenario (the cheapest mix that meets, the same
// result from any thread count and from the units run one by one); a policy without a plan in
// every output; the embedded example catalog.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "k8s/serve/serve_config.h"
#include "plan/catalog.h"
#include "plan/demand.h"
#include "plan/embedded_catalogs.h"
#include "plan/plan_report.h"
#include "plan/planner.h"
#include "plan/slo.h"
#include "replay/replay_policy.h"
#include "replay/scenario_timeline.h"
#include "sched/classes.h"
#include "trace/scenario.h"
#include "util/file.h"

namespace tessera {
namespace {

const std::set<std::string> kModels = {"A100", "T4"};

TEST(PlanCatalog, ParsesTypesAndCounts) {
  Result<NodeCatalog> c = ParseNodeCatalog(
      "node_types:\n"
      "  - {name: a, model: A100, gpus: 8, cpu_milli: 96000, memory_mib: 1000, cost_per_hour: 24,"
      " min_count: 2, max_count: 9, step: 3, count_today: 4}\n"
      "  - {name: t, model: T4, gpus: 2, cpu_milli: 32000, memory_mib: 1000, cost_per_hour: 5,"
      " max_count: 4}\n",
      "c.yaml", kModels);
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_EQ(c->types.size(), 2u);
  EXPECT_EQ(CountsOf(c->types[0]), (std::vector<int>{2, 5, 8, 9}));
  EXPECT_EQ(CountsOf(c->types[1]), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(c->types[1].gpu_memory_mib, 15360);  // T4's, from the GPU table
  EXPECT_EQ(MixGpus(*c, {2, 3}), 22);
  EXPECT_DOUBLE_EQ(MixCost(*c, {2, 3}), 63);
  EXPECT_EQ(MixName(*c, {2, 0}), "2*a");
  EXPECT_EQ(MixNodes(*c, {1, 2}).size(), 3u);
  EXPECT_EQ(MixNodes(*c, {1, 2})[2].name, "t-0001");
}

TEST(PlanCatalog, NodeTypeTopology) {
  Result<NodeCatalog> c = ParseNodeCatalog(
      "node_types:\n"
      "  - name: a\n"
      "    model: A100\n"
      "    gpus: 8\n"
      "    cpu_milli: 96000\n"
      "    memory_mib: 1000\n"
      "    cost_per_hour: 24\n"
      "    max_count: 3\n"
      "    topology:\n"
      "      nvlink: [[0, 1, 2, 3], [4, 5, 6, 7]]\n"
      "      kubelet_policy: single-numa-node\n"
      "  - {name: t, model: T4, gpus: 2, cpu_milli: 32000, memory_mib: 1000, cost_per_hour: 5,"
      " max_count: 4, topology: \"numa=0/1\"}\n",
      "c.yaml", kModels);
  ASSERT_TRUE(c.ok()) << c.error().message;
  const std::vector<NodeSpec> nodes = MixNodes(*c, {2, 1});
  ASSERT_EQ(nodes.size(), 3u);
  ASSERT_NE(nodes[0].topology, nullptr);
  EXPECT_EQ(nodes[0].topology, nodes[1].topology);  // one object per type
  EXPECT_EQ(nodes[0].topology->nvlink[3], 0);
  EXPECT_EQ(nodes[0].topology->nvlink[4], 1);
  EXPECT_EQ(nodes[0].topology->kubelet, KubeletTopologyPolicy::kSingleNumaNode);
  ASSERT_NE(nodes[2].topology, nullptr);
  EXPECT_EQ(nodes[2].topology->numa[1], 1);

  Result<NodeCatalog> bad = ParseNodeCatalog(
      "node_types:\n"
      "  - name: a\n"
      "    model: A100\n"
      "    gpus: 8\n"
      "    cpu_milli: 96000\n"
      "    memory_mib: 1000\n"
      "    cost_per_hour: 24\n"
      "    max_count: 3\n"
      "    topology:\n"
      "      nvlink: [[0, 1, 2, 3], [4, 5, 6, 3]]\n",
      "c.yaml", kModels);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "c.yaml:10: node_types[0].topology.nvlink[1][3]: GPU 3 is already in nvlink[0]");
}

std::string CatalogError(const std::string& entry) {
  Result<NodeCatalog> c = ParseNodeCatalog("node_types:\n  - " + entry + "\n", "c.yaml", kModels);
  return c.ok() ? "" : c.error().message;
}

TEST(PlanCatalog, ErrorsNameFileLineAndField) {
  const std::string ok =
      "name: a, model: A100, gpus: 8, cpu_milli: 1, memory_mib: 1, "
      "cost_per_hour: 1, max_count: 3";
  EXPECT_EQ(CatalogError("{" + ok + "}"), "");
  EXPECT_EQ(CatalogError("{name: a, model: H100, gpus: 8, cpu_milli: 1, memory_mib: 1, "
                         "cost_per_hour: 1, max_count: 3}"),
            "c.yaml:2: node_types[0].model: unknown GPU model 'H100' (known: A100, T4)");
  EXPECT_EQ(CatalogError("{" + ok + ", min_count: -1}"),
            "c.yaml:2: node_types[0].min_count: must not be negative, got -1");
  EXPECT_EQ(CatalogError("{" + ok + ", min_count: 4}"),
            "c.yaml:2: node_types[0].min_count: min_count 4 is above max_count 3");
  EXPECT_EQ(CatalogError("{" + ok + ", count_today: 5}"),
            "c.yaml:2: node_types[0].count_today: count_today 5 is above max_count 3");
  EXPECT_EQ(CatalogError("{" + ok + ", colour: red}"),
            "c.yaml:2: node_types[0].colour: unknown key (known: name, model, gpus, cpu_milli, "
            "memory_mib, gpu_memory_mib, cost_per_hour, min_count, max_count, count_today, step, "
            "topology)");
  EXPECT_NE(CatalogError("{name: a, model: A100}").find("node_types[0].gpus: missing"),
            std::string::npos);
  EXPECT_EQ(CatalogError("{name: a, model: A100, gpus: 8, cpu_milli: 1, memory_mib: 1, "
                         "cost_per_hour: 1e300, max_count: 3}"),
            "c.yaml:2: node_types[0].cost_per_hour: at most 1e9, got 1e300");
  EXPECT_EQ(CatalogError("{name: a, model: A100, gpus: 8, cpu_milli: 1, memory_mib: 1, "
                         "cost_per_hour: 1, max_count: 0}"),
            "c.yaml:2: node_types: every max_count is 0: no mix has a GPU");
  Result<NodeCatalog> huge = ParseNodeCatalog(
      "node_types:\n"
      "  - {name: a, model: A100, gpus: 8, cpu_milli: 1, memory_mib: 1, cost_per_hour: 1,"
      " max_count: 100000}\n"
      "  - {name: b, model: T4, gpus: 2, cpu_milli: 1, memory_mib: 1, cost_per_hour: 1,"
      " max_count: 100000}\n",
      "c.yaml", kModels);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().message,
            "c.yaml:2: node_types: 1e+10 mixes of the types' counts, at most 1000000 (raise step)");
}

TEST(PlanSlo, ParsesWaitsAndGpuHours) {
  Result<ClassSlo> a = ParseSlo("LS: p99 wait <= 1s");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->qos_class, "LS");
  EXPECT_EQ(a->quantile, 99);
  EXPECT_DOUBLE_EQ(a->wait_s, 1);
  Result<ClassSlo> b = ParseSlo("Burstable:p95 wait<=200ms");
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_DOUBLE_EQ(b->wait_s, 0.2);
  EXPECT_DOUBLE_EQ(ParseSlo("BE: p50 wait <= 2 h")->wait_s, 7200);
  Result<ClassSlo> c = ParseSlo("BE: gpu-hours >= 500");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->kind, ClassSlo::Kind::kGpuHours);
  EXPECT_DOUBLE_EQ(c->min_gpu_hours, 500);
  for (const char* bad :
       {"LS p99 <= 1s", ": p99 wait <= 1s", "LS: p98 wait <= 1s", "LS: p99 wait < 1s",
        "LS: p99 wait <= 1", "LS: p99 wait <= xs", "LS: gpu-hours >= many"}) {
    Result<ClassSlo> r = ParseSlo(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().message.rfind("--slo '" + std::string(bad) + "': ", 0), 0u)
        << r.error().message;
  }
}

Timeline Pods(const std::vector<std::pair<double, double>>& arrival_duration, int gpus = 1) {
  Timeline t;
  for (const auto& [a, d] : arrival_duration) {
    TimedPod p;
    p.spec.name = "p" + std::to_string(t.pods.size());
    p.spec.gpu_count = gpus;
    p.spec.gpu_milli = 1000;
    p.spec.cpu_milli = 1000;
    p.spec.qos = "LS";
    p.arrival_s = a;
    p.duration_s = d;
    t.pods.push_back(p);
  }
  return t;
}

TEST(PlanDemand, GrowthConcurrencyAndWindows) {
  const Timeline t = Pods({{0, 10}, {5, 10}, {100, 1}, {200, 1}});
  EXPECT_EQ(GrowDemand(t, 3, 1, 1).pods.size(), 12u);
  EXPECT_EQ(GrowDemand(t, 1, 1, 1).pods.size(), 4u);
  const Timeline g = GrowDemand(t, 2.5, 7, 1);
  EXPECT_GE(g.pods.size(), 8u);
  EXPECT_LE(g.pods.size(), 12u);
  for (size_t i = 1; i < g.pods.size(); ++i)
    EXPECT_LE(g.pods[i - 1].arrival_s, g.pods[i].arrival_s);
  // Two pods overlap during [5, 10): the peak.
  EXPECT_EQ(PodsAtPeak(t), (std::vector<int>{0, 1}));
  const Timeline w = BusiestWindow(t, 20.0 / 3600);
  ASSERT_EQ(w.pods.size(), 2u);
  EXPECT_DOUBLE_EQ(w.pods[0].arrival_s, 0);
  const std::vector<ClassLoad> load = OfferedLoad(t, -1);
  ASSERT_EQ(load.size(), 1u);
  EXPECT_NEAR(load[0].gpus, 21.0 / 200, 1e-12);  // the last pod starts at the end
}

NodeCatalog TwoTypes() {
  return ParseNodeCatalog(
             "node_types:\n"
             "  - {name: big, model: A100, gpus: 8, cpu_milli: 64000, memory_mib: 100000,"
             " cost_per_hour: 20, max_count: 6}\n"
             "  - {name: small, model: A100, gpus: 2, cpu_milli: 16000, memory_mib: 100000,"
             " cost_per_hour: 4, max_count: 3}\n",
             "c.yaml", kModels)
      .value();
}

TEST(PlanBaselines, MixForGpusAndFirstFitDecreasing) {
  const NodeCatalog c = TwoTypes();
  // small is cheaper per GPU (2 against 2.5): its three nodes first, then big.
  EXPECT_EQ(MixForGpus(c, 5), (std::vector<int>{0, 3}));
  EXPECT_EQ(MixForGpus(c, 7), (std::vector<int>{1, 3}));
  EXPECT_EQ(MixForGpus(c, 1000), (std::vector<int>{6, 3}));
  // At the peak: one 8-GPU pod (only big hosts it) and four 1-GPU pods (on small nodes, two
  // each, the cheapest per GPU).
  Timeline t = Pods({{0, 100}}, 8);
  const Timeline ones = Pods({{1, 100}, {1, 100}, {1, 100}, {1, 100}});
  t.pods.insert(t.pods.end(), ones.pods.begin(), ones.pods.end());
  EXPECT_EQ(FirstFitDecreasing(c, t), (std::vector<int>{1, 2}));
}

// A small scenario: LS pods over BE pods, three hours.
Timeline Small(uint64_t seed, double factor) {
  Result<Scenario> s = ParseScenario(
      "name: s\npods: 10\nseed: 1\nhorizon_h: 3\n"
      "nodes:\n  - {name: g, model: A100, gpus: 8, cpu_milli: 64000, memory_mib: 100000, count: "
      "1}\n"
      "classes:\n"
      "  - {name: ls, cpu_milli: 4000, memory_mib: 1000, gpu_count: 1, qos: LS, share: 1,"
      " arrival: {rate_per_h: 60}, duration: {dist: exponential, mean_s: 1200}}\n"
      "  - {name: be, cpu_milli: 4000, memory_mib: 1000, gpu_count: 1, qos: BE, share: 1,"
      " arrival: {rate_per_h: 20}, duration: {dist: exponential, mean_s: 1800}}\n",
      "s.yaml");
  EXPECT_TRUE(s.ok()) << s.error().message;
  s->seed = seed;
  for (PodClass& c : s->classes) c.arrival.rate_per_h *= factor;
  return ScenarioTimeline(*s, 1.0);
}

PlanSpec SmallSpec() {
  PlanSpec spec;
  spec.catalog = TwoTypes();
  spec.slos = {ParseSlo("LS: p99 wait <= 1s").value()};
  spec.policies = {ReplayPolicyByName("k8s-default").value()};
  spec.seeds = {1, 2};
  spec.check_seeds = {3};
  spec.replay.horizon_s = 3 * 3600;
  return spec;
}

TEST(PlanSearch, CheapestMixThatMeetsOnEverySeedWhateverTheThreads) {
  const PlanSpec spec = SmallSpec();
  DemandDraws demand(Small);
  const std::vector<SearchUnit> units = Units(spec);
  ASSERT_EQ(units.size(), 7u);  // one policy, big's counts 0..6
  std::vector<int> all;
  for (size_t i = 0; i < units.size(); ++i) all.push_back(static_cast<int>(i));
  const std::vector<UnitResult> one = RunUnits(spec, demand, all, 1, nullptr);
  const std::vector<UnitResult> two = RunUnits(spec, demand, all, 2, nullptr);
  Result<PlanResult> a = FinishPlan(spec, demand, one, 1);
  Result<PlanResult> b = FinishPlan(spec, demand, two, 2);
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(a->chosen_counts, b->chosen_counts);
  ASSERT_TRUE(a->rows[0].eval.has_value());
  const Evaluation chosen = *a->rows[0].eval;
  ASSERT_TRUE(chosen.meets);
  EXPECT_EQ(chosen.seeds_run, 2);
  // No mix of the grid that costs less meets the SLO on both seeds.
  for (int big = 0; big <= 6; ++big) {
    for (int small = 0; small <= 3; ++small) {
      const std::vector<int> counts = {big, small};
      if (MixCost(spec.catalog, counts) >= chosen.cost || MixGpus(spec.catalog, counts) == 0) {
        continue;
      }
      EXPECT_FALSE(Evaluate(spec, demand, 0, counts, spec.seeds, 1.0, true).meets)
          << MixName(spec.catalog, counts) << " is cheaper than "
          << MixName(spec.catalog, chosen.counts) << " and meets the SLO";
    }
  }
  // The rows: the plan, its held-out check, two sensitivity rows, two baselines at least.
  std::vector<std::string> kinds;
  for (const PlanRow& r : a->rows) kinds.push_back(r.kind);
  EXPECT_EQ(kinds[0], "plan");
  EXPECT_EQ(kinds[1], "held-out");
  EXPECT_EQ(kinds[2], "sensitivity");
  EXPECT_EQ(kinds[3], "sensitivity");
  EXPECT_EQ(a->headroom_yaml.find("headroom:\n  mode: none"), a->headroom_yaml.find("headroom:"));
}

TEST(PlanSearch, AMixWhereTheClassFitsNoNodeMissesItsSlo) {
  PlanSpec spec = SmallSpec();
  spec.catalog = ParseNodeCatalog(
                     "node_types:\n"
                     "  - {name: thin, model: A100, gpus: 8, cpu_milli: 2000, memory_mib: 100000,"
                     " cost_per_hour: 1, max_count: 4}\n"
                     "  - {name: big, model: A100, gpus: 8, cpu_milli: 64000, memory_mib: 100000,"
                     " cost_per_hour: 20, max_count: 8}\n",
                     "c.yaml", kModels)
                     .value();
  DemandDraws demand(Small);
  // The pods ask for 4 cores and thin nodes have 2: on thin nodes alone no pod ever waits and
  // none ever runs; big nodes can host them, so that mix misses.
  const Evaluation e = Evaluate(spec, demand, 0, {4, 0}, spec.seeds, 1.0, true);
  EXPECT_FALSE(e.meets);
  EXPECT_NE(e.missed.find("LS: "), std::string::npos) << e.missed;
  EXPECT_NE(e.missed.find("pods fit no node of the mix (seed 1)"), std::string::npos) << e.missed;
  std::vector<int> all;
  for (size_t i = 0; i < Units(spec).size(); ++i) all.push_back(static_cast<int>(i));
  Result<PlanResult> plan = FinishPlan(spec, demand, RunUnits(spec, demand, all, 1, nullptr), 1);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_GT(plan->chosen_counts[1], 0) << MixName(spec.catalog, plan->chosen_counts);
}

TEST(PlanSearch, HeadroomSnippetIsATesseraYamlTheExtenderReads) {
  PlanSpec spec = SmallSpec();
  spec.policies = {TesseraReplayPolicy(), ReplayPolicyByName("k8s-default").value()};
  DemandDraws demand(Small);
  std::vector<int> all;
  for (size_t i = 0; i < Units(spec).size(); ++i) all.push_back(static_cast<int>(i));
  const std::vector<UnitResult> units = RunUnits(spec, demand, all, 2, nullptr);
  for (int keep : {0, 1}) {  // tessera's plan alone, then k8s-default's alone
    std::vector<UnitResult> mine;
    for (const UnitResult& u : units) {
      if (Units(spec)[static_cast<size_t>(u.index)].policy == keep) mine.push_back(u);
    }
    Result<PlanResult> plan = FinishPlan(spec, demand, mine, 2);
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    k8s::ServeConfig config;
    const Status s = k8s::ParseServeConfig(plan->headroom_yaml, "headroom.yaml", &config);
    ASSERT_TRUE(s.ok()) << s.error().message << "\n" << plan->headroom_yaml;
    EXPECT_EQ(config.headroom.mode,
              keep == 0 ? HeadroomOptions::Mode::kBacklog : HeadroomOptions::Mode::kNone)
        << plan->headroom_yaml;
    if (keep == 0) {
      EXPECT_DOUBLE_EQ(config.headroom.factor, TesseraReplayPolicy().headroom.factor);
    }
  }
}

TEST(PlanSearch, AnSloNoMixMeetsNamesTheClassTheBestAndWhere) {
  PlanSpec spec = SmallSpec();
  spec.slos = {ParseSlo("LS: p99 wait <= 1s").value()};
  spec.catalog.types[0].max_count = 0;
  spec.catalog.types[1].max_count = 1;  // 2 GPUs for about 20 busy ones
  DemandDraws demand(Small);
  std::vector<int> all;
  for (size_t i = 0; i < Units(spec).size(); ++i) all.push_back(static_cast<int>(i));
  Result<PlanResult> r = FinishPlan(spec, demand, RunUnits(spec, demand, all, 1, nullptr), 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("class LS: no mix up to the catalog's maximum meets 'LS: p99 "
                                    "wait <= 1s': the best p99 wait reached is ",
                                    0),
            0u)
      << r.error().message;
  EXPECT_NE(r.error().message.find(", by k8s-default on 1*small (2 GPUs)"), std::string::npos)
      << r.error().message;
}

std::string Testdata(const std::string& name) {
  Result<std::string> text =
      ReadFile(std::string(TESSERA_SOURCE_DIR) + "/tests/plan/testdata/" + name);
  EXPECT_TRUE(text.ok()) << text.error().message;
  return text.ok() ? *text : "";
}

// Issue 40: with one policy meeting the SLO and another meeting it with no mix of the
// catalog, `tessera plan` wrote a row without counts and crashed reading them (MixName ←
// EvalJson ← PlanJson). Every output now says which policy has no plan, and why.
TEST(PlanSearch, APolicyWithoutAPlanIsReportedAsSuchInEveryOutput) {
  Result<Scenario> scenario = ParseScenario(Testdata("two-classes.yaml"), "two-classes.yaml");
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  PlanSpec spec;
  spec.catalog =
      ParseNodeCatalog(Testdata("one-gpu-catalog.yaml"), "one-gpu-catalog.yaml", kModels).value();
  spec.slos = {ParseSlo("LS: p99 wait <= 1s").value()};
  spec.replay.qos.classes[0].slo_wait_s = 1;
  spec.policies = {TesseraReplayPolicy(), ReplayPolicyByName("k8s-default").value()};
  spec.policies[0].headroom.min_priority = HeadroomProtectedPriority(spec.replay.qos);
  spec.seeds = {1, 2, 3};
  spec.check_seeds = {101};
  spec.replay.horizon_s = scenario->horizon_h * 3600;
  DemandDraws demand([&](uint64_t seed, double factor) {
    Scenario s = *scenario;
    s.seed = seed;
    for (PodClass& c : s.classes) c.arrival.rate_per_h *= factor;
    return ScenarioTimeline(s, 1.0);
  });
  std::vector<int> all;
  for (size_t i = 0; i < Units(spec).size(); ++i) all.push_back(static_cast<int>(i));
  Result<PlanResult> plan = FinishPlan(spec, demand, RunUnits(spec, demand, all, 1, nullptr), 1);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->chosen_policy, 1);
  EXPECT_EQ(plan->policy_gpus, (std::vector<int64_t>{-1, 4}));
  const PlanRow* none = nullptr;
  for (const PlanRow& r : plan->rows) {
    if (r.kind == "plan" && r.policy == "tessera") none = &r;
  }
  ASSERT_NE(none, nullptr);
  EXPECT_FALSE(none->eval.has_value());
  EXPECT_EQ(none->no_plan.rfind("no mix up to the catalog's maximum meets every SLO: at 4*g1 (4 "
                                "GPUs) LS p99 wait ",
                                0),
            0u)
      << none->no_plan;
  PlanInfo info;
  info.demand = "two-classes.yaml";
  ClassLoad be;
  be.qos = "BE";
  be.pods = 50;
  info.load = {be};
  // plan.json: the row without a result, with why; tessera needs no GPU count.
  const nlohmann::json j = nlohmann::json::parse(PlanJson(info, spec, *plan));
  bool found = false;
  for (const nlohmann::json& r : j.at("rows")) {
    if (r.at("kind") != "plan" || r.at("policy") != "tessera") continue;
    found = true;
    EXPECT_TRUE(r.at("result").is_null()) << r.dump();
    EXPECT_EQ(r.at("no_plan"), none->no_plan);
  }
  EXPECT_TRUE(found);
  EXPECT_TRUE(j.at("gpus_needed_by_policy").at("tessera").is_null());
  EXPECT_EQ(j.at("gpus_needed_by_policy").at("k8s-default"), 4);
  ASSERT_EQ(j.at("warnings").size(), 1u);
  EXPECT_EQ(j.at("warnings")[0], "tessera: no plan: " + none->no_plan);
  // plan.csv: one line for it, no figures, the verdict last.
  const std::string csv = PlanCsv(spec, *plan);
  EXPECT_NE(csv.find("\nplan,tessera,tessera,0,,,,0,0,,,,,,,,,,,no plan: no mix up to "),
            std::string::npos)
      << csv;
  // The terminal table and report.html.
  const std::string table = PlanTable(info, spec, *plan);
  EXPECT_NE(table.find("no plan\n"), std::string::npos) << table;
  // BE has pods and no SLO: its waits and GPU-hours are in the table too.
  EXPECT_NE(table.find("BE p50/p99 wait"), std::string::npos) << table;
  EXPECT_NE(table.find("BE GPU-h"), std::string::npos) << table;
  EXPECT_NE(table.find("warning: tessera: no plan: no mix up to the catalog's maximum"),
            std::string::npos)
      << table;
  const std::string html = PlanHtml(info, spec, *plan, "test");
  EXPECT_NE(html.find("<td class=\"verdict none\" title=\"no mix up to the catalog&#39;s maximum "
                      "meets every SLO: at 4*g1 (4 GPUs) LS p99 wait "),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<section class=\"card warnings\" id=\"warnings\">"), std::string::npos);
  EXPECT_NE(html.find("<th>BE p50 / p99 wait (no SLO)</th><th>BE GPU-h served</th>"),
            std::string::npos);
  EXPECT_NE(html.find("tessera none within the catalog"), std::string::npos);
}

// One-GPU nodes, LS and BE at the same rate (bench/slo/ls-be-one-gpu.yaml): tessera met LS's
// SLO on 44 GPUs by keeping them all for LS, serving BE 4 GPU-hours where k8s-default served
// 233 on the same mix, and the plan named it the cheapest. With the served floor, a mix that
// starves the class without an SLO misses, and the plan chosen serves it.
TEST(PlanSearch, NoMixMeetsTheSloByStarvingAClassWithoutOne) {
  const std::string file = std::string(TESSERA_SOURCE_DIR) + "/bench/slo/ls-be-one-gpu.yaml";
  Result<Scenario> scenario = ParseScenario(ReadFile(file).value(), file);
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  PlanSpec spec;
  spec.catalog = ParseNodeCatalog(
                     "node_types:\n"
                     "  - {name: g1, model: A100, gpus: 1, cpu_milli: 16000, memory_mib: 65536,"
                     " cost_per_hour: 1, min_count: 30, max_count: 100, step: 2}\n",
                     "c.yaml", kModels)
                     .value();
  spec.slos = {ParseSlo("LS: p99 wait <= 60s").value()};
  spec.replay.qos.classes[0].slo_wait_s = 60;
  spec.policies = {TesseraReplayPolicy(), ReplayPolicyByName("fgd").value(),
                   ReplayPolicyByName("k8s-default").value()};
  ProtectHeadroomClasses(spec.replay.qos, &spec.policies);
  spec.seeds = {1, 2};
  spec.check_seeds = {101};
  spec.replay.horizon_s = scenario->horizon_h * 3600;
  spec.floor_policy = ReplayPolicyByName("k8s-default").value();
  DemandDraws demand([&](uint64_t seed, double factor) {
    Scenario s = *scenario;
    s.seed = seed;
    for (PodClass& c : s.classes) c.arrival.rate_per_h *= factor;
    return ScenarioTimeline(s, 1.0);
  });
  const int be = spec.ClassIndex("BE");
  ASSERT_GE(be, 0);
  auto plan_with_floor = [&](double floor) {
    spec.served_floor = floor;
    std::vector<int> all;
    for (size_t i = 0; i < Units(spec).size(); ++i) all.push_back(static_cast<int>(i));
    return FinishPlan(spec, demand, RunUnits(spec, demand, all, 2, nullptr), 2);
  };
  // What k8s-default serves BE on a mix, the least over the plan's seeds.
  auto k8s_be = [&](const std::vector<int>& counts) {
    return Evaluate(spec, demand, 2, counts, spec.seeds, 1.0, true)
        .classes[static_cast<size_t>(be)]
        .gpu_hours;
  };
  // Without the floor: tessera's plan is the cheapest and starves BE (what the floor is for).
  Result<PlanResult> unfloored = plan_with_floor(0);
  ASSERT_TRUE(unfloored.ok()) << unfloored.error().message;
  ASSERT_TRUE(unfloored->rows[0].eval.has_value());
  const Evaluation& starving = *unfloored->rows[0].eval;
  EXPECT_EQ(unfloored->chosen_policy, 0);
  EXPECT_LT(starving.classes[static_cast<size_t>(be)].gpu_hours, 0.5 * k8s_be(starving.counts))
      << MixName(spec.catalog, starving.counts);
  // That mix now misses, saying why, and every policy's plan serves BE.
  spec.served_floor = 0.9;
  const Evaluation again = Evaluate(spec, demand, 0, starving.counts, spec.seeds, 1.0, false);
  EXPECT_FALSE(again.meets);
  EXPECT_EQ(again.missed.rfind("BE GPU-hours ", 0), 0u) << again.missed;
  EXPECT_NE(again.missed.find("< 90 % of the "), std::string::npos) << again.missed;
  EXPECT_NE(again.missed.find(" k8s-default serves (seed 1)"), std::string::npos) << again.missed;
  Result<PlanResult> floored = plan_with_floor(0.9);
  ASSERT_TRUE(floored.ok()) << floored.error().message;
  int plans = 0;
  for (const PlanRow& r : floored->rows) {
    if (r.kind != "plan" || !r.eval) continue;
    ++plans;
    const double served = r.eval->classes[static_cast<size_t>(be)].gpu_hours;
    EXPECT_GE(served, 0.9 * k8s_be(r.eval->counts))
        << r.policy << " on " << MixName(spec.catalog, r.eval->counts);
    EXPECT_GT(served, 100) << r.policy;
  }
  EXPECT_EQ(plans, 3);
  // The table says what the floor is.
  PlanInfo info;
  info.demand = file;
  const std::string table = PlanTable(info, spec, *floored);
  EXPECT_NE(table.find("; classes without an SLO: >= 90 % of the GPU-hours k8s-default serves "
                       "them\n"),
            std::string::npos)
      << table.substr(0, 400);
}

// `tessera plan` with no arguments plans the embedded peak-sale scenario on the embedded
// catalog of that name, which is tests/plan/testdata/peak-sale-one-type.yaml.
TEST(PlanCatalog, TheEmbeddedExampleIsTheTestdataCatalog) {
  EXPECT_EQ(EmbeddedCatalogNames(), (std::vector<std::string>{"peak-sale"}));
  EXPECT_EQ(std::string(EmbeddedCatalog("peak-sale")), Testdata("peak-sale-one-type.yaml"));
  EXPECT_TRUE(EmbeddedCatalog("no-such").empty());
  Result<NodeCatalog> c = ParseNodeCatalog(EmbeddedCatalog("peak-sale"), "peak-sale", {"A100"});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->types.size(), 1u);
  EXPECT_NE(EmbeddedScenario("peak-sale"), "");  // the scenario it is named after
}

}  // namespace
}  // namespace tessera
