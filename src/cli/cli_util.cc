#include "cli/cli_util.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <tuple>

#include "model/cluster.h"
#include "replay/timeline.h"
#include "trace/csv_reader.h"
#include "trace/scenario.h"
#include "util/file.h"

namespace tessera {

std::vector<std::string> SplitCommaList(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

Result<LoadedScenario> LoadScenario(const std::string& name_or_file) {
  std::string yaml(EmbeddedScenario(name_or_file));
  std::string source = "embedded scenario '" + name_or_file + "'";
  if (yaml.empty()) {
    Result<std::string> text = ReadFile(name_or_file);
    if (!text) {
      return Error{"--scenario '" + name_or_file + "' is neither an embedded scenario (" +
                   JoinNames(EmbeddedScenarioNames()) +
                   ") nor a readable file: " + text.error().message};
    }
    yaml = std::move(text).value();
    source = name_or_file;
  }
  Result<Scenario> scenario = ParseScenario(yaml, source);
  if (!scenario) return scenario.error();
  return LoadedScenario{std::move(scenario).value(), std::move(source), std::move(yaml)};
}

Result<TraceFiles> ReadTraceFiles(const std::string& nodes_file, const std::string& pods_file) {
  if (nodes_file.empty() || pods_file.empty()) {
    return Error{"--nodes and --pods go together (or give neither to use --scenario)"};
  }
  Result<std::string> node_text = ReadFile(nodes_file);
  if (!node_text) return node_text.error();
  Result<std::vector<NodeSpec>> nodes = ReadNodeCsv(*node_text, nodes_file);
  if (!nodes) return nodes.error();
  Result<std::string> pod_text = ReadFile(pods_file);
  if (!pod_text) return pod_text.error();
  Result<std::vector<PodSpec>> pods = ReadPodCsv(*pod_text, pods_file);
  if (!pods) return pods.error();
  return TraceFiles{std::move(nodes).value(), std::move(pods).value(), CsvDataLines(*pod_text)};
}

std::vector<NeverFitGroup> FindNeverFit(const std::vector<NodeSpec>& nodes,
                                        const std::vector<PodSpec>& pods, bool by_class) {
  const Cluster empty(nodes);
  // One check per distinct request (a list of millions of pods has a few hundred shapes).
  using Shape = std::tuple<int64_t, int64_t, int, int32_t, int64_t, ModelMask>;
  struct Verdict {
    bool fits = false;
    std::string why;
  };
  std::map<Shape, Verdict> verdicts;
  std::map<std::string, size_t> group_index;
  std::vector<NeverFitGroup> groups;
  for (const PodSpec& p : pods) {
    const PodRequest r = empty.MakeRequest(p);
    const Shape shape{r.cpu_milli, r.memory_mib,     r.gpu_count,
                      r.gpu_milli, r.gpu_memory_mib, r.models};
    auto [it, inserted] = verdicts.emplace(shape, Verdict{});
    Verdict& v = it->second;
    if (inserted) {
      std::array<int, kNumFitReasons> why{};
      for (int n = 0; n < empty.size() && !v.fits; ++n) {
        const FitReason reason = empty.Check(n, r);
        v.fits = reason == FitReason::kFits;
        ++why[static_cast<int>(reason)];
      }
      if (!v.fits) {
        const int model = static_cast<int>(FitReason::kGpuModel);
        if (empty.size() > 0 && why[model] == empty.size()) {
          v.why = "no node has GPU model '" + p.gpu_spec +
                  "' (the cluster has: " + JoinNames(empty.models()) + ")";
        } else {
          static constexpr const char* kWhat[kNumFitReasons] = {"",
                                                                "another GPU model",
                                                                "fewer GPUs than the pod asks for",
                                                                "too little CPU",
                                                                "too little memory",
                                                                "too little GPU",
                                                                "too little GPU memory",
                                                                "no aligned free GPUs"};
          for (int k = 1; k < kNumFitReasons; ++k) {
            if (why[k] == 0) continue;
            v.why += (v.why.empty() ? "" : "; ") + std::to_string(why[k]) + " of " +
                     std::to_string(empty.size()) + " nodes have " + kWhat[k] + " (" +
                     std::string(FitReasonName(static_cast<FitReason>(k))) + ")";
          }
          if (v.why.empty()) v.why = "the cluster has no nodes";
        }
      }
    }
    if (v.fits) continue;
    std::string key;
    std::string what;
    if (by_class) {
      const size_t dash = p.name.rfind('-');
      key = dash == std::string::npos ? p.name : p.name.substr(0, dash);
      what = "class '" + key + "'";
    } else {
      key = std::to_string(r.cpu_milli) + "/" + std::to_string(r.memory_mib) + "/" +
            std::to_string(r.gpu_count) + "/" + std::to_string(r.gpu_milli) + "/" +
            std::to_string(r.gpu_memory_mib) + "/" + p.gpu_spec;
      what = "pods like '" + p.name + "' (" + std::to_string(p.gpu_count) + " GPU x " +
             std::to_string(p.gpu_milli) + " milli" +
             (p.gpu_spec.empty() ? "" : ", model " + p.gpu_spec) + ", cpu " +
             std::to_string(p.cpu_milli) + " milli, memory " + std::to_string(p.memory_mib) +
             " MiB)";
    }
    auto [g, added] = group_index.emplace(key, groups.size());
    if (added) groups.push_back({what, 0, v.why});
    ++groups[g->second].pods;
  }
  return groups;
}

void WarnNeverFit(const std::string& command, const std::vector<NeverFitGroup>& groups) {
  constexpr size_t kMaxLines = 10;
  for (size_t i = 0; i < groups.size() && i < kMaxLines; ++i) {
    const NeverFitGroup& g = groups[i];
    std::cerr << "tessera " << command << ": warning: " << g.what << " (" << g.pods
              << (g.pods == 1 ? " pod" : " pods")
              << ") fits no node of the empty cluster: " << g.why
              << "; its pods can never be placed\n";
  }
  if (groups.size() > kMaxLines) {
    std::cerr << "tessera " << command << ": warning: and " << groups.size() - kMaxLines
              << " more kinds of pods that fit no node\n";
  }
}

UsageError DescribeUsageError(const std::vector<std::string>& args,
                              const std::vector<std::string>& commands, const std::string& what) {
  const std::string known = "commands: " + JoinNames(commands) + "; see tessera --help";
  UsageError out;
  if (args.empty()) {
    out.message = "tessera: error: no command given (" + known + ")";
    return out;
  }
  for (const std::string& a : args) {
    if (a.empty() || a[0] == '-') continue;  // an option of the top level (--version, ...)
    if (std::find(commands.begin(), commands.end(), a) != commands.end()) {
      out.message = "tessera " + a + ": error: " + what + " (see tessera " + a + " --help)";
    } else {
      out.message = "tessera: error: unknown command '" + a + "' (" + known + ")";
    }
    return out;
  }
  for (const std::string& a : args) {
    if (a != "-h" && a != "--help" && a != "--version") {
      out.message = "tessera: error: unknown option '" + a +
                    "' (options go after the command: tessera <command> " + a + "; " + known + ")";
      return out;
    }
  }
  out.message = "tessera: error: " + what + " (" + known + ")";
  return out;
}

std::string SkippedPodsWarning(const std::vector<SkippedPod>& skipped,
                               const std::string& listed_in) {
  if (skipped.empty()) return "";
  return std::to_string(skipped.size()) +
         " pod(s) skipped for missing or inconsistent times, e.g. " + skipped[0].where + ": pod '" +
         skipped[0].name + "': " + skipped[0].reason + "; all of them, with file:line, in " +
         listed_in;
}

Status CheckOutputDir(const std::string& dir) {
  if (Status s = MakeDirectories(dir); !s) return s;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return Error{dir + ": not a directory"};
  const std::string probe = dir + "/.tessera-write-check";
  std::FILE* f = std::fopen(probe.c_str(), "w");
  if (f == nullptr) return Error{dir + ": not writable: " + std::strerror(errno)};
  std::fclose(f);
  std::remove(probe.c_str());
  return {};
}

}  // namespace tessera
