#include "cli/plan_command.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli_util.h"
#include "model/cluster.h"
#include "model/gpu_catalog.h"
#include "plan/catalog.h"
#include "plan/demand.h"
#include "plan/embedded_catalogs.h"
#include "plan/erlang.h"
#include "plan/plan_report.h"
#include "plan/planner.h"
#include "plan/slo.h"
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

using Json = nlohmann::ordered_json;

// The GPU models of the GPU table (model/gpu_catalog.h).
const std::vector<std::string> kTableModels = {"A10", "P100", "T4", "V100M16", "V100M32"};

Result<std::vector<uint64_t>> ParseSeeds(const std::string& text, const std::string& option) {
  std::vector<uint64_t> out;
  for (const std::string& part : SplitCommaList(text)) {
    const size_t dash = part.find('-');
    auto number = [&](const std::string& s, uint64_t* v) {
      if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos) {
        return false;
      }
      *v = std::stoull(s);
      return true;
    };
    uint64_t a = 0, b = 0;
    if (dash == std::string::npos
            ? !number(part, &a) || (b = a, false)
            : !number(part.substr(0, dash), &a) || !number(part.substr(dash + 1), &b) || b < a ||
                  b - a > 10000) {
      return Error{option + ": bad part '" + part + "' (expected seeds such as 1,2,3 or 1-10)"};
    }
    for (uint64_t s = a; s <= b; ++s) out.push_back(s);
  }
  return out;
}

uint64_t Fnv1a(const std::string& s, uint64_t h = 1469598103934665603ULL) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

// The options that make the plan (every one that changes plan.json), as JSON.
Json OptionsJson(const PlanCliOptions& o) {
  return Json{{"catalog", o.catalog_file},
              {"pods", o.pods_file},
              {"nodes", o.nodes_file},
              {"scenario", o.scenario},
              {"classes", o.classes_file},
              {"time_scale", o.time_scale},
              {"slos", o.slos},
              {"growth", o.growth},
              {"peak_window_h", o.peak_window_h},
              {"policies", o.policies},
              {"seeds", o.seeds},
              {"check_seeds", o.check_seeds},
              {"quota_gpus", o.quota_gpus},
              {"target_util", o.target_util},
              {"served_floor", o.served_floor}};
}

void OptionsFromJson(const Json& j, PlanCliOptions* o) {
  o->catalog_file = j.at("catalog").get<std::string>();
  o->pods_file = j.at("pods").get<std::string>();
  o->nodes_file = j.at("nodes").get<std::string>();
  o->scenario = j.at("scenario").get<std::string>();
  o->classes_file = j.at("classes").get<std::string>();
  o->time_scale = j.at("time_scale").get<double>();
  o->slos = j.at("slos").get<std::vector<std::string>>();
  o->growth = j.at("growth").get<double>();
  o->peak_window_h = j.at("peak_window_h").get<double>();
  o->policies = j.at("policies").get<std::string>();
  o->seeds = j.at("seeds").get<std::string>();
  o->check_seeds = j.at("check_seeds").get<std::string>();
  o->quota_gpus = j.at("quota_gpus").get<int64_t>();
  o->target_util = j.at("target_util").get<double>();
  o->served_floor = j.at("served_floor").get<double>();
}

// Everything a plan needs, read and checked.
struct Loaded {
  PlanSpec spec;
  PlanInfo info;
  std::unique_ptr<DemandDraws> demand;
  std::vector<SkippedPod> skipped;  // history pods left out for their times
  std::string fingerprint;
  std::string options_json;
};

// "2.5s": a wait as --slo reads it back.
std::string SloTime(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%gs", s);
  return buf;
}

