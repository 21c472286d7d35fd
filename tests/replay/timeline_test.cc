// Timelines from traces and scenarios, and the node subset.

#include "replay/timeline.h"

#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "replay/node_subset.h"
#include "replay/scenario_timeline.h"
#include "trace/csv_reader.h"
#include "trace/scenario.h"

namespace tessera {
namespace {

TEST(Timeline, SkipsPodsWithMissingOrInconsistentTimesNamingFileAndLine) {
  const std::string text =
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,qos,creation_time,deletion_time,scheduled_time\n"
      "ok,1000,1024,1,1000,LS,100,400,150\n"
      "\n"
      "missing,1000,1024,1,1000,LS,100,,\n"
      "del-before-sched,1000,1024,1,1000,BE,100,120,130\n"
      "sched-before-create,1000,1024,1,1000,BE,100,300,90\n"
      "late,1000,1024,1,1000,BE,300,700,300\n";
  Result<std::vector<PodSpec>> pods = ReadPodCsv(text, "t.csv");
  ASSERT_TRUE(pods.ok()) << pods.error().message;
  const Timeline t = TimelineFromTrace(*pods, "t.csv", CsvDataLines(text), 2.0);
  ASSERT_EQ(t.skipped.size(), 3u);
  EXPECT_EQ(t.skipped[0].where, "t.csv:4");  // the blank line counts
  EXPECT_EQ(t.skipped[0].name, "missing");
  EXPECT_NE(t.skipped[0].reason.find("scheduled_time missing"), std::string::npos);
  EXPECT_EQ(t.skipped[1].where, "t.csv:5");
  EXPECT_NE(t.skipped[1].reason.find("deletion_time 120 < scheduled_time 130"), std::string::npos);
  EXPECT_EQ(t.skipped[2].where, "t.csv:6");
  EXPECT_NE(t.skipped[2].reason.find("< creation_time"), std::string::npos);
  ASSERT_EQ(t.pods.size(), 2u);
  EXPECT_EQ(t.pods[0].spec.name, "ok");
  EXPECT_DOUBLE_EQ(t.pods[0].arrival_s, 0);     // shifted to the first arrival
  EXPECT_DOUBLE_EQ(t.pods[0].duration_s, 250);  // deletion − scheduled, not scaled
  EXPECT_DOUBLE_EQ(t.pods[1].arrival_s, 100);   // (300 − 100) / 2
  EXPECT_DOUBLE_EQ(t.pods[1].duration_s, 400);
}

TEST(Timeline, NegativeCreationTimeIsSkipped) {
  PodSpec p;
  p.name = "neg";
  p.creation_time = -5;
  p.scheduled_time = 1;
  p.deletion_time = 2;
  const Timeline t = TimelineFromTrace({p}, "x.csv", {}, 1.0);
  ASSERT_EQ(t.skipped.size(), 1u);
  EXPECT_EQ(t.skipped[0].where, "x.csv:2");
  EXPECT_TRUE(t.pods.empty());
}

std::vector<NodeSpec> Mix() {
  std::vector<NodeSpec> nodes;
  auto add = [&](const std::string& model, int count, int gpus) {
    for (int i = 0; i < count; ++i) {
      NodeSpec n;
      n.name = model + std::to_string(i);
      n.cpu_milli = 1000;
      n.memory_mib = 1000;
      n.gpu_count = gpus;
      n.gpu_model = gpus > 0 ? model : "";
      nodes.push_back(n);
    }
  };
  add("G2", 60, 8);
  add("T4", 30, 2);
  add("P100", 9, 2);
  add("", 1, 0);
  return nodes;
}

TEST(NodeSubset, KeepsTheModelMixAndIsSeeded) {
  const std::vector<NodeSpec> nodes = Mix();
  const std::vector<NodeSpec> a = SubsetNodes(nodes, 20, 1);
  ASSERT_EQ(a.size(), 20u);
  std::map<std::string, int> by_model;
  for (const NodeSpec& n : a) by_model[n.gpu_model]++;
  EXPECT_EQ(by_model["G2"], 12);
  EXPECT_EQ(by_model["T4"], 6);
  EXPECT_EQ(by_model["P100"], 2);  // 1.8 rounds up (largest remainder)
  EXPECT_EQ(by_model[""], 0);      // 0.2
  const std::vector<NodeSpec> b = SubsetNodes(nodes, 20, 1);
  const std::vector<NodeSpec> c = SubsetNodes(nodes, 20, 2);
  bool same_b = true, same_c = true;
  for (size_t i = 0; i < a.size(); ++i) {
    same_b = same_b && a[i].name == b[i].name;
    same_c = same_c && a[i].name == c[i].name;
  }
  EXPECT_TRUE(same_b);
  EXPECT_FALSE(same_c);
  EXPECT_EQ(SubsetNodes(nodes, 500, 1).size(), nodes.size());
  EXPECT_TRUE(SubsetNodes(nodes, 0, 1).empty());
}

TEST(NodeSubset, ResizeGrowsByWholeCopiesThenASubset) {
  const std::vector<NodeSpec> nodes = Mix();  // 100 nodes
  const std::vector<NodeSpec> r = ResizeNodes(nodes, 250, 1);
  ASSERT_EQ(r.size(), 250u);
  std::map<std::string, int> by_model;
  for (const NodeSpec& n : r) by_model[n.gpu_model]++;
  EXPECT_EQ(by_model["G2"], 150);
  EXPECT_EQ(by_model["T4"], 75);
  EXPECT_EQ(r[100].name, "G20~1");
  EXPECT_EQ(r.back().name.substr(r.back().name.size() - 2), "~2");
  EXPECT_EQ(ResizeNodes(nodes, 20, 1).size(), 20u);
}

TEST(ScenarioTimeline, PeakSaleHasItsBurstAndIsDeterministic) {
  Result<Scenario> s = ParseScenario(EmbeddedScenario("peak-sale"), "peak-sale");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_DOUBLE_EQ(s->horizon_h, 24);
  const Timeline t = ScenarioTimeline(*s, 1.0);
  const Timeline again = ScenarioTimeline(*s, 1.0);
  ASSERT_EQ(t.pods.size(), again.pods.size());
  // LS one-GPU arrivals per hour: the 12:00-14:00 spike adds 300/h to ~180/h.
  std::vector<int> ls_per_hour(24, 0);
  double last = 0;
  for (const TimedPod& p : t.pods) {
    EXPECT_GE(p.arrival_s, last);
    last = p.arrival_s;
    EXPECT_LT(p.arrival_s, 24 * 3600.0);
    EXPECT_GT(p.duration_s, 0);
    if (p.spec.name.starts_with("ls-infer-1gpu"))
      ls_per_hour[static_cast<int>(p.arrival_s / 3600)]++;
  }
  EXPECT_GT(ls_per_hour[12], 380);
  EXPECT_LT(ls_per_hour[12], 580);
  EXPECT_GT(ls_per_hour[3], 35);  // night: 0.5 x 120
  EXPECT_LT(ls_per_hour[3], 95);
  // Time scale divides arrivals only.
  const Timeline fast = ScenarioTimeline(*s, 4.0);
  ASSERT_EQ(fast.pods.size(), t.pods.size());
  EXPECT_DOUBLE_EQ(fast.pods[10].arrival_s * 4, t.pods[10].arrival_s);
  EXPECT_DOUBLE_EQ(fast.pods[10].duration_s, t.pods[10].duration_s);
}

// Bad timeline fields name file:line and the field.
struct BadCase {
  std::string yaml_class_tail;  // appended to a valid class
  std::string top;              // top-level extra lines
  std::string want;
};

// A stable, readable test name (ctest lists parameterised tests by their printed value).
void PrintTo(const BadCase& c, std::ostream* os) {
  for (char ch : c.want) *os << (std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_');
}

class ScenarioTimelineBadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(ScenarioTimelineBadInput, IsRejectedWithFileLineAndField) {
  const BadCase& c = GetParam();
  const std::string yaml = "name: t\npods: 10\n" + c.top +
                           "nodes:\n  - {name: n, model: T4, gpus: 2, cpu_milli: 1000, "
                           "memory_mib: 1000, count: 1}\nclasses:\n  - name: c\n    cpu_milli: 1\n"
                           "    share: 1\n" +
                           c.yaml_class_tail;
  Result<Scenario> s = ParseScenario(yaml, "bad.yaml");
  ASSERT_FALSE(s.ok()) << yaml;
  EXPECT_NE(s.error().message.find(c.want), std::string::npos) << s.error().message;
}

INSTANTIATE_TEST_SUITE_P(
    All, ScenarioTimelineBadInput,
    ::testing::Values(
        BadCase{"    arrival: {rate_per_h: 10}\n", "",
                "bad.yaml:9: field 'classes[0].arrival': needs the top-level 'horizon_h'"},
        BadCase{
            "    arrival: {rate_per_h: -1}\n", "horizon_h: 1\n",
            "bad.yaml:10: field 'classes[0].arrival.rate_per_h': must be in [0, 1e+07], got -1"},
        BadCase{"    arrival: {rate_per_h: abc}\n", "horizon_h: 1\n",
                "field 'classes[0].arrival.rate_per_h': not a number: 'abc'"},
        BadCase{"    arrival: {rate_per_h: 1, profile: [1, 2]}\n", "horizon_h: 1\n",
                "field 'classes[0].arrival.profile': expected a list of 24 hourly multipliers"},
        BadCase{
            "    arrival: {rate_per_h: 1, bursts: [{start_h: 1, duration_h: 0, rate_per_h: 5}]}\n",
            "horizon_h: 1\n", "field 'classes[0].arrival.bursts[0].duration_h': must be in"},
        BadCase{"    arrival: {rate_per_h: 1, speed: 3}\n", "horizon_h: 1\n",
                "bad.yaml:10: field 'classes[0].arrival.speed': unknown key"},
        BadCase{"    arrival: {rate_per_h: 9000000}\n", "horizon_h: 100\n",
                "too many arrivals over the horizon"},
        BadCase{"    arrival: {rate_per_h: 1}\n    duration: {dist: weibull, mean_s: 5}\n",
                "horizon_h: 1\n",
                "bad.yaml:11: field 'classes[0].duration.dist': unknown distribution 'weibull'"},
        BadCase{"    arrival: {rate_per_h: 1}\n    duration: {dist: fixed}\n", "horizon_h: 1\n",
                "field 'classes[0].duration.mean_s': missing (required)"},
        BadCase{"    duration: {dist: fixed, mean_s: 3}\n", "horizon_h: 1\n",
                "field 'classes[0].duration': set, but the class has no 'arrival'"},
        BadCase{"", "horizon_h: -3\n", "bad.yaml:3: field 'horizon_h': must be in"},
        BadCase{"", "horizon_h: 1e300\n", "field 'horizon_h': must be in"}));

}  // namespace
}  // namespace tessera
