// The reports' line chart (report/svg_chart.h): a log wait axis keeps a 30 s point apart from
// 0 s next to a point of days (issue 40: on the plan report's linear axis a 30 s miss looked
// like 0 s), reference lines are drawn and labelled, and full-width charts have a legend with
// each policy's colour.

#include "report/svg_chart.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace tessera {
namespace {

// The y pixel of each point of the polyline of `policy`.
std::vector<double> PointYs(const std::string& svg, const std::string& policy) {
  const size_t line = svg.find("<polyline class=\"series\" data-policy=\"" + policy + "\"");
  EXPECT_NE(line, std::string::npos) << svg;
  if (line == std::string::npos) return {};
  const size_t from = svg.find("points=\"", line) + 8;
  const std::string points = svg.substr(from, svg.find('"', from) - from);
  std::vector<double> ys;
  for (size_t pos = 0; pos < points.size();) {
    double x = 0, y = 0;
    EXPECT_EQ(std::sscanf(points.c_str() + pos, "%lf,%lf", &x, &y), 2) << points;
    ys.push_back(y);
    const size_t blank = points.find(' ', pos);
    if (blank == std::string::npos) break;
    pos = blank + 1;
  }
  return ys;
}

std::vector<ChartSeries> Waits() {
  std::vector<ChartSeries> series;
  series.emplace_back("tessera", "#1f77b4");
  series.back().points = {{8, 0, ""}, {16, 30, ""}, {24, 950 * 86400.0, ""}};
  series.emplace_back("k8s-default", "#ff7f0e");
  series.back().points = {{8, 1, ""}, {24, 0, ""}};
  return series;
}

TEST(SvgChart, ALogAxisKeepsThirtySecondsApartFromZeroNextToDays) {
  ChartSpec linear("w", "LS p99 wait against GPUs", "GPUs", "p99 wait");
  const std::vector<double> flat = PointYs(SvgChart(linear, Waits()), "tessera");
  ASSERT_EQ(flat.size(), 3u);
  EXPECT_LT(flat[0] - flat[1], 1.0);  // linear: 30 s is within a pixel of 0 s

  ChartSpec log = linear;
  log.log_y = true;
  log.marks.push_back({1, "SLO 1 s"});
  const std::string svg = SvgChart(log, Waits());
  const std::vector<double> ys = PointYs(svg, "tessera");
  ASSERT_EQ(ys.size(), 3u);
  EXPECT_GT(ys[0] - ys[1], 50.0) << svg;  // 30 s stands 50 px and more above 0 s
  EXPECT_GT(ys[1] - ys[2], 50.0) << svg;  // and 950 days as far above 30 s
  // The SLO line lies between 0 s and 30 s, labelled; ticks at 0 and the decades.
  const size_t mark = svg.find("<line class=\"mark\"");
  ASSERT_NE(mark, std::string::npos) << svg;
  double y1 = 0;
  ASSERT_EQ(std::sscanf(svg.c_str() + svg.find("y1=\"", mark) + 4, "%lf", &y1), 1);
  EXPECT_LT(y1, ys[0]);
  EXPECT_GT(y1, ys[1]);
  EXPECT_NE(svg.find(">SLO 1 s</text>"), std::string::npos);
  EXPECT_NE(svg.find(">1000</text>"), std::string::npos) << svg;
  EXPECT_EQ(PointYs(svg, "k8s-default").size(), 2u);
}

TEST(SvgChart, TheLegendKeysEachPolicyToItsColour) {
  const std::string svg = SvgChart({"w", "t", "x", "y"}, Waits());
  const size_t legend = svg.find("<g class=\"legend\">");
  ASSERT_NE(legend, std::string::npos) << svg;
  const std::string keys = svg.substr(legend);
  const size_t blue = keys.find("stroke=\"#1f77b4\"");
  const size_t orange = keys.find("stroke=\"#ff7f0e\"");
  ASSERT_NE(blue, std::string::npos);
  ASSERT_NE(orange, std::string::npos);
  EXPECT_LT(blue, keys.find(">tessera</text>"));
  EXPECT_LT(keys.find(">tessera</text>"), orange);
  EXPECT_LT(orange, keys.find(">k8s-default</text>"));
  // Half-width charts leave the legend to their section.
  ChartSpec half("h", "t", "x", "y", true);
  EXPECT_EQ(SvgChart(half, Waits()).find("class=\"legend\""), std::string::npos);
}

}  // namespace
}  // namespace tessera