// An SLO on a class that the demand has no pods of (or none that any node type of the catalog
// could host) would be met by any cluster: an error naming the classes the demand does have
// and an SLO that fits them.
Status CheckSloClasses(const PlanCliOptions& o, const PlanSpec& spec, const Timeline& demand,
                       const std::string& source) {
  const std::vector<QosClass>& classes = spec.replay.qos.classes;
  std::vector<int> pods(classes.size(), 0), hostable(classes.size(), 0);
  const Cluster one_of_each(MixNodes(spec.catalog, std::vector<int>(spec.catalog.types.size(), 1)));
  for (const TimedPod& p : demand.pods) {
    const size_t c = static_cast<size_t>(spec.replay.qos.Find(p.spec.qos));
    ++pods[c];
    const PodRequest req = one_of_each.MakeRequest(p.spec);
    for (int n = 0; n < one_of_each.size(); ++n) {
      if (one_of_each.Check(n, req) == FitReason::kFits) {
        ++hostable[c];
        break;
      }
    }
  }
  // The demand's classes, most pods first, and an SLO on the highest-priority one.
  std::vector<size_t> present;
  for (size_t c = 0; c < classes.size(); ++c) {
    if (pods[c] > 0) present.push_back(c);
  }
  std::stable_sort(present.begin(), present.end(),
                   [&](size_t a, size_t b) { return pods[a] > pods[b]; });
  std::string have;
  size_t top = present.empty() ? 0 : present[0];
  for (size_t c : present) {
    have += (have.empty() ? "" : ", ") + classes[c].name + " " + std::to_string(pods[c]);
    if (classes[c].priority > classes[top].priority) top = c;
  }
  const double wait = classes[top].slo_wait_s > 0 ? classes[top].slo_wait_s : 60;
  const std::string example =
      "--slo '" + classes[top].name + ": p99 wait <= " + SloTime(wait) + "'";
  for (const ClassSlo& slo : spec.slos) {
    const size_t c = static_cast<size_t>(spec.ClassIndex(slo.qos_class));
    const std::string what =
        "--slo '" + slo.text + "'" + (o.slos.empty() ? " (the default SLO)" : "");
    if (pods[c] == 0) {
      return Error{what + ": " + source + " has no pods of class " + slo.qos_class +
                   ", so any cluster would meet it. Its pods by class: " + have +
                   " (a pod's class is its qos column; tessera record writes the class tessera "
                   "serve sorts the pod into: its tessera.io/class label, else its priority). "
                   "Put the SLO on a class it has, e.g. " +
                   example + " (docs/PLAN.md, \"SLOs on recorded histories\")"};
    }
    if (hostable[c] == 0) {
      return Error{what + ": none of the " + std::to_string(pods[c]) + " pods of class " +
                   slo.qos_class + " fits a node of any type of " + spec.catalog.file +
                   " (left out of every mix alike, so any cluster would meet it); add a node "
                   "type that can host them"};
    }
  }
  return {};
}

