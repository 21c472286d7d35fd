// report.html of `tessera replay`: inline SVG line charts (one line per policy) and the
// per-class table. No scripts and no external resources.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "report/replay_report.h"
#include "report/report.h"

namespace tessera {
namespace {

constexpr std::string_view kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                         "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};
constexpr double kW = 1000, kH = 300, kL = 70, kT = 24, kR = 790, kB = 256;

std::string F(double v, int d = 1) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", d, v);
  return buf;
}

struct Line {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y)
};

double Step(double range) {
  if (range <= 0) return 1;
  const double raw = range / 6;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * mag >= raw) return m * mag;
  }
  return 10 * mag;
}

// One chart: axes with ticks, a polyline per line (class "series", data-policy), a legend.
std::string Chart(const std::string& title, const std::string& x_label, const std::string& y_label,
                  const std::vector<Line>& lines) {
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo, y_hi = 0;
  for (const Line& l : lines) {
    for (const auto& [x, y] : l.points) {
      x_lo = std::min(x_lo, x);
      x_hi = std::max(x_hi, x);
      y_hi = std::max(y_hi, y);
    }
  }
  if (!(x_lo < x_hi)) {
    x_lo = std::isfinite(x_lo) ? x_lo - 1 : 0;
    x_hi = x_lo + 2;
  }
  const double y_step = Step(y_hi > 0 ? y_hi : 1);
  y_hi = std::max(y_step, std::ceil(y_hi / y_step) * y_step);
  auto X = [&](double x) { return kL + (x - x_lo) / (x_hi - x_lo) * (kR - kL); };
  auto Y = [&](double y) { return kB - y / y_hi * (kB - kT); };
  std::string s = "<h3>" + HtmlEscape(title) + "</h3>\n<svg viewBox=\"0 0 " + F(kW, 0) + " " +
                  F(kH, 0) + "\" role=\"img\" aria-label=\"" + HtmlEscape(title) + "\">\n";
  s += "<rect x=\"" + F(kL) + "\" y=\"" + F(kT) + "\" width=\"" + F(kR - kL) + "\" height=\"" +
       F(kB - kT) + "\" class=\"frame\"/>\n";
  for (double y = 0; y <= y_hi + 1e-9; y += y_step) {
    s += "<line class=\"grid\" x1=\"" + F(kL) + "\" x2=\"" + F(kR) + "\" y1=\"" + F(Y(y)) +
         "\" y2=\"" + F(Y(y)) + "\"/><text x=\"" + F(kL - 6) + "\" y=\"" + F(Y(y) + 4) +
         "\" text-anchor=\"end\">" + F(y, y_step < 1 ? 2 : 0) + "</text>\n";
  }
  const double x_step = Step(x_hi - x_lo);
  for (double x = std::ceil(x_lo / x_step) * x_step; x <= x_hi + 1e-9; x += x_step) {
    s += "<text x=\"" + F(X(x)) + "\" y=\"" + F(kB + 16) + "\" text-anchor=\"middle\">" +
         F(x, x_step < 1 ? 2 : 0) + "</text>\n";
  }
  s += "<text x=\"" + F((kL + kR) / 2) + "\" y=\"" + F(kH - 4) + "\" text-anchor=\"middle\">" +
       HtmlEscape(x_label) + "</text>\n<text x=\"14\" y=\"" + F((kT + kB) / 2) +
       "\" transform=\"rotate(-90 14 " + F((kT + kB) / 2) + ")\" text-anchor=\"middle\">" +
       HtmlEscape(y_label) + "</text>\n";
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string color(kPalette[i % std::size(kPalette)]);
    s += "<polyline class=\"series\" data-policy=\"" + HtmlEscape(lines[i].name) +
         "\" fill=\"none\" stroke=\"" + color + "\" stroke-width=\"2\" points=\"";
    for (const auto& [x, y] : lines[i].points) s += F(X(x)) + "," + F(Y(y)) + " ";
    s += "\"><title>" + HtmlEscape(lines[i].name) + "</title></polyline>\n";
    const double ly = kT + 14 + 20.0 * static_cast<double>(i);
    s += "<line x1=\"810\" x2=\"840\" y1=\"" + F(ly - 4) + "\" y2=\"" + F(ly - 4) + "\" stroke=\"" +
         color + "\" stroke-width=\"3\"/><text x=\"848\" y=\"" + F(ly) + "\">" +
         HtmlEscape(lines[i].name) + "</text>\n";
  }
  return s + "</svg>\n";
}

