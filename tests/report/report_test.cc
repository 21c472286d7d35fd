#include "report/report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace tessera {
namespace {

/// Counts the non-overlapping occurrences of `needle` in `haystack`.
int Count(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (size_t pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + needle.size())) {
    ++n;
  }
  return n;
}

/// A run whose curve has points at arrival 0..130: unallocated = max(0, 100 − a) + `excess`
/// and fragmentation ratio = a / 200 + `frag_excess` (values chosen so sums are exact).
RunResult MakeRun(const std::string& policy, uint64_t seed, double excess, double frag_excess) {
  RunResult run;
  run.policy = policy;
  run.seed = seed;
  run.capacity_milli = 8000;
  for (int a = 0; a <= 130; ++a) {
    CurvePoint p;
    p.arrival_pct = a;
    p.arrived_pct = a + 0.5;
    p.unallocated_pct = std::max(0.0, 100.0 - a) + excess;
    p.allocated_milli = static_cast<int64_t>((100 - p.unallocated_pct) * 80);
    p.frag_ratio = a / 200.0 + frag_excess;
    p.frag_milli = 1000 + a;
    run.curve.push_back(p);
  }
  return run;
}

/// 2 policies × 2 seeds: "fgd" leaves 2 and 4 % above ideal, "random" 10 and 14 %.
std::vector<RunResult> MakeRuns() {
  return {MakeRun("fgd", 42, 2, 0.0), MakeRun("fgd", 43, 4, 0.25), MakeRun("random", 42, 10, 0.0),
          MakeRun("random", 43, 14, 0.5)};
}

const std::vector<std::string> kPolicies = {"fgd", "random"};
const std::vector<double> kLevels = {80, 90, 100, 110, 120, 130};

TEST(ReportSummarize, MeanAndSampleSdOverSeeds) {
  const std::vector<RunResult> runs = MakeRuns();
  // fgd at 100 %: values 2 and 4 → mean 3, sample s.d. sqrt(((−1)² + 1²) / 1) = sqrt(2).
  SummaryCell c = Summarize(runs, "fgd", 100, false);
  EXPECT_EQ(c.runs, 2);
  EXPECT_DOUBLE_EQ(c.mean, 3.0);
  EXPECT_DOUBLE_EQ(c.sd, std::sqrt(2.0));
  // random at 80 %: 30 and 34 → mean 32, s.d. sqrt(8).
  c = Summarize(runs, "random", 80, false);
  EXPECT_DOUBLE_EQ(c.mean, 32.0);
  EXPECT_DOUBLE_EQ(c.sd, std::sqrt(8.0));
  // Fragmentation ratio of random at 100 %: 0.5 and 1.0 → mean 0.75, s.d. sqrt(0.125).
  c = Summarize(runs, "random", 100, true);
  EXPECT_DOUBLE_EQ(c.mean, 0.75);
  EXPECT_DOUBLE_EQ(c.sd, std::sqrt(0.125));
}

TEST(ReportSummarize, OneSeedHasZeroSdAndMissingDataHasNoRuns) {
  const std::vector<RunResult> runs = {MakeRun("fgd", 42, 2, 0)};
  SummaryCell c = Summarize(runs, "fgd", 120, false);
  EXPECT_EQ(c.runs, 1);
  EXPECT_DOUBLE_EQ(c.mean, 2.0);
  EXPECT_DOUBLE_EQ(c.sd, 0.0);
  EXPECT_EQ(Summarize(runs, "bestfit", 100, false).runs, 0);
  EXPECT_EQ(Summarize(runs, "fgd", 140, false).runs, 0);
  EXPECT_EQ(FormatMeanSd(Summarize(runs, "fgd", 140, false)), "n/a");
}

TEST(ReportSummarize, FormatMeanSdScalesAndRounds) {
  SummaryCell c;
  c.mean = 0.04771;
  c.sd = 0.00214;
  c.runs = 10;
  EXPECT_EQ(FormatMeanSd(c, 2, 100.0), "4.77\u00B10.21");
  EXPECT_EQ(FormatMeanSd(c, 3), "0.048\u00B10.002");
}

