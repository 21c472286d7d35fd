// report.html: a self-contained page with two inline SVG charts and the summary table.
//
// No scripts and no external resources (fonts, styles, images), so the file can be mailed,
// archived as a CI artifact or opened offline. Hover titles use SVG <title> elements.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/report.h"
#include "report/svg_chart.h"
#include "util/format.h"

namespace tessera {
namespace {

/// Line colours (d3 category10: distinct on white and for most colour-vision deficiencies
/// when combined with the legend); policies beyond ten reuse them with a dash pattern.
constexpr std::string_view kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                         "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};
constexpr size_t kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);
constexpr std::string_view kIdealColor = "#57606a";

// Chart geometry, in SVG user units (the SVG scales to the page width).
constexpr double kChartWidth = 1000;
constexpr double kChartHeight = 340;
constexpr double kPlotLeft = 64;
constexpr double kPlotTop = 26;
constexpr double kPlotRight = 790;
constexpr double kPlotBottom = 286;
constexpr double kLegendLeft = 812;

/// A number for SVG coordinates: one decimal is finer than a pixel.
std::string Coord(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", v);
  return buf;
}

/// "80" or "97.5".
std::string Compact(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

/// Maps data coordinates to SVG coordinates inside one rectangle.
struct Frame {
  double left, top, right, bottom;  ///< SVG units
  double x_lo, x_hi, y_lo, y_hi;    ///< data units
  double X(double x) const { return left + (x - x_lo) / (x_hi - x_lo) * (right - left); }
  double Y(double y) const { return bottom - (y - y_lo) / (y_hi - y_lo) * (bottom - top); }
};

/// One policy's line: the mean at each integer arrival %.
struct Series {
  std::string policy;
  std::string_view color;
  bool dashed = false;                        ///< for policies beyond the palette
  std::vector<std::optional<double>> values;  ///< index = arrival %, in the chart's unit
};

/// The SVG `points` of `values` in `frame`, for x in [x_from, x_to]; gaps are bridged.
std::string Points(const Frame& frame, const std::vector<std::optional<double>>& values, int x_from,
                   int x_to) {
  std::string points;
  for (int x = std::max(x_from, 0); x <= x_to && x < static_cast<int>(values.size()); ++x) {
    if (!values[x]) continue;
    if (!points.empty()) points += ' ';
    points += Coord(frame.X(x)) + "," + Coord(frame.Y(*values[x]));
  }
  return points;
}

/// The ideal unallocated % at arrival a: max(0, 100 − a).
double IdealUnallocated(double arrival) { return std::max(0.0, 100.0 - arrival); }

/// Points of the ideal line over [x_from, x_to] (it bends at 100 %).
std::string IdealPoints(const Frame& frame, int x_from, int x_to) {
  std::vector<double> xs = {static_cast<double>(x_from)};
  if (x_from < 100 && x_to > 100) xs.push_back(100);
  xs.push_back(x_to);
  std::string points;
  for (double x : xs) {
    if (!points.empty()) points += ' ';
    points += Coord(frame.X(x)) + "," + Coord(frame.Y(IdealUnallocated(x)));
  }
  return points;
}

/// Grid lines, axes, ticks and tick labels of `frame`.
void AppendAxes(std::string* svg, const Frame& f, double x_step, double y_step,
                const std::string& x_suffix, int font_size) {
  *svg += "<g class=\"grid\">";
  for (double y = f.y_lo; y <= f.y_hi + 1e-9; y += y_step) {
    *svg += "<line x1=\"" + Coord(f.left) + "\" y1=\"" + Coord(f.Y(y)) + "\" x2=\"" +
            Coord(f.right) + "\" y2=\"" + Coord(f.Y(y)) + "\"/>";
  }
  for (double x = f.x_lo; x <= f.x_hi + 1e-9; x += x_step) {
    *svg += "<line x1=\"" + Coord(f.X(x)) + "\" y1=\"" + Coord(f.top) + "\" x2=\"" + Coord(f.X(x)) +
            "\" y2=\"" + Coord(f.bottom) + "\"/>";
  }
  *svg += "</g><g class=\"axis\">";
  *svg += "<line x1=\"" + Coord(f.left) + "\" y1=\"" + Coord(f.bottom) + "\" x2=\"" +
          Coord(f.right) + "\" y2=\"" + Coord(f.bottom) + "\"/>";
  *svg += "<line x1=\"" + Coord(f.left) + "\" y1=\"" + Coord(f.top) + "\" x2=\"" + Coord(f.left) +
          "\" y2=\"" + Coord(f.bottom) + "\"/>";
  const std::string size = std::to_string(font_size);
  for (double x = f.x_lo; x <= f.x_hi + 1e-9; x += x_step) {
    *svg += "<line x1=\"" + Coord(f.X(x)) + "\" y1=\"" + Coord(f.bottom) + "\" x2=\"" +
            Coord(f.X(x)) + "\" y2=\"" + Coord(f.bottom + 5) + "\"/>";
    *svg += "<text x=\"" + Coord(f.X(x)) + "\" y=\"" + Coord(f.bottom + 7 + font_size) +
            "\" text-anchor=\"middle\" font-size=\"" + size + "\">" + Compact(x) + x_suffix +
            "</text>";
  }
  for (double y = f.y_lo; y <= f.y_hi + 1e-9; y += y_step) {
    *svg += "<line x1=\"" + Coord(f.left - 5) + "\" y1=\"" + Coord(f.Y(y)) + "\" x2=\"" +
            Coord(f.left) + "\" y2=\"" + Coord(f.Y(y)) + "\"/>";
    *svg += "<text x=\"" + Coord(f.left - 8) + "\" y=\"" + Coord(f.Y(y) + font_size * 0.35) +
            "\" text-anchor=\"end\" font-size=\"" + size + "\">" + Compact(y) + "</text>";
  }
  *svg += "</g>";
}

std::string StrokeAttributes(const Series& s, double width) {
  std::string attrs =
      "stroke=\"" + std::string(s.color) + "\" stroke-width=\"" + Compact(width) + "\"";
  if (s.dashed) attrs += " stroke-dasharray=\"10 3 2 3\"";
  return attrs;
}

/// A zoomed view of the high-arrival end of the unallocated chart, drawn in its empty upper
/// right corner (the curves there are far below the ideal line's early part).
void AppendInset(std::string* svg, const Frame& main, const std::vector<Series>& series,
                 int max_x) {
  const int x_from = std::max(0, (max_x - 50) / 10 * 10);
  double y_max = IdealUnallocated(x_from);
  for (const Series& s : series) {
    for (int x = x_from; x <= max_x && x < static_cast<int>(s.values.size()); ++x) {
      if (s.values[x]) y_max = std::max(y_max, *s.values[x]);
    }
  }
  const double y_step = NiceStep(y_max, 4);
  y_max = std::max(y_step, std::ceil(y_max / y_step - 1e-9) * y_step);

  const double box_left = main.left + (main.right - main.left) * 0.53;
  const double box_right = main.right - 10;
  const double box_top = main.top + 8;
  const double box_bottom = main.top + (main.bottom - main.top) * 0.56;
  const Frame f{box_left + 44,
                box_top + 24,
                box_right - 14,
                box_bottom - 24,
                static_cast<double>(x_from),
                static_cast<double>(max_x),
                0,
                y_max};

  *svg += "<g class=\"inset\"><rect class=\"inset-box\" x=\"" + Coord(box_left) + "\" y=\"" +
          Coord(box_top) + "\" width=\"" + Coord(box_right - box_left) + "\" height=\"" +
          Coord(box_bottom - box_top) + "\" rx=\"4\"/>";
  *svg += "<text class=\"inset-title\" x=\"" + Coord(box_left + 10) + "\" y=\"" +
          Coord(box_top + 16) + "\" font-size=\"12\">Zoom: arrival " + std::to_string(x_from) +
          "\u2013" + std::to_string(max_x) + " %</text>";
  AppendAxes(svg, f, NiceStep(max_x - x_from, 6), y_step, "", 11);
  *svg += "<polyline class=\"zoom ideal\" fill=\"none\" stroke=\"" + std::string(kIdealColor) +
          "\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\" points=\"" +
          IdealPoints(f, x_from, max_x) + "\"/>";
  for (const Series& s : series) {
    const std::string points = Points(f, s.values, x_from, max_x);
    if (points.empty()) continue;
    *svg += "<polyline class=\"zoom\" fill=\"none\" " + StrokeAttributes(s, 1.75) +
            " stroke-linejoin=\"round\" points=\"" + points + "\"><title>" + HtmlEscape(s.policy) +
            "</title></polyline>";
  }
  *svg += "</g>";
}

struct FragChart {
  std::string id;            ///< element id
  std::string title;         ///< caption and SVG title
  std::string y_label;       ///< y axis label
  bool unallocated = false;  ///< draws the ideal line and the zoom inset
};

std::string Chart(const FragChart& spec, const std::vector<Series>& series, int max_x) {
  const Frame f{kPlotLeft, kPlotTop, kPlotRight, kPlotBottom, 0, static_cast<double>(max_x),
                0,         100};
  std::string svg = "<figure class=\"chart\" id=\"" + spec.id + "\"><figcaption>" +
                    HtmlEscape(spec.title) + "</figcaption>";
  svg += "<svg viewBox=\"0 0 " + Compact(kChartWidth) + " " + Compact(kChartHeight) +
         "\" role=\"img\" aria-label=\"" + HtmlEscape(spec.title) + "\"><title>" +
         HtmlEscape(spec.title) + "</title>";
  AppendAxes(&svg, f, NiceStep(max_x, 14), 10, "", 12);
  // Axis labels.
  svg += "<text class=\"axis-label\" x=\"" + Coord((f.left + f.right) / 2) + "\" y=\"" +
         Coord(kChartHeight - 14) +
         "\" text-anchor=\"middle\" font-size=\"13\">Arrived workload (% of cluster GPU "
         "capacity)</text>";
  svg += "<text class=\"axis-label\" transform=\"translate(18 " + Coord((f.top + f.bottom) / 2) +
         ") rotate(-90)\" text-anchor=\"middle\" font-size=\"13\">" + HtmlEscape(spec.y_label) +
         "</text>";
  if (max_x >= 100) {
    // The 100 % mark: arrived work equals cluster GPU capacity (labelled above the plot).
    svg += "<line class=\"capacity\" x1=\"" + Coord(f.X(100)) + "\" y1=\"" + Coord(f.top - 6) +
           "\" x2=\"" + Coord(f.X(100)) + "\" y2=\"" + Coord(f.bottom) + "\"/>";
    svg += "<text class=\"capacity-label\" x=\"" + Coord(f.X(100)) + "\" y=\"" + Coord(f.top - 10) +
           "\" text-anchor=\"middle\" font-size=\"11\">capacity</text>";
  }
  if (spec.unallocated) {
    svg += "<polyline class=\"series ideal\" fill=\"none\" stroke=\"" + std::string(kIdealColor) +
           "\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\" points=\"" + IdealPoints(f, 0, max_x) +
           "\"><title>ideal: max(0, 100 \u2212 arrival)</title></polyline>";
  }
  for (const Series& s : series) {
    svg +=
        "<polyline class=\"series\" data-policy=\"" + HtmlEscape(s.policy) + "\" fill=\"none\" " +
        StrokeAttributes(s, 2) + " stroke-linejoin=\"round\" stroke-linecap=\"round\" points=\"" +
        Points(f, s.values, 0, max_x) + "\"><title>" + HtmlEscape(s.policy) + "</title></polyline>";
  }
  if (spec.unallocated && max_x >= 100) AppendInset(&svg, f, series, max_x);

  // Legend, right of the plot.
  svg += "<g class=\"legend\"><text x=\"" + Coord(kLegendLeft) + "\" y=\"" + Coord(kPlotTop + 10) +
         "\" font-size=\"12\" font-weight=\"600\">Policy</text>";
  double y = kPlotTop + 34;
  auto entry = [&](const std::string& name, const std::string& stroke) {
    std::string label = name;
    if (label.size() > 20) label = label.substr(0, 19) + "\u2026";
    svg += "<g><title>" + HtmlEscape(name) + "</title><line x1=\"" + Coord(kLegendLeft) +
           "\" y1=\"" + Coord(y - 4) + "\" x2=\"" + Coord(kLegendLeft + 28) + "\" y2=\"" +
           Coord(y - 4) + "\" " + stroke + "/><text x=\"" + Coord(kLegendLeft + 36) + "\" y=\"" +
           Coord(y) + "\" font-size=\"13\">" + HtmlEscape(label) + "</text></g>";
    y += 22;
  };
  for (const Series& s : series) entry(s.policy, StrokeAttributes(s, 3));
  if (spec.unallocated) {
    entry("ideal", "stroke=\"" + std::string(kIdealColor) +
                       "\" stroke-width=\"2\" stroke-dasharray=\"6 4\"");
  }
  svg += "</g></svg></figure>\n";
  return svg;
}

/// "42–51 (10 seeds)" for a consecutive run, else "1, 5, 9 (3 seeds)".
std::string SeedsText(const std::vector<uint64_t>& seeds) {
  if (seeds.empty()) return "none";
  bool consecutive = seeds.size() >= 2;
  for (size_t i = 1; i < seeds.size() && consecutive; ++i) {
    consecutive = seeds[i] == seeds[0] + i;
  }
  std::string text;
  if (consecutive) {
    text = std::to_string(seeds.front()) + "\u2013" + std::to_string(seeds.back());
  } else {
    for (size_t i = 0; i < seeds.size(); ++i) {
      if (i > 0) text += ", ";
      text += std::to_string(seeds[i]);
    }
  }
  return text + " (" + std::to_string(seeds.size()) + (seeds.size() == 1 ? " seed)" : " seeds)");
}

/// The summary table as HTML: the same cells as SummaryTable, with the unallocated and the
/// fragmentation columns as two stacked sections (so it fits a page), the lowest mean of each
/// column in bold.
std::string SummaryTableHtml(const std::vector<RunResult>& runs,
                             const std::vector<std::string>& policies,
                             const std::vector<double>& levels) {
  const std::string span = std::to_string(levels.size() + 1);
  std::string html = "<section class=\"card\">\n<h2>Summary at selected arrival levels</h2>\n";
  html += "<div class=\"table-wrap\"><table class=\"summary\">\n<thead>\n<tr><th></th>";
  if (!levels.empty()) {
    html += "<th class=\"group\" colspan=\"" + std::to_string(levels.size()) +
            "\">Arrived workload (% of cluster GPU capacity)</th>";
  }
  html += "</tr>\n<tr><th class=\"policy\">Policy</th>";
  for (double level : levels) html += "<th>" + Compact(level) + " %</th>";
  html += "</tr>\n</thead>\n";
  // With GPU memory (docs/GPU_MEMORY.md) two more sections: usable free GPU memory and pods
  // refused, as in MemorySummaryTable.
  bool memory = false;
  for (const RunResult& run : runs) memory |= run.has_gpu_memory;
  auto memory_cell = [&](const std::string& policy, double level, bool failed) {
    std::vector<double> values;
    for (const RunResult& run : runs) {
      if (run.policy != policy) continue;
      for (const CurvePoint& p : run.curve) {
        if (std::fabs(p.arrival_pct - level) <= 1e-6) {
          values.push_back(failed ? static_cast<double>(p.failed) : p.unallocated_mem_pct);
          break;
        }
      }
    }
    return MeanSd(values);
  };
  static constexpr const char* kSectionTitles[] = {
      "Unallocated GPU (% of capacity)", "Fragmentation ratio (% of idle GPU)",
      "Usable free GPU memory (% of GPU memory)", "Pods refused among those arrived"};
  for (int section = 0; section < (memory ? 4 : 2); ++section) {
    const bool frag = section == 1;
    html += "<tbody>\n<tr class=\"section\"><th colspan=\"" + span + "\">" +
            kSectionTitles[section] + " \u2014 mean \u00B1 s.d., lower is better</th></tr>\n";
    // cells[p][i] for policy p at levels[i]; best[i] = the policy with the lowest mean.
    std::vector<std::vector<SummaryCell>> cells(policies.size());
    std::vector<int> best(levels.size(), -1);
    for (size_t p = 0; p < policies.size(); ++p) {
      for (size_t i = 0; i < levels.size(); ++i) {
        cells[p].push_back(section < 2 ? Summarize(runs, policies[p], levels[i], frag)
                                       : memory_cell(policies[p], levels[i], section == 3));
        const SummaryCell& c = cells[p][i];
        if (c.runs > 0 && policies.size() > 1 && (best[i] < 0 || c.mean < cells[best[i]][i].mean)) {
          best[i] = static_cast<int>(p);
        }
      }
    }
    for (size_t p = 0; p < policies.size(); ++p) {
      html += "<tr data-policy=\"" + HtmlEscape(policies[p]) +
              "\"><th class=\"policy\" scope=\"row\"><span class=\"swatch\" style=\"background:" +
              std::string(kPalette[p % kPaletteSize]) + "\"></span>" + HtmlEscape(policies[p]) +
              "</th>";
      for (size_t i = 0; i < levels.size(); ++i) {
        html += std::string(best[i] == static_cast<int>(p) ? "<td class=\"best\">" : "<td>") +
                FormatMeanSd(cells[p][i], section == 3 ? 1 : 2, frag ? 100.0 : 1.0) + "</td>";
      }
      html += "</tr>\n";
    }
    if (!frag) {
      html += "<tr class=\"ideal\"><th class=\"policy\" scope=\"row\">ideal</th>";
      for (double level : levels) html += "<td>" + Fixed(IdealUnallocated(level), 2) + "</td>";
      html += "</tr>\n";
    }
    html += "</tbody>\n";
  }
  html += "</table></div>\n";
  html +=
      "<p class=\"note\">Mean \u00B1 sample standard deviation over seeds; bold: the lowest "
      "(best) mean in each column. Ideal unallocated GPU at arrival a is max(0, 100 \u2212 "
      "a).</p>\n</section>\n";
  return html;
}

constexpr std::string_view kStyle = R"css(
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #f6f8fa; color: #1f2328;
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1240px; margin: 0 auto; padding: 20px 24px 40px; }
.eyebrow { margin: 0; color: #57606a; font-size: 12px; letter-spacing: .08em; text-transform: uppercase; }
h1 { margin: 2px 0 12px; font-size: 24px; font-weight: 600; overflow-wrap: anywhere; }
h2 { margin: 0 0 8px; font-size: 16px; font-weight: 600; }
.card { background: #fff; border: 1px solid #d0d7de; border-radius: 8px; padding: 14px 20px; margin-top: 12px; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 20px; margin: 0; }
dl.meta dt { color: #57606a; }
dl.meta dd { margin: 0; overflow-wrap: anywhere; }
code { font-family: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, monospace; font-size: 12.5px;
  background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 4px; padding: 1px 5px; }
.highlight { margin: 12px 0 0; padding: 8px 12px; border-left: 3px solid #1f77b4; background: #f0f6fc; }
figure.chart { margin: 0; }
figure.chart figcaption { font-size: 16px; font-weight: 600; margin-bottom: 4px; }
figure.chart svg { display: block; width: 100%; height: auto; }
svg text { fill: #424a53; }
svg .grid line { stroke: #eaeef2; stroke-width: 1; }
svg .axis line { stroke: #8c959f; stroke-width: 1; }
svg .axis-label { fill: #1f2328; }
svg .capacity { stroke: #8c959f; stroke-width: 1; stroke-dasharray: 2 3; }
svg .capacity-label { fill: #6e7781; }
svg .inset-box { fill: #fff; stroke: #d0d7de; stroke-width: 1; }
svg .inset-title { fill: #1f2328; font-weight: 600; }
.note { color: #57606a; font-size: 12.5px; margin: 8px 0 0; }
.table-wrap { overflow-x: auto; }
table.summary { border-collapse: collapse; width: 100%; font-size: 13px; font-variant-numeric: tabular-nums; }
table.summary th, table.summary td { padding: 3px 10px; text-align: right; white-space: nowrap;
  border-bottom: 1px solid #eaeef2; }
table.summary thead th { color: #57606a; font-weight: 600; border-bottom: 1px solid #d0d7de; }
table.summary thead tr:first-child th { border-bottom: none; padding-bottom: 0; font-weight: 400; }
table.summary th.group { text-align: center; }
table.summary th.policy { text-align: left; color: #1f2328; font-weight: 600; }
table.summary tr.section th { text-align: left; padding-top: 14px; color: #1f2328; background: #fff;
  border-bottom: 1px solid #d0d7de; font-weight: 600; }
table.summary tbody tr:not(.section):hover { background: #f6f8fa; }
table.summary td.best { font-weight: 700; color: #0b5394; }
table.summary tr.ideal th, table.summary tr.ideal td { color: #57606a; font-style: italic; font-weight: 400; }
.swatch { display: inline-block; width: 14px; height: 3px; margin: 0 8px 3px 0; vertical-align: middle; }
.legend-row { display: flex; flex-wrap: wrap; gap: 4px 18px; margin: 4px 0 8px; font-size: 13px; }
.card.warnings { border-left: 4px solid #bf8700; background: #fff8c5; }
.card.warnings ul { margin: 4px 0 0; padding-left: 20px; }
)css";

}  // namespace

std::string_view ReportCss() { return kStyle; }

std::string_view PolicyColor(size_t index) { return kPalette[index % kPaletteSize]; }

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string FragReportHtml(const FragReportInfo& info, const std::vector<RunResult>& runs,
                           const std::vector<std::string>& policies,
                           const std::vector<double>& levels,
                           const std::vector<OfflineBoundRow>& offline) {
  const int max_x = std::max(MaxArrival(runs), 1);
  std::vector<Series> unallocated, fragmentation;
  for (size_t i = 0; i < policies.size(); ++i) {
    Series s;
    s.policy = policies[i];
    s.color = kPalette[i % kPaletteSize];
    s.dashed = i >= kPaletteSize;
    s.values = MeanCurve(runs, policies[i], false, max_x);
    unallocated.push_back(s);
    s.values = MeanCurve(runs, policies[i], true, max_x);
    for (std::optional<double>& v : s.values) {
      if (v) *v *= 100;  // ratio → %
    }
    fragmentation.push_back(std::move(s));
  }
  const std::string title = info.title.empty() ? "Inflation experiment" : info.title;

  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  html += "<title>" + HtmlEscape(title) + " \u2014 Tessera fragmentation report</title>\n";
  html += "<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n<main>\n";

  // Header: what was run.
  html +=
      "<header class=\"card\">\n<p class=\"eyebrow\">Tessera \u00B7 GPU fragmentation "
      "(inflation experiment)</p>\n<h1>" +
      HtmlEscape(title) + "</h1>\n<dl class=\"meta\">\n";
  auto meta = [&html](std::string_view name, const std::string& value_html) {
    html += "<dt>" + std::string(name) + "</dt><dd>" + value_html + "</dd>\n";
  };
  auto source = [](const std::string& path) {
    return path.empty() ? std::string() : " \u2014 <code>" + HtmlEscape(path) + "</code>";
  };
  meta("Cluster", std::to_string(info.num_nodes) + " nodes \u00B7 " +
                      std::to_string(info.num_gpus) + " GPUs" + source(info.nodes_source));
  meta("Workload", std::to_string(info.num_pods) + " pods, " + std::to_string(info.never_fit) +
                       " of which never fit (no node of the empty cluster can host them)" +
                       source(info.pods_source));
  meta("Seeds", SeedsText(info.seeds));
  meta("Command",
       "<code>" + HtmlEscape(info.generated_by.empty() ? "-" : info.generated_by) + "</code>");
  html += "</dl>\n";

  // One sentence with the headline numbers at 100 % arrival.
  if (max_x >= 100 && !policies.empty()) {
    const std::string* best = nullptr;
    const std::string* worst = nullptr;
    SummaryCell best_cell, worst_cell;
    for (const std::string& p : policies) {
      const SummaryCell c = Summarize(runs, p, 100, false);
      if (c.runs == 0) continue;
      if (!best || c.mean < best_cell.mean) {
        best = &p;
        best_cell = c;
      }
      if (!worst || c.mean > worst_cell.mean) {
        worst = &p;
        worst_cell = c;
      }
    }
    if (best) {
      html += "<p class=\"highlight\">At 100 % arrival, the lowest unallocated GPU share is <b>" +
              HtmlEscape(*best) + "</b> with " + FormatMeanSd(best_cell) + " %";
      if (worst != best) {
        html += "; the highest is <b>" + HtmlEscape(*worst) + "</b> with " +
                FormatMeanSd(worst_cell) + " %";
      }
      html += " (ideal: 0 %).</p>\n";
    }
  }
  html += "</header>\n";

  html += "<section class=\"card\">\n";
  html += Chart({"unallocated", "Unallocated GPU (%) vs arrived workload (% of capacity)",
                 "Unallocated GPU (% of capacity)", true},
                unallocated, max_x);
  html +=
      "<p class=\"note\">Each line is the mean over seeds at every integer arrival %. "
      "Arrived workload counts the GPU request of every submitted pod, placed or not; each "
      "point is the cluster when exactly that much has arrived (the pod that crosses the level "
      "counted by the share of its request that has), so no point can lie below the ideal. The "
      "dashed line is the ideal: every requested GPU allocated while capacity lasts.</p>\n";
  html += "</section>\n<section class=\"card\">\n";
  html += Chart({"fragmentation", "Fragmentation ratio vs arrived workload",
                 "Fragmentation ratio (% of idle GPU)", false},
                fragmentation, max_x);
  html +=
      "<p class=\"note\">Fragmentation ratio = \u03A3<sub>n</sub> F<sub>n</sub>(M) / "
      "\u03A3<sub>n</sub> idle GPU<sub>n</sub>: the share of idle GPU that the target "
      "workload M cannot use (FGD, USENIX ATC \u201923).</p>\n";
  html += "</section>\n";

  html += SummaryTableHtml(runs, policies, levels);
  html += OfflineSectionHtml(runs, policies, offline);
  html += "</main>\n</body>\n</html>\n";
  return html;
}

}  // namespace tessera