int ClassIndex(const ReplayResult& r, const std::string& name) {
  for (size_t i = 0; i < r.classes.size(); ++i) {
    if (r.classes[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

std::string ReplayReportHtml(const ReplayReportInfo& info, const std::vector<ReplayResult>& runs,
                             const std::vector<SweepPoint>& sweep,
                             const std::string& protected_class, const std::string& batch_class) {
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
      HtmlEscape(info.title) +
      "</title>\n<style>body{font:14px system-ui,sans-serif;margin:24px;max-width:1100px}"
      "svg{width:100%;height:auto}text{font-size:12px}.frame{fill:none;stroke:#57606a}"
      ".grid{stroke:#d0d7de}table{border-collapse:collapse}td,th{padding:3px 8px;"
      "border-bottom:1px solid #d0d7de;text-align:right}th{background:#f6f8fa}</style></head>"
      "<body>\n<h1>" +
      HtmlEscape(info.title) + "</h1>\n<p>Source: " + HtmlEscape(info.source) + "; " +
      std::to_string(info.num_nodes) + " nodes, " + std::to_string(info.num_gpus) + " GPUs; " +
      std::to_string(info.num_pods) + " pods replayed, " + std::to_string(info.skipped) +
      " skipped (missing or inconsistent times); arrivals compressed " + F(info.time_scale, 2) +
      "&times;.</p>\n<p><code>" + HtmlEscape(info.generated_by) + "</code></p>\n";
  h += "<h2>Per class</h2>\n<table><tr><th>policy</th><th>class</th><th>arrived</th>"
       "<th>wait p50 s</th><th>p95 s</th><th>p99 s</th><th>max s</th><th>SLO %</th>"
       "<th>preempted</th><th>GPU-h served</th><th>GPU-h lost</th><th>mean GPUs</th></tr>\n";
  for (const ReplayResult& r : runs) {
    for (const ClassStats& c : r.classes) {
      if (c.arrived == 0) continue;
      h += "<tr><td>" + HtmlEscape(r.policy) + "</td><td>" + HtmlEscape(c.name) + "</td><td>" +
           std::to_string(c.arrived) + "</td><td>" + F(c.wait_p50_s, 2) + "</td><td>" +
           F(c.wait_p95_s, 2) + "</td><td>" + F(c.wait_p99_s, 2) + "</td><td>" +
           F(c.wait_max_s, 1) + "</td><td>" + (c.slo_wait_s < 0 ? "-" : F(c.slo_pct, 2)) +
           "</td><td>" + std::to_string(c.preempted) + "</td><td>" + F(c.gpu_hours, 1) +
           "</td><td>" + F(c.lost_gpu_hours, 1) + "</td><td>" + F(c.mean_alloc_gpus, 1) +
           "</td></tr>\n";
    }
  }
  h += "</table>\n<h2>Over time</h2>\n";
  std::vector<Line> queue, alloc, frag;
  for (const ReplayResult& r : runs) {
    Line q{r.policy, {}}, a{r.policy, {}}, f{r.policy, {}};
    for (const TimePoint& p : r.series) {
      int pending = 0;
      for (int v : p.pending) pending += v;
      const double hours = p.t_s / 3600.0;
      q.points.emplace_back(hours, pending);
      a.points.emplace_back(hours, r.capacity_milli > 0
                                       ? 100.0 * static_cast<double>(p.allocated_milli) /
                                             static_cast<double>(r.capacity_milli)
                                       : 0);
      f.points.emplace_back(hours, 100.0 * p.frag_ratio);
    }
    queue.push_back(std::move(q));
    alloc.push_back(std::move(a));
    frag.push_back(std::move(f));
  }
  h += Chart("Queue depth (pending pods, all classes)", "virtual hours", "pods", queue);
  h += Chart("GPU allocation", "virtual hours", "% of GPU capacity", alloc);
  h += Chart("Fragmentation ratio", "virtual hours", "% of idle GPU", frag);
  if (!sweep.empty()) {
    h += "<h2>Latency&ndash;utilization trade-off</h2>\n";
    std::vector<Line> p99, hours;
    for (const SweepPoint& p : sweep) {
      auto find = [&](std::vector<Line>& v) -> Line& {
        for (Line& l : v) {
          if (l.name == p.result.policy) return l;
        }
        v.push_back(Line{p.result.policy, {}});
        return v.back();
      };
      const int ls = ClassIndex(p.result, protected_class);
      const int be = ClassIndex(p.result, batch_class);
      if (ls >= 0) find(p99).points.emplace_back(p.num_nodes, p.result.classes[ls].wait_p99_s);
      if (be >= 0) find(hours).points.emplace_back(p.num_nodes, p.result.classes[be].gpu_hours);
    }
    h += Chart(protected_class + " p99 wait against cluster size", "nodes", "seconds", p99);
    h += Chart(batch_class + " GPU-hours served against cluster size", "nodes", "GPU-hours", hours);
  }
  return h + "</body></html>\n";
}

}  // namespace tessera
