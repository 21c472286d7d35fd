#pragma once

#include <string>
#include <vector>

#include "model/node.h"
#include "model/pod.h"
#include "replay/timeline.h"
#include "trace/scenario.h"
#include "util/result.h"

namespace tessera {

// Small helpers shared by the subcommands' option parsing.

/// The parts of a comma-separated list, in order, empty parts kept ("a,,b" → {"a", "", "b"};
/// "" → {""}): callers reject what they do not accept, naming the part.
std::vector<std::string> SplitCommaList(const std::string& text);

/// "a, b, c".
std::string JoinNames(const std::vector<std::string>& names);

/// A scenario parsed from an embedded name or a YAML file, and where it came from
/// ("embedded scenario 'x'" or the file name).
struct LoadedScenario {
  Scenario scenario;
  std::string source;
  std::string yaml;  ///< the text it was parsed from
};
/// `name_or_file` as an embedded scenario name, else as a YAML file (the error lists the
/// embedded names), parsed (errors name source:line).
Result<LoadedScenario> LoadScenario(const std::string& name_or_file);

/// A node list and a pod list read from openb CSV files (`--nodes`, `--pods`), with the
/// physical line of each pod row (for TimelineFromTrace's skip reasons).
struct TraceFiles {
  std::vector<NodeSpec> nodes;
  std::vector<PodSpec> pods;
  std::vector<int> pod_lines;
};
/// Both files, or an error naming the file and line; "--nodes and --pods go together" when
/// only one is given. Callers take the scenario path when neither is.
Result<TraceFiles> ReadTraceFiles(const std::string& nodes_file, const std::string& pods_file);

/// What to print for a command line the option parser refused, and the exit code (always 2,
/// the code for bad input). `args` are argv[1..]; `commands` the subcommand names; `what` the
/// parser's message. The message is "tessera <command>: error: <what> (see tessera <command>
/// --help)" when the line names a command, "tessera: error: unknown command 'x' (commands:
/// ...)" when its first word is no command, and "tessera: error: no command given ..." when it
/// is empty.
struct UsageError {
  std::string message;
  int exit_code = 2;
};
UsageError DescribeUsageError(const std::vector<std::string>& args,
                              const std::vector<std::string>& commands, const std::string& what);

/// Pods that no node of the empty cluster can ever host, grouped by scenario class (the pod
/// name without its "-<k>" suffix) when `by_class`, else by request (cpu, memory, GPUs, milli,
/// GPU memory, models).
struct NeverFitGroup {
  std::string what;  ///< "class 'huge'" or "pods like 'p1' (8 GPU x 1000 milli, ...)"
  int pods = 0;
  std::string why;  ///< e.g. "no node has GPU model 'H100'" or "gpu-count on 40 of 40 nodes"
};
std::vector<NeverFitGroup> FindNeverFit(const std::vector<NodeSpec>& nodes,
                                        const std::vector<PodSpec>& pods, bool by_class);
/// Prints one "tessera <command>: warning: ..." line per group on stderr (at most 10, then a
/// count of the rest).
void WarnNeverFit(const std::string& command, const std::vector<NeverFitGroup>& groups);

/// The warning about the pods a timeline left out (replay/timeline.h), as `tessera replay` and
/// `tessera plan` print it after "tessera <command>: warning: ": "897 pod(s) skipped for
/// missing or inconsistent times, e.g. pods.csv:12: pod 'p1': scheduled_time missing; all of
/// them, with file:line, in <listed_in>". Empty when `skipped` is.
std::string SkippedPodsWarning(const std::vector<SkippedPod>& skipped,
                               const std::string& listed_in);

/// Checks before any long computation that `dir` can hold the output files: creates it (and
/// its parents) if missing, then creates and removes a probe file in it. The error names the
/// folder and the OS reason ("results/x: not writable: Permission denied").
Status CheckOutputDir(const std::string& dir);

}  // namespace tessera
