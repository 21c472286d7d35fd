#include "cli/frag_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <thread>

#include "cli/cli_util.h"
#include "frag/target_workload.h"
#include "model/cluster.h"
#include "offline/offline_bound.h"
#include "policy/policy.h"
#include "report/report.h"
#include "sim/grid.h"
#include "trace/csv_reader.h"
#include "trace/scenario.h"
#include "util/file.h"

namespace tessera {
namespace {

const std::vector<double> kReportLevels = {80, 90, 95, 100, 110, 130};

struct Workload {
  std::vector<NodeSpec> nodes;
  std::vector<PodSpec> pods;
  std::string nodes_source;
  std::string pods_source;
  bool from_scenario = false;  ///< pods are named "<class>-<k>"
};

Result<Workload> LoadWorkload(const FragOptions& o) {
  Workload w;
  if (!o.nodes_file.empty() || !o.pods_file.empty()) {
    Result<TraceFiles> files = ReadTraceFiles(o.nodes_file, o.pods_file);
    if (!files) return files.error();
    w.nodes = std::move(files->nodes);
    w.pods = std::move(files->pods);
    w.nodes_source = o.nodes_file;
    w.pods_source = o.pods_file;
    return w;
  }
  Result<LoadedScenario> loaded = LoadScenario(o.scenario);
  if (!loaded) return loaded.error();
  const std::string& source = loaded->source;
  const Scenario* scenario = &loaded->scenario;
  w.nodes = ScenarioNodes(*scenario);
  w.pods = ScenarioPods(*scenario);
  w.from_scenario = true;
  w.nodes_source = source + " (" + std::to_string(scenario->nodes.size()) + " node pools)";
  w.pods_source = source + " (" + std::to_string(scenario->classes.size()) +
                  " pod classes, generated with seed " + std::to_string(scenario->seed) + ")";
  return w;
}

Result<std::vector<std::string>> ParsePolicies(const std::string& text) {
  if (text == "all") return DefaultPolicyNames();
  std::vector<std::string> out;
  for (const std::string& name : SplitCommaList(text)) {
    const auto& known = PolicyNames();
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return Error{"--policy: unknown policy '" + name + "' (known: " + JoinNames(known) +
                   ", or all)"};
    }
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

/// One entry per embedded scenario: its name, then the first sentence of its description
/// wrapped at 90 columns.
std::string EmbeddedScenarioList() {
  std::string out;
  for (const std::string& name : EmbeddedScenarioNames()) {
    Result<Scenario> s = ParseScenario(EmbeddedScenario(name), name);
    std::string about = s ? s->description : "";
    const size_t end = about.find(". ");
    if (end != std::string::npos) about = about.substr(0, end);
    if (!about.empty() && about.back() == '.') about.pop_back();
    if (s && s->horizon_h > 0) about += "; has a timeline, so `tessera replay` runs it too";
    std::string line = "  " + name;
    line.resize(std::max<size_t>(line.size() + 1, 15), ' ');
    size_t pos = 0;
    while (pos < about.size()) {
      size_t word_end = about.find(' ', pos);
      if (word_end == std::string::npos) word_end = about.size();
      const std::string word = about.substr(pos, word_end - pos);
      if (line.size() + word.size() > 90 && line.size() > 15) {
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line + "\n";
        line = std::string(15, ' ');
      }
      line += word + " ";
      pos = word_end + 1;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace

Result<std::vector<uint64_t>> ParseSeeds(const std::string& text) {
  std::vector<uint64_t> seeds;
  auto number = [](const std::string& s, uint64_t* v) {
    if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos) {
      return false;
    }
    *v = std::stoull(s);
    return true;
  };
  for (const std::string& part : SplitCommaList(text)) {
    const size_t dash = part.find('-');
    uint64_t lo = 0;
    uint64_t hi = 0;
    const bool ok = dash == std::string::npos
                        ? number(part, &lo) && number(part, &hi)
                        : number(part.substr(0, dash), &lo) && number(part.substr(dash + 1), &hi);
    if (!ok || hi < lo || hi - lo >= 100000) {
      return Error{"--seeds: bad part '" + part + "' (expected N, N-M or a comma list of them)"};
    }
    for (uint64_t s = lo; s <= hi; ++s) seeds.push_back(s);
  }
  std::sort(seeds.begin(), seeds.end());
  seeds.erase(std::unique(seeds.begin(), seeds.end()), seeds.end());
  return seeds;
}

void AddFragCommand(CLI::App& app, FragOptions& o, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "frag",
      "The fragmentation experiment of the FGD paper (USENIX ATC '23): submit a shuffled, "
      "inflated pod list once, in order, to an empty cluster, and measure unallocated GPUs and "
      "fragmentation against arrived workload for each policy and seed.");
  cmd->footer(
      "\nExamples:\n"
      "  tessera frag                                  # embedded 'openb-like' scenario\n"
      "  tessera frag --nodes openb_node_list_gpu_node.csv --pods openb_pod_list_default.csv\n"
      "  tessera frag --policy fgd,bestfit --seeds 42-44 --out results/quick\n"
      "  tessera frag --offline --policy fgd,tessera   # and the headroom left to them\n"
      "\nEmbedded scenarios (--scenario NAME; docs/SCENARIOS.md for the YAML format):\n" +
      EmbeddedScenarioList() +
      "\nOutputs in --out: curve.csv (every arrival %), report.html (self-contained charts and\n"
      "table); with --placements also placements.csv (every pod of every run, about 50 MB for\n"
      "the default trace; check it with tessera_check); with --offline also offline_bound.csv\n"
      "(the bound per seed), offline_gap.csv (policy - bound per run) and offline_classes.csv\n"
      "(per seed and GPU pod size, the pods arrived and the pods the bound places).\n"
      "\nEach curve point is the cluster at exactly that arrived workload: the pod that crosses\n"
      "a level counts by the share of its GPU request that has arrived (linear interpolation\n"
      "between the states before and after it), so no point can beat the ideal line.\n"
      "\nThe offline bound (--offline): for each seed, the pods that have arrived by 100 % are\n"
      "known in advance, and a linear program that relaxes their placement is solved (GLPK):\n"
      "maximise the placed GPU milli over node types x pod shapes, with each node type's CPU,\n"
      "memory and GPUs as pooled capacities, only pods that fit such a node, whole-GPU pods on\n"
      "whole GPUs and sharing pods packed per GPU (patterns of milli summing to <= 1000).\n"
      "Every real placement is a solution of that LP, so NO policy, online or offline, can\n"
      "leave fewer GPUs unallocated at 100 % arrival than the bound; policy - bound is the\n"
      "headroom left (at most: the bound relaxes integrality and pools CPU/memory per node\n"
      "type, so the true optimum may lie above it). The bound may also leave out any pod:\n"
      "where whole-GPU pods are left over, it drops sharing pods whose GPU's rest nothing else\n"
      "fills (the line \"left out by the bound\" names them), even those that arrive while the\n"
      "cluster has room, which a scheduler places. --offline-sharing 1 bounds only the\n"
      "placements that place every sharing pod. Details: docs/POLICIES.md, \"Offline bound\".");
  cmd->add_option("--nodes", o.nodes_file,
                  "Node list CSV (openb format: sn,cpu_milli,memory_mib,gpu,model)");
  cmd->add_option(
      "--pods", o.pods_file,
      "Pod list CSV (openb format: name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,...])");
  cmd->add_option("--scenario", o.scenario,
                  "Embedded scenario name (" + JoinNames(EmbeddedScenarioNames()) +
                      ") or YAML scenario file, used when no CSVs are given")
      ->capture_default_str();
  cmd->add_option("--policy", o.policies,
                  "Comma-separated policies: tessera,fgd,bestfit,packing,clustering,dotprod,random,"
                  "k8s-default, or all (those); also mem-bestfit,hami-binpack,hami-spread,"
                  "hami-topology")
      ->capture_default_str();
  cmd->add_option("--seeds", o.seeds, "Seeds: N, N-M or a comma list (the paper uses 42-51)")
      ->capture_default_str();
  cmd->add_option("--threads", o.threads, "Worker threads (0 = all cores)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  cmd->add_option("--out", o.out_dir, "Output folder (created if missing)")->capture_default_str();
  cmd->add_option("--max-arrival", o.max_arrival, "Inflate the workload to this % of GPU capacity")
      ->check(CLI::Range(1.0, 1000.0))
      ->capture_default_str();
  cmd->add_flag("--placements,!--no-placements", o.placements,
                "Also write placements.csv: every submitted pod of every run (node, GPUs or the "
                "filters that refused it), for tessera_check; large (about 50 MB for the default "
                "trace's 80 runs) and it costs memory on big grids, so off by default");
  cmd->add_flag("--offline", o.offline,
                "Also compute, per seed, a lower bound on unallocated GPU % at 100 % arrival (at "
                "--max-arrival if lower) that "
                "no placement of that seed's pods can beat (LP relaxation; see below), and the "
                "gap of each policy to it");
  cmd->add_option("--offline-sharing", o.offline_sharing,
                  "With --offline: bound only the placements that place at least this share of "
                  "the pods of every GPU-sharing shape that fits some node (1: all of them), a "
                  "what-if for schedulers that leave no sharing pod out")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", o.quiet, "No progress on stderr (warnings are still printed)");
  cmd->add_option("--progress-s", o.progress_s,
                  "Seconds between progress lines inside a long run (0: at every step of "
                  "1024 pods)")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  for (CLI::Option* opt : cmd->get_options()) {
    opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // the last one given wins
  }
  cmd->callback([&o, &exit_code] { exit_code = RunFrag(o); });
}

int RunFrag(const FragOptions& o) {
  auto fail = [](const std::string& message) {
    std::cerr << "tessera frag: error: " << message << "\n";
    return 2;
  };
  Result<std::vector<std::string>> policies = ParsePolicies(o.policies);
  if (!policies) return fail(policies.error().message);
  if (o.offline_sharing > 0 && !o.offline) return fail("--offline-sharing needs --offline");
  Result<std::vector<uint64_t>> seeds = ParseSeeds(o.seeds);
  if (!seeds) return fail(seeds.error().message);
  Result<Workload> w = LoadWorkload(o);
  if (!w) return fail(w.error().message);
  if (w->nodes.empty()) return fail("the cluster has no nodes");
  if (w->pods.empty()) return fail("the pod list is empty");

  const Cluster empty(w->nodes);
  if (empty.total_gpu_milli() == 0) return fail("the cluster has no GPUs");
  TargetWorkload workload = TargetWorkload::FromPods(w->pods);
  workload.Resolve(empty);

  // Pods that no node of the empty cluster could ever host: said on the terminal, by class.
  const std::vector<NeverFitGroup> never = FindNeverFit(w->nodes, w->pods, w->from_scenario);
  int never_fit = 0;
  for (const NeverFitGroup& g : never) never_fit += g.pods;
  WarnNeverFit("frag", never);
  // The output folder is checked before the runs, not after them.
  if (Status s = CheckOutputDir(o.out_dir); !s) return fail(s.error().message);

  const int threads = o.threads > 0
                          ? o.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  if (!o.quiet) {
    std::cerr << "tessera frag: " << w->nodes.size() << " nodes, " << empty.total_gpus()
              << " GPUs, " << w->pods.size() << " pods (" << workload.classes().size()
              << " classes in the target workload); " << policies->size() << " policies x "
              << seeds->size() << " seeds on " << threads << " threads\n";
  }
  InflationOptions options;
  options.max_arrival_pct = o.max_arrival;
  options.record_placements = o.placements;
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  GridProgress progress = nullptr;
  RunProgress within = nullptr;
  double last_line = 0;  // guarded by the grid's lock (the callbacks run one at a time)
  if (!o.quiet) {
    progress = [&](int done, int total, const RunResult& r) {
      const size_t at100 = std::min<size_t>(100, r.curve.size() - 1);
      std::fprintf(stderr,
                   "  [%d/%d] %-12s seed %-4llu unallocated@100%% %6.2f%%  failed %5d  (%.1f s)\n",
                   done, total, r.policy.c_str(), static_cast<unsigned long long>(r.seed),
                   r.curve[at100].unallocated_pct, r.failed, seconds());
      last_line = seconds();
    };
    within = [&](const std::string& policy, uint64_t seed, int64_t submitted, int64_t total) {
      const double now = seconds();
      if (now - last_line < o.progress_s) return;
      last_line = now;
      std::fprintf(stderr,
                   "  ... %-12s seed %-4llu %lld of %lld pods submitted (%.0f %%)  (%.1f s)\n",
                   policy.c_str(), static_cast<unsigned long long>(seed),
                   static_cast<long long>(submitted), static_cast<long long>(total),
                   100.0 * static_cast<double>(submitted) / static_cast<double>(total), now);
    };
  }
  Result<std::vector<RunResult>> runs =
      RunGrid(w->nodes, w->pods, workload, *policies, *seeds, threads, options, progress, within);
  if (!runs) return fail(runs.error().message);

  // The offline bound per seed, at 100 % arrival (or the highest level the runs reach).
  std::vector<OfflineBoundRow> bounds;
  if (o.offline) {
    const double level = std::min(100.0, std::floor(o.max_arrival));
    for (size_t i = 0; i < seeds->size(); ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      OfflineBoundRow row;
      row.seed = (*seeds)[i];
      row.arrival_pct = level;
      const std::vector<int> arrived =
          ArrivedPods(w->pods, empty.total_gpu_milli(), row.seed, o.max_arrival, level);
      OfflineBoundOptions bound_options;
      bound_options.min_sharing_placed = o.offline_sharing;
      Result<OfflineBound> b = ComputeOfflineBound(w->nodes, w->pods, arrived, bound_options);
      if (!b) return fail("seed " + std::to_string(row.seed) + ": " + b.error().message);
      row.bound = *b;
      row.arrived_pct =
          100.0 * static_cast<double>(b->arrived_milli) / static_cast<double>(b->capacity_milli);
      row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!o.quiet) {
        std::fprintf(stderr,
                     "  [offline %zu/%zu] seed %-4llu bound@%g%% %6.2f%%  (%d pods, %d shapes x %d "
                     "node types, %d patterns, %d LP rounds%s; %.2f s)\n",
                     i + 1, seeds->size(), static_cast<unsigned long long>(row.seed), level,
                     row.bound.unallocated_pct, row.bound.pods, row.bound.pod_shapes,
                     row.bound.node_types, row.bound.patterns, row.bound.rounds,
                     row.bound.converged ? "" : ", not converged", row.seconds);
      }
      bounds.push_back(std::move(row));
    }
  }

  std::vector<double> levels;
  for (double l : kReportLevels) {
    if (l <= o.max_arrival) levels.push_back(l);
  }
  std::cout << "Unallocated GPU % and fragmentation ratio by arrived workload (% of GPU capacity), "
            << "mean ± s.d. over " << seeds->size() << " seed(s)\n"
            << SummaryTable(*runs, *policies, levels);
  if (o.offline) {
    std::cout << "\nOffline bound and gap at " << bounds.front().arrival_pct
              << " % arrival, mean ± s.d. over " << seeds->size() << " seed(s)\n"
              << OfflineTable(*runs, *policies, bounds) << OfflineLeftOut(bounds);
  }
  if (never_fit > 0) {
    std::cout << never_fit
              << " pod(s) fit no node of the empty cluster (counted as arrived, never placed)\n";
  }

  if (Status s = WriteFile(o.out_dir + "/curve.csv", CurveCsv(*runs)); !s)
    return fail(s.error().message);
  if (o.placements) {
    if (Status s =
            WriteFile(o.out_dir + "/placements.csv", PlacementsCsv(*runs, w->pods, w->nodes));
        !s) {
      return fail(s.error().message);
    }
  }
  if (o.offline) {
    if (Status s = WriteFile(o.out_dir + "/offline_bound.csv", OfflineBoundCsv(bounds)); !s)
      return fail(s.error().message);
    if (Status s = WriteFile(o.out_dir + "/offline_gap.csv", OfflineGapCsv(*runs, bounds)); !s)
      return fail(s.error().message);
    if (Status s = WriteFile(o.out_dir + "/offline_classes.csv", OfflineClassesCsv(bounds)); !s)
      return fail(s.error().message);
  }
  FragReportInfo info;
  info.title = "Fragmentation: " + w->pods_source;
  info.nodes_source = w->nodes_source;
  info.pods_source = w->pods_source;
  info.num_nodes = static_cast<int>(w->nodes.size());
  info.num_gpus = empty.total_gpus();
  info.num_pods = static_cast<int>(w->pods.size());
  info.never_fit = never_fit;
  info.seeds = *seeds;
  info.generated_by = o.command_line;
  if (Status s = WriteFile(o.out_dir + "/report.html",
                           FragReportHtml(info, *runs, *policies, levels, bounds));
      !s) {
    return fail(s.error().message);
  }
  std::cout << "Wrote " << o.out_dir << "/curve.csv" << (o.placements ? ", placements.csv" : "")
            << (o.offline ? ", offline_bound.csv, offline_gap.csv, offline_classes.csv" : "")
            << ", report.html\n";
  return 0;
}

}  // namespace tessera