Result<std::unique_ptr<Loaded>> Load(const PlanCliOptions& o) {
  auto in = std::make_unique<Loaded>();
  PlanSpec& spec = in->spec;
  std::string inputs_text;  // for the fingerprint
  if (o.catalog_file.empty()) {
    return Error{"--catalog FILE is required to plan " +
                 (o.pods_file.empty() ? "scenario '" + o.scenario + "'" : o.pods_file) +
                 ": the node types the plan may use, with their costs (docs/PLAN.md, \"The node "
                 "catalog\"; examples in tests/plan/testdata/). `tessera plan` alone runs an "
                 "embedded example"};
  }
  // CLI11's range checks let NaN through (every comparison with it is false).
  for (const auto& [name, value] : {std::pair<const char*, double>{"--time-scale", o.time_scale},
                                    {"--growth", o.growth},
                                    {"--peak-window", o.peak_window_h},
                                    {"--target-util", o.target_util},
                                    {"--served-floor", o.served_floor}}) {
    if (!std::isfinite(value)) return Error{std::string(name) + " must be a finite number"};
  }
  if (o.growth <= 0) return Error{"--growth must be positive"};
  // Policies and seeds first: they are cheap to check.
  for (const std::string& name : SplitCommaList(o.policies)) {
    Result<ReplayPolicy> p = ReplayPolicyByName(name);
    if (!p) return Error{"--policy: " + p.error().message};
    spec.policies.push_back(std::move(p).value());
  }
  spec.served_floor = o.served_floor;
  if (o.served_floor > 0) {
    Result<ReplayPolicy> k8s = ReplayPolicyByName("k8s-default");
    if (!k8s) return k8s.error();
    spec.floor_policy = std::move(k8s).value();
  }
  TESSERA_ASSIGN_OR_RETURN(spec.seeds, ParseSeeds(o.seeds, "--seeds"));
  if (!o.check_seeds.empty()) {
    TESSERA_ASSIGN_OR_RETURN(spec.check_seeds, ParseSeeds(o.check_seeds, "--check-seeds"));
  }
  for (uint64_t s : spec.check_seeds) {
    if (std::find(spec.seeds.begin(), spec.seeds.end(), s) != spec.seeds.end()) {
      return Error{"--check-seeds: seed " + std::to_string(s) +
                   " is also in --seeds (held-out seeds must differ)"};
    }
  }
  // Classes and SLOs.
  if (!o.classes_file.empty()) {
    Result<std::string> text = ReadFile(o.classes_file);
    if (!text) return text.error();
    Result<QosClasses> classes = ParseQosClasses(*text, o.classes_file);
    if (!classes) return classes.error();
    spec.replay.qos = std::move(classes).value();
    inputs_text += *text;
  }
  std::vector<std::string> slo_texts = o.slos;
  if (slo_texts.empty()) slo_texts.push_back("LS: p99 wait <= 1s");
  for (const std::string& t : slo_texts) {
    Result<ClassSlo> slo = ParseSlo(t);
    if (!slo) return slo.error();
    std::vector<std::string> names;
    int found = -1;
    for (size_t c = 0; c < spec.replay.qos.classes.size(); ++c) {
      names.push_back(spec.replay.qos.classes[c].name);
      if (names.back() == slo->qos_class) found = static_cast<int>(c);
    }
    if (found < 0) {
      return Error{"--slo '" + t + "': unknown class '" + slo->qos_class +
                   "' (classes: " + JoinNames(names) + ")"};
    }
    if (slo->kind == ClassSlo::Kind::kWait) {
      spec.replay.qos.classes[static_cast<size_t>(found)].slo_wait_s = slo->wait_s;
    }
    spec.slos.push_back(std::move(slo).value());
  }
  ProtectHeadroomClasses(spec.replay.qos, &spec.policies);
  // The demand history and the models it names.
  std::set<std::string> models;
  for (const std::string& m : kTableModels) {
    if (KnownGpuMemoryMib(m) > 0) models.insert(m);
  }
  std::function<Timeline(uint64_t, double)> draw;
  const double growth = o.growth, window = o.peak_window_h;
  if (!o.pods_file.empty()) {
    Result<std::string> text = ReadFile(o.pods_file);
    if (!text) return text.error();
    Result<std::vector<PodSpec>> pods = ReadPodCsv(*text, o.pods_file);
    if (!pods) return pods.error();
    inputs_text += *text;
    for (const PodSpec& p : *pods) {
      size_t from = 0;
      while (!p.gpu_spec.empty()) {
        const size_t bar = p.gpu_spec.find('|', from);
        models.insert(p.gpu_spec.substr(from, bar - from));
        if (bar == std::string::npos) break;
        from = bar + 1;
      }
    }
    Timeline base = TimelineFromTrace(*pods, o.pods_file, CsvDataLines(*text), o.time_scale);
    in->skipped = base.skipped;
    if (base.pods.empty()) {
      std::string e = o.pods_file + ": no pod has usable times (creation_time, scheduled_time, " +
                      "deletion_time)";
      if (!base.skipped.empty()) {
        e += "; " + std::to_string(base.skipped.size()) + " skipped, e.g. " +
             base.skipped[0].where + ": " + base.skipped[0].reason;
      }
      return Error{e};
    }
    if (window > 0) base = BusiestWindow(base, window);
    in->info.demand = o.pods_file;
    if (o.time_scale != 1) {
      char buf[64];
      std::snprintf(buf, sizeof buf, " (arrivals compressed %gx)", o.time_scale);
      in->info.demand += buf;
    }
    const double jitter = 60 / o.time_scale;
    draw = [base = std::move(base), growth, jitter](uint64_t seed, double factor) {
      return GrowDemand(base, growth * factor, seed, jitter);
    };
  } else {
    Result<LoadedScenario> text = LoadScenario(o.scenario);
    if (!text) return text.error();
    Scenario* sc = &text->scenario;
    if (sc->horizon_h <= 0) {
      return Error{text->source +
                   ": the scenario has no timeline (no usable times: give horizon_h and "
                   "per-class 'arrival'; see docs/SCENARIOS.md)"};
    }
    inputs_text += text->yaml;
    for (const NodePool& p : sc->nodes) {
      if (!p.model.empty()) models.insert(p.model);
    }
    for (const PodClass& c : sc->classes) {
      size_t from = 0;
      while (!c.gpu_spec.empty()) {
        const size_t bar = c.gpu_spec.find('|', from);
        models.insert(c.gpu_spec.substr(from, bar - from));
        if (bar == std::string::npos) break;
        from = bar + 1;
      }
    }
    in->info.demand = text->source;
    if (window <= 0) spec.replay.horizon_s = sc->horizon_h * 3600 / o.time_scale;
    const double ts = o.time_scale;
    draw = [sc = std::move(*sc), growth, window, ts](uint64_t seed, double factor) {
      Scenario s = sc;
      s.seed = seed;
      for (PodClass& c : s.classes) {
        c.arrival.rate_per_h *= growth * factor;
        for (RateBurst& b : c.arrival.bursts) b.rate_per_h *= growth * factor;
      }
      Timeline t = ScenarioTimeline(s, ts);
      return window > 0 ? BusiestWindow(t, window) : t;
    };
  }
  if (!o.nodes_file.empty()) {
    Result<std::string> text = ReadFile(o.nodes_file);
    if (!text) return text.error();
    Result<std::vector<NodeSpec>> nodes = ReadNodeCsv(*text, o.nodes_file);
    if (!nodes) return nodes.error();
    for (const NodeSpec& n : *nodes) {
      if (!n.gpu_model.empty()) models.insert(n.gpu_model);
    }
  }
  // An embedded catalog by name, else a file.
  std::string catalog_source = o.catalog_file;
  Result<std::string> catalog_text = std::string(EmbeddedCatalog(o.catalog_file));
  if (catalog_text->empty()) {
    catalog_text = ReadFile(o.catalog_file);
    if (!catalog_text) return catalog_text.error();
  } else {
    catalog_source = "embedded catalog '" + o.catalog_file + "'";
  }
  TESSERA_ASSIGN_OR_RETURN(spec.catalog, ParseNodeCatalog(*catalog_text, catalog_source, models));
  inputs_text += *catalog_text;
  spec.quota_gpus = o.quota_gpus;
  spec.target_util = o.target_util;
  in->demand = std::make_unique<DemandDraws>(std::move(draw));
  const Timeline& first = in->demand->Get(spec.seeds.front(), 1.0);
  if (first.pods.empty()) return Error{in->info.demand + ": the demand has no pods"};
  if (Status st = CheckSloClasses(o, spec, first, in->info.demand); !st) return st.error();
  in->info.skipped = static_cast<int>(in->skipped.size());
  if (!in->skipped.empty()) {
    in->info.warnings.push_back(SkippedPodsWarning(in->skipped, "skipped.csv"));
  }
  // The analytic part: offered load and Erlang C per SLO class.
  in->info.growth = o.growth;
  in->info.peak_window_h = o.peak_window_h;
  in->info.pods = static_cast<int>(first.pods.size());
  in->info.load = OfferedLoad(first, spec.replay.horizon_s);
  // Per class with a wait SLO (several SLOs of one class count once: its largest guess).
  for (const ClassLoad& l : in->info.load) {
    int64_t guess = -1;
    for (const ClassSlo& slo : spec.slos) {
      if (slo.kind != ClassSlo::Kind::kWait ||
          spec.replay.qos.Find(l.qos) != spec.replay.qos.Find(slo.qos_class)) {
        continue;
      }
      const int servers =
          ErlangLeastServers(l.arrival_per_s, l.mean_duration_s, slo.quantile / 100.0, slo.wait_s);
      guess = std::max(guess, static_cast<int64_t>(std::ceil(servers * l.mean_gpus_per_pod)));
    }
    if (guess < 0) continue;
    in->info.erlang_gpus.push_back({l.qos.empty() ? "(none)" : l.qos, guess});
    spec.first_guess_gpus += static_cast<double>(guess);
    spec.lower_bound_gpus += 0.9 * l.gpus;
  }
  const Json options = OptionsJson(o);
  in->options_json = options.dump();
  char fp[32];
  std::snprintf(fp, sizeof fp, "%016llx",
                static_cast<unsigned long long>(Fnv1a(inputs_text, Fnv1a(in->options_json))));
  in->fingerprint = fp;
  return in;
}

