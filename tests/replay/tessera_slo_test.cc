// The SLO claim of the `tessera` replay policy: at a stated contention level where k8s-default
// (priority + preemption) keeps LS pods waiting (p99 > 10 s), the `tessera` replay policy meets the
// LS SLO (p99 wait <= 1 s, >= 99 % within SLO) with fewer preemptions, serves every other class
// with an SLO at least as well as k8s-default does, and gives BE at least 90 % of k8s-default's
// GPU-hours — on the default trace and on peak-sale. On a cluster where sharing LS pods burst
// (notebooks.yaml) the headroom grows with the burst, shrinks after it and never exceeds the
// cluster. On the trace the default misses BE's 90 %; the spreading setting of docs/REPLAY.md
// (factor 1.75, 1 h) meets every condition there and on the notebooks. The policies run side
// by side; the table is printed for the record (docs/REPLAY.md).

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "replay/node_subset.h"
#include "replay/replay_policy.h"
#include "replay/scenario_timeline.h"
#include "report/replay_report.h"
#include "trace/csv_reader.h"
#include "trace/scenario.h"
#include "util/file.h"

namespace tessera {
namespace {

// The placement policies compared with tessera (each with priority + preemption).
const std::vector<std::string> kOthers = {"k8s-default", "fgd",     "bestfit", "packing",
                                          "clustering",  "dotprod", "random"};

const ClassStats& Class(const ReplayResult& r, const std::string& name) {
  for (const ClassStats& c : r.classes) {
    if (c.name == name) return c;
  }
  ADD_FAILURE() << "no class " << name;
  return r.classes.front();
}

void ExpectOthersServed(const ReplayResult& t, const ReplayResult& k8s, bool be_kept = true);

// `be_kept`: BE is also checked to get at least 90 % of k8s-default's GPU-hours (the trace
// misses it against kube-scheduler's victim order: docs/REPLAY.md).
void ExpectTesseraWins(const std::vector<NodeSpec>& nodes, const Timeline& timeline,
                       const ReplayPolicy& tessera, ReplayOptions options, bool be_kept = true) {
  options.samples = 0;
  std::vector<ReplayResult> runs = {RunReplayPolicy(nodes, timeline, tessera, options)};
  for (const std::string& name : kOthers) {
    runs.push_back(RunReplayPolicy(nodes, timeline, ReplayPolicyByName(name).value(), options));
  }
  std::cout << ReplayTable(runs);
  const ReplayResult& t = runs[0];
  const ReplayResult& k8s = runs[1];
  ASSERT_EQ(k8s.policy, "k8s-default");
  // The contention level is real: plain priority + preemption misses the SLO badly.
  EXPECT_GT(Class(k8s, "LS").wait_p99_s, 10.0);
  // tessera meets it.
  EXPECT_LE(Class(t, "LS").wait_p99_s, 1.0);
  EXPECT_GE(Class(t, "LS").slo_pct, 99.0);
  // With fewer preemptions than priority + preemption alone.
  EXPECT_LT(t.preemptions, k8s.preemptions);
  ExpectOthersServed(t, k8s, be_kept);
}

// Every class with an SLO at least as well served as under k8s-default; with `be_kept`, BE at
// least 90 % of its GPU-hours.
void ExpectOthersServed(const ReplayResult& t, const ReplayResult& k8s, bool be_kept) {
  for (size_t c = 0; c < t.classes.size(); ++c) {
    if (t.classes[c].slo_wait_s < 0) continue;
    EXPECT_GE(t.classes[c].slo_pct, k8s.classes[c].slo_pct) << t.classes[c].name;
  }
  if (be_kept) {
    EXPECT_GE(Class(t, "BE").gpu_hours, 0.90 * Class(k8s, "BE").gpu_hours);
  }
  std::cout << "tessera: LS p99 " << Class(t, "LS").wait_p99_s << " s, SLO "
            << Class(t, "LS").slo_pct << " %, preemptions " << t.preemptions << " (k8s-default "
            << k8s.preemptions << "), BE GPU-h " << Class(t, "BE").gpu_hours << " = "
            << 100 * Class(t, "BE").gpu_hours / Class(k8s, "BE").gpu_hours
            << " % of k8s-default's\n";
}

// The default trace at the contention level (docs/REPLAY.md): arrivals compressed 50x, 84 of
// the 1213 nodes (437 GPUs), drawn with seed 42 keeping the model mix. False without the trace.
bool TraceAtTheContentionLevel(std::vector<NodeSpec>* nodes, Timeline* timeline) {
  const std::string dir = TESSERA_DATA_DIR;
  if (!std::filesystem::exists(dir + "/openb_pod_list_default.csv")) return false;
  Result<std::vector<NodeSpec>> all = ReadNodeCsv(
      ReadFile(dir + "/openb_node_list_gpu_node.csv").value(), "openb_node_list_gpu_node.csv");
  const std::string text = ReadFile(dir + "/openb_pod_list_default.csv").value();
  Result<std::vector<PodSpec>> pods = ReadPodCsv(text, "openb_pod_list_default.csv");
  EXPECT_TRUE(all.ok() && pods.ok());
  if (!all.ok() || !pods.ok()) return false;
  *timeline = TimelineFromTrace(*pods, "openb_pod_list_default.csv", CsvDataLines(text), 50);
  EXPECT_EQ(timeline->skipped.size(), 897u);  // the Pending pods have no scheduled/deletion time
  *nodes = SubsetNodes(*all, 84, 42);
  return true;
}

// tests/replay/testdata/notebooks.yaml: the notebooks-plus-training scenario.
Result<Scenario> Notebooks() {
  const std::string file =
      std::string(TESSERA_SOURCE_DIR) + "/tests/replay/testdata/notebooks.yaml";
  return ParseScenario(ReadFile(file).value(), file);
}

// ExpectTesseraWins for `tessera` on the trace at the contention level (seed 42); false when
// the trace is not there.
bool WinsOnTheTrace(const ReplayPolicy& tessera, bool be_kept) {
  std::vector<NodeSpec> nodes;
  Timeline timeline;
  if (!TraceAtTheContentionLevel(&nodes, &timeline)) return false;
  ReplayOptions options;
  options.seed = 42;
  ExpectTesseraWins(nodes, timeline, tessera, options, be_kept);
  return true;
}

TEST(TesseraSlo, DefaultTraceAt50xOn84Nodes) {
  if (!WinsOnTheTrace(TesseraReplayPolicy(), /*be_kept=*/false)) GTEST_SKIP() << "no trace";
}

// The setting of docs/REPLAY.md that keeps BE at k8s-default's level: spreading under the
// backlog headroom, factor 1.75, a 1-hour window. On the trace at the contention level (draw
// 42) and on the notebooks scenario it meets every condition, BE's included (it misses the LS
// p99 on other node draws of the trace: docs/experiments/2026-12-06-replay-settings.md).
ReplayPolicy BeKeepingSetting() {
  ReplayPolicy p = TesseraReplayPolicy();
  p.placement = "k8s-default";
  p.headroom.factor = 1.75;
  p.headroom.window_s = 3600;
  return p;
}

TEST(TesseraSlo, BeKeepingSettingOnTheTraceAndTheNotebooks) {
  if (!WinsOnTheTrace(BeKeepingSetting(), /*be_kept=*/true)) GTEST_SKIP() << "no trace";

  Result<Scenario> s = Notebooks();
  ASSERT_TRUE(s.ok()) << s.error().message;
  ReplayOptions nb;
  nb.horizon_s = s->horizon_h * 3600;
  nb.samples = 0;
  const Timeline notebooks = ScenarioTimeline(*s, 1.0);
  const ReplayResult t = RunReplayPolicy(ScenarioNodes(*s), notebooks, BeKeepingSetting(), nb);
  const ReplayResult k8s =
      RunReplayPolicy(ScenarioNodes(*s), notebooks, ReplayPolicyByName("k8s-default").value(), nb);
  std::cout << ReplayTable({t, k8s});
  EXPECT_LE(Class(t, "LS").wait_p99_s, 1.0);
  ExpectOthersServed(t, k8s);
}

TEST(TesseraSlo, PeakSaleOn40Nodes) {
  Result<Scenario> s = ParseScenario(EmbeddedScenario("peak-sale"), "peak-sale");
  ASSERT_TRUE(s.ok()) << s.error().message;
  ReplayOptions options;
  options.horizon_s = s->horizon_h * 3600;
  // The same policy as on the trace: no per-workload setting.
  ExpectTesseraWins(ScenarioNodes(*s), ScenarioTimeline(*s, 1.0), TesseraReplayPolicy(), options);
}

// 120 GPUs; quarter-GPU LS notebooks at 40/h with a two-hour burst of 400/h (3 h to 5 h);
// 4-GPU BE trainers at 6/h. Sharing LS pods take an idle GPU only when no used GPU has room:
// the headroom counts what they take, so it follows the burst instead of running away.
TEST(TesseraSlo, NotebookBurstHeadroomFollowsTheBurst) {
  Result<Scenario> s = Notebooks();
  ASSERT_TRUE(s.ok()) << s.error().message;
  ReplayOptions options;
  options.horizon_s = s->horizon_h * 3600;
  options.samples = 120;  // every 6 minutes
  const std::vector<NodeSpec> nodes = ScenarioNodes(*s);
  const Timeline timeline = ScenarioTimeline(*s, 1.0);
  const ReplayResult t = RunReplayPolicy(nodes, timeline, TesseraReplayPolicy(), options);
  const ReplayResult k8s =
      RunReplayPolicy(nodes, timeline, ReplayPolicyByName("k8s-default").value(), options);
  std::cout << ReplayTable({t, k8s});
  EXPECT_LE(Class(t, "LS").wait_p99_s, 1.0);
  ExpectOthersServed(t, k8s);
  // The largest H before the burst (< 3 h), during it (3-5.5 h), and once the burst has left
  // the window (an hour after 5 h + the window).
  const double settled_h = 5 + TesseraReplayPolicy().headroom.window_s / 3600 + 1;
  int64_t before = 0, burst = 0, after = 0, most = 0;
  for (const TimePoint& p : t.series) {
    const double h = p.t_s / 3600;
    int64_t& period = h < 3 ? before : h < 5.5 ? burst : after;
    if (h < 5.5 || h >= settled_h) period = std::max(period, p.headroom_gpus);
    most = std::max(most, p.headroom_gpus);
  }
  EXPECT_LE(most, 120);          // never more than the cluster has
  EXPECT_GT(burst, 2 * before);  // grows with the burst
  EXPECT_LT(after, burst / 4);   // and comes down after it
  std::cout << "headroom: before the burst <= " << before << ", during <= " << burst << ", from "
            << settled_h << " h <= " << after << " GPUs\n";
}

// Per policy and class, pooled over seeds as bench/slo_family.cc pools them.
struct Pooled {
  std::string name;
  double arrived = 0, within = 0, gpu_hours = 0;
  bool slo = false;
  double pct() const { return arrived > 0 ? 100 * within / arrived : 100; }
};

// A scenario of bench/slo/ (the SLO family's named workloads) replayed by tessera,
// k8s-default and fgd on three timeline seeds (the scenario's, then + 1000003 each, as the
// family draws them): per policy, each class pooled over the seeds.
std::vector<std::vector<Pooled>> OnSloScenario(const std::string& name) {
  const std::string file = std::string(TESSERA_SOURCE_DIR) + "/bench/slo/" + name + ".yaml";
  Result<Scenario> s = ParseScenario(ReadFile(file).value(), file);
  EXPECT_TRUE(s.ok()) << s.error().message;
  if (!s.ok()) return {};
  ReplayOptions options;
  options.horizon_s = s->horizon_h * 3600;
  options.samples = 0;
  const std::vector<NodeSpec> nodes = ScenarioNodes(*s);
  std::vector<std::vector<Pooled>> pooled(3);
  for (int seed = 0; seed < 3; ++seed) {
    Scenario sc = *s;
    sc.seed = s->seed + static_cast<uint64_t>(seed) * 1000003;
    const Timeline timeline = ScenarioTimeline(sc, 1.0);
    std::vector<ReplayResult> runs;
    for (const char* p : {"tessera", "k8s-default", "fgd"}) {
      runs.push_back(RunReplayPolicy(nodes, timeline, ReplayPolicyByName(p).value(), options));
    }
    std::cout << ReplayTable(runs);
    for (size_t p = 0; p < runs.size(); ++p) {
      pooled[p].resize(runs[p].classes.size());
      for (size_t c = 0; c < runs[p].classes.size(); ++c) {
        const ClassStats& st = runs[p].classes[c];
        const double counted = st.arrived - st.rejected;
        pooled[p][c].name = st.name;
        pooled[p][c].slo = st.slo_wait_s >= 0;
        pooled[p][c].arrived += counted;
        pooled[p][c].within += counted * st.slo_pct / 100;
        pooled[p][c].gpu_hours += st.gpu_hours;
      }
    }
  }
  return pooled;
}

const Pooled& ClassOf(const std::vector<Pooled>& classes, const std::string& name) {
  for (const Pooled& c : classes) {
    if (c.name == name) return c;
  }
  ADD_FAILURE() << "no class " << name;
  return classes.front();
}

// Every class with an SLO of tessera (runs[0]) within 1 pp of the better of k8s-default and
// fgd; BE at least 90 % of k8s-default's GPU-hours (the SLO family's bar).
void ExpectNoClassStarved(const std::vector<std::vector<Pooled>>& runs) {
  ASSERT_EQ(runs.size(), 3u);
  for (size_t c = 0; c < runs[0].size(); ++c) {
    if (!runs[0][c].slo || runs[0][c].arrived == 0) continue;
    const double best = std::max(runs[1][c].pct(), runs[2][c].pct());
    EXPECT_GE(runs[0][c].pct(), best - 1.0) << runs[0][c].name;
    std::cout << runs[0][c].name << ": " << runs[0][c].pct() << " % within SLO (best of the others "
              << best << " %)\n";
  }
  EXPECT_GE(ClassOf(runs[0], "BE").gpu_hours, 0.90 * ClassOf(runs[1], "BE").gpu_hours);
  std::cout << "BE GPU-h: " << ClassOf(runs[0], "BE").gpu_hours << " (k8s-default "
            << ClassOf(runs[1], "BE").gpu_hours << ")\n";
}

// Three classes on a mixed fleet (bench/slo/three-classes.yaml): LS inference on a daily
// wave with a burst, Burstable 1-GPU jobs (SLO 60 s), BE 8-GPU training. The headroom held
// for LS once kept Burstable waiting for hours while BE training started (95 % within SLO
// against 100 %); it yields to a Burstable pod at risk now.
TEST(TesseraSlo, ThreeClassesNoClassWaitsOnGpusGivenToALooserOne) {
  const std::vector<std::vector<Pooled>> runs = OnSloScenario("three-classes");
  ExpectNoClassStarved(runs);
  ASSERT_FALSE(runs.empty());
  EXPECT_GE(ClassOf(runs[0], "LS").pct(), 99.9);
}

// One-GPU nodes, LS and BE at the same rate, the cluster 50 % larger than the offered load
// (bench/slo/ls-be-one-gpu.yaml). The backlog headroom once grew to the whole cluster (only
// LS departed, so its drain equalled its feed) and BE got 1 % of k8s-default's GPU-hours.
TEST(TesseraSlo, LsAndBeOnOneGpuNodesBeIsServedAndLsKeepsItsSlo) {
  const std::vector<std::vector<Pooled>> runs = OnSloScenario("ls-be-one-gpu");
  ExpectNoClassStarved(runs);
  ASSERT_FALSE(runs.empty());
  EXPECT_DOUBLE_EQ(ClassOf(runs[0], "LS").pct(), 100.0);
}

}  // namespace
}  // namespace tessera
