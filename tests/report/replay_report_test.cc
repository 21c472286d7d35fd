#include "report/replay_report.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "report/report.h"

namespace tessera {
namespace {

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) {
    ++n;
  }
  return n;
}

/// The points attribute of the first polyline of `policy` inside the figure `id`.
std::string PolylinePoints(const std::string& html, const std::string& id,
                           const std::string& policy) {
  const size_t fig = html.find("<figure class=\"chart\" id=\"" + id + "\"");
  if (fig == std::string::npos) return "<no figure " + id + ">";
  const size_t end = html.find("</figure>", fig);
  const std::string chart = html.substr(fig, end - fig);
  const size_t line = chart.find("<polyline class=\"series\" data-policy=\"" + policy + "\"");
  if (line == std::string::npos) return "<no line>";
  const size_t from = chart.find("points=\"", line) + 8;
  return chart.substr(from, chart.find('"', from) - from);
}

ClassStats Class(const std::string& name, double slo_s, double slo_pct, double p99) {
  ClassStats c;
  c.name = name;
  c.arrived = 10;
  c.slo_wait_s = slo_s;
  c.slo_pct = slo_pct;
  c.wait_p99_s = p99;
  c.gpu_hours = 5;
  return c;
}

/// A run of four classes over 10 hours, one sample per hour; `headroom` GPUs kept throughout.
ReplayResult FakeRun(const std::string& policy, double burstable_pct, int64_t headroom) {
  ReplayResult r;
  r.policy = policy;
  r.horizon_s = 36000;
  r.capacity_milli = 8000;
  r.classes = {Class("LS", 1, 99.5, 0.2), Class("Guaranteed", 10, 100, 0),
               Class("Burstable", 60, burstable_pct, 75), Class("BE", -1, 100, 900)};
  r.preemptions = 3;
  r.mean_alloc_pct = 50;
  for (int h = 0; h <= 10; ++h) {
    TimePoint p;
    p.t_s = h * 3600.0;
    p.pending = {h, 0, 2 * h, 3};
    p.allocated_milli = 400 * h;
    p.idle_gpus = 8 - h / 2;
    p.headroom_gpus = headroom;
    r.series.push_back(p);
  }
  return r;
}

// "No SLO" and "no pods" are not 100 % attainment: their slo_pct cells are empty.
TEST(ReplayClassesCsv, SloPctIsEmptyWithoutAnSloOrWithoutPods) {
  ReplayResult r = FakeRun("tessera", 97.5, 0);
  r.classes[1].arrived = 0;  // Guaranteed: no pods (slo_pct stays at its 100 default)
  const std::string csv = ReplayClassesCsv({r});
  std::istringstream in(csv);
  std::string line;
  std::map<std::string, std::vector<std::string>> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.push_back("");
    rows[cells[1]] = cells;
  }
  ASSERT_EQ(rows["class"][12], "slo_wait_s");
  ASSERT_EQ(rows["class"][13], "slo_pct");
  EXPECT_EQ(rows["LS"][12], "1");
  EXPECT_EQ(rows["LS"][13], "99.5");
  EXPECT_EQ(rows["Burstable"][13], "97.5");
  EXPECT_EQ(rows["Guaranteed"][12], "10");
  EXPECT_EQ(rows["Guaranteed"][13], "") << "no pods";
  EXPECT_EQ(rows["BE"][12], "") << "no SLO";
  EXPECT_EQ(rows["BE"][13], "") << "no SLO";
}

TEST(WorkloadStart, StartsWhereTheFirstPercentOfPodsHasArrived) {
  Timeline t;
  // 2 early pods at 0 h and 1 h, then 198 pods from 50 h on: the 2nd arrival (rank ceil(2))
  // is at 1 h, within 5 % of the 100 h horizon, so the axis starts at 0.
  for (double h : {0.0, 1.0}) t.pods.push_back(TimedPod{PodSpec{}, h * 3600, 60});
  for (int i = 0; i < 198; ++i) t.pods.push_back(TimedPod{PodSpec{}, (50 + i * 0.1) * 3600, 60});
  EXPECT_EQ(WorkloadStart(t, 100 * 3600), 0);
  // With 1 early pod in 200 the 2nd arrival is the workload's start: 50 h.
  t.pods[1].arrival_s = 50 * 3600;
  EXPECT_DOUBLE_EQ(WorkloadStart(t, 100 * 3600), 50 * 3600);
  EXPECT_EQ(WorkloadStart(Timeline{}, 100), 0);
}

