#include "cli/replay_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "model/cluster.h"
#include "replay/node_subset.h"
#include "replay/qos_yaml.h"
#include "replay/replay_policy.h"
#include "replay/scenario_timeline.h"
#include "report/replay_report.h"
#include "sched/classes.h"
#include "trace/csv_reader.h"
#include "trace/scenario.h"
#include "util/file.h"

namespace tessera {
namespace {

struct Input {
  std::vector<NodeSpec> nodes;
  Timeline timeline;
  std::string source;
  double horizon_s = -1;       // from a scenario
  bool from_scenario = false;  // pods are named "<class>-<k>"
};

Result<Input> LoadInput(const ReplayCliOptions& o) {
  Input in;
  if (!o.nodes_file.empty() || !o.pods_file.empty()) {
    Result<TraceFiles> files = ReadTraceFiles(o.nodes_file, o.pods_file);
    if (!files) return files.error();
    in.nodes = std::move(files->nodes);
    in.timeline = TimelineFromTrace(files->pods, o.pods_file, files->pod_lines, o.time_scale);
    in.source = o.pods_file + " on " + o.nodes_file;
    return in;
  }
  Result<LoadedScenario> loaded = LoadScenario(o.scenario);
  if (!loaded) return loaded.error();
  const std::string& source = loaded->source;
  const Scenario* scenario = &loaded->scenario;
  if (scenario->horizon_h <= 0) {
    return Error{source +
                 ": the scenario has no timeline (give horizon_h and per-class "
                 "'arrival' to replay it; see docs/SCENARIOS.md)"};
  }
  in.nodes = ScenarioNodes(*scenario);
  in.timeline = ScenarioTimeline(*scenario, o.time_scale);
  in.horizon_s = scenario->horizon_h * 3600.0 / o.time_scale;
  in.source = source;
  in.from_scenario = true;
  return in;
}

Result<std::vector<int>> ParseSizes(const std::string& text) {
  std::vector<int> out;
  if (text.empty()) return out;
  for (const std::string& part : SplitCommaList(text)) {
    if (part.empty() || part.size() > 7 ||
        part.find_first_not_of("0123456789") != std::string::npos || std::stoi(part) == 0) {
      return Error{"--sweep-nodes: bad part '" + part +
                   "' (expected positive node counts, e.g. 40,60,80)"};
    }
    out.push_back(std::stoi(part));
  }
  return out;
}

Result<std::vector<ReplayPolicy>> ParsePolicies(const ReplayCliOptions& o) {
  const std::string& text = o.policies;
  std::vector<ReplayPolicy> out;
  for (const std::string& name : SplitCommaList(text)) {
    Result<ReplayPolicy> p = ReplayPolicyByName(name);
    if (!p) return Error{"--policy: " + p.error().message};
    if (p->slo_aware) {
      HeadroomOptions& h = p->headroom;
      if (o.headroom_mode == "none") h.mode = HeadroomOptions::Mode::kNone;
      if (o.headroom_mode == "static") h.mode = HeadroomOptions::Mode::kStatic;
      if (o.headroom_mode == "forecast") h.mode = HeadroomOptions::Mode::kForecast;
      if (o.headroom_mode == "backlog") h.mode = HeadroomOptions::Mode::kBacklog;
      if (o.headroom_gpus >= 0) h.gpus = static_cast<int64_t>(o.headroom_gpus);
      if (o.headroom_bucket_s > 0) h.bucket_s = o.headroom_bucket_s;
      if (o.headroom_window_s > 0) h.window_s = o.headroom_window_s;
      if (o.headroom_quantile >= 0) h.quantile = o.headroom_quantile;
      if (o.headroom_factor >= 0) h.factor = o.headroom_factor;
      if (o.headroom_yield_after >= -1) h.yield_after = o.headroom_yield_after;
      if (o.headroom_yield_keep >= 0) h.yield_keep = o.headroom_yield_keep;
      Result<std::vector<std::pair<std::string, int64_t>>> models =
          ParseHeadroomModels(o.headroom_models);
      if (!models) return models.error();
      h.model_gpus = std::move(models).value();
      if (h.mode == HeadroomOptions::Mode::kNone && !h.model_gpus.empty()) {
        return Error{
            "--headroom-model needs a headroom: --headroom-mode static, forecast or backlog "
            "(none keeps nothing)"};
      }
      if (o.preempt_delay_s >= 0) p->preempt_delay_s = o.preempt_delay_s;
      if (!o.tessera_placement.empty()) {
        Result<ReplayPolicy> base = ReplayPolicyByName(o.tessera_placement);
        if (!base) return Error{"--tessera-placement: " + base.error().message};
        p->placement = base->placement;
      }
    }
    out.push_back(std::move(p).value());
  }
  return out;
}

std::string ScenariosWithTimeline() {
  std::vector<std::string> names;
  for (const std::string& name : EmbeddedScenarioNames()) {
    Result<Scenario> s = ParseScenario(EmbeddedScenario(name), name);
    if (s && s->horizon_h > 0) names.push_back(name);
  }
  return JoinNames(names);
}

int64_t Gpus(const std::vector<NodeSpec>& nodes) {
  int64_t g = 0;
  for (const NodeSpec& n : nodes) g += n.gpu_count;
  return g;
}

}  // namespace

void AddReplayCommand(CLI::App& app, ReplayCliOptions& o, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "replay",
      "Event-driven replay on a virtual clock: pods arrive at their creation time, wait in a "
      "priority queue (classes from qos), may preempt lower classes (grace period), run for "
      "their duration; per class wait percentiles, SLO attainment, preemptions, GPU-hours.");
  cmd->footer(
      "\nExamples:\n"
      "  tessera replay                                   # embedded 'peak-sale' scenario\n"
      "  tessera replay --nodes openb_node_list_gpu_node.csv --pods openb_pod_list_default.csv \\\n"
      "                 --time-scale 100 --num-nodes 120 --policy tessera,k8s-default\n"
      "  tessera replay --sweep-nodes 60,80,100,120 ...   # the latency-utilization trade-off\n"
      "\nEmbedded scenarios with a timeline: " +
      ScenariosWithTimeline() +
      " (docs/SCENARIOS.md).\n"
      "\nOutputs in --out: classes.csv, series.csv, skipped.csv, sweep.csv (with --sweep-nodes),\n"
      "report.html. Policies: tessera, or any placement policy (k8s-default, fgd, bestfit, ...)\n"
      "with priority + preemption; add /nopreempt to turn preemption off. See docs/REPLAY.md.");
  cmd->add_option("--nodes", o.nodes_file, "Node list CSV (openb format)");
  cmd->add_option("--pods", o.pods_file,
                  "Pod list CSV with creation_time, scheduled_time, deletion_time, qos");
  cmd->add_option("--scenario", o.scenario,
                  "Embedded scenario or YAML file with a timeline, used when no CSVs are given")
      ->capture_default_str();
  cmd->add_option("--classes", o.classes_file,
                  "YAML file of QoS classes (name, priority, slo_wait_s, preemptible, grace_s, "
                  "use_headroom); default LS 1000/1 s (uses the headroom), Guaranteed 900/10 s, "
                  "Burstable 500/60 s, BE 0");
  cmd->add_option("--policy", o.policies, "Comma-separated replay policies")->capture_default_str();
  cmd->add_option("--time-scale", o.time_scale,
                  "Divide arrival times by this (durations kept): raises the offered load")
      ->check(CLI::Range(1e-3, 1e6))
      ->capture_default_str();
  cmd->add_option("--num-nodes", o.num_nodes,
                  "Replay on this many nodes drawn from the node list, keeping its GPU-model mix "
                  "(0 = all)")
      ->check(CLI::Range(0, 10000000))
      ->capture_default_str();
  cmd->add_option(
      "--sweep-nodes", o.sweep_nodes,
      "Also run every policy on these cluster sizes (comma list) for the trade-off charts");
  cmd->add_option("--seed", o.seed, "Seed of the node subset and of the node order")
      ->capture_default_str();
  cmd->add_option("--horizon-s", o.horizon_s,
                  "End of the run in virtual seconds (default: the last arrival, or the "
                  "scenario's horizon)")
      ->check(CLI::Range(0.0, 1e12));
  cmd->add_option("--samples", o.samples, "Time-series points")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  cmd->add_option("--out", o.out_dir, "Output folder (created if missing)")->capture_default_str();
  cmd->add_flag("-q,--quiet", o.quiet, "No progress on stderr (warnings are still printed)");
  // The defaults shown are the tessera policy's own (TesseraReplayPolicy()); the option
  // variables stay "unset" so that only the options given override it.
  const ReplayPolicy d = TesseraReplayPolicy();
  auto number = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%g", v);
    return std::string(buf);
  };
  cmd->add_option("--headroom-mode", o.headroom_mode,
                  "tessera: how the LS headroom is sized: backlog (2.5 times the highest LS "
                  "backlog of the window, drained at the observed rate GPUs become idle), "
                  "forecast (a quantile of LS GPUs requested per bucket), static "
                  "(--headroom-gpus), none")
      ->check(CLI::IsMember({"backlog", "forecast", "static", "none"}))
      ->default_str("backlog");
  cmd->add_option("--headroom-gpus", o.headroom_gpus,
                  "tessera: the least idle GPUs kept for LS (the floor of the forecast)")
      ->check(CLI::Range(0.0, 1e7))
      ->default_str(number(static_cast<double>(d.headroom.gpus)));
  cmd->add_option("--headroom-bucket-s", o.headroom_bucket_s,
                  "tessera: forecast mode: LS demand is measured per this many virtual seconds; "
                  "backlog mode: how often old backlog peaks leave the window")
      ->check(CLI::Range(1e-3, 1e9))
      ->default_str(number(d.headroom.bucket_s));
  cmd->add_option("--headroom-window-s", o.headroom_window_s,
                  "tessera: the sliding window of the backlog or the forecast (virtual seconds)")
      ->check(CLI::Range(1e-3, 1e10))
      ->default_str(number(d.headroom.window_s));
  cmd->add_option("--headroom-quantile", o.headroom_quantile,
                  "tessera, forecast mode: the quantile of per-bucket LS demand kept free (0..1)")
      ->check(CLI::Range(0.0, 1.0))
      ->default_str(number(d.headroom.quantile));
  cmd->add_option("--headroom-factor", o.headroom_factor,
                  "tessera: multiplies the backlog or the forecast")
      ->check(CLI::Range(0.0, 1000.0))
      ->default_str(number(d.headroom.factor));
  cmd->add_option("--headroom-yield-after", o.headroom_yield_after,
                  "tessera: a held pod of a class with a wait SLO that has waited this share of "
                  "its SLO is at risk and may take the headroom down to --headroom-yield-keep "
                  "of it (-1: never)")
      ->check(CLI::Range(-1.0, 1000.0))
      ->default_str(number(d.headroom.yield_after));
  cmd->add_option("--headroom-yield-keep", o.headroom_yield_keep,
                  "tessera: the share of the headroom a pod at risk of its SLO must still leave "
                  "idle (0..1)")
      ->check(CLI::Range(0.0, 1.0))
      ->default_str(number(d.headroom.yield_keep));
  cmd->add_option("--preempt-delay-s", o.preempt_delay_s,
                  "tessera: an LS pod preempts only after waiting this long (virtual seconds)")
      ->check(CLI::Range(0.0, 1e9))
      ->default_str(number(d.preempt_delay_s));
  cmd->add_option("--tessera-placement", o.tessera_placement,
                  "tessera: the placement policy under the headroom")
      ->default_str(d.placement);
  cmd->add_option("--progress-s", o.progress_s,
                  "Seconds between progress lines inside a long run (0: every 1024 events)")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  for (CLI::Option* opt : cmd->get_options()) {
    opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  // Repeatable (after the loop: each one given counts).
  cmd->add_option("--headroom-model", o.headroom_models,
                  "tessera: MODEL=GPUS, repeatable: also keep at least GPUS idle GPUs of that "
                  "GPU model for LS, besides the cluster-wide headroom")
      ->type_name("MODEL=GPUS")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->callback([&o, &exit_code] { exit_code = RunReplayCommand(o); });
}

