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
  std::vector<ClassLoad> load;
  std::vector<std::pair<std::string, int64_t>> erlang_gpus;  ///< per SLO class
};

/// plan.json: inputs, the chosen plan and its headroom snippet, every row of the table, the
/// GPUs each policy needs, every mix the search replayed, and the `forecast` (plan/forecast.h;
/// `{"error": …}` when the history is too short for one). Byte-identical for equal inputs.
std::string PlanJson(const PlanInfo& info, const PlanSpec& spec, const PlanResult& plan);
/// plan.csv: one line per table row and class.
std::string PlanCsv(const PlanSpec& spec, const PlanResult& plan);
/// The terminal table: one row per policy plan, held-out check, sensitivity and baseline.
std::string PlanTable(const PlanInfo& info, const PlanSpec& spec, const PlanResult& plan);
/// report.html: the table, SLO attainment and p99 wait against GPUs (one line per policy,
/// through the mixes the search replayed), the headroom snippet. Self-contained.
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