TEST(ReplayReportHtml, HeadlineHasEveryClassWithAnSlo) {
  const std::vector<ReplayResult> runs = {FakeRun("tessera", 54.08, 4),
                                          FakeRun("k8s-default", 82.65, 0)};
  ReplayReportInfo info;
  info.title = "t";
  const std::string html = ReplayReportHtml(info, runs, {}, "LS", "BE");
  const size_t begin = html.find("id=\"headline\"");
  ASSERT_NE(begin, std::string::npos);
  const std::string headline = html.substr(begin, html.find("</section>", begin) - begin);
  for (const char* group : {"LS (SLO 1 s)", "Guaranteed (SLO 10 s)", "Burstable (SLO 60 s)"}) {
    EXPECT_NE(headline.find(group), std::string::npos) << group;
  }
  EXPECT_EQ(headline.find("BE (SLO"), std::string::npos);  // BE has no SLO
  EXPECT_NE(headline.find("54.08 %"), std::string::npos);  // Burstable's cost under tessera
  EXPECT_NE(headline.find("82.65 %"), std::string::npos);
  EXPECT_NE(headline.find("<td class=\"best\">82.65 %</td>"), std::string::npos);
  // Styled like the frag report: its style sheet and cards.
  EXPECT_NE(html.find(std::string(ReportCss()).substr(0, 40)), std::string::npos);
  EXPECT_NE(html.find("<header class=\"card\">"), std::string::npos);
}

TEST(ReplayReportHtml, QueuePerClassHeadroomAndTimeAxisFromTheWorkloadStart) {
  const std::vector<ReplayResult> runs = {FakeRun("tessera", 54, 4), FakeRun("k8s-default", 82, 0)};
  ReplayReportInfo info;
  info.start_s = 5 * 3600;
  info.pods_before_start = 3;
  const std::string html = ReplayReportHtml(info, runs, {}, "LS", "BE");
  for (const char* id : {"queue-0", "queue-1", "queue-2", "queue-3"}) {
    EXPECT_NE(html.find("id=\"" + std::string(id) + "\""), std::string::npos) << id;
  }
  EXPECT_NE(html.find("Queue depth: Burstable"), std::string::npos);
  // The headroom chart: a line (and the idle GPUs) for tessera only, which keeps headroom.
  EXPECT_NE(PolylinePoints(html, "headroom", "tessera").find(','), std::string::npos);
  EXPECT_EQ(PolylinePoints(html, "headroom", "k8s-default"), "<no line>");
  EXPECT_EQ(Count(html, "class=\"series idle\" data-policy=\"tessera\""), 1u);
  // Samples at 0..10 h, axis from 5 h: 6 points per line (5, 6, ..., 10 h).
  const std::string points = PolylinePoints(html, "queue-0", "tessera");
  EXPECT_EQ(Count(points, ","), 6u) << points;
  EXPECT_NE(html.find("start at 5.00 h"), std::string::npos);
}

TEST(ReplayReportHtml, FrontierHasAMarkerPerMeasuredRunAndASweepTable) {
  const std::vector<ReplayResult> runs = {FakeRun("tessera", 54, 4), FakeRun("k8s-default", 82, 0)};
  std::vector<SweepPoint> sweep;
  for (int nodes : {8, 12}) {
    for (const ReplayResult& r : runs) {
      SweepPoint p{nodes, nodes * 8L, r};
      p.result.mean_alloc_pct = 600.0 / nodes;
      p.result.classes[0].wait_p99_s = nodes == 8 ? 30 : 0;
      sweep.push_back(p);
    }
  }
  ReplayReportInfo info;
  info.num_nodes = 10;
  const std::string html = ReplayReportHtml(info, runs, sweep, "LS", "BE");
  const size_t fig = html.find("id=\"frontier\"");
  ASSERT_NE(fig, std::string::npos);
  const std::string frontier = html.substr(fig, html.find("</figure>", fig) - fig);
  // Per policy: the main run (10 nodes) and the two swept sizes.
  EXPECT_EQ(Count(frontier, "<circle class=\"marker\" data-policy=\"tessera\""), 3u);
  EXPECT_EQ(Count(frontier, "<circle class=\"marker\" data-policy=\"k8s-default\""), 3u);
  EXPECT_EQ(Count(frontier, "<polyline class=\"series\""), 2u);
  EXPECT_NE(frontier.find("tessera, 12 nodes: 50.0 % allocated, LS p99 0.00 s"), std::string::npos);
  EXPECT_NE(html.find("id=\"sweep\""), std::string::npos);
  EXPECT_EQ(Count(html, "<tr data-policy=\"tessera\">"), 1u + 2u);  // headline + sweep rows
  EXPECT_NE(html.find("id=\"sweep-p99\""), std::string::npos);
  EXPECT_NE(html.find("id=\"sweep-gpu-hours\""), std::string::npos);
  // Without a sweep: the frontier still has the main runs; no sweep table.
  const std::string alone = ReplayReportHtml(info, runs, {}, "LS", "BE");
  EXPECT_NE(alone.find("id=\"frontier\""), std::string::npos);
  EXPECT_EQ(alone.find("id=\"sweep\""), std::string::npos);
}

}  // namespace
}  // namespace tessera
