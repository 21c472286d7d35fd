#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace tessera {

/// Options of `tessera plan` (see its --help and docs/PLAN.md).
struct PlanCliOptions {
  std::string catalog_file;
  std::string pods_file;   ///< openb pod list with times; empty: --scenario
  std::string nodes_file;  ///< the history's node list (its GPU models are known models)
  std::string scenario = "peak-sale";
  std::string classes_file;
  double time_scale = 1;
  std::vector<std::string> slos;  ///< empty: "LS: p99 wait <= 1s"
  double growth = 1;
  double peak_window_h = 0;
  std::string policies = "tessera,fgd,k8s-default";
  std::string seeds = "1,2,3";
  std::string check_seeds = "101,102";
  int64_t quota_gpus = 0;
  double target_util = 0.8;
  double served_floor = 0.9;  ///< PlanSpec::served_floor (against k8s-default)
  int threads = 0;            ///< 0: the hardware's
  std::string shard;          ///< "K/N"; empty: every unit
  std::string out_dir = "results/plan";
  bool progress = false;
  bool quiet = false;
  std::string command_line;
  std::vector<std::string> merge_shards;  ///< `plan merge`
};

/// Registers `plan` (and `plan merge`) on `app`; the callbacks set `exit_code`.
void AddPlanCommand(CLI::App& app, PlanCliOptions& options, int& exit_code);
/// Runs `tessera plan`; returns the exit code (2 on bad input or an SLO no mix meets).
int RunPlanCommand(const PlanCliOptions& options);
/// Runs `tessera plan merge`.
int RunPlanMerge(const PlanCliOptions& options);

}  // namespace tessera
