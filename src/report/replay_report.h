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

/// series.csv: policy,t_s,pending_<class>...,preempting_<class>...,allocated_pct,frag_ratio,
/// idle_gpus,headroom_gpus — pending: in the queue; preempting: preemptors waiting out their
/// victims' grace period.
std::string ReplaySeriesCsv(const std::vector<ReplayResult>& runs);

/// pods.csv: policy,pod,class,arrival_s,start_s,wait_s,node,gpus,status,preempted — one row per
/// run and pod of `timeline`: its first start (seconds; empty if it never started), the node
/// (by name, from `nodes`) and GPU indices (blank-separated) of that start, its status at the
/// horizon (finished, running, pending, rejected, not-arrived) and the times it was preempted.
/// What `tessera serve` behind a real kube-scheduler is compared with, pod by pod.
std::string ReplayPodsCsv(const std::vector<ReplayResult>& runs, const Timeline& timeline,
                          const std::vector<NodeSpec>& nodes);

/// skipped.csv: name,where,reason — the pods left out of the timeline.
std::string SkippedCsv(const std::vector<SkippedPod>& skipped);

/// sweep.csv: policy,num_nodes,num_gpus, then the classes.csv columns from class on.
std::string SweepCsv(const std::vector<SweepPoint>& sweep);

/// Where the report's time axis starts (virtual seconds): the arrival of the pod at the
/// first percentile of arrivals (nearest rank), or 0 when that is within the first 5 % of
/// `horizon_s`. A trace whose first pods trickle in over days (the openb list: 1 % of the pods
/// over the first 55 of 72 virtual hours at --time-scale 50) is drawn from where its workload
/// starts instead of as a flat line followed by a squeezed end.
double WorkloadStart(const Timeline& timeline, double horizon_s);

/// What a replay run was, for the report's header.
struct ReplayReportInfo {
  std::string title;
  std::string source;
  int num_nodes = 0;
  int64_t num_gpus = 0;
  int num_pods = 0;
  int skipped = 0;
  double time_scale = 1;
  double start_s = 0;         ///< the time axis starts here (WorkloadStart)
  int pods_before_start = 0;  ///< pods that arrived before start_s
  std::string generated_by;
};

/// report.html, styled like the frag report (self-contained: inline CSS and SVG, no scripts;
/// strings escaped):
///   - a headline table, one row per policy: for every class with a wait SLO its share of pods
///     within the SLO and its p99 wait, then preemptions, the GPU-hours of `batch_class` and
///     the mean GPU allocation;
///   - the per-class table;
///   - over time, from info.start_s to the horizon, one line per policy: queue depth of each
///     class (one chart per class with arrivals), the headroom kept for `protected_class`
///     against the idle GPUs (policies that keep one), GPU allocation, fragmentation ratio;
///   - the latency–utilization frontier: `protected_class` p99 wait against mean GPU
///     allocation, one line per policy through its measured points (the main run and every
///     swept size), with a marker at each;
///   - with `sweep`: the sweep table, and the p99 wait of `protected_class` and the GPU-hours
///     of `batch_class` against cluster size.
/// Policy lines are `<polyline class="series" data-policy="NAME">`; markers
/// `<circle class="marker" data-policy="NAME">`; each chart a `<figure class="chart" id=...>`.
std::string ReplayReportHtml(const ReplayReportInfo& info, const std::vector<ReplayResult>& runs,
                             const std::vector<SweepPoint>& sweep,
                             const std::string& protected_class, const std::string& batch_class);

}  // namespace tessera
