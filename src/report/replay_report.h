#pragma once

#include <string>
#include <vector>

#include "replay/replay.h"
#include "replay/timeline.h"

namespace tessera {

// Reports of the replay experiment (docs/REPLAY.md): CSV for tools, a text table for the
// terminal and a self-contained HTML page. Pure functions; thread-safe.

/// One run of a cluster-size sweep: the policy's result on `num_nodes` nodes.
struct SweepPoint {
  int num_nodes = 0;
  int64_t num_gpus = 0;
  ReplayResult result;
};

/// The text table: one row per (policy, class) with arrived, wait p50/p95/p99/max (s),
/// SLO %, preempted, GPU-hours served and lost, mean GPUs allocated.
std::string ReplayTable(const std::vector<ReplayResult>& runs);

/// classes.csv: policy,class,arrived,started,finished,running,pending,rejected,wait_p50_s,
/// wait_p95_s,wait_p99_s,wait_max_s,slo_wait_s,slo_pct,preempted,preemptors,gpu_hours,
/// lost_gpu_hours,mean_alloc_gpus — one row per run and class.
std::string ReplayClassesCsv(const std::vector<ReplayResult>& runs);

/// series.csv: policy,t_s,pending_<class>...,allocated_pct,frag_ratio,idle_gpus,headroom_gpus.
std::string ReplaySeriesCsv(const std::vector<ReplayResult>& runs);

/// skipped.csv: name,where,reason — the pods left out of the timeline.
std::string SkippedCsv(const std::vector<SkippedPod>& skipped);

/// sweep.csv: policy,num_nodes,num_gpus, then the classes.csv columns from class on.
std::string SweepCsv(const std::vector<SweepPoint>& sweep);

/// What a replay run was, for the report's header.
struct ReplayReportInfo {
  std::string title;
  std::string source;
  int num_nodes = 0;
  int64_t num_gpus = 0;
  int num_pods = 0;
  int skipped = 0;
  double time_scale = 1;
  std::string generated_by;
};

/// report.html: the per-class table, queue depth / allocation / fragmentation over time, one
/// line per policy, and, when `sweep` is not empty, the latency–utilization trade-off: the
/// p99 wait of `protected_class` and the GPU-hours of `batch_class` against cluster size,
/// one line per policy. Self-contained (inline CSS and SVG, no scripts); strings escaped.
std::string ReplayReportHtml(const ReplayReportInfo& info, const std::vector<ReplayResult>& runs,
                             const std::vector<SweepPoint>& sweep,
                             const std::string& protected_class, const std::string& batch_class);

}  // namespace tessera
