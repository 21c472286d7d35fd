// report.html of `tessera replay`: a headline table, inline SVG line charts (one line per
// policy; report/svg_chart.h) and the per-class and sweep tables, in the style of the frag
// report (ReportCss()). No scripts and no external resources.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "report/replay_report.h"
#include "report/report.h"
#include "report/svg_chart.h"
#include "util/format.h"

namespace tessera {
namespace {

std::string F(double v, int d = 1) { return Fixed(v, d); }

int ClassIndex(const ReplayResult& r, const std::string& name) {
  for (size_t i = 0; i < r.classes.size(); ++i) {
    if (r.classes[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

/// The classes (by index into runs' classes) that have a wait SLO and pods in some run, in
/// class order.
std::vector<int> SloClasses(const std::vector<ReplayResult>& runs) {
  std::vector<int> out;
  if (runs.empty()) return out;
  for (size_t c = 0; c < runs.front().classes.size(); ++c) {
    bool arrived = false;
    for (const ReplayResult& r : runs) arrived |= c < r.classes.size() && r.classes[c].arrived > 0;
    if (runs.front().classes[c].slo_wait_s >= 0 && arrived) out.push_back(static_cast<int>(c));
  }
  return out;
}

double AllocatedPct(const ReplayResult& r, const TimePoint& p) {
  return r.capacity_milli > 0 ? 100.0 * static_cast<double>(p.allocated_milli) /
                                    static_cast<double>(r.capacity_milli)
                              : 0;
}

/// A table cell: `value` with a "best" class when it is the column's best.
std::string Td(const std::string& value, bool best) {
  return std::string(best ? "<td class=\"best\">" : "<td>") + value + "</td>";
}

/// Indices of the best value of each column: `better(a, b)` says a beats b.
template <typename Better>
int Best(const std::vector<double>& column, Better better) {
  if (column.size() < 2) return -1;
  int best = 0;
  for (size_t i = 1; i < column.size(); ++i) {
    if (better(column[i], column[best])) best = static_cast<int>(i);
  }
  // No bold when every row ties.
  for (double v : column) {
    if (better(column[best], v)) return best;
  }
  return -1;
}

std::string PolicyCell(const std::string& policy, std::string_view color) {
  return "<th class=\"policy\" scope=\"row\"><span class=\"swatch\" style=\"background:" +
         std::string(color) + "\"></span>" + HtmlEscape(policy) + "</th>";
}

/// A wait in seconds: two decimals below 100 s, one above ("20933.7 s").
std::string Wait(double s) { return F(s, s < 100 ? 2 : 1) + " s"; }

/// Two header rows: `before`, then per class with an SLO a group "<class>, SLO <s> s" over
/// "within" and "p99", then `after` (cells of `before` and `after` span both rows).
std::string SloHeader(const std::vector<ReplayResult>& runs, const std::vector<int>& slo,
                      const std::string& before, const std::string& after) {
  std::string top = "<tr>" + before, sub = "<tr>";
  for (int c : slo) {
    const ClassStats& k = runs.front().classes[c];
    top += "<th class=\"group\" colspan=\"2\">" + HtmlEscape(k.name) + " (SLO " +
           CompactNumber(k.slo_wait_s) + " s)</th>";
    sub += "<th>within SLO</th><th>p99 wait</th>";
  }
  return top + after + "</tr>\n" + sub + "</tr>\n";
}

constexpr std::string_view kExtraStyle = R"css(
.charts2 { display: grid; grid-template-columns: 1fr 1fr; gap: 6px 24px; }
svg .marker { stroke: #fff; stroke-width: 1.5; }
svg polyline.idle { opacity: .75; }
figure.chart { margin-top: 14px; }
table.summary thead tr:first-child th.group { border-bottom: 1px solid #d0d7de; padding-bottom: 2px; }
table.summary thead th[rowspan] { vertical-align: bottom; white-space: normal; }
)css";

}  // namespace

double WorkloadStart(const Timeline& timeline, double horizon_s) {
  if (timeline.pods.empty()) return 0;
  // Nearest rank: the ceil(0.01 · n)-th arrival (pods are sorted by arrival).
  const size_t n = timeline.pods.size();
  const size_t rank = std::max<size_t>(1, (n + 99) / 100);
  const double t = timeline.pods[rank - 1].arrival_s;
  return t <= 0.05 * horizon_s ? 0 : t;
}

std::string ReplayReportHtml(const ReplayReportInfo& info, const std::vector<ReplayResult>& runs,
                             const std::vector<SweepPoint>& sweep,
                             const std::string& protected_class, const std::string& batch_class) {
  // One colour per policy, in the order of the runs (then of the sweep).
  std::vector<std::string> policies;
  for (const ReplayResult& r : runs) policies.push_back(r.policy);
  for (const SweepPoint& p : sweep) {
    if (std::find(policies.begin(), policies.end(), p.result.policy) == policies.end()) {
      policies.push_back(p.result.policy);
    }
  }
  auto color = [&](const std::string& policy) {
    const auto it = std::find(policies.begin(), policies.end(), policy);
    return PolicyColor(static_cast<size_t>(it - policies.begin()));
  };
  const std::vector<int> slo = SloClasses(runs);
  const std::string title = info.title.empty() ? "Replay" : info.title;

  std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  h += "<title>" + HtmlEscape(title) + " \u2014 Tessera replay report</title>\n";
  h += "<style>" + std::string(ReportCss()) + std::string(kExtraStyle) +
       "</style>\n</head>\n<body>\n<main>\n";

  // Header: what was run.
  h += "<header class=\"card\">\n<p class=\"eyebrow\">Tessera \u00B7 replay on a virtual clock "
       "(queue, priorities, preemption, SLOs)</p>\n<h1>" +
       HtmlEscape(title) + "</h1>\n<dl class=\"meta\">\n";
  auto meta = [&h](std::string_view name, const std::string& value_html) {
    h += "<dt>" + std::string(name) + "</dt><dd>" + value_html + "</dd>\n";
  };
  meta("Cluster",
       std::to_string(info.num_nodes) + " nodes \u00B7 " + std::to_string(info.num_gpus) + " GPUs");
  meta("Workload", std::to_string(info.num_pods) + " pods replayed, " +
                       std::to_string(info.skipped) +
                       " skipped (missing or inconsistent times; skipped.csv) \u2014 <code>" +
                       HtmlEscape(info.source) + "</code>");
  meta("Time", "arrivals compressed " + CompactNumber(info.time_scale) + "\u00D7; horizon " +
                   (runs.empty() ? std::string("-") : F(runs.front().horizon_s / 3600, 2)) +
                   " virtual hours");
  meta("Command",
       "<code>" + HtmlEscape(info.generated_by.empty() ? "-" : info.generated_by) + "</code>");
  h += "</dl>\n</header>\n";

  // Headline: every class with an SLO, then what the policy costs or serves.
  h += "<section class=\"card\" id=\"headline\">\n<h2>Headline</h2>\n<div class=\"table-wrap\">"
       "<table class=\"summary headline\">\n<thead>" +
       SloHeader(runs, slo, "<th class=\"policy\" rowspan=\"2\">Policy</th>",
                 "<th rowspan=\"2\">preemptions</th><th rowspan=\"2\">" + HtmlEscape(batch_class) +
                     " GPU-h served</th><th rowspan=\"2\">mean GPU allocation</th>") +
       "</thead>\n<tbody>\n";
  std::vector<std::vector<double>> columns;
  std::vector<bool> higher_is_better;
  for (int c : slo) {
    std::vector<double> within, p99;
    for (const ReplayResult& r : runs) {
      within.push_back(r.classes[c].slo_pct);
      p99.push_back(r.classes[c].wait_p99_s);
    }
    columns.push_back(within);
    higher_is_better.push_back(true);
    columns.push_back(p99);
    higher_is_better.push_back(false);
  }
  {
    std::vector<double> preempt, hours, alloc;
    for (const ReplayResult& r : runs) {
      preempt.push_back(r.preemptions);
      const int b = ClassIndex(r, batch_class);
      hours.push_back(b >= 0 ? r.classes[b].gpu_hours : 0);
      alloc.push_back(r.mean_alloc_pct);
    }
    columns.push_back(preempt);
    higher_is_better.push_back(false);
    columns.push_back(hours);
    higher_is_better.push_back(true);
    columns.push_back(alloc);
    higher_is_better.push_back(true);
  }
  std::vector<int> best(columns.size());
  for (size_t k = 0; k < columns.size(); ++k) {
    best[k] = higher_is_better[k] ? Best(columns[k], [](double a, double b) { return a > b; })
                                  : Best(columns[k], [](double a, double b) { return a < b; });
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    const ReplayResult& r = runs[i];
    h +=
        "<tr data-policy=\"" + HtmlEscape(r.policy) + "\">" + PolicyCell(r.policy, color(r.policy));
    size_t k = 0;
    for (int c : slo) {
      h += Td(F(r.classes[c].slo_pct, 2) + " %", best[k++] == static_cast<int>(i));
      h += Td(Wait(r.classes[c].wait_p99_s), best[k++] == static_cast<int>(i));
    }
    const int b = ClassIndex(r, batch_class);
    h += Td(std::to_string(r.preemptions), best[k++] == static_cast<int>(i));
    h += Td(b >= 0 ? F(r.classes[b].gpu_hours, 1) : "-", best[k++] == static_cast<int>(i));
    h += Td(F(r.mean_alloc_pct, 1) + " %", best[k++] == static_cast<int>(i));
    h += "</tr>\n";
  }
  h += "</tbody></table></div>\n<p class=\"note\">Within SLO: share of the class's arrived, not "
       "rejected pods whose wait from arrival to first start is at most the SLO; p99: "
       "nearest-rank percentile of those waits (pods still pending at the horizon count with "
       "their wait so far). Preemptions: victims, all classes. GPU-h served: runs not cut short "
       "by preemption, within the horizon. Bold: the best of each column.</p>\n</section>\n";

  // Per class.
  h += "<section class=\"card\" id=\"classes\">\n<h2>Per class</h2>\n<div class=\"table-wrap\">"
       "<table class=\"summary\">\n<thead><tr><th class=\"policy\">Policy</th><th>class</th>"
       "<th>arrived</th><th>wait p50 s</th><th>p95 s</th><th>p99 s</th><th>max s</th>"
       "<th>SLO %</th><th>preempted</th><th>GPU-h served</th><th>GPU-h lost</th>"
       "<th>mean GPUs</th></tr></thead>\n<tbody>\n";
  for (const ReplayResult& r : runs) {
    for (const ClassStats& c : r.classes) {
      if (c.arrived == 0) continue;
      h += "<tr>" + PolicyCell(r.policy, color(r.policy)) + "<td>" + HtmlEscape(c.name) +
           "</td><td>" + std::to_string(c.arrived) + "</td><td>" + F(c.wait_p50_s, 2) +
           "</td><td>" + F(c.wait_p95_s, 2) + "</td><td>" + F(c.wait_p99_s, 2) + "</td><td>" +
           F(c.wait_max_s, 1) + "</td><td>" + (c.slo_wait_s < 0 ? "-" : F(c.slo_pct, 2)) +
           "</td><td>" + std::to_string(c.preempted) + "</td><td>" + F(c.gpu_hours, 1) +
           "</td><td>" + F(c.lost_gpu_hours, 1) + "</td><td>" + F(c.mean_alloc_gpus, 1) +
           "</td></tr>\n";
    }
  }
  h += "</tbody></table></div>\n</section>\n";

  // Over time, from where the workload starts.
  const double start_h = info.start_s / 3600;
  const double end_h = runs.empty() ? start_h + 1 : runs.front().horizon_s / 3600;
  std::string legend = "<div class=\"legend-row\">";
  for (const ReplayResult& r : runs) {
    legend += "<span><span class=\"swatch\" style=\"background:" + std::string(color(r.policy)) +
              "\"></span>" + HtmlEscape(r.policy) + "</span>";
  }
  legend += "</div>\n";
  const std::string time_label = "virtual hours since the first arrival";
  h += "<section class=\"card\" id=\"over-time\">\n<h2>Over time</h2>\n";
  if (info.start_s > 0) {
    h += "<p class=\"note\">The time axes start at " + F(start_h, 2) +
         " h, where the workload does: the " + std::to_string(info.pods_before_start) +
         " pods that arrived before (the first 1 %) trickled in over the hours before. "
         "series.csv has the whole run.</p>\n";
  }
  h += "<h3>Queue depth per class: pods waiting for a start (in the queue, or preempting and "
       "waiting out their victims' grace period)</h3>\n" +
       legend + "<div class=\"charts2\">\n";
  if (!runs.empty()) {
    for (size_t c = 0; c < runs.front().classes.size(); ++c) {
      bool arrived = false;
      for (const ReplayResult& r : runs) arrived |= r.classes[c].arrived > 0;
      if (!arrived) continue;
      std::vector<ChartSeries> lines;
      for (const ReplayResult& r : runs) {
        ChartSeries s{r.policy, color(r.policy)};
        for (const TimePoint& p : r.series) {
          const int queued = c < p.pending.size() ? p.pending[c] : 0;
          const int preempting = c < p.preempting.size() ? p.preempting[c] : 0;
          s.points.push_back({p.t_s / 3600, double(queued + preempting), ""});
        }
        lines.push_back(std::move(s));
      }
      const std::string name = runs.front().classes[c].name;
      ChartSpec spec("queue-" + std::to_string(c), "Queue depth: " + name, time_label,
                     "waiting " + name + " pods", true, start_h, end_h);
      spec.integer_y = true;
      h += SvgChart(spec, lines);
    }
  }
  h += "</div>\n";

  // Headroom: only the policies that keep one.
  std::vector<ChartSeries> headroom;
  for (const ReplayResult& r : runs) {
    bool keeps = false;
    for (const TimePoint& p : r.series) keeps |= p.headroom_gpus > 0;
    if (!keeps) continue;
    ChartSeries kept{r.policy, color(r.policy)};
    ChartSeries idle{r.policy, color(r.policy)};
    idle.css = "series idle";
    idle.dashed = true;
    for (const TimePoint& p : r.series) {
      kept.points.push_back({p.t_s / 3600, double(p.headroom_gpus), ""});
      idle.points.push_back({p.t_s / 3600, double(p.idle_gpus), ""});
    }
    headroom.push_back(std::move(kept));
    headroom.push_back(std::move(idle));
  }
  if (headroom.empty()) {
    h += "<p class=\"note\">No policy kept GPU headroom.</p>\n";
  } else {
    h += SvgChart(
        {"headroom", "Headroom kept for " + protected_class + " (solid) and idle GPUs (dashed)",
         time_label, "GPUs", false, start_h, end_h},
        headroom);
    h += "<p class=\"note\">Headroom: the whole idle GPUs that pods below " +
         HtmlEscape(protected_class) +
         " may not take. Where the solid line is above the dashed one, no such pod can start "
         "a GPU it would take from the idle ones.</p>\n";
  }
  std::vector<ChartSeries> alloc, frag;
  for (const ReplayResult& r : runs) {
    ChartSeries a{r.policy, color(r.policy)}, f{r.policy, color(r.policy)};
    for (const TimePoint& p : r.series) {
      a.points.push_back({p.t_s / 3600, AllocatedPct(r, p), ""});
      f.points.push_back({p.t_s / 3600, 100.0 * p.frag_ratio, ""});
    }
    alloc.push_back(std::move(a));
    frag.push_back(std::move(f));
  }
  h += SvgChart(
      {"allocation", "GPU allocation", time_label, "% of GPU capacity", false, start_h, end_h},
      alloc);
  h += SvgChart(
      {"fragmentation", "Fragmentation ratio", time_label, "% of idle GPU", false, start_h, end_h},
      frag);
  h += "</section>\n";

  // The latency-utilization frontier: the main runs and the swept sizes.
  h += "<section class=\"card\" id=\"frontier-section\">\n<h2>Latency\u2013utilization "
       "frontier</h2>\n";
  {
    struct Measured {
      int nodes;
      double alloc_pct;
      double p99;
    };
    std::map<std::string, std::vector<Measured>> by_policy;
    for (const ReplayResult& r : runs) {
      const int c = ClassIndex(r, protected_class);
      if (c >= 0)
        by_policy[r.policy].push_back({info.num_nodes, r.mean_alloc_pct, r.classes[c].wait_p99_s});
    }
    for (const SweepPoint& p : sweep) {
      const int c = ClassIndex(p.result, protected_class);
      if (c < 0) continue;
      std::vector<Measured>& v = by_policy[p.result.policy];
      const bool dup = std::any_of(v.begin(), v.end(),
                                   [&](const Measured& m) { return m.nodes == p.num_nodes; });
      if (!dup) v.push_back({p.num_nodes, p.result.mean_alloc_pct, p.result.classes[c].wait_p99_s});
    }
    std::vector<ChartSeries> lines;
    for (const std::string& policy : policies) {
      auto it = by_policy.find(policy);
      if (it == by_policy.end()) continue;
      std::vector<Measured> v = it->second;
      std::sort(v.begin(), v.end(),
                [](const Measured& a, const Measured& b) { return a.nodes < b.nodes; });
      ChartSeries s{policy, color(policy)};
      s.markers = true;
      for (const Measured& m : v) {
        s.points.push_back({m.alloc_pct, m.p99,
                            policy + ", " + std::to_string(m.nodes) +
                                " nodes: " + F(m.alloc_pct, 1) + " % allocated, " +
                                protected_class + " p99 " + F(m.p99, 2) + " s"});
      }
      lines.push_back(std::move(s));
    }
    h += SvgChart(
        {"frontier", protected_class + " p99 wait against GPU allocation",
         "mean GPU allocation over the run (% of capacity)", protected_class + " p99 wait (s)"},
        lines);
    h += "<p class=\"note\">One marker per measured run (hover for its cluster size); each "
         "policy's line joins its runs in the order of cluster size" +
         std::string(sweep.empty() ? " (run with --sweep-nodes to measure more sizes)" : "") +
         ". Down and to the right is better: the same latency at a higher allocation.</p>\n";
  }
  h += "</section>\n";

  if (!sweep.empty()) {
    h +=
        "<section class=\"card\" id=\"sweep\">\n<h2>Cluster-size sweep</h2>\n<div "
        "class=\"table-wrap\"><table class=\"summary\">\n<thead>" +
        SloHeader(runs, slo,
                  "<th class=\"policy\" rowspan=\"2\">Policy</th><th rowspan=\"2\">nodes</th>"
                  "<th rowspan=\"2\">GPUs</th>",
                  "<th rowspan=\"2\">preemptions</th><th rowspan=\"2\">" + HtmlEscape(batch_class) +
                      " GPU-h served</th><th rowspan=\"2\">mean GPU allocation</th>") +
        "</thead>\n<tbody>\n";
    std::vector<const SweepPoint*> order;
    for (const SweepPoint& p : sweep) order.push_back(&p);
    std::stable_sort(order.begin(), order.end(), [&](const SweepPoint* a, const SweepPoint* b) {
      const auto ia = std::find(policies.begin(), policies.end(), a->result.policy);
      const auto ib = std::find(policies.begin(), policies.end(), b->result.policy);
      return ia != ib ? ia < ib : a->num_nodes < b->num_nodes;
    });
    for (const SweepPoint* p : order) {
      const ReplayResult& r = p->result;
      h += "<tr data-policy=\"" + HtmlEscape(r.policy) + "\">" +
           PolicyCell(r.policy, color(r.policy)) + "<td>" + std::to_string(p->num_nodes) +
           "</td><td>" + std::to_string(p->num_gpus) + "</td>";
      for (int c : slo) {
        if (static_cast<size_t>(c) < r.classes.size()) {
          h += "<td>" + F(r.classes[c].slo_pct, 2) + " %</td><td>" + Wait(r.classes[c].wait_p99_s) +
               "</td>";
        } else {
          h += "<td>-</td><td>-</td>";
        }
      }
      const int b = ClassIndex(r, batch_class);
      h += "<td>" + std::to_string(r.preemptions) + "</td><td>" +
           (b >= 0 ? F(r.classes[b].gpu_hours, 1) : "-") + "</td><td>" + F(r.mean_alloc_pct, 1) +
           " %</td></tr>\n";
    }
    h += "</tbody></table></div>\n";
    std::vector<ChartSeries> p99, hours;
    auto find = [&](std::vector<ChartSeries>& v, const std::string& policy) -> ChartSeries& {
      for (ChartSeries& s : v) {
        if (s.policy == policy) return s;
      }
      v.push_back(ChartSeries{policy, color(policy)});
      v.back().markers = true;
      return v.back();
    };
    for (const SweepPoint* p : order) {
      const int ls = ClassIndex(p->result, protected_class);
      const int be = ClassIndex(p->result, batch_class);
      const std::string where = p->result.policy + ", " + std::to_string(p->num_nodes) + " nodes";
      if (ls >= 0) {
        const double v = p->result.classes[ls].wait_p99_s;
        find(p99, p->result.policy)
            .points.push_back({double(p->num_nodes), v, where + ": " + F(v, 2) + " s"});
      }
      if (be >= 0) {
        const double v = p->result.classes[be].gpu_hours;
        find(hours, p->result.policy)
            .points.push_back({double(p->num_nodes), v, where + ": " + F(v, 1) + " GPU-h"});
      }
    }
    h += SvgChart(
        {"sweep-p99", protected_class + " p99 wait against cluster size", "nodes", "seconds"}, p99);
    h += SvgChart({"sweep-gpu-hours", batch_class + " GPU-hours served against cluster size",
                   "nodes", "GPU-hours"},
                  hours);
    h += "</section>\n";
  }
  return h + "</main>\n</body>\n</html>\n";
}

}  // namespace tessera
