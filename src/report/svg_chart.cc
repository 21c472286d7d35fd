#include "report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "report/report.h"
#include "util/format.h"

namespace tessera {
namespace {

std::string Fx(double v, int d = 1) { return Fixed(v, d); }

}  // namespace

// A tick step of 1, 2 or 5 · 10^k giving at most `max_ticks` intervals over `range`.
double NiceStep(double range, int max_ticks) {
  if (range <= 0) return 1;
  const double raw = range / max_ticks;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * magnitude >= raw) return m * magnitude;
  }
  return 10 * magnitude;
}

std::string CompactNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", std::fabs(v) < 1e-12 ? 0.0 : v);
  return buf;
}

std::string SvgChart(const ChartSpec& spec, const std::vector<ChartSeries>& series) {
  const double width = spec.half ? 560 : 1000;
  const double height = spec.half ? 300 : 330;
  const double left = 64, top = 18, bottom = height - 50;
  const double right = spec.half ? width - 16 : 790;
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo, y_hi = 0;
  for (const ChartSeries& s : series) {
    for (const ChartPoint& p : s.points) {
      x_lo = std::min(x_lo, p.x);
      x_hi = std::max(x_hi, p.x);
      y_hi = std::max(y_hi, p.y);
    }
  }
  for (const ChartMark& m : spec.marks) y_hi = std::max(y_hi, m.y);
  if (spec.x_lo) x_lo = *spec.x_lo;
  if (spec.x_hi) x_hi = *spec.x_hi;
  if (!std::isfinite(x_lo)) x_lo = 0;
  if (!(x_lo < x_hi)) {
    x_lo -= 1;
    x_hi = x_lo + 2;
  }
  // The y axis: `scale` maps a value to axis units (linear: the value; log: 0..1 linear up
  // to log_y_from, then one unit per decade), `ticks` are values.
  std::vector<double> ticks;
  const double from = spec.log_y_from > 0 ? spec.log_y_from : 1;
  auto scale = [&](double y) {
    if (!spec.log_y) return y;
    y = std::max(0.0, y);
    return y < from ? y / from : 1 + std::log10(y / from);
  };
  double axis_hi = 0;  // in axis units
  if (spec.log_y) {
    const double decades = std::max(1.0, std::ceil(scale(y_hi) - 1e-9));
    axis_hi = decades;
    ticks.push_back(0);
    for (int k = 0; k < decades; ++k) ticks.push_back(from * std::pow(10.0, k));
  } else {
    if (spec.integer_y) y_hi = std::max(y_hi, 1.0);
    double y_step = NiceStep(y_hi > 0 ? y_hi : 1, 5);
    if (spec.integer_y) y_step = std::max(1.0, y_step);
    y_hi = std::max(y_step, std::ceil(y_hi / y_step - 1e-9) * y_step);
    axis_hi = y_hi;
    for (double y = 0; y <= y_hi + 1e-9; y += y_step) ticks.push_back(y);
  }
  auto X = [&](double x) { return left + (x - x_lo) / (x_hi - x_lo) * (right - left); };
  auto Y = [&](double y) { return bottom - scale(y) / axis_hi * (bottom - top); };
  auto tick_label = [&](double y) { return spec.y_tick ? spec.y_tick(y) : CompactNumber(y); };

  std::string s = "<figure class=\"chart\" id=\"" + spec.id + "\"><figcaption>" +
                  HtmlEscape(spec.title) + "</figcaption>";
  s += "<svg viewBox=\"0 0 " + Fx(width, 0) + " " + Fx(height, 0) +
       "\" role=\"img\" aria-label=\"" + HtmlEscape(spec.title) + "\"><title>" +
       HtmlEscape(spec.title) + "</title>";
  s += "<g class=\"grid\">";
  for (double y : ticks) {
    s += "<line x1=\"" + Fx(left) + "\" y1=\"" + Fx(Y(y)) + "\" x2=\"" + Fx(right) + "\" y2=\"" +
         Fx(Y(y)) + "\"/>";
  }
  const double x_step = NiceStep(x_hi - x_lo, spec.half ? 6 : 10);
  const double x_first = std::ceil(x_lo / x_step - 1e-9) * x_step;
  for (double x = x_first; x <= x_hi + 1e-9; x += x_step) {
    s += "<line x1=\"" + Fx(X(x)) + "\" y1=\"" + Fx(top) + "\" x2=\"" + Fx(X(x)) + "\" y2=\"" +
         Fx(bottom) + "\"/>";
  }
  s += "</g><g class=\"axis\">";
  s += "<line x1=\"" + Fx(left) + "\" y1=\"" + Fx(bottom) + "\" x2=\"" + Fx(right) + "\" y2=\"" +
       Fx(bottom) + "\"/><line x1=\"" + Fx(left) + "\" y1=\"" + Fx(top) + "\" x2=\"" + Fx(left) +
       "\" y2=\"" + Fx(bottom) + "\"/>";
  for (double x = x_first; x <= x_hi + 1e-9; x += x_step) {
    s += "<line x1=\"" + Fx(X(x)) + "\" y1=\"" + Fx(bottom) + "\" x2=\"" + Fx(X(x)) + "\" y2=\"" +
         Fx(bottom + 5) + "\"/><text x=\"" + Fx(X(x)) + "\" y=\"" + Fx(bottom + 19) +
         "\" text-anchor=\"middle\" font-size=\"12\">" + CompactNumber(x) + "</text>";
  }
  for (double y : ticks) {
    s += "<line x1=\"" + Fx(left - 5) + "\" y1=\"" + Fx(Y(y)) + "\" x2=\"" + Fx(left) + "\" y2=\"" +
         Fx(Y(y)) + "\"/><text x=\"" + Fx(left - 8) + "\" y=\"" + Fx(Y(y) + 4) +
         "\" text-anchor=\"end\" font-size=\"12\">" + HtmlEscape(tick_label(y)) + "</text>";
  }
  s += "</g>";
  s += "<text class=\"axis-label\" x=\"" + Fx((left + right) / 2) + "\" y=\"" + Fx(height - 10) +
       "\" text-anchor=\"middle\" font-size=\"13\">" + HtmlEscape(spec.x_label) + "</text>";
  s += "<text class=\"axis-label\" transform=\"translate(16 " + Fx((top + bottom) / 2) +
       ") rotate(-90)\" text-anchor=\"middle\" font-size=\"13\">" + HtmlEscape(spec.y_label) +
       "</text>";
  for (const ChartMark& m : spec.marks) {
    // The label above the line, or below it when the line is at the top of the plot.
    const double label_y = Y(m.y) - top < 16 ? Y(m.y) + 15 : Y(m.y) - 5;
    s += "<line class=\"mark\" x1=\"" + Fx(left) + "\" y1=\"" + Fx(Y(m.y)) + "\" x2=\"" +
         Fx(right) + "\" y2=\"" + Fx(Y(m.y)) +
         "\" stroke=\"#cf222e\" stroke-width=\"1.5\" stroke-dasharray=\"5 4\"/><text "
         "class=\"mark-label\" x=\"" +
         Fx(right - 4) + "\" y=\"" + Fx(label_y) +
         "\" text-anchor=\"end\" font-size=\"12\" fill=\"#cf222e\">" + HtmlEscape(m.label) +
         "</text>";
  }
  for (const ChartSeries& line : series) {
    std::string points;
    for (const ChartPoint& p : line.points) {
      if (p.x < x_lo - 1e-9 || p.x > x_hi + 1e-9) continue;
      points += (points.empty() ? "" : " ") + Fx(X(p.x)) + "," + Fx(Y(p.y));
    }
    s += "<polyline class=\"" + line.css + "\" data-policy=\"" + HtmlEscape(line.policy) +
         "\" fill=\"none\" stroke=\"" + std::string(line.color) + "\" stroke-width=\"2\"" +
         (line.dashed ? " stroke-dasharray=\"6 4\"" : "") + " stroke-linejoin=\"round\" points=\"" +
         points + "\"><title>" + HtmlEscape(line.policy) + "</title></polyline>";
    if (!line.markers) continue;
    for (const ChartPoint& p : line.points) {
      s += "<circle class=\"marker\" data-policy=\"" + HtmlEscape(line.policy) + "\" cx=\"" +
           Fx(X(p.x)) + "\" cy=\"" + Fx(Y(p.y)) + "\" r=\"4.5\" fill=\"" + std::string(line.color) +
           "\"><title>" + HtmlEscape(p.title) + "</title></circle>";
    }
  }
  if (!spec.half) {  // the legend, right of the plot: one entry per policy
    s += "<g class=\"legend\"><text x=\"812\" y=\"" + Fx(top + 10) +
         "\" font-size=\"12\" font-weight=\"600\">Policy</text>";
    double y = top + 34;
    std::vector<std::string> seen;
    for (const ChartSeries& line : series) {
      if (std::find(seen.begin(), seen.end(), line.policy) != seen.end()) continue;
      seen.push_back(line.policy);
      s += "<g><line x1=\"812\" y1=\"" + Fx(y - 4) + "\" x2=\"840\" y2=\"" + Fx(y - 4) +
           "\" stroke=\"" + std::string(line.color) +
           "\" stroke-width=\"3\"/><text x=\"848\" y=\"" + Fx(y) + "\" font-size=\"13\">" +
           HtmlEscape(line.policy) + "</text></g>";
      y += 22;
    }
    s += "</g>";
  }
  return s + "</svg></figure>\n";
}

}  // namespace tessera