// A progress bar on stderr: "\r[#####.....] 3/10 units".
class Progress {
 public:
  explicit Progress(bool on) : on_(on) {}
  void Show(int done, int total, const char* what) {
    if (!on_ || total <= 0) return;
    const int width = 30, fill = width * done / total;
    std::fprintf(stderr, "\r[%s%s] %d/%d %s", std::string(static_cast<size_t>(fill), '#').c_str(),
                 std::string(static_cast<size_t>(width - fill), '.').c_str(), done, total, what);
    if (done == total) std::fputc('\n', stderr);
    std::fflush(stderr);
  }

 private:
  bool on_;
};

int Threads(const PlanCliOptions& o) {
  if (o.threads > 0) return o.threads;
  return std::max(1u, std::thread::hardware_concurrency());
}

int Fail(const std::string& message) {
  std::cerr << "tessera plan: error: " << message << "\n";
  return 2;
}

// After Load, before the search: the warnings about the inputs on stderr (with --quiet too)
// and skipped.csv, which they point to.
int WarnInputs(const PlanCliOptions& o, const Loaded& in) {
  if (!in.skipped.empty()) {
    std::cerr << "tessera plan: warning: "
              << SkippedPodsWarning(in.skipped, o.out_dir + "/skipped.csv") << "\n";
  }
  if (Status s = WriteFile(o.out_dir + "/skipped.csv", SkippedCsv(in.skipped)); !s) {
    return Fail(s.error().message);
  }
  return 0;
}

