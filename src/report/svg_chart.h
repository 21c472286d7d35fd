#pragma once

// Line charts as inline SVG for the HTML reports of `tessera replay` and `tessera plan`:
// grid, axes with round ticks, one polyline per series (optionally with hover markers), a
// colour-keyed legend right of full-width charts, horizontal reference lines (an SLO bound),
// and a linear or logarithmic y axis. Styled by ReportCss() (report/report.h). No scripts and
// no external resources. Pure functions; thread-safe.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera {

/// One point of a series, in data units.
struct ChartPoint {
  double x = 0, y = 0;
  std::string title;  ///< hover text of the marker, if the series has markers
};

/// One line of a chart.
struct ChartSeries {
  ChartSeries(std::string policy_name, std::string_view line_color)
      : policy(std::move(policy_name)), color(line_color) {}
  std::string policy;          ///< the legend's entry; `data-policy` of the polyline
  std::string_view color;      ///< CSS colour (PolicyColor)
  std::string css = "series";  ///< class of the polyline ("series" for a policy's own line)
  bool dashed = false;
  bool markers = false;
  std::vector<ChartPoint> points;
};

/// A horizontal reference line across the plot (e.g. an SLO bound), dashed, labelled.
struct ChartMark {
  double y = 0;
  std::string label;  ///< e.g. "SLO 1 s"
};

struct ChartSpec {
  ChartSpec(std::string chart_id, std::string chart_title, std::string x, std::string y,
            bool half_width = false, std::optional<double> lo = std::nullopt,
            std::optional<double> hi = std::nullopt)
      : id(std::move(chart_id)),
        title(std::move(chart_title)),
        x_label(std::move(x)),
        y_label(std::move(y)),
        half(half_width),
        x_lo(lo),
        x_hi(hi) {}
  std::string id;  ///< of the <figure>
  std::string title;
  std::string x_label;
  std::string y_label;
  bool half = false;                 ///< half width (two per row), no legend (the section has one)
  std::optional<double> x_lo, x_hi;  ///< the x range; unset: the points'
  bool integer_y = false;            ///< counts: whole-number ticks, at least 0..1
  /// A logarithmic y axis for values >= 0 (waits that span 0 s to hours): linear from 0 to
  /// `log_y_from`, logarithmic above it, with ticks at 0 and log_y_from · 10^k. Values 30 and 0
  /// are then far apart however large the largest value is.
  bool log_y = false;
  double log_y_from = 1;
  std::vector<ChartMark> marks;
  /// The y ticks' labels; unset: CompactNumber.
  std::function<std::string(double)> y_tick;
};

/// The chart as `<figure class="chart" id="…"><figcaption>…</figcaption><svg …>…</svg>
/// </figure>`; each series is `<polyline class="<css>" data-policy="<policy>" …>`, each marker
/// `<circle class="marker" data-policy="<policy>" …>`, each mark `<line class="mark" …>`. All
/// strings are HTML-escaped.
std::string SvgChart(const ChartSpec& spec, const std::vector<ChartSeries>& series);

/// A tick step of 1, 2 or 5 · 10^k giving at most `max_ticks` intervals over `range` (1 when
/// `range` is not positive).
double NiceStep(double range, int max_ticks);

/// "80", "97.5", "0.001": tick labels and short figures ("%g").
std::string CompactNumber(double v);

}  // namespace tessera