TEST(ReportMeanCurve, AveragesEachIntegerArrival) {
  const std::vector<RunResult> runs = MakeRuns();
  EXPECT_EQ(MaxArrival(runs), 130);
  const auto curve = MeanCurve(runs, "random", false, 130);
  ASSERT_EQ(curve.size(), 131u);
  ASSERT_TRUE(curve[0].has_value());
  EXPECT_DOUBLE_EQ(*curve[0], 112.0);
  EXPECT_DOUBLE_EQ(*curve[130], 12.0);
  EXPECT_FALSE(MeanCurve(runs, "packing", false, 130)[50].has_value());
}

TEST(ReportCurveCsv, HeaderAndRows) {
  const std::vector<RunResult> runs = MakeRuns();
  const std::string csv = CurveCsv(runs);
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line,
            "policy,seed,arrival_pct,arrived_pct,allocated_milli,unallocated_pct,frag_milli,"
            "frag_ratio");
  // One row per run and arrival level.
  EXPECT_EQ(Count(csv, "\n"), 1 + 4 * 131);
  // fgd seed 43 at 100 %: unallocated 4, allocated (100 − 4) · 80, frag 1100, ratio 0.75.
  EXPECT_NE(csv.find("\nfgd,43,100,100.5,7680,4,1100,0.75\n"), std::string::npos)
      << csv.substr(0, 400);
}

TEST(ReportPlacementsCsv, ClonesGpusAndFailures) {
  std::vector<PodSpec> pods(3);
  pods[0].name = "openb-pod-0001";
  pods[0].gpu_count = 1;
  pods[0].gpu_milli = 500;
  pods[1].name = "train";
  pods[1].gpu_count = 3;
  pods[1].gpu_milli = 1000;
  pods[2].name = "cpu,only";  // a comma must not break the row
  std::vector<NodeSpec> nodes(2);
  nodes[0].name = "node-a";
  nodes[1].name = "node-b";

  RunResult run;
  run.policy = "fgd";
  run.seed = 42;
  run.placements = {
      {.seq = 0, .pod = 0, .clone = 0, .node = 1, .gpus = 0b100, .reason = ""},
      {.seq = 1, .pod = 1, .clone = 2, .node = 0, .gpus = 0b101001, .reason = ""},
      {.seq = 2, .pod = 1, .clone = 0, .node = -1, .gpus = 0, .reason = "cpu:12 gpu:1201"},
      {.seq = 3, .pod = 2, .clone = 1, .node = 0, .gpus = 0, .reason = ""},
  };

  const std::string csv = PlacementsCsv({run}, pods, nodes);
  EXPECT_EQ(csv,
            "policy,seed,seq,pod,node,gpus,milli_per_gpu,status\n"
            "fgd,42,0,openb-pod-0001,node-b,2,500,OK\n"
            "fgd,42,1,train~2,node-a,0-3-5,1000,OK\n"
            "fgd,42,2,train,,,1000,FAILED cpu:12 gpu:1201\n"
            "fgd,42,3,cpu only~1,node-a,,0,OK\n");
  // Every row has exactly 8 fields.
  std::istringstream in(csv);
  for (std::string line; std::getline(in, line);) EXPECT_EQ(Count(line, ","), 7) << line;
}