int WriteOutputs(const PlanCliOptions& o, const Loaded& in, std::vector<UnitResult> units) {
  if (!o.quiet) std::cerr << "tessera plan: replaying the plans' checks and the baselines\n";
  Result<PlanResult> plan = FinishPlan(in.spec, *in.demand, std::move(units), Threads(o));
  if (!plan) return Fail(plan.error().message);
  std::cout << PlanTable(in.info, in.spec, *plan);
  const std::vector<std::pair<std::string, std::string>> files = {
      {"plan.json", PlanJson(in.info, in.spec, *plan)},
      {"plan.csv", PlanCsv(in.spec, *plan)},
      {"headroom.yaml", plan->headroom_yaml},
      {"report.html", PlanHtml(in.info, in.spec, *plan, o.command_line)},
  };
  for (const auto& [name, content] : files) {
    if (Status s = WriteFile(o.out_dir + "/" + name, content); !s) return Fail(s.error().message);
  }
  if (!o.quiet) {
    std::cerr << "wrote " << o.out_dir
              << "/plan.json, plan.csv, headroom.yaml, skipped.csv, report.html\n";
  }
  return 0;
}

}  // namespace

void AddPlanCommand(CLI::App& app, PlanCliOptions& o, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "plan",
      "Capacity planning: the cheapest mix of node types (from a catalog) for which every "
      "class meets its wait SLO when the demand is replayed, per policy; the headroom it "
      "needs; baselines (today, a quota, p95 / utilization, Cluster-Autoscaler FFD) on the "
      "same demand.");
  cmd->footer(
      "\nExamples:\n"
      "  tessera plan                          # the embedded example: scenario 'peak-sale' on\n"
      "                                        # the embedded catalog 'peak-sale' (20..80 A100x8)\n"
      "  tessera plan --catalog catalog.yaml   # your node types, the embedded 'peak-sale' demand\n"
      "  tessera plan --catalog c.yaml --pods openb_pod_list_default.csv --time-scale 50 \\\n"
      "               --slo 'LS: p99 wait <= 1s' --growth 1.5 --policy tessera,k8s-default\n"
      "  tessera plan --catalog c.yaml --pods recorded.csv \\\n"
      "               --slo 'Guaranteed: p99 wait <= 10s' --slo 'BE: gpu-hours >= 100'\n"
      "  tessera plan ... --shard 2/4 --out shards/    then    tessera plan merge shards/*.json\n"
      "\nA catalog lists the node types the plan may use (YAML):\n"
      "  node_types:\n"
      "    - {name: a100x8, model: A100, gpus: 8, cpu_milli: 96000, memory_mib: 786432,\n"
      "       cost_per_hour: 24.0, min_count: 20, max_count: 80, step: 4, count_today: 40}\n"
      "More in tests/plan/testdata/. An SLO names a class of the demand (a pod's qos column):\n"
      "the default is on LS; `tessera record` writes the class `tessera serve` sorts a pod\n"
      "into (its tessera.io/class label, else its priority), so give a history whose pods\n"
      "carry neither SLOs on the classes it has; an SLO on a class the demand has no pods of\n"
      "is an error. Pods without\n"
      "usable times are left out with a warning and listed in skipped.csv.\n"
      "\nOutputs in --out: plan.json, plan.csv, headroom.yaml, skipped.csv, report.html\n"
      "(docs/PLAN.md).");
  cmd->add_option("--catalog", o.catalog_file,
                  "Node catalog: a YAML file (node_types: ...) or an embedded one (" +
                      JoinNames(EmbeddedCatalogNames()) +
                      "); without --catalog and --pods, the embedded example runs");
  cmd->add_option("--pods", o.pods_file, "Demand history: openb pod list CSV with times");
  cmd->add_option("--nodes", o.nodes_file,
                  "The history's node list CSV (its GPU models become known models)");
  cmd->add_option("--scenario", o.scenario,
                  "Embedded scenario or YAML file with a timeline, used without --pods")
      ->capture_default_str();
  cmd->add_option("--classes", o.classes_file, "YAML file of QoS classes (as tessera replay)");
  cmd->add_option("--time-scale", o.time_scale, "Divide arrival times by this (as tessera replay)")
      ->check(CLI::Range(1e-3, 1e6))
      ->capture_default_str();
  cmd->add_option("--slo", o.slos,
                  "Per class: 'LS: p99 wait <= 1s' or 'BE: gpu-hours >= 500' (repeatable; "
                  "default 'LS: p99 wait <= 1s')");
  cmd->add_option("--growth", o.growth, "Multiply the demand by this")
      ->check(CLI::Range(1e-3, 1000.0))
      ->capture_default_str();
  cmd->add_option("--peak-window", o.peak_window_h,
                  "Plan for the busiest window of this many hours of the history (0: all)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--policy", o.policies, "Comma-separated replay policies")->capture_default_str();
  cmd->add_option("--seeds", o.seeds, "Seeds the plan is chosen on (1,2,3 or 1-10)")
      ->capture_default_str();
  cmd->add_option("--check-seeds", o.check_seeds, "Held-out seeds the chosen plans are checked on")
      ->capture_default_str();
  cmd->add_option("--quota", o.quota_gpus, "A static quota in GPUs, replayed as a baseline")
      ->check(CLI::Range(int64_t{0}, int64_t{10000000}));
  cmd->add_option("--target-util", o.target_util,
                  "The 'p95 GPUs / target utilization' baseline's utilization")
      ->check(CLI::Range(0.01, 1.0))
      ->capture_default_str();
  cmd->add_option("--served-floor", o.served_floor,
                  "A class with pods and no --slo must be served at least this share of the "
                  "GPU-hours k8s-default serves it on the same mix and seed, else the mix misses "
                  "(0: no floor)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--threads", o.threads, "Threads (0: one per core)")->check(CLI::Range(0, 1024));
  cmd->add_option("--shard", o.shard,
                  "K/N: run the K-th of N shares of the search; writes shard-K-of-N.json");
  cmd->add_option("--out", o.out_dir, "Output folder (created if missing)")->capture_default_str();
  cmd->add_flag("--progress", o.progress, "A progress bar on stderr even when it is no terminal");
  cmd->add_flag("-q,--quiet", o.quiet, "No progress on stderr");
  for (CLI::Option* opt : cmd->get_options()) {
    if (opt->get_name() != "--slo") opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  CLI::App* merge = cmd->add_subcommand(
      "merge",
      "Combine the shard files of `tessera plan --shard K/N` into the plan a single "
      "run gives (the inputs are read again from the paths the shards name)");
  merge->add_option("shards", o.merge_shards, "Shard files")->required();
  merge->add_option("--out", o.out_dir, "Output folder")->capture_default_str();
  merge->add_flag("-q,--quiet", o.quiet, "No progress on stderr");
  merge->add_option("--threads", o.threads, "Threads (0: one per core)");
  merge->callback([&o, &exit_code] { exit_code = RunPlanMerge(o); });
  cmd->callback([cmd, &o, &exit_code] {
    if (cmd->got_subcommand("merge")) return;
    exit_code = RunPlanCommand(o);
  });
}