int RunReplayCommand(const ReplayCliOptions& o) {
  auto fail = [](const std::string& message) {
    std::cerr << "tessera replay: error: " << message << "\n";
    return 2;
  };
  Result<std::vector<ReplayPolicy>> policies = ParsePolicies(o);
  if (!policies) return fail(policies.error().message);
  Result<std::vector<int>> sizes = ParseSizes(o.sweep_nodes);
  if (!sizes) return fail(sizes.error().message);
  Result<Input> in = LoadInput(o);
  if (!in) return fail(in.error().message);
  if (in->timeline.pods.empty()) return fail("no pod has usable times: nothing to replay");
  const std::vector<NodeSpec> nodes =
      o.num_nodes > 0 ? ResizeNodes(in->nodes, o.num_nodes, o.seed) : in->nodes;
  if (Gpus(nodes) == 0) return fail("the cluster has no GPUs");
  for (const ReplayPolicy& p : *policies) {
    for (const auto& model_floor : p.headroom.model_gpus) {
      // (clang 14 cannot capture a structured binding in the lambda below.)
      const std::string& model = model_floor.first;
      const auto gpus = model_floor.second;
      const bool known = std::any_of(nodes.begin(), nodes.end(), [&](const NodeSpec& n) {
        return n.gpu_count > 0 && n.gpu_model == model;
      });
      if (!known) {
        std::cerr << "tessera replay: warning: --headroom-model " << model << "=" << gpus
                  << ": no node has GPU model '" << model << "'; that floor keeps nothing\n";
      }
    }
  }
  ReplayOptions base;
  if (!o.classes_file.empty()) {
    Result<std::string> text = ReadFile(o.classes_file);
    if (!text) return fail(text.error().message);
    Result<QosClasses> classes = ParseQosClasses(*text, o.classes_file);
    if (!classes) return fail(classes.error().message);
    base.qos = std::move(classes).value();
  }
  // tessera keeps its headroom for the classes with use_headroom; the trade-off charts show
  // the top class's p99 wait and the fallback (best-effort) class's GPU-hours.
  int top = 0;
  for (size_t i = 0; i < base.qos.classes.size(); ++i) {
    if (base.qos.classes[i].priority > base.qos.classes[top].priority) top = static_cast<int>(i);
  }
  ProtectHeadroomClasses(base.qos, &*policies);
  base.seed = o.seed;
  base.samples = o.samples;
  base.horizon_s = o.horizon_s >= 0 ? o.horizon_s : in->horizon_s;
  if (Status s = CheckOutputDir(o.out_dir); !s) return fail(s.error().message);

  // Warnings (printed with --quiet too): pods left out, and kinds of pods no node can host.
  const std::vector<SkippedPod>& skipped = in->timeline.skipped;
  if (!skipped.empty()) {
    std::cerr << "tessera replay: warning: "
              << SkippedPodsWarning(skipped, o.out_dir + "/skipped.csv") << "\n";
  }
  {
    std::vector<PodSpec> specs;
    specs.reserve(in->timeline.pods.size());
    for (const TimedPod& p : in->timeline.pods) specs.push_back(p.spec);
    WarnNeverFit("replay", FindNeverFit(nodes, specs, in->from_scenario));
  }
  if (!o.quiet) {
    std::cerr << "tessera replay: " << nodes.size() << " nodes, " << Gpus(nodes) << " GPUs, "
              << in->timeline.pods.size() << " pods (" << skipped.size()
              << " skipped for their times), arrivals compressed " << o.time_scale << "x\n";
  }
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  double last_line = 0;
  // Progress inside each run, at most every --progress-s seconds of wall time.
  auto with_progress = [&](ReplayOptions options, const std::string& what) {
    if (!o.quiet) {
      options.progress = [&, what](double now_s, double horizon_s) {
        const double t = seconds();
        if (t - last_line < o.progress_s) return;
        last_line = t;
        std::fprintf(stderr, "  ... %s: virtual %.2f of %.2f h (%.0f %%)  (%.1f s)\n", what.c_str(),
                     now_s / 3600, horizon_s / 3600,
                     horizon_s > 0 ? 100 * now_s / horizon_s : 100.0, t);
      };
    }
    return options;
  };
  auto done = [&](const ReplayResult& r, const std::string& what) {
    if (o.quiet) return;
    std::fprintf(stderr, "  %s done: %d preemptions  (%.1f s)\n", what.c_str(), r.preemptions,
                 seconds());
    last_line = seconds();
  };
  std::vector<ReplayResult> runs;
  for (const ReplayPolicy& p : *policies) {
    const std::string what = p.name + " on " + std::to_string(nodes.size()) + " nodes";
    runs.push_back(RunReplayPolicy(nodes, in->timeline, p, with_progress(base, what)));
    done(runs.back(), what);
  }
  std::vector<SweepPoint> sweep;
  ReplayOptions sweep_options = base;
  sweep_options.samples = 0;
  for (int n : *sizes) {
    const std::vector<NodeSpec> sub = ResizeNodes(in->nodes, n, o.seed);
    for (const ReplayPolicy& p : *policies) {
      const std::string what = p.name + " on " + std::to_string(sub.size()) + " nodes (sweep)";
      sweep.push_back({static_cast<int>(sub.size()), Gpus(sub),
                       RunReplayPolicy(sub, in->timeline, p, with_progress(sweep_options, what))});
      done(sweep.back().result, what);
    }
  }
  std::cout << ReplayTable(runs);
  if (!in->timeline.skipped.empty()) {
    std::cout << in->timeline.skipped.size()
              << " pod(s) skipped for missing or inconsistent times (listed in skipped.csv)\n";
  }
  const std::vector<std::pair<std::string, std::string>> files = {
      {"classes.csv", ReplayClassesCsv(runs)},
      {"series.csv", ReplaySeriesCsv(runs)},
      {"pods.csv", ReplayPodsCsv(runs, in->timeline, nodes)},
      {"skipped.csv", SkippedCsv(in->timeline.skipped)},
  };
  for (const auto& [name, content] : files) {
    if (Status s = WriteFile(o.out_dir + "/" + name, content); !s) return fail(s.error().message);
  }
  if (!sweep.empty()) {
    if (Status s = WriteFile(o.out_dir + "/sweep.csv", SweepCsv(sweep)); !s) {
      return fail(s.error().message);
    }
  }
  ReplayReportInfo info;
  info.title = "Replay: " + in->source;
  info.source = in->source;
  info.num_nodes = static_cast<int>(nodes.size());
  info.num_gpus = Gpus(nodes);
  info.num_pods = static_cast<int>(in->timeline.pods.size());
  info.skipped = static_cast<int>(in->timeline.skipped.size());
  info.time_scale = o.time_scale;
  info.start_s = WorkloadStart(in->timeline, runs.empty() ? 0 : runs.front().horizon_s);
  for (const TimedPod& p : in->timeline.pods) info.pods_before_start += p.arrival_s < info.start_s;
  info.generated_by = o.command_line;
  if (Status s = WriteFile(o.out_dir + "/report.html",
                           ReplayReportHtml(info, runs, sweep, base.qos.classes[top].name,
                                            base.qos.classes[base.qos.fallback].name));
      !s) {
    return fail(s.error().message);
  }
  if (!o.quiet) std::cerr << "wrote " << o.out_dir << "/report.html\n";
  return 0;
}

}  // namespace tessera