TEST(ReportSummaryTable, PolicyRowsNumbersAndIdeal) {
  const std::string table = SummaryTable(MakeRuns(), kPolicies, kLevels);
  EXPECT_NE(table.find("unalloc@80"), std::string::npos);
  EXPECT_NE(table.find("unalloc@130"), std::string::npos);
  EXPECT_NE(table.find("frag@100"), std::string::npos);
  std::istringstream in(table);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(lines[0].rfind("policy", 0), 0u);
  EXPECT_EQ(lines[1].rfind("fgd ", 0), 0u);
  EXPECT_EQ(lines[2].rfind("random ", 0), 0u);
  EXPECT_EQ(lines[3].rfind("ideal ", 0), 0u);
  // fgd at 80 %: 22 and 24 → 23.00±1.41; at 100 %: 3.00±1.41; frag at 100 %: 0.5 and 0.75 →
  // 62.50±17.68 (as %).
  EXPECT_NE(lines[1].find("23.00\u00B11.41"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("3.00\u00B11.41"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("62.50\u00B117.68"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("12.00\u00B12.83"), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find("20.00"), std::string::npos) << lines[3];
  EXPECT_NE(lines[3].find("10.00"), std::string::npos) << lines[3];
  EXPECT_NE(lines[3].find("0.00"), std::string::npos) << lines[3];
}

TEST(ReportSummaryTable, ColumnsAreAligned) {
  const std::string table = SummaryTable(MakeRuns(), kPolicies, kLevels);
  std::istringstream in(table);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_GE(lines.size(), 4u);
  // Header and rows end at the same display column ("±" is two bytes, one column).
  auto width = [](const std::string& s) {
    size_t w = 0;
    for (unsigned char c : s) w += (c & 0xC0) != 0x80;
    return w;
  };
  for (size_t i = 1; i < 4; ++i) EXPECT_EQ(width(lines[i]), width(lines[0])) << lines[i];
}

TEST(ReportHtml, ChartsSeriesIdealAndTable) {
  FragReportInfo info;
  info.title = "a<b & \"c\"";
  info.nodes_source = "nodes.csv";
  info.pods_source = "pods.csv";
  info.num_nodes = 2;
  info.num_gpus = 8;
  info.num_pods = 10;
  info.never_fit = 1;
  info.seeds = {42, 43};
  info.generated_by = "tessera frag --seeds 42-43";
  const std::string html = FragReportHtml(info, MakeRuns(), kPolicies, kLevels);

  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(Count(html, "<svg"), 2);
  EXPECT_EQ(Count(html, "</svg>"), 2);
  EXPECT_NE(html.find("Unallocated GPU (%) vs arrived workload (% of capacity)"),
            std::string::npos);
  EXPECT_NE(html.find("Fragmentation ratio vs arrived workload"), std::string::npos);
  // One line per policy in each chart.
  EXPECT_EQ(Count(html, "<polyline class=\"series\" data-policy=\"fgd\""), 2);
  EXPECT_EQ(Count(html, "<polyline class=\"series\" data-policy=\"random\""), 2);
  EXPECT_EQ(Count(html, "class=\"series\""), 4);
  EXPECT_EQ(Count(html, "<polyline class=\"series ideal\""), 1);
  // The ideal line runs from (0, 100) to (100, 0) and on along 0: exactly three points.
  const size_t ideal = html.find("<polyline class=\"series ideal\"");
  const size_t points = html.find("points=\"", ideal) + 8;
  const std::string ideal_points = html.substr(points, html.find('"', points) - points);
  EXPECT_EQ(Count(ideal_points, ","), 3) << ideal_points;
  // 131 points per policy line (arrival 0..130).
  const size_t fgd = html.find("data-policy=\"fgd\"");
  const size_t fgd_points = html.find("points=\"", fgd) + 8;
  EXPECT_EQ(Count(html.substr(fgd_points, html.find('"', fgd_points) - fgd_points), ","), 131);

  // Header and escaping.
  EXPECT_NE(html.find("a&lt;b &amp; &quot;c&quot;"), std::string::npos);
  EXPECT_EQ(html.find("a<b"), std::string::npos);
  EXPECT_NE(html.find("42\u201343 (2 seeds)"), std::string::npos);
}

TEST(ReportHtml, SelfContainedAndEscaped) {
  FragReportInfo info;
  info.title = "x";
  info.generated_by = "tessera frag --out <dir>";
  std::vector<RunResult> runs = MakeRuns();
  runs.push_back(MakeRun("<evil>", 1, 0, 0));
  const std::string html = FragReportHtml(info, runs, {"fgd", "random", "<evil>"}, kLevels);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<evil>"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_NE(html.find("data-policy=\"&lt;evil&gt;\""), std::string::npos);
  EXPECT_NE(html.find("tessera frag --out &lt;dir&gt;"), std::string::npos);
}

TEST(ReportHtml, TableHasTheSummaryCells) {
  FragReportInfo info;
  const std::string html = FragReportHtml(info, MakeRuns(), kPolicies, kLevels);
  const std::string table = html.substr(html.find("<table"));
  for (const char* cell :
       {"23.00\u00B11.41", "3.00\u00B11.41", "62.50\u00B117.68", "12.00\u00B12.83", "20.00"}) {
    EXPECT_NE(table.find(cell), std::string::npos) << cell;
  }
  EXPECT_NE(table.find(">ideal<"), std::string::npos);
  // fgd has the lower mean in every column: 12 bold cells.
  EXPECT_EQ(Count(table, "class=\"best\""), 12);
}

TEST(ReportHtmlEscape, AllSpecialCharacters) {
  EXPECT_EQ(HtmlEscape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(HtmlEscape("plain"), "plain");
}

}  // namespace
}  // namespace tessera
