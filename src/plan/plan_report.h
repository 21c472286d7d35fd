#pragma once

// What `tessera plan` writes: plan.json, plan.csv, the table on the terminal, report.html,
// and the shard files of `--shard K/N` that `tessera plan merge` reads back. Pure functions
// (text in, text out); thread-safe.

#include <string>
#include <string_view>
#include <vector>

#include "plan/demand.h"
#include "plan/planner.h"
#include "util/result.h"

namespace tessera {

/// The facts of a plan's inputs that its outputs name (the same in a single run and in a
/// merge of its shards: no command line, no times).
struct PlanInfo {
  std::string demand;  ///< e.g. "openb_pod_list_default.csv (time scale 50)"
  double growth = 1;
  double peak_window_h = 0;  ///< 0: the whole history
  int pods = 0;              ///< in the demand (seed of the first draw)
  int skipped = 0;           ///< history pods left out for missing or inconsistent times
  /// What the outputs must warn about the inputs (each a sentence, without "warning: "),
  /// e.g. the pods skipped; the policies without a plan are added by the writers.
  std::vector<std::string> warnings;
  std::vector<ClassLoad> load;
  std::vector<std::pair<std::string, int64_t>> erlang_gpus;  ///< per SLO class
};

// A policy for which no mix of the catalog meets every SLO has a "plan" row without figures
// (PlanRow::eval empty): each output says "no plan" and why (PlanRow::no_plan).

/// plan.json: inputs, the chosen plan and its headroom snippet, every row of the table (a row
/// without a plan: `"result": null` and `"no_plan": why`), the GPUs each policy needs (null:
/// none), every mix the search replayed, the `forecast` (plan/forecast.h; `{"error": …}` when
/// the history is too short for one) and `warnings`. Byte-identical for equal inputs.
std::string PlanJson(const PlanInfo& info, const PlanSpec& spec, const PlanResult& plan);
/// plan.csv: one line per table row and class (one line without figures for a row without a
/// plan); the last column, `slos`, is the table's verdict.
std::string PlanCsv(const PlanSpec& spec, const PlanResult& plan);
/// The terminal table: one row per policy plan, held-out check, sensitivity and baseline;
/// below it the GPUs each policy needs and one "warning: …" line per warning.
std::string PlanTable(const PlanInfo& info, const PlanSpec& spec, const PlanResult& plan);
/// report.html, styled as the other reports (ReportCss): what was planned and the chosen plan,
/// the warnings, the table, and per wait SLO the share of the class within its bound and its
/// wait quantile against GPUs (one line per policy through the mixes the search replayed, a
/// colour-keyed legend, the SLO as a dashed line, the wait on a log axis), the headroom
/// snippet and the forecast. Self-contained.
std::string PlanHtml(const PlanInfo& info, const PlanSpec& spec, const PlanResult& plan,
                     const std::string& generated_by);

/// A shard file: `fingerprint` (of the inputs), K/N, the options that rebuild the inputs
/// (`options_json`, opaque here) and the units' results.
std::string ShardJson(const std::string& fingerprint, int k, int n, const std::string& options_json,
                      const std::vector<UnitResult>& units);
struct Shard {
  std::string fingerprint;
  int k = 0, n = 0;
  std::string options_json;
  std::vector<UnitResult> units;
};
/// Errors name the file and what is wrong.
Result<Shard> ParseShard(std::string_view text, const std::string& file);

}  // namespace tessera
