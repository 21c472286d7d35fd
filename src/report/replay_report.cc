// Reports of the replay experiment: text table, CSV files and a self-contained HTML page
// with inline SVG line charts (no scripts, no external resources).

#include "report/replay_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "report/report.h"
#include "util/format.h"

namespace tessera {
namespace {

std::string G(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.10g", v);
  return buf;
}

std::string Cell(std::string s, size_t width) {
  if (s.size() < width) s.insert(0, width - s.size(), ' ');
  return s;
}

// A class's row: slo_wait_s is empty for a class without an SLO, slo_pct for one without an
// SLO or without counted pods (none arrived, or all rejected): "no SLO" and "no pods" are not
// 100 % attainment.
std::string ClassColumns(const ClassStats& c) {
  std::string s = c.name;
  for (double v : {double(c.arrived), double(c.started), double(c.finished), double(c.running),
                   double(c.pending), double(c.rejected), c.wait_p50_s, c.wait_p95_s, c.wait_p99_s,
                   c.wait_max_s}) {
    s += "," + G(v);
  }
  s += "," + (c.slo_wait_s < 0 ? std::string() : G(c.slo_wait_s));
  s += "," + (c.slo_wait_s < 0 || c.arrived - c.rejected <= 0 ? std::string() : G(c.slo_pct));
  for (double v : {double(c.preempted), double(c.preemptors), c.gpu_hours, c.lost_gpu_hours,
                   c.mean_alloc_gpus}) {
    s += "," + G(v);
  }
  return s;
}

constexpr const char* kClassHeader =
    "class,arrived,started,finished,running,pending,rejected,wait_p50_s,wait_p95_s,wait_p99_s,"
    "wait_max_s,slo_wait_s,slo_pct,preempted,preemptors,gpu_hours,lost_gpu_hours,"
    "mean_alloc_gpus";

// Commas and line breaks would break a CSV row; names come from input files.
std::string CsvSafe(std::string s) {
  for (char& c : s) {
    if (c == ',' || c == '\n' || c == '\r' || c == '"') c = ' ';
  }
  return s;
}

}  // namespace

std::string ReplayTable(const std::vector<ReplayResult>& runs) {
  const std::vector<std::pair<std::string, size_t>> cols = {
      {"policy", 14},    {"class", 11}, {"arrived", 8},     {"p50 s", 9},
      {"p95 s", 9},      {"p99 s", 9},  {"max s", 10},      {"SLO %", 8},
      {"preempted", 10}, {"GPU-h", 10}, {"lost GPU-h", 11}, {"mean GPUs", 10}};
  std::string out;
  for (const auto& [name, w] : cols) out += Cell(name, w) + " ";
  out += "\n";
  for (const ReplayResult& r : runs) {
    for (const ClassStats& c : r.classes) {
      if (c.arrived == 0) continue;
      const std::vector<std::string> v = {r.policy,
                                          c.name,
                                          std::to_string(c.arrived),
                                          Fixed(c.wait_p50_s, 2),
                                          Fixed(c.wait_p95_s, 2),
                                          Fixed(c.wait_p99_s, 2),
                                          Fixed(c.wait_max_s, 1),
                                          c.slo_wait_s < 0 ? "-" : Fixed(c.slo_pct, 2),
                                          std::to_string(c.preempted),
                                          Fixed(c.gpu_hours, 1),
                                          Fixed(c.lost_gpu_hours, 1),
                                          Fixed(c.mean_alloc_gpus, 1)};
      for (size_t i = 0; i < v.size(); ++i) out += Cell(v[i], cols[i].second) + " ";
      out += "\n";
    }
  }
  out +=
      "Waits from arrival to first start (pods pending at the horizon count with their wait so "
      "far); SLO % of arrived, not rejected pods; GPU-h served within the horizon by runs not "
      "preempted (lost: runs cut short by preemption).\n";
  return out;
}

std::string ReplayClassesCsv(const std::vector<ReplayResult>& runs) {
  std::string out = std::string("policy,") + kClassHeader + "\n";
  for (const ReplayResult& r : runs) {
    for (const ClassStats& c : r.classes) out += CsvSafe(r.policy) + "," + ClassColumns(c) + "\n";
  }
  return out;
}

std::string ReplaySeriesCsv(const std::vector<ReplayResult>& runs) {
  std::string out = "policy,t_s";
  if (!runs.empty()) {
    for (const ClassStats& c : runs.front().classes) out += ",pending_" + CsvSafe(c.name);
    for (const ClassStats& c : runs.front().classes) out += ",preempting_" + CsvSafe(c.name);
  }
  out += ",allocated_pct,frag_ratio,idle_gpus,headroom_gpus\n";
  for (const ReplayResult& r : runs) {
    for (const TimePoint& p : r.series) {
      out += CsvSafe(r.policy) + "," + G(p.t_s);
      for (int q : p.pending) out += "," + std::to_string(q);
      for (int q : p.preempting) out += "," + std::to_string(q);
      const double pct = r.capacity_milli > 0 ? 100.0 * static_cast<double>(p.allocated_milli) /
                                                    static_cast<double>(r.capacity_milli)
                                              : 0;
      out += "," + G(pct) + "," + G(p.frag_ratio) + "," + std::to_string(p.idle_gpus) + "," +
             std::to_string(p.headroom_gpus) + "\n";
    }
  }
  return out;
}

std::string ReplayPodsCsv(const std::vector<ReplayResult>& runs, const Timeline& timeline,
                          const std::vector<NodeSpec>& nodes) {
  static constexpr const char* kStatus[] = {"not-arrived", "pending", "running", "finished",
                                            "rejected"};
  std::string out = "policy,pod,class,arrival_s,start_s,wait_s,node,gpus,status,preempted\n";
  for (const ReplayResult& r : runs) {
    for (size_t i = 0; i < r.pods.size() && i < timeline.pods.size(); ++i) {
      const PodOutcome& o = r.pods[i];
      const TimedPod& p = timeline.pods[i];
      const bool started = o.wait_s >= 0;
      std::string gpus;
      for (int g = 0; g < kMaxGpusPerNode; ++g) {
        if (o.first_gpus & (GpuSet{1} << g)) gpus += (gpus.empty() ? "" : " ") + std::to_string(g);
      }
      const std::string node = o.first_node >= 0 && o.first_node < static_cast<int>(nodes.size())
                                   ? nodes[o.first_node].name
                                   : "";
      const std::string cls = o.qos_class >= 0 && o.qos_class < static_cast<int>(r.classes.size())
                                  ? r.classes[o.qos_class].name
                                  : "";
      out += CsvSafe(r.policy) + "," + CsvSafe(p.spec.name) + "," + CsvSafe(cls) + "," +
             G(p.arrival_s) + "," + (started ? G(p.arrival_s + o.wait_s) : "") + "," +
             (started ? G(o.wait_s) : "") + "," + CsvSafe(node) + "," + gpus + "," +
             kStatus[static_cast<int>(o.status)] + "," + std::to_string(o.times_preempted) + "\n";
    }
  }
  return out;
}

std::string SkippedCsv(const std::vector<SkippedPod>& skipped) {
  std::string out = "name,where,reason\n";
  for (const SkippedPod& s : skipped) {
    out += CsvSafe(s.name) + "," + CsvSafe(s.where) + "," + CsvSafe(s.reason) + "\n";
  }
  return out;
}

std::string SweepCsv(const std::vector<SweepPoint>& sweep) {
  std::string out = std::string("policy,num_nodes,num_gpus,") + kClassHeader + "\n";
  for (const SweepPoint& p : sweep) {
    for (const ClassStats& c : p.result.classes) {
      out += CsvSafe(p.result.policy) + "," + std::to_string(p.num_nodes) + "," +
             std::to_string(p.num_gpus) + "," + ClassColumns(c) + "\n";
    }
  }
  return out;
}

}  // namespace tessera
