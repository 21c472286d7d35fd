#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace tessera {

/// Options of `tessera replay` (see its --help and docs/REPLAY.md).
struct ReplayCliOptions {
  std::string nodes_file;
  std::string pods_file;
  std::string scenario = "peak-sale";
  std::string classes_file;  ///< YAML classes (replay/qos_yaml.h); empty = the defaults  ///<
                             ///< embedded name or YAML file, used without CSVs
  std::string policies = "tessera,k8s-default";
  double time_scale = 1;
  int num_nodes = 0;        ///< 0 = all
  std::string sweep_nodes;  ///< "50,100,200": also run each policy on these cluster sizes
  uint64_t seed = 42;
  double horizon_s = -1;
  int samples = 500;
  std::string out_dir = "results/replay";
  bool quiet = false;
  double progress_s = 5;  ///< seconds between progress lines inside a long run (0: every step)
  std::string command_line;
  // The tessera policy's knobs (docs/REPLAY.md); negative = its default.
  std::string headroom_mode;  ///< empty = the policy's default (backlog)
  double headroom_gpus = -1;
  double headroom_bucket_s = -1;
  double headroom_window_s = -1;
  double headroom_quantile = -1;
  double headroom_factor = -1;
  double headroom_yield_after = -2;  ///< < -1: the default; -1: never yield
  double headroom_yield_keep = -1;   ///< < 0: the default
  double preempt_delay_s = -1;
  std::vector<std::string> headroom_models;  ///< --headroom-model MODEL=GPUS, repeatable
  std::string tessera_placement;             ///< empty = its default
};

/// Registers the `replay` subcommand on `app`; the callback runs it and sets `exit_code`.
void AddReplayCommand(CLI::App& app, ReplayCliOptions& options, int& exit_code);
/// Runs `tessera replay`; returns the process exit code (2 on bad input).
int RunReplayCommand(const ReplayCliOptions& options);

}  // namespace tessera
