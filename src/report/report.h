#pragma once

#include <string>
#include <vector>

#include "model/node.h"
#include "model/pod.h"
#include "sim/inflation.h"

namespace tessera {

/// What a `tessera frag` run was, for the report's header.
struct FragReportInfo {
  std::string title;             ///< e.g. "openb_pod_list_default.csv on openb_node_list_gpu_node.csv"
  std::string nodes_source;
  std::string pods_source;
  int num_nodes = 0;
  int64_t num_gpus = 0;
  int num_pods = 0;
  int never_fit = 0;             ///< pods no node of the empty cluster could host
  std::vector<uint64_t> seeds;
  std::string generated_by;      ///< command line
};

/// Summary statistics of one policy at one arrival level over the seeds.
struct SummaryCell {
  double mean = 0;
  double sd = 0;                 ///< sample standard deviation (0 for one seed)
};

/// Mean ± s.d. over seeds of unallocated % (`frag` = false) or fragmentation ratio
/// (`frag` = true) at `arrival_pct` for `policy`.
SummaryCell Summarize(const std::vector<RunResult>& runs, const std::string& policy,
                      double arrival_pct, bool frag);

/// curve.csv: policy,seed,arrival_pct,arrived_pct,allocated_milli,unallocated_pct,
/// frag_milli,frag_ratio — one row per run and arrival level.
std::string CurveCsv(const std::vector<RunResult>& runs);

/// placements.csv: policy,seed,seq,pod,node,gpus,milli_per_gpu,status — gpus as "0-3",
/// status "OK" or "FAILED <reason>". Clones are named "<pod>~<k>".
std::string PlacementsCsv(const std::vector<RunResult>& runs, const std::vector<PodSpec>& pods,
                          const std::vector<NodeSpec>& nodes);

/// The plain-text table printed by `tessera frag`: unallocated % and fragmentation ratio
/// at `levels` per policy (mean ± s.d.).
std::string SummaryTable(const std::vector<RunResult>& runs, const std::vector<std::string>& policies,
                         const std::vector<double>& levels);

/// report.html: self-contained (inline SVG, no scripts or network), the two curves with one
/// line per policy plus the ideal line, and the summary table.
std::string FragReportHtml(const FragReportInfo& info, const std::vector<RunResult>& runs,
                           const std::vector<std::string>& policies, const std::vector<double>& levels);

}  // namespace tessera
