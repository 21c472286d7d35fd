// Summary statistics over seeds and the plain-text summary table.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "report/report.h"

namespace tessera {
namespace {

/// Arrival levels are integers in practice; compare with a tolerance all the same.
constexpr double kArrivalEpsilon = 1e-6;

/// The integer arrival % of a curve point, or nullopt if it is not (close to) an integer ≥ 0.
std::optional<int> IntegerArrival(double arrival_pct) {
  const double rounded = std::round(arrival_pct);
  if (rounded < 0 || std::fabs(arrival_pct - rounded) > kArrivalEpsilon) return std::nullopt;
  return static_cast<int>(rounded);
}

double PointValue(const CurvePoint& p, bool frag) {
  return frag ? p.frag_ratio : p.unallocated_pct;
}

/// "80", "97.5": a level as a column label.
std::string LevelLabel(double level) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", level);
  return buf;
}

/// Display width of UTF-8 text: code points, not bytes ("±" is one column).
size_t DisplayWidth(const std::string& s) {
  size_t width = 0;
  for (unsigned char c : s) width += (c & 0xC0) != 0x80;
  return width;
}

}  // namespace

SummaryCell MeanSd(const std::vector<double>& values) {
  SummaryCell cell;
  cell.runs = static_cast<int>(values.size());
  if (values.empty()) return cell;
  double sum = 0;
  for (double v : values) sum += v;
  cell.mean = sum / static_cast<double>(values.size());
  if (values.size() > 1) {
    double squares = 0;
    for (double v : values) squares += (v - cell.mean) * (v - cell.mean);
    cell.sd = std::sqrt(squares / static_cast<double>(values.size() - 1));
  }
  return cell;
}

std::string AlignedTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], DisplayWidth(row[c]));
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(widths[c] - DisplayWidth(row[c]), ' ');
      line += c == 0 ? row[c] + pad : "  " + pad + row[c];  // names left, numbers right
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

SummaryCell Summarize(const std::vector<RunResult>& runs, const std::string& policy,
                      double arrival_pct, bool frag) {
  std::vector<double> values;
  for (const RunResult& run : runs) {
    if (run.policy != policy) continue;
    for (const CurvePoint& p : run.curve) {
      if (std::fabs(p.arrival_pct - arrival_pct) <= kArrivalEpsilon) {
        values.push_back(PointValue(p, frag));
        break;
      }
    }
  }
  return MeanSd(values);
}

std::string FormatMeanSd(const SummaryCell& cell, int decimals, double scale) {
  if (cell.runs == 0) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f\u00B1%.*f", decimals, cell.mean * scale, decimals,
                cell.sd * scale);
  return buf;
}

std::vector<std::optional<double>> MeanCurve(const std::vector<RunResult>& runs,
                                             const std::string& policy, bool frag,
                                             int max_arrival) {
  const size_t size = static_cast<size_t>(std::max(max_arrival, 0)) + 1;
  std::vector<double> sums(size, 0.0);
  std::vector<int> counts(size, 0);
  for (const RunResult& run : runs) {
    if (run.policy != policy) continue;
    for (const CurvePoint& p : run.curve) {
      const std::optional<int> a = IntegerArrival(p.arrival_pct);
      if (!a || static_cast<size_t>(*a) >= size) continue;
      sums[*a] += PointValue(p, frag);
      ++counts[*a];
    }
  }
  std::vector<std::optional<double>> mean(size);
  for (size_t a = 0; a < size; ++a) {
    if (counts[a] > 0) mean[a] = sums[a] / counts[a];
  }
  return mean;
}

int MaxArrival(const std::vector<RunResult>& runs) {
  int max_arrival = 0;
  for (const RunResult& run : runs) {
    for (const CurvePoint& p : run.curve) {
      if (const std::optional<int> a = IntegerArrival(p.arrival_pct)) {
        max_arrival = std::max(max_arrival, *a);
      }
    }
  }
  return max_arrival;
}

std::string SummaryTable(const std::vector<RunResult>& runs,
                         const std::vector<std::string>& policies,
                         const std::vector<double>& levels) {
  // Cells first, then pad to the widest cell of each column.
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"policy"};
  for (double level : levels) header.push_back("unalloc@" + LevelLabel(level));
  for (double level : levels) header.push_back("frag@" + LevelLabel(level));
  rows.push_back(std::move(header));
  for (const std::string& policy : policies) {
    std::vector<std::string> row = {policy};
    for (double level : levels) row.push_back(FormatMeanSd(Summarize(runs, policy, level, false)));
    for (double level : levels) {
      row.push_back(FormatMeanSd(Summarize(runs, policy, level, true), 2, 100.0));
    }
    rows.push_back(std::move(row));
  }
  std::vector<std::string> ideal = {"ideal"};
  for (double level : levels) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.2f", std::max(0.0, 100.0 - level));
    ideal.push_back(buf);
  }
  for (size_t i = 0; i < levels.size(); ++i) ideal.push_back("-");
  rows.push_back(std::move(ideal));

  std::string out = AlignedTable(rows);
  out +=
      "unalloc: unallocated GPU (% of capacity); frag: fragmentation ratio (% of idle GPU); "
      "mean\u00B1s.d. over seeds; @: arrived workload (% of capacity)\n";
  out += MemorySummaryTable(runs, policies, levels);
  return out;
}

std::string MemorySummaryTable(const std::vector<RunResult>& runs,
                               const std::vector<std::string>& policies,
                               const std::vector<double>& levels) {
  bool memory = false;
  for (const RunResult& run : runs) memory |= run.has_gpu_memory;
  if (!memory) return "";
  // Mean ± s.d. over the runs of `policy` of one field at `level`.
  auto cell = [&](const std::string& policy, double level, bool failed) {
    std::vector<double> values;
    for (const RunResult& run : runs) {
      if (run.policy != policy) continue;
      for (const CurvePoint& p : run.curve) {
        if (std::fabs(p.arrival_pct - level) <= kArrivalEpsilon) {
          values.push_back(failed ? static_cast<double>(p.failed) : p.unallocated_mem_pct);
          break;
        }
      }
    }
    return FormatMeanSd(MeanSd(values), failed ? 1 : 2);
  };
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"policy"};
  for (double level : levels) header.push_back("memunalloc@" + LevelLabel(level));
  for (double level : levels) header.push_back("failed@" + LevelLabel(level));
  rows.push_back(std::move(header));
  for (const std::string& policy : policies) {
    std::vector<std::string> row = {policy};
    for (double level : levels) row.push_back(cell(policy, level, false));
    for (double level : levels) row.push_back(cell(policy, level, true));
    rows.push_back(std::move(row));
  }
  std::string out = "\nGPU memory (the pod list asks for it)\n" + AlignedTable(rows);
  out +=
      "memunalloc: usable free GPU memory (% of GPU memory; a GPU without free compute has "
      "none); failed: pods refused among those arrived; mean\u00B1s.d. over seeds\n";
  return out;
}

}  // namespace tessera
