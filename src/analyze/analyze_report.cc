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
  j["disruption_budgets"] = {
      {"read", a.budgets_not_read.empty()}, {"count", a.budgets}, {"not_read", a.budgets_not_read}};
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
  if (!a.budgets_not_read.empty()) {
    out += "Disruption budgets: none respected. " + a.budgets_not_read + "\n";
  }
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
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta "
      "name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
      HtmlEscape(info.source) + " \u2014 Tessera analyze report</title>\n<style>";
  h += ReportCss();
  h += "</style>\n</head>\n<body>\n<main>\n<header class=\"card\">\n<p "
       "class=\"eyebrow\">Tessera \u00B7 analyze (a cluster's stranded GPUs, its pending pods "
       "and a move plan, dry run)</p>\n<h1>" +
       HtmlEscape(info.source) + "</h1>\n";
  h += "<dl class=\"meta\"><dt>Cluster</dt><dd>" + std::to_string(a.nodes) + " nodes, " +
       std::to_string(a.gpus) + " GPUs, " + std::to_string(a.idle_gpus) +
       " idle</dd><dt>Fragmentation</dt><dd>" + Fixed(a.frag.total / 1000, 2) + " GPUs (" +
       Fixed(100 * a.frag_ratio, 1) + " % of free GPU)</dd>";
  if (a.has_bound) {
    h += "<dt>Offline bound</dt><dd>unallocated &ge; " + Fixed(a.bound.unallocated_pct, 2) +
         " %</dd>";
  }
  int plan_places = 0;
  for (const PendingReport& p : a.pending) plan_places += p.repack == "plan";
  h += "<dt>Pending GPU pods</dt><dd>" + std::to_string(a.pending.size()) +
       (a.pending.empty() ? std::string()
                          : ", " + std::to_string(plan_places) + " placed by the move plan") +
       "</dd>";
  h += "<dt>Plan (dry run)</dt><dd>" + std::to_string(a.plan.moves.size()) + " moves, " +
       std::to_string(a.plan.gpus_freed) + " GPUs freed, " +
       std::to_string(a.plan.placements.size()) + " pending pod(s) placed</dd>";
  h += "<dt>Disruption budgets</dt><dd>" +
       (a.budgets_not_read.empty()
            ? std::to_string(a.budgets) + " respected by the plan"
            : "<strong>none respected</strong>: " + HtmlEscape(a.budgets_not_read)) +
       "</dd>";
  h += "<dt>Warnings</dt><dd>" + std::to_string(a.warnings.size()) + "</dd>";
  h += "<dt>Generated by</dt><dd><code>" + HtmlEscape(info.generated_by) +
       "</code></dd></dl>\n</header>\n";

  // Warnings: what the snapshot reader and the analysis could not take at face value.
  if (!a.warnings.empty()) {
    h += "<section class=\"card warnings\" id=\"warnings\">\n<h2>Warnings</h2>\n<ul>\n";
    for (const std::string& w : a.warnings) h += "<li>" + HtmlEscape(w) + "</li>\n";
    h += "</ul>\n</section>\n";
  }

  // Pending GPU pods: why each waits, the node closest to taking it, and what repacking does.
  h += "<section class=\"card\" id=\"pending\">\n<h2>Pending GPU pods</h2>\n";
  if (a.pending.empty()) {
    h += "<p class=\"note\">No GPU pod is pending.</p>\n";
  } else {
    constexpr size_t kMaxRows = 500;  // the rest is in analyze.json
    h += "<div class=\"table-wrap\"><table class=\"summary pending\">\n<thead><tr><th "
         "class=\"policy\">pod</th><th>GPUs</th><th>priority</th><th>class</th><th>repack</th>"
         "<th>closest node: missing</th><th>reasons (nodes)</th></tr></thead>\n<tbody>\n";
    for (size_t i = 0; i < a.pending.size() && i < kMaxRows; ++i) {
      const PendingReport& p = a.pending[i];
      std::string closest = p.fits_now.empty() ? "" : p.fits_now + ": nothing (it fits now)";
      if (closest.empty() && !p.closest.empty()) {
        const NodeMiss& n = p.closest.front();
        closest = n.node + ": " + std::to_string(n.gpus_missing) + " GPU";
        if (n.cpu_missing_milli > 0)
          closest += ", " + std::to_string(n.cpu_missing_milli) + "m CPU";
        if (n.memory_missing_mib > 0) closest += ", " + std::to_string(n.memory_missing_mib) + "Mi";
      }
      std::vector<std::pair<std::string, int>> reasons(p.reasons.begin(), p.reasons.end());
      std::stable_sort(reasons.begin(), reasons.end(),
                       [](const auto& x, const auto& y) { return x.second > y.second; });
      std::string why;
      for (const auto& [r, n] : reasons) {
        why += (why.empty() ? "" : "; ") + r + " (" + std::to_string(n) + ")";
      }
      const std::string repack = p.repack + (p.placed_on.empty() ? "" : " \u2192 " + p.placed_on);
      h += "<tr data-repack=\"" + HtmlEscape(p.repack) + "\"><th class=\"policy\" scope=\"row\">" +
           HtmlEscape(p.pod) + "</th><td>" + GpuText(p.gpu_count, p.gpu_milli) + "</td><td>" +
           std::to_string(p.priority) + "</td><td>" + HtmlEscape(p.cls) + "</td><td>" +
           HtmlEscape(repack) + "</td><td>" + HtmlEscape(closest) +
           "</td><td style=\"text-align:left;white-space:normal\">" + HtmlEscape(why) +
           "</td></tr>\n";
    }
    h += "</tbody></table></div>\n";
    if (a.pending.size() > kMaxRows) {
      h += "<p class=\"note\">" + std::to_string(a.pending.size() - kMaxRows) +
           " more in analyze.json.</p>\n";
    }
    h += "<p class=\"note\">Repack: <b>plan</b> the move plan makes room (on the node after "
         "the arrow), <b>possible</b> some node would hold it once its movable pods moved but the "
         "plan's limits or the other nodes' room stopped it, <b>no</b> no node can even emptied "
         "of its movable pods, <b>fits</b> it fits now. Closest node: the node that misses the "
         "least. Reasons: the filter's reasons, with the nodes giving each.</p>\n";
  }
  h += "</section>\n";

  // Pools.
  h += "<section class=\"card\" id=\"pools\">\n<h2>GPU pools</h2><div "
       "class=\"table-wrap\"><table class=\"summary\"><thead><tr><th "
       "class=\"policy\">pool</th><th>nodes</th><th>GPUs</th><th>idle</th><th>stranded</"
       "th><th>frag</th>"
       "<th>gpu</th><th>cpu</th><th>model</th><th>cpu-only</th><th>GPUs freeable</th>"
       "<th>nodes freeable</th></tr></thead>\n<tbody>\n";
  for (const PoolReport& p : a.pools) {
    h += "<tr><th class=\"policy\" scope=\"row\">" + HtmlEscape(p.model) + "</th><td>" +
         std::to_string(p.nodes) + "</td><td>" + std::to_string(p.gpus) + "</td><td>" +
         std::to_string(p.idle_gpus) + "</td><td>" + Fixed(p.stranded_milli / 1000.0, 2) +
         "</td><td>" + Fixed(p.frag.total / 1000, 2) + "</td><td>" + Fixed(p.frag.gpu / 1000, 2) +
         "</td><td>" + Fixed(p.frag.cpu / 1000, 2) + "</td><td>" + Fixed(p.frag.model / 1000, 2) +
         "</td><td>" + Fixed(p.frag.cpu_only / 1000, 2) + "</td><td>" +
         std::to_string(p.gpus_freed_max) + "</td><td>" + std::to_string(p.nodes_freed_max) +
         "</td></tr>\n";
  }
  h += "</tbody></table></div>\n<p class=\"note\">In GPUs. Stranded: free compute that no GPU "
       "class of the "
       "demand mix could use where it is; frag: FGD's fragmentation, split by cause (gpu, cpu, "
       "model, cpu-only; docs/ANALYZE.md); freeable: at most this many more whole GPUs, and "
       "nodes, a repack could free (the pool's bound).</p>\n</section>\n";

  // Moves.
  h += "<section class=\"card\" id=\"moves\">\n<h2>Move plan (dry run: nothing is "
       "evicted)</h2>";
  if (a.plan.moves.empty()) h += "<p class=\"note\">No move.</p>\n";
  h += "<div class=\"table-wrap\"><table "
       "class=\"summary\"><thead><tr><th>step</th><th>pod</th><th>from</th><th>to</th><th>GPUs</"
       "th><th>freed</th>"
       "<th>frag removed</th><th>cost</th><th>why</th></tr></thead>\n<tbody>\n";
  for (const Move& m : a.plan.moves) {
    h += "<tr><td>" + std::to_string(m.step) + "</td><td>" + HtmlEscape(m.pod) + "</td><td>" +
         HtmlEscape(m.from) + " [" + Join(m.gpus_from) + "]</td><td>" + HtmlEscape(m.to) + " [" +
         Join(m.gpus_to) + "]</td><td>" + GpuText(m.gpu_count, m.gpu_milli) + "</td><td>" +
         std::to_string(m.gpus_freed) + "</td><td>" + Fixed(m.frag_removed_milli / 1000, 2) +
         "</td><td>" + Fixed(m.cost, 1) + "</td><td>" + HtmlEscape(m.why) + "</td></tr>\n";
  }
  h += "</tbody></table></div>\n";
  for (const Placement& p : a.plan.placements) {
    h += "<p class=\"note\">Then " + HtmlEscape(p.pod) + " fits " + HtmlEscape(p.node) + " (GPUs " +
         Join(p.gpus) + ") after step " + std::to_string(p.after_step) + ".</p>\n";
  }
  for (const std::string& l : a.plan.limits) {
    h += "<p class=\"note\">A candidate action was stopped by: " + HtmlEscape(l) + ".</p>\n";
  }
  h += "</section>\n";

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
  auto key = [](const char* fill, const char* what) {
    return std::string(
               "<span class=\"key\"><span class=\"swatch\" style=\"width:12px;height:12px;"
               "border:1px solid #8c959f;background:") +
           fill + "\"></span>" + what + "</span> ";
  };
  h += "<section class=\"card\" id=\"map\">\n<h2>GPU map, before and after the plan</h2><p "
       "class=\"legend-row\">" +
       key("#ffffff", "idle") + key("#f2b134", "partly used") + key("#1f77b4", "full") +
       "</p><p class=\"note\">One row per node (nodes the plan touches first, in bold), one "
       "square per GPU (hover for its milli used). " +
       std::to_string(shown) + " of " + std::to_string(nodes.size()) +
       " GPU nodes drawn.</p><figure class=\"chart\">" + svg + "</figure>\n</section>\n";
  h += "</main>\n</body>\n</html>\n";
  return h;
}

}  // namespace tessera::analyze
