#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/node.h"
#include "model/pod.h"
#include "offline/offline_bound.h"
#include "sim/inflation.h"

namespace tessera {

// Reports of the inflation experiment (docs/ARCHITECTURE.md, "Definitions"): CSV files for
// tools, a plain-text summary for the terminal and a self-contained HTML page for people.
// Every function here is pure (no I/O, no globals) and safe to call from any thread.
//
// Percentages are in % (0..100); the fragmentation ratio Σ F_n(M) / Σ R_n is shown in the
// summary table and the HTML report as a percentage too (ratio · 100).

/// What a `tessera frag` run was, for the report's header.
struct FragReportInfo {
  std::string title;  ///< e.g. "openb_pod_list_default.csv on openb_node_list_gpu_node.csv"
  std::string nodes_source;
  std::string pods_source;
  int num_nodes = 0;
  int64_t num_gpus = 0;
  int num_pods = 0;
  int never_fit = 0;  ///< pods no node of the empty cluster could host
  std::vector<uint64_t> seeds;
  std::string generated_by;  ///< command line
};

/// Summary statistics of one policy at one arrival level over the seeds.
struct SummaryCell {
  double mean = 0;
  double sd = 0;  ///< sample standard deviation (0 for one seed)
  int runs = 0;   ///< runs that had a curve point at the level (0: mean and sd are meaningless)
};

/// Mean and sample s.d. of `values` (runs = values.size()).
SummaryCell MeanSd(const std::vector<double>& values);

/// Rows as a text table: the first column left-aligned, the others right-aligned, columns two
/// spaces apart, widths in display columns (UTF-8 code points); one line per row.
std::string AlignedTable(const std::vector<std::vector<std::string>>& rows);

/// Mean ± s.d. over seeds of unallocated % (`frag` = false) or fragmentation ratio
/// (`frag` = true, as a ratio 0..1) at `arrival_pct` for `policy`: over the runs of `policy`,
/// the curve point whose arrival_pct equals `arrival_pct`. Runs without such a point are left
/// out (see SummaryCell::runs).
SummaryCell Summarize(const std::vector<RunResult>& runs, const std::string& policy,
                      double arrival_pct, bool frag);

/// curve.csv: policy,seed,arrival_pct,arrived_pct,allocated_milli,unallocated_pct,
/// frag_milli,frag_ratio — one row per run and arrival level, runs in the given order; with
/// GPU memory (some run has RunResult::has_gpu_memory) also unallocated_mem_mib,
/// unallocated_mem_pct,failed,gpus_compute_no_memory,gpus_memory_no_compute (CurvePoint).
/// Numbers are written in the shortest form that reads back exactly ("12.5", "100").
std::string CurveCsv(const std::vector<RunResult>& runs);

/// placements.csv: policy,seed,seq,pod,node,gpus,milli_per_gpu,status — gpus as "0-3-5"
/// (ascending indices; empty for CPU-only pods), node empty for failed pods,
/// milli_per_gpu the pod's per-GPU milli (0 for CPU-only pods), status "OK" or
/// "FAILED <reason>". Clones are named "<pod>~<k>". No field contains a comma (commas, quotes
/// and line breaks in names and reasons are replaced), so no field is quoted.
std::string PlacementsCsv(const std::vector<RunResult>& runs, const std::vector<PodSpec>& pods,
                          const std::vector<NodeSpec>& nodes);

/// The plain-text table printed by `tessera frag`: one row per policy (in the given order),
/// columns "unalloc@<level>" (unallocated GPU %) then "frag@<level>" (fragmentation ratio, %)
/// as "mean±sd" with 2 decimals ("n/a" where no run reached the level); a last row "ideal"
/// with max(0, 100 − level) for unallocated; a one-line legend below. Columns are aligned.
std::string SummaryTable(const std::vector<RunResult>& runs,
                         const std::vector<std::string>& policies,
                         const std::vector<double>& levels);

/// With GPU memory (some run has RunResult::has_gpu_memory; docs/GPU_MEMORY.md), a second
/// table, which SummaryTable appends: per policy "memunalloc@<level>" (usable free GPU memory,
/// % of GPU memory) and "failed@<level>" (pods refused among those arrived), "mean±sd".
/// Empty without GPU memory.
std::string MemorySummaryTable(const std::vector<RunResult>& runs,
                               const std::vector<std::string>& policies,
                               const std::vector<double>& levels);

/// The offline bound of one seed (`tessera frag --offline`, offline/offline_bound.h).
struct OfflineBoundRow {
  uint64_t seed = 0;
  double arrival_pct = 100;  ///< the arrival level the bound is for
  double arrived_pct = 0;    ///< GPU request of the pods arrived by then, % of capacity
  OfflineBound bound;
  double seconds = 0;  ///< time to compute it (shown on the terminal, not written to files)
};

/// Per policy, the gap to the offline bound at the bound's arrival level, over the seeds that
/// have both a run and a bound: unallocated % of the run − bound, in percentage points.
struct OfflineGap {
  std::string policy;
  SummaryCell unallocated;  ///< unallocated % of the policy at the level
  SummaryCell bound;        ///< the bound on the same seeds
  SummaryCell gap;          ///< pp, ≥ 0 up to solver tolerance
};
std::vector<OfflineGap> OfflineGaps(const std::vector<RunResult>& runs,
                                    const std::vector<std::string>& policies,
                                    const std::vector<OfflineBoundRow>& bounds);

/// offline_bound.csv: seed,arrival_pct,arrived_pct,capacity_milli,max_placed_milli,
/// bound_pct,pods,node_types,pod_shapes,patterns,rounds,converged — one row per seed.
std::string OfflineBoundCsv(const std::vector<OfflineBoundRow>& bounds);
/// offline_gap.csv: policy,seed,arrival_pct,unallocated_pct,bound_pct,gap_pp — one row per
/// run whose seed has a bound, runs in the given order.
std::string OfflineGapCsv(const std::vector<RunResult>& runs,
                          const std::vector<OfflineBoundRow>& bounds);
/// offline_classes.csv: seed,gpus,gpu_milli,arrived,placed — per seed and GPU pod size, the
/// pods arrived and how many of them the bound's LP optimum places (OfflineBound::classes).
std::string OfflineClassesCsv(const std::vector<OfflineBoundRow>& bounds);
/// The line printed under the offline table: the GPU pod sizes the bound leaves out, mean
/// over the seeds ("left out by the bound, mean per seed: 238.0 of 1103 pods of 1 GPU x 810
/// milli, ..."), largest GPU milli left out first; empty where it places (nearly) every pod.
std::string OfflineLeftOut(const std::vector<OfflineBoundRow>& bounds);
/// The plain-text table printed by `tessera frag --offline`: per policy unallocated %, the
/// bound and the gap at the bound's level, "mean±sd"; a row "bound"; a legend below.
std::string OfflineTable(const std::vector<RunResult>& runs,
                         const std::vector<std::string>& policies,
                         const std::vector<OfflineBoundRow>& bounds);

/// report.html: self-contained (inline CSS and SVG; no scripts, no external resources), the
/// two curves (unallocated GPU % and fragmentation ratio against arrival %) with one line per
/// policy — the mean over its runs at each integer arrival % — plus the ideal line, and the
/// summary table. Each policy line is `<polyline class="series" data-policy="NAME">`, the
/// ideal line `<polyline class="series ideal">`. All strings are HTML-escaped. With `offline`
/// bounds, a section "Offline bound" (`<section id="offline">`) with the gap table.
std::string FragReportHtml(const FragReportInfo& info, const std::vector<RunResult>& runs,
                           const std::vector<std::string>& policies,
                           const std::vector<double>& levels,
                           const std::vector<OfflineBoundRow>& offline = {});
/// The "Offline bound" section of report.html alone (empty when `bounds` is empty).
std::string OfflineSectionHtml(const std::vector<RunResult>& runs,
                               const std::vector<std::string>& policies,
                               const std::vector<OfflineBoundRow>& bounds);

// Helpers shared by the report writers (and usable by other front ends).

/// `text` with &, <, >, " and ' replaced by HTML character references.
std::string HtmlEscape(std::string_view text);

/// The style sheet of the HTML reports (cards, charts, tables), so that every report looks
/// the same.
std::string_view ReportCss();

/// The line colours of the reports' charts, by policy index (d3 category10; they repeat after
/// ten).
std::string_view PolicyColor(size_t index);

/// "mean±sd" with `decimals` decimals, `scale` applied to both (e.g. 100 for a ratio as %);
/// "n/a" when cell.runs == 0.
std::string FormatMeanSd(const SummaryCell& cell, int decimals = 2, double scale = 1.0);

/// The mean over the runs of `policy` of unallocated % (`frag` = false) or fragmentation
/// ratio 0..1 (`frag` = true) at each integer arrival % 0..`max_arrival`: element a is the
/// mean at arrival a, or nullopt where no run has a point there.
std::vector<std::optional<double>> MeanCurve(const std::vector<RunResult>& runs,
                                             const std::string& policy, bool frag, int max_arrival);

/// The largest integer arrival % among the curve points of `runs` (0 if there are none).
int MaxArrival(const std::vector<RunResult>& runs);

}  // namespace tessera