int RunPlanCommand(const PlanCliOptions& options) {
  PlanCliOptions o = options;
  // No catalog and no history: the embedded example (the scenario's embedded catalog).
  if (o.catalog_file.empty() && o.pods_file.empty() && !EmbeddedCatalog(o.scenario).empty()) {
    o.catalog_file = o.scenario;
    if (!o.quiet) {
      std::cerr << "tessera plan: no --catalog given: running the embedded example, scenario '"
                << o.scenario << "' on the embedded catalog '" << o.catalog_file
                << "' (equivalent to --scenario " << o.scenario << " --catalog " << o.catalog_file
                << "). To plan your cluster: --catalog FILE with --pods FILE or --scenario "
                   "FILE (tessera plan --help, docs/PLAN.md)\n";
    }
  }
  int shard_k = 0, shard_n = 0;
  if (!o.shard.empty()) {
    const size_t slash = o.shard.find('/');
    const auto digits = [](const std::string& s) {
      return !s.empty() && s.size() < 7 && s.find_first_not_of("0123456789") == std::string::npos;
    };
    if (slash == std::string::npos || !digits(o.shard.substr(0, slash)) ||
        !digits(o.shard.substr(slash + 1))) {
      return Fail("--shard '" + o.shard + "': expected K/N, e.g. 2/4");
    }
    shard_k = std::stoi(o.shard.substr(0, slash));
    shard_n = std::stoi(o.shard.substr(slash + 1));
    if (shard_n < 1 || shard_k < 1 || shard_k > shard_n) {
      return Fail("--shard '" + o.shard + "': K must be 1..N");
    }
  }
  Result<std::unique_ptr<Loaded>> in = Load(o);
  if (!in) return Fail(in.error().message);
  if (Status s = CheckOutputDir(o.out_dir); !s) return Fail(s.error().message);
  const Loaded& l = **in;
  if (int rc = WarnInputs(o, l); rc != 0) return rc;
  const size_t total = Units(l.spec).size();
  std::vector<int> mine;
  for (size_t i = 0; i < total; ++i) {
    if (shard_n == 0 || static_cast<int>(i % static_cast<size_t>(shard_n)) == shard_k - 1) {
      mine.push_back(static_cast<int>(i));
    }
  }
  if (!o.quiet) {
    std::cerr << "tessera plan: " << l.info.pods << " pods; " << l.spec.catalog.types.size()
              << " node types, " << l.spec.policies.size() << " policies, " << l.spec.seeds.size()
              << " seeds; " << mine.size() << " of " << total << " search units\n";
  }
  Progress bar(!o.quiet && (o.progress || isatty(2)));
  std::vector<UnitResult> units =
      RunUnits(l.spec, *l.demand, mine, Threads(o),
               [&bar](int done, int n) { bar.Show(done, n, "search units"); });
  if (shard_n > 0) {
    const std::string file = o.out_dir + "/shard-" + std::to_string(shard_k) + "-of-" +
                             std::to_string(shard_n) + ".json";
    if (Status s =
            WriteFile(file, ShardJson(l.fingerprint, shard_k, shard_n, l.options_json, units));
        !s) {
      return Fail(s.error().message);
    }
    if (!o.quiet) std::cerr << "wrote " << file << "\n";
    return 0;
  }
  return WriteOutputs(o, l, std::move(units));
}

