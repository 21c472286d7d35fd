// The offline bound in the frag reports: offline_bound.csv, offline_gap.csv, the terminal
// table and the report.html section.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "report/report.h"
#include "util/format.h"

namespace tessera {
namespace {

constexpr double kLevelEpsilon = 1e-6;

const OfflineBoundRow* BoundOf(const std::vector<OfflineBoundRow>& bounds, uint64_t seed) {
  for (const OfflineBoundRow& b : bounds) {
    if (b.seed == seed) return &b;
  }
  return nullptr;
}

/// The run's unallocated % at `level`, or nullopt where its curve has no such point.
std::optional<double> UnallocatedAt(const RunResult& run, double level) {
  for (const CurvePoint& p : run.curve) {
    if (std::fabs(p.arrival_pct - level) <= kLevelEpsilon) return p.unallocated_pct;
  }
  return std::nullopt;
}

std::string Level(const std::vector<OfflineBoundRow>& bounds) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", bounds.empty() ? 100.0 : bounds.front().arrival_pct);
  return buf;
}

}  // namespace

std::vector<OfflineGap> OfflineGaps(const std::vector<RunResult>& runs,
                                    const std::vector<std::string>& policies,
                                    const std::vector<OfflineBoundRow>& bounds) {
  std::vector<OfflineGap> out;
  for (const std::string& policy : policies) {
    std::vector<double> unallocated, bound, gap;
    for (const RunResult& run : runs) {
      if (run.policy != policy) continue;
      const OfflineBoundRow* b = BoundOf(bounds, run.seed);
      if (!b) continue;
      const std::optional<double> u = UnallocatedAt(run, b->arrival_pct);
      if (!u) continue;
      unallocated.push_back(*u);
      bound.push_back(b->bound.unallocated_pct);
      gap.push_back(*u - b->bound.unallocated_pct);
    }
    out.push_back(OfflineGap{policy, MeanSd(unallocated), MeanSd(bound), MeanSd(gap)});
  }
  return out;
}

std::string OfflineBoundCsv(const std::vector<OfflineBoundRow>& bounds) {
  std::string out =
      "seed,arrival_pct,arrived_pct,capacity_milli,max_placed_milli,bound_pct,pods,node_types,"
      "pod_shapes,patterns,rounds,converged\n";
  for (const OfflineBoundRow& b : bounds) {
    out += std::to_string(b.seed) + ',';
    AppendNumber(&out, b.arrival_pct);
    out += ',';
    AppendNumber(&out, b.arrived_pct);
    out += ',' + std::to_string(b.bound.capacity_milli) + ',';
    AppendNumber(&out, b.bound.max_placed_milli);
    out += ',';
    AppendNumber(&out, b.bound.unallocated_pct);
    out += ',' + std::to_string(b.bound.pods) + ',' + std::to_string(b.bound.node_types) + ',' +
           std::to_string(b.bound.pod_shapes) + ',' + std::to_string(b.bound.patterns) + ',' +
           std::to_string(b.bound.rounds) + ',' + (b.bound.converged ? "1" : "0") + '\n';
  }
  return out;
}

std::string OfflineClassesCsv(const std::vector<OfflineBoundRow>& bounds) {
  std::string out = "seed,gpus,gpu_milli,arrived,placed\n";
  for (const OfflineBoundRow& b : bounds) {
    for (const OfflineClass& c : b.bound.classes) {
      out += std::to_string(b.seed) + ',' + std::to_string(c.gpu_count) + ',' +
             std::to_string(c.gpu_milli) + ',' + std::to_string(c.arrived) + ',';
      AppendNumber(&out, c.placed);
      out += '\n';
    }
  }
  return out;
}

std::string OfflineLeftOut(const std::vector<OfflineBoundRow>& bounds) {
  if (bounds.empty()) return "";
  struct Sum {
    double arrived = 0, placed = 0;
  };
  std::map<std::pair<int, int32_t>, Sum> by_size;
  for (const OfflineBoundRow& b : bounds) {
    for (const OfflineClass& c : b.bound.classes) {
      Sum& s = by_size[{c.gpu_count, c.gpu_milli}];
      s.arrived += c.arrived;
      s.placed += c.placed;
    }
  }
  const double n = static_cast<double>(bounds.size());
  std::vector<std::tuple<double, int, int32_t, double, double>> left;  // GPU milli out first
  for (const auto& [size, s] : by_size) {
    const double out = (s.arrived - s.placed) / n;
    if (out < 0.5) continue;
    left.emplace_back(out * size.first * size.second, size.first, size.second, out, s.arrived / n);
  }
  if (left.empty()) return "";
  std::sort(left.begin(), left.end(), std::greater<>());
  std::string text = "left out by the bound, mean per seed:";
  char buf[96];
  for (size_t i = 0; i < left.size(); ++i) {
    const auto& [milli, gpus, per_gpu, out, arrived] = left[i];
    std::snprintf(buf, sizeof(buf), "%s %.1f of %.0f pods of %d GPU%s x %d milli", i ? "," : "",
                  out, arrived, gpus, gpus == 1 ? "" : "s", static_cast<int>(per_gpu));
    text += buf;
  }
  return text + "\n";
}

