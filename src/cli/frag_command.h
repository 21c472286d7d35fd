#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/result.h"

namespace CLI {
class App;
}

namespace tessera {

/// Options of `tessera frag` (see its --help).
struct FragOptions {
  std::string nodes_file;
  std::string pods_file;
  std::string scenario = "openb-like";  ///< embedded name or YAML file, used without CSVs
  std::string policies = "all";
  std::string seeds = "42-51";
  int threads = 0;  ///< 0 = all cores
  std::string out_dir = "results/frag";
  double max_arrival = 130;
  bool placements = false;  ///< write placements.csv (--placements; large: every pod of every run)
  bool offline = false;     ///< also compute the offline bound per seed (offline/offline_bound.h)
  /// With offline: OfflineBoundOptions::min_sharing_placed (0: the plain bound).
  double offline_sharing = 0;
  bool quiet = false;
  double progress_s = 5;     ///< seconds between progress lines inside a run (0: every step)
  std::string command_line;  ///< as typed, for the report
};

/// Registers the `frag` subcommand on `app`; the callback runs it and sets `exit_code`.
void AddFragCommand(CLI::App& app, FragOptions& options, int& exit_code);
/// Runs `tessera frag`; returns the process exit code. Prints to stdout/stderr.
int RunFrag(const FragOptions& options);

/// Parses "42-51", "1,3,7-9" into seeds. Errors name the bad part.
Result<std::vector<uint64_t>> ParseSeeds(const std::string& text);

}  // namespace tessera