int RunPlanMerge(const PlanCliOptions& merge_options) {
  std::vector<Shard> shards;
  for (const std::string& f : merge_options.merge_shards) {
    Result<std::string> text = ReadFile(f);
    if (!text) return Fail(text.error().message);
    Result<Shard> s = ParseShard(*text, f);
    if (!s) return Fail(s.error().message);
    if (!shards.empty() && (s->fingerprint != shards[0].fingerprint || s->n != shards[0].n)) {
      return Fail(f + ": a shard of another plan (its inputs or N differ from " +
                  merge_options.merge_shards[0] + "'s)");
    }
    for (const Shard& other : shards) {
      if (other.k == s->k) return Fail(f + ": shard " + std::to_string(s->k) + " given twice");
    }
    shards.push_back(std::move(s).value());
  }
  const int n = shards[0].n;
  for (int k = 1; k <= n; ++k) {
    bool have = false;
    for (const Shard& s : shards) have = have || s.k == k;
    if (!have) return Fail("shard " + std::to_string(k) + " of " + std::to_string(n) + " missing");
  }
  PlanCliOptions o = merge_options;
  try {
    OptionsFromJson(Json::parse(shards[0].options_json), &o);
  } catch (const nlohmann::json::exception& e) {
    return Fail(merge_options.merge_shards[0] + ": options: " + e.what());
  }
  Result<std::unique_ptr<Loaded>> in = Load(o);
  if (!in) return Fail(in.error().message);
  if ((*in)->fingerprint != shards[0].fingerprint) {
    return Fail("the inputs the shards name have changed since the shards ran (fingerprint " +
                (*in)->fingerprint + ", shards " + shards[0].fingerprint + ")");
  }
  if (Status s = CheckOutputDir(o.out_dir); !s) return Fail(s.error().message);
  if (int rc = WarnInputs(o, **in); rc != 0) return rc;
  std::vector<UnitResult> units;
  for (Shard& s : shards) {
    for (UnitResult& u : s.units) units.push_back(std::move(u));
  }
  const size_t total = Units((*in)->spec).size();
  if (units.size() != total) {
    return Fail("the shards hold " + std::to_string(units.size()) + " units, the plan has " +
                std::to_string(total));
  }
  std::vector<bool> seen(total, false);
  for (const UnitResult& u : units) {
    const std::string where = "unit " + std::to_string(u.index);
    if (u.index < 0 || static_cast<size_t>(u.index) >= total ||
        seen[static_cast<size_t>(u.index)]) {
      return Fail("the shards hold " + where + " twice or out of range 0.." +
                  std::to_string(total - 1));
    }
    seen[static_cast<size_t>(u.index)] = true;
    if (u.best >= static_cast<int>(u.evaluated.size()) || u.best < -1) {
      return Fail(where + ": best " + std::to_string(u.best) + " is not one of its mixes");
    }
    for (const Evaluation& e : u.evaluated) {
      if (e.counts.size() != (*in)->spec.catalog.types.size() ||
          e.classes.size() != (*in)->spec.replay.qos.classes.size()) {
        return Fail(where + ": a mix of another catalog or other classes");
      }
    }
  }
  return WriteOutputs(o, **in, std::move(units));
}

}  // namespace tessera
