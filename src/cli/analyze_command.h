#pragma once

#include <string>
#include <vector>

#include "analyze/analyze.h"

namespace CLI {
class App;
}

namespace tessera {

/// Options of `tessera analyze` (see its --help and docs/ANALYZE.md).
struct AnalyzeCliOptions {
  std::vector<std::string> files;  ///< kubectl JSON files (nodes, pods, PDBs; one List or several)
  std::string kubeconfig;          ///< live API through this kubeconfig's current context
  bool in_cluster = false;         ///< live API through the service account
  std::string out_dir = "results/analyze";
  analyze::AnalyzeOptions analyze;
  bool quiet = false;
  std::string command_line;  ///< as typed, for the report
};

/// Exit codes of `tessera analyze` besides 0 and 2 (bad input or options).
inline constexpr int kAnalyzeApiRefused = 3;      ///< the API server answered 401 or 403
inline constexpr int kAnalyzeApiUnreachable = 4;  ///< no answer, or another API error

/// Registers the `analyze` subcommand on `app`; the callback runs it and sets `exit_code`.
void AddAnalyzeCommand(CLI::App& app, AnalyzeCliOptions& options, int& exit_code);
/// Runs `tessera analyze`; returns the process exit code. Prints to stdout/stderr.
int RunAnalyze(const AnalyzeCliOptions& options);

}  // namespace tessera
