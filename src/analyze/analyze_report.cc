#include "analyze/analyze_report.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/report.h"
#include "util/format.h"

namespace tessera::analyze {
namespace {

using OrderedJson = nlohmann::ordered_json;

OrderedJson PartsJson(const FragParts& f) {
  return OrderedJson{{"total_milli", f.total},
                     {"gpu_milli", f.gpu},
                     {"cpu_milli", f.cpu},
                     {"model_milli", f.model},
                     {"cpu_only_milli", f.cpu_only}};
}

std::string GpuText(int count, int32_t milli) {
  if (milli >= 1000 || count == 0) return std::to_string(count);
  return std::to_string(count) + "x" + std::to_string(milli) + "m";
}

std::string Join(const std::vector<int>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

}  // namespace

std::string AnalysisJson(const Analysis& a, const ReportInfo& info) {
  OrderedJson j;
  j["source"] = info.source;
  j["generated_by"] = info.generated_by;
  j["cluster"] = {{"nodes", a.nodes},
                  {"gpus", a.gpus},
                  {"allocated_milli", a.allocated_milli},
                  {"idle_gpus", a.idle_gpus},
                  {"pods_bound", a.pods_bound},
                  {"pods_pending_gpu", a.pods_pending_gpu},
                  {"gpu_pods_movable", a.pods_movable},
                  {"gpu_pods_unmovable", a.unmovable},
                  {"fragmentation", PartsJson(a.frag)},
                  {"fragmentation_ratio", a.frag_ratio}};
  OrderedJson pools = OrderedJson::array();
  for (const PoolReport& p : a.pools) {
    pools.push_back({{"model", p.model},
                     {"nodes", p.nodes},
                     {"gpus", p.gpus},
                     {"allocated_milli", p.allocated_milli},
                     {"idle_gpus", p.idle_gpus},
                     {"free_milli", p.free_milli},
                     {"partial_free_milli", p.partial_free_milli},
                     {"stranded_milli", p.stranded_milli},
                     {"fragmentation", PartsJson(p.frag)},
                     {"idle_nodes", p.idle_nodes},
                     {"bound",
                      {{"idle_gpus_max", p.idle_gpus_max},
                       {"gpus_freed_max", p.gpus_freed_max},
                       {"idle_nodes_max", p.idle_nodes_max},
                       {"nodes_freed_max", p.nodes_freed_max},
                       {"nodes_from_lp", p.nodes_lp},
                       {"lp_max_placed_milli", p.lp_max_placed_milli},
                       {"lp_requested_milli", p.lp_requested_milli}}}});
  }
  j["pools"] = std::move(pools);
  if (a.has_bound) {
    j["offline_bound"] = {{"capacity_milli", a.bound.capacity_milli},
                          {"requested_milli", a.bound.arrived_milli},
                          {"pods", a.bound.pods},
                          {"max_placed_milli", a.bound.max_placed_milli},
                          {"unallocated_pct_min", a.bound.unallocated_pct},
                          {"converged", a.bound.converged}};
  }
  OrderedJson pending = OrderedJson::array();
  for (const PendingReport& p : a.pending) {
    OrderedJson closest = OrderedJson::array();
    for (const NodeMiss& n : p.closest) {
      closest.push_back({{"node", n.node},
                         {"reason", n.reason},
                         {"gpus_missing", n.gpus_missing},
                         {"cpu_missing_milli", n.cpu_missing_milli},
                         {"memory_missing_mib", n.memory_missing_mib}});
    }
    pending.push_back({{"pod", p.pod},
                       {"gpu_count", p.gpu_count},
                       {"gpu_milli", p.gpu_milli},
                       {"priority", p.priority},
                       {"class", p.cls},
                       {"fits_now", p.fits_now},
                       {"reasons", p.reasons},
                       {"closest", std::move(closest)},
                       {"repack", p.repack},
                       {"placed_on", p.placed_on}});
  }
  j["pending"] = std::move(pending);
  OrderedJson moves = OrderedJson::array();
  for (const Move& m : a.plan.moves) {
    moves.push_back({{"step", m.step},
                     {"action", m.action},
                     {"why", m.why},
                     {"pod", m.pod},
                     {"workload", m.workload},
                     {"from", m.from},
                     {"to", m.to},
                     {"gpus_from", m.gpus_from},
                     {"gpus_to", m.gpus_to},
                     {"gpu_count", m.gpu_count},
                     {"gpu_milli", m.gpu_milli},
                     {"gpus_freed", m.gpus_freed},
                     {"frag_removed_milli", m.frag_removed_milli},
                     {"cost", m.cost},
                     {"priority", m.priority},
                     {"class", m.cls},
                     {"restarts", m.restarts}});
  }
  OrderedJson placements = OrderedJson::array();
  for (const Placement& p : a.plan.placements) {
    placements.push_back(
        {{"pod", p.pod}, {"node", p.node}, {"gpus", p.gpus}, {"after_step", p.after_step}});
  }
  j["plan"] = {{"dry_run", true},
               {"moves", std::move(moves)},
               {"placements", std::move(placements)},
               {"gpus_freed", a.plan.gpus_freed},
               {"frag_removed_milli", a.plan.frag_removed_milli},
               {"cost", a.plan.cost},
               {"limited_by", a.plan.limits}};
  j["warnings"] = a.warnings;
  return j.dump(2) + "\n";
}

std::string AnalysisTable(const Analysis& a) {
  std::string out;
  out += "Cluster: " + std::to_string(a.nodes) + " nodes, " + std::to_string(a.gpus) + " GPUs, " +
         Fixed(static_cast<double>(a.allocated_milli) / 1000, 1) + " GPUs allocated, " +
         std::to_string(a.idle_gpus) + " idle; fragmentation " + Fixed(a.frag.total / 1000, 2) +
         " GPUs (" + Fixed(100 * a.frag_ratio, 1) + " % of free)\n";
  if (a.has_bound) {
    out += "Offline bound (every bound and pending pod, empty cluster): at most " +
           Fixed(a.bound.max_placed_milli / 1000, 2) + " of " +
           Fixed(static_cast<double>(a.bound.arrived_milli) / 1000, 2) +
           " requested GPUs placeable; unallocated >= " + Fixed(a.bound.unallocated_pct, 2) +
           " %\n";
  }
  out += "\nGPU pools (GPUs; fragmentation split by cause)\n";
  std::vector<std::vector<std::string>> rows = {{"pool", "nodes", "gpus", "idle", "free", "partial",
                                                 "stranded", "frag", "gpu", "cpu", "model",
                                                 "cpu-only", "freeable", "nodes-freeable"}};
  for (const PoolReport& p : a.pools) {
    rows.push_back({p.model, std::to_string(p.nodes), std::to_string(p.gpus),
                    std::to_string(p.idle_gpus), Fixed(p.free_milli / 1000.0, 2),
                    Fixed(p.partial_free_milli / 1000.0, 2), Fixed(p.stranded_milli / 1000.0, 2),
                    Fixed(p.frag.total / 1000, 2), Fixed(p.frag.gpu / 1000, 2),
                    Fixed(p.frag.cpu / 1000, 2), Fixed(p.frag.model / 1000, 2),
                    Fixed(p.frag.cpu_only / 1000, 2), std::to_string(p.gpus_freed_max),
                    std::to_string(p.nodes_freed_max)});
  }
  out += AlignedTable(rows);
  out += "\nPending GPU pods: " + std::to_string(a.pending.size()) + "\n";
  if (!a.pending.empty()) {
    rows = {{"pod", "gpus", "prio", "repack", "closest node: missing", "top reason"}};
    constexpr size_t kMaxRows = 25;  // the rest is in analyze.json
    for (const PendingReport& p : a.pending) {
      if (rows.size() > kMaxRows) break;
      std::string closest = p.fits_now.empty() ? "" : p.fits_now + ": nothing";
      if (closest.empty() && !p.closest.empty()) {
        const NodeMiss& n = p.closest.front();
        closest = n.node + ": " + std::to_string(n.gpus_missing) + " GPU";
        if (n.cpu_missing_milli > 0)
          closest += ", " + std::to_string(n.cpu_missing_milli) + "m CPU";
        if (n.memory_missing_mib > 0) closest += ", " + std::to_string(n.memory_missing_mib) + "Mi";
      }
      std::string top;
      int most = 0;
      for (const auto& [why, n] : p.reasons) {
        if (n > most) {
          most = n;
          top = why + " (" + std::to_string(n) + " nodes)";
        }
      }
      if (top.size() > 70) top = top.substr(0, 67) + "...";
      rows.push_back({p.pod, GpuText(p.gpu_count, p.gpu_milli), std::to_string(p.priority),
                      p.repack + (p.placed_on.empty() ? "" : " -> " + p.placed_on), closest, top});
    }
    out += AlignedTable(rows);
    if (a.pending.size() > kMaxRows) {
      out += "  ... and " + std::to_string(a.pending.size() - kMaxRows) +
             " more (all of them in analyze.json)\n";
    }
  }
  out += "\nMove plan (dry run: nothing is evicted): " + std::to_string(a.plan.moves.size()) +
         " moves, " + std::to_string(a.plan.gpus_freed) + " GPUs freed, fragmentation -" +
         Fixed(a.plan.frag_removed_milli / 1000, 2) + " GPUs, cost " + Fixed(a.plan.cost, 1) +
         ", " + std::to_string(a.plan.placements.size()) + " pending pod(s) placed\n";
  if (!a.plan.moves.empty()) {
    rows = {{"step", "pod", "from", "to", "gpus", "freed", "frag-", "cost", "why"}};
    for (const Move& m : a.plan.moves) {
      rows.push_back({std::to_string(m.step), m.pod, m.from + "[" + Join(m.gpus_from) + "]",
                      m.to + "[" + Join(m.gpus_to) + "]", GpuText(m.gpu_count, m.gpu_milli),
                      std::to_string(m.gpus_freed), Fixed(m.frag_removed_milli / 1000, 2),
                      Fixed(m.cost, 1), m.why});
    }
    out += AlignedTable(rows);
  }
  for (const Placement& p : a.plan.placements) {
    out += "  then " + p.pod + " fits " + p.node + " [" + Join(p.gpus) + "] after step " +
           std::to_string(p.after_step) + "\n";
  }
  for (const std::string& l : a.plan.limits)
    out += "  a candidate action was stopped by: " + l + "\n";
  if (!a.warnings.empty()) {
    out += std::to_string(a.warnings.size()) + " warning(s) (see analyze.json)\n";
  }
  return out;
}

namespace {

/// One node's GPUs as a row of cells, shaded by the milli used.
void NodeCells(std::string* svg, const std::vector<int32_t>& used, int x, int y, int cell) {
  for (size_t g = 0; g < used.size(); ++g) {
    const double f = used[g] / 1000.0;
    // White (idle) → blue (full); partly used GPUs amber, so stranded shares stand out.
    const char* fill = f <= 0 ? "#ffffff" : f >= 1 ? "#1f77b4" : "#f2b134";
    *svg += "<rect x=\"" + std::to_string(x + static_cast<int>(g) * (cell + 1)) + "\" y=\"" +
            std::to_string(y) + "\" width=\"" + std::to_string(cell) + "\" height=\"" +
            std::to_string(cell) + "\" fill=\"" + fill +
            "\" stroke=\"#8c959f\" stroke-width=\"0.5\"><title>GPU " + std::to_string(g) + ": " +
            std::to_string(used[g]) + " milli used</title></rect>";
  }
}

}  // namespace

std::string AnalysisHtml(const Analysis& a, const ReportInfo& info, int max_nodes) {
  std::string h =
      "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>tessera analyze</title><style>";
  h += ReportCss();
  h += "</style></head><body><main><p class=\"eyebrow\">tessera analyze</p><h1>" +
       HtmlEscape(info.source) + "</h1>";
  h += "<div class=\"card\"><dl class=\"meta\"><dt>Cluster</dt><dd>" + std::to_string(a.nodes) +
       " nodes, " + std::to_string(a.gpus) + " GPUs, " + std::to_string(a.idle_gpus) +
       " idle</dd><dt>Fragmentation</dt><dd>" + Fixed(a.frag.total / 1000, 2) + " GPUs (" +
       Fixed(100 * a.frag_ratio, 1) + " % of free GPU)</dd>";
  if (a.has_bound) {
    h += "<dt>Offline bound</dt><dd>unallocated &ge; " + Fixed(a.bound.unallocated_pct, 2) +
         " %</dd>";
  }
  h += "<dt>Plan (dry run)</dt><dd>" + std::to_string(a.plan.moves.size()) + " moves, " +
       std::to_string(a.plan.gpus_freed) + " GPUs freed, " +
       std::to_string(a.plan.placements.size()) + " pending pod(s) placed</dd>";
  h +=
      "<dt>Generated by</dt><dd><code>" + HtmlEscape(info.generated_by) + "</code></dd></dl></div>";

  // Pools.
  h += "<div class=\"card\"><h2>GPU pools</h2><div class=\"table-wrap\"><table class=\"summary\">"
       "<tr><th>pool</th><th>nodes</th><th>GPUs</th><th>idle</th><th>stranded</th><th>frag</th>"
       "<th>gpu</th><th>cpu</th><th>model</th><th>cpu-only</th><th>GPUs freeable</th>"
       "<th>nodes freeable</th></tr>";
  for (const PoolReport& p : a.pools) {
    h += "<tr><td>" + HtmlEscape(p.model) + "</td><td>" + std::to_string(p.nodes) + "</td><td>" +
         std::to_string(p.gpus) + "</td><td>" + std::to_string(p.idle_gpus) + "</td><td>" +
         Fixed(p.stranded_milli / 1000.0, 2) + "</td><td>" + Fixed(p.frag.total / 1000, 2) +
         "</td><td>" + Fixed(p.frag.gpu / 1000, 2) + "</td><td>" + Fixed(p.frag.cpu / 1000, 2) +
         "</td><td>" + Fixed(p.frag.model / 1000, 2) + "</td><td>" +
         Fixed(p.frag.cpu_only / 1000, 2) + "</td><td>" + std::to_string(p.gpus_freed_max) +
         "</td><td>" + std::to_string(p.nodes_freed_max) + "</td></tr>";
  }
  h += "</table></div></div>";

  // Moves.
  h += "<div class=\"card\"><h2>Move plan</h2><div class=\"table-wrap\"><table class=\"summary\">"
       "<tr><th>step</th><th>pod</th><th>from</th><th>to</th><th>GPUs</th><th>freed</th>"
       "<th>frag removed</th><th>cost</th><th>why</th></tr>";
  for (const Move& m : a.plan.moves) {
    h += "<tr><td>" + std::to_string(m.step) + "</td><td>" + HtmlEscape(m.pod) + "</td><td>" +
         HtmlEscape(m.from) + " [" + Join(m.gpus_from) + "]</td><td>" + HtmlEscape(m.to) + " [" +
         Join(m.gpus_to) + "]</td><td>" + GpuText(m.gpu_count, m.gpu_milli) + "</td><td>" +
         std::to_string(m.gpus_freed) + "</td><td>" + Fixed(m.frag_removed_milli / 1000, 2) +
         "</td><td>" + Fixed(m.cost, 1) + "</td><td>" + HtmlEscape(m.why) + "</td></tr>";
  }
  h += "</table></div>";
  for (const Placement& p : a.plan.placements) {
    h += "<p class=\"note\">Then " + HtmlEscape(p.pod) + " fits " + HtmlEscape(p.node) + " (GPUs " +
         Join(p.gpus) + ") after step " + std::to_string(p.after_step) + ".</p>";
  }
  h += "</div>";

  // GPU map: touched nodes first.
  std::vector<const NodeMap*> nodes;
  for (const NodeMap& n : a.node_map) {
    if (n.touched) nodes.push_back(&n);
  }
  for (const NodeMap& n : a.node_map) {
    if (!n.touched && !n.used_before.empty()) nodes.push_back(&n);
  }
  const int shown = std::min<int>(max_nodes, static_cast<int>(nodes.size()));
  const int cell = 10;
  const int row = cell + 4;
  const int label = 160;
  const int width = label + 2 * (16 * (cell + 1) + 24);
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " +
                    std::to_string(width) + " " + std::to_string(24 + shown * row) +
                    "\" style=\"max-width:" + std::to_string(width) +
                    "px\" font-size=\"10\"><text x=\"" + std::to_string(label) +
                    "\" y=\"12\">before</text><text x=\"" +
                    std::to_string(label + 16 * (cell + 1) + 24) + "\" y=\"12\">after</text>";
  for (int i = 0; i < shown; ++i) {
    const NodeMap& n = *nodes[i];
    const int y = 20 + i * row;
    svg += "<text x=\"0\" y=\"" + std::to_string(y + cell - 1) + "\"" +
           (n.touched ? " font-weight=\"700\"" : "") + ">" + HtmlEscape(n.name.substr(0, 28)) +
           "</text>";
    NodeCells(&svg, n.used_before, label, y, cell);
    NodeCells(&svg, n.used_after, label + 16 * (cell + 1) + 24, y, cell);
  }
  svg += "</svg>";
  h += "<div class=\"card\"><h2>GPU map, before and after the plan</h2><p class=\"note\">One row "
       "per node (nodes the plan touches first, in bold), one square per GPU: white idle, "
       "amber partly used, blue full. " +
       std::to_string(shown) + " of " + std::to_string(nodes.size()) +
       " GPU nodes drawn.</p><figure class=\"chart\">" + svg + "</figure></div>";
  h += "</main></body></html>\n";
  return h;
}

}  // namespace tessera::analyze