std::string OfflineGapCsv(const std::vector<RunResult>& runs,
                          const std::vector<OfflineBoundRow>& bounds) {
  std::string out = "policy,seed,arrival_pct,unallocated_pct,bound_pct,gap_pp\n";
  for (const RunResult& run : runs) {
    const OfflineBoundRow* b = BoundOf(bounds, run.seed);
    if (!b) continue;
    const std::optional<double> u = UnallocatedAt(run, b->arrival_pct);
    if (!u) continue;
    for (char c : run.policy) out += (c == ',' || c == '"' || c == '\n') ? ' ' : c;
    out += ',' + std::to_string(run.seed) + ',';
    AppendNumber(&out, b->arrival_pct);
    out += ',';
    AppendNumber(&out, *u);
    out += ',';
    AppendNumber(&out, b->bound.unallocated_pct);
    out += ',';
    AppendNumber(&out, *u - b->bound.unallocated_pct);
    out += '\n';
  }
  return out;
}

std::string OfflineTable(const std::vector<RunResult>& runs,
                         const std::vector<std::string>& policies,
                         const std::vector<OfflineBoundRow>& bounds) {
  const std::string level = Level(bounds);
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"policy", "unalloc@" + level, "bound@" + level, "gap (pp)"});
  for (const OfflineGap& g : OfflineGaps(runs, policies, bounds)) {
    rows.push_back(
        {g.policy, FormatMeanSd(g.unallocated), FormatMeanSd(g.bound), FormatMeanSd(g.gap)});
  }
  std::vector<double> all;
  for (const OfflineBoundRow& b : bounds) all.push_back(b.bound.unallocated_pct);
  rows.push_back({"bound", "-", FormatMeanSd(MeanSd(all)), "-"});
  std::string out = AlignedTable(rows);
  out += "bound: no placement of the pods arrived by " + level +
         " % can leave less GPU unallocated (LP relaxation, see --help); gap = policy - bound, "
         "the headroom left to any policy; mean\u00B1s.d. over seeds\n";
  return out;
}

std::string OfflineSectionHtml(const std::vector<RunResult>& runs,
                               const std::vector<std::string>& policies,
                               const std::vector<OfflineBoundRow>& bounds) {
  if (bounds.empty()) return "";
  const std::string level = Level(bounds);
  std::string html = "<section class=\"card\" id=\"offline\">\n<h2>Offline bound at " + level +
                     " % arrival</h2>\n";
  html += "<div class=\"table-wrap\"><table class=\"summary\">\n<thead>\n<tr>";
  html +=
      "<th class=\"policy\">Policy</th><th>Unallocated GPU %</th><th>Offline bound %</th>"
      "<th>Gap (pp)</th></tr>\n</thead>\n<tbody>\n";
  for (const OfflineGap& g : OfflineGaps(runs, policies, bounds)) {
    html += "<tr data-policy=\"" + HtmlEscape(g.policy) + "\"><th class=\"policy\" scope=\"row\">" +
            HtmlEscape(g.policy) + "</th><td>" + FormatMeanSd(g.unallocated) + "</td><td>" +
            FormatMeanSd(g.bound) + "</td><td>" + FormatMeanSd(g.gap) + "</td></tr>\n";
  }
  html += "</tbody>\n</table></div>\n";
  html += "<p class=\"note\">Per seed, the pods that have arrived by " + level +
          " % are known in advance and a linear-programming relaxation of their placement is "
          "solved: no placement of those pods, online or offline, can leave less GPU "
          "unallocated than the bound. Gap = policy \u2212 bound on the same seed, the "
          "headroom any policy could still win (at most). Seeds: ";
  for (size_t i = 0; i < bounds.size(); ++i) {
    char buf[96];
    std::snprintf(buf, sizeof(buf), "%s%llu: %.2f %%", i == 0 ? "" : ", ",
                  static_cast<unsigned long long>(bounds[i].seed), bounds[i].bound.unallocated_pct);
    html += buf;
  }
  html += ".</p>\n";
  if (std::string left = OfflineLeftOut(bounds); !left.empty()) {
    left.pop_back();  // the newline
    html += "<p class=\"note\" id=\"offline-left-out\">" + HtmlEscape(left) +
            ". The bound may leave out any pod, even one that fits when it arrives; a "
            "scheduler places those.</p>\n";
  }
  html += "</section>\n";
  return html;
}

}  // namespace tessera
