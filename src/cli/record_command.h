#pragma once

#include <string>

#include "util/result.h"

namespace CLI {
class App;
}

namespace tessera {

/// Options of `tessera record` (see its --help and docs/RECORD.md).
struct RecordCliOptions {
  bool in_cluster = false;
  std::string kubeconfig;
  std::string out_dir;
  std::string until;     ///< RFC 3339 time or Unix seconds ("" = none)
  std::string duration;  ///< "90", "90s", "15m", "12h", "7d" ("" = none)
  double flush_seconds = 10;
  double give_up_seconds = 300;
  std::string config_file;  ///< `tessera serve`'s tessera.yaml: its classes ("" = the defaults)
};

/// Registers the `record` subcommand on `app`; the callback runs it and sets `exit_code`.
void AddRecordCommand(CLI::App& app, RecordCliOptions& options, int& exit_code);
/// Runs `tessera record` until --until, --duration, SIGTERM or SIGINT; returns the exit code
/// (0 after a clean end, 1 when the API server cannot be reached or refuses, 2 for bad input).
int RunRecordCommand(const RecordCliOptions& options);

/// Seconds of a duration "90", "90s", "15m", "12h" or "7d" (> 0); the error names the text.
Result<double> ParseDurationSeconds(const std::string& text);

}  // namespace tessera
