// tessera: a GPU scheduler for Kubernetes that treats fragmentation and latency SLOs as
// first-class constraints. This is the command-line front door (see README.md).
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "cli/analyze_command.h"
#include "cli/cli_util.h"
#include "cli/frag_command.h"
#include "cli/plan_command.h"
#include "cli/record_command.h"
#include "cli/replay_command.h"
#include "cli/serve_command.h"

int main(int argc, char** argv) {
  CLI::App app{
      "Tessera: a fragmentation- and SLO-aware GPU scheduler for Kubernetes.\n"
      "One scheduling engine, several front doors; run `tessera <command> --help` for each."};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("tessera 0.1.0"));
  app.footer("\nArchitecture and guides: README.md, docs/ARCHITECTURE.md.");
  int exit_code = 0;
  tessera::FragOptions frag;
  frag.command_line = "tessera";
  for (int i = 1; i < argc; ++i) frag.command_line += std::string(" ") + argv[i];
  tessera::AddFragCommand(app, frag, exit_code);
  tessera::ReplayCliOptions replay;
  replay.command_line = frag.command_line;
  tessera::AddReplayCommand(app, replay, exit_code);
  tessera::RecordCliOptions record;
  tessera::AddRecordCommand(app, record, exit_code);
  tessera::ServeOptions serve;
  tessera::AddServeCommand(app, serve, exit_code);
  tessera::PlanCliOptions plan;
  plan.command_line = frag.command_line;
  tessera::AddPlanCommand(app, plan, exit_code);
  tessera::AnalyzeCliOptions analyze;
  analyze.command_line = frag.command_line;
  tessera::AddAnalyzeCommand(app, analyze, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      return app.exit(e);  // --help, --version
    }
    std::vector<std::string> commands;
    for (const CLI::App* sub : app.get_subcommands({})) commands.push_back(sub->get_name());
    std::vector<std::string> args(argv + 1, argv + argc);
    const tessera::UsageError usage = tessera::DescribeUsageError(args, commands, e.what());
    std::cerr << usage.message << "\n";
    return usage.exit_code;
  }
  return exit_code;
}
