// tessera_slo_family: the SLO robustness family — `tessera`, `k8s-default` and `fgd` replayed
// on a few hundred generated clusters and timelines (bench/scenario_family.h,
// GenerateSloScenario) that no policy was tuned to, several seeds each, and per scenario
// whether `tessera` serves every class with a wait SLO as well as the better of the two
// (within 1 pp of attainment) and the best-effort class at least 90 % of the GPU-hours
// `k8s-default` gives it. Named scenario files (--scenario) are reported first, one row each.
// Prints Markdown for docs/experiments; with --out, writes slo_family.csv (one row per
// scenario) and the YAML of the scenarios where `tessera` falls furthest behind in
// OUT/worst/ (`tessera replay --scenario FILE --policy tessera,k8s-default,fgd` runs one).
// Measures scheduling outcomes, not time.
//
// Usage: tessera_slo_family [--scenarios N] [--seeds N] [--gpus N] [--gen-seed S]
//                           [--threads N] [--out DIR] [--only I,J,...] [--worst N]
//                           [--scenario FILE]...
//   --scenarios  how many generated scenarios (200)
//   --seeds      timeline seeds per scenario (3): the scenario's arrivals and durations drawn
//                again, each replayed by every policy
//   --gpus       GPUs per generated cluster, about (128)
//   --only       run only these generated scenario indices
//   --worst      how many of the scenarios furthest behind to list and write (10)
//
// Per scenario and policy, a class's attainment is pooled over the seeds: pods started within
// the class's wait SLO over pods that arrived (and were not rejected). A class "misses" when
// its attainment is below 100 %. Shortfall of `tessera` on a scenario: the most, over the
// classes with an SLO, by which its attainment is below the better of `k8s-default` and
// `fgd`'s; BE ratio: its BE GPU-hours over `k8s-default`'s.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "replay/replay.h"
#include "replay/replay_policy.h"
#include "replay/scenario_timeline.h"
#include "scenario_family.h"
#include "sched/classes.h"
#include "trace/scenario.h"
#include "util/file.h"
#include "util/text.h"

namespace {

using tessera::ClassStats;
using tessera::QosClasses;
using tessera::ReplayResult;
using tessera::Scenario;

const std::vector<std::string> kPolicies = {"tessera", "k8s-default", "fgd"};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "tessera_slo_family: %s\n", what.c_str());
  std::exit(2);
}

// Per class of the default classes, summed over seeds.
struct ClassSum {
  double arrived = 0;  // arrived, not rejected
  double within = 0;   // of those, started within the SLO
  double gpu_hours = 0;
};

struct Outcome {
  std::string name, description;
  int64_t gpus = 0;
  std::vector<std::vector<ClassSum>> by_policy;  // [policy][class]
  // Derived.
  double shortfall_pp = 0;  // > 0: tessera below the better reference on some SLO class
  std::string shortfall_class;
  double be_ratio = -1;  // tessera BE GPU-h / k8s-default's; -1: no BE
  bool pass = false;
  bool ls_present = false, ls_missed_by_ref = false, ls_strictly_better = false;
};

double Attainment(const ClassSum& c) { return c.arrived > 0 ? 100.0 * c.within / c.arrived : -1; }

Outcome Run(const Scenario& base, int seeds, const QosClasses& classes) {
  Outcome o;
  o.name = base.name;
  o.description = base.description;
  for (const tessera::NodePool& p : base.nodes) o.gpus += int64_t{p.count} * p.gpus;
  o.by_policy.assign(kPolicies.size(), std::vector<ClassSum>(classes.classes.size()));
  const std::vector<tessera::NodeSpec> nodes = tessera::ScenarioNodes(base);
  for (int s = 0; s < seeds; ++s) {
    Scenario sc = base;
    sc.seed = base.seed + static_cast<uint64_t>(s) * 1000003;
    const tessera::Timeline timeline = tessera::ScenarioTimeline(sc, 1.0);
    if (timeline.pods.empty()) continue;
    tessera::ReplayOptions options;
    options.qos = classes;
    options.horizon_s = sc.horizon_h * 3600;
    options.samples = 0;
    options.seed = 42;
    for (size_t p = 0; p < kPolicies.size(); ++p) {
      tessera::Result<tessera::ReplayPolicy> policy = tessera::ReplayPolicyByName(kPolicies[p]);
      if (!policy.ok()) Die(policy.error().message);
      const ReplayResult r = tessera::RunReplayPolicy(nodes, timeline, *policy, options);
      for (size_t c = 0; c < r.classes.size() && c < classes.classes.size(); ++c) {
        const ClassStats& st = r.classes[c];
        const double counted = static_cast<double>(st.arrived - st.rejected);
        ClassSum& sum = o.by_policy[p][c];
        sum.arrived += counted;
        sum.within += counted * st.slo_pct / 100.0;
        sum.gpu_hours += st.gpu_hours;
      }
    }
  }
  // The verdict.
  bool slo_ok = true;
  for (size_t c = 0; c < classes.classes.size(); ++c) {
    const double mine = Attainment(o.by_policy[0][c]);
    if (classes.classes[c].slo_wait_s <= 0 || mine < 0) continue;
    const double best_ref = std::max(Attainment(o.by_policy[1][c]), Attainment(o.by_policy[2][c]));
    const double gap = best_ref - mine;
    if (gap > o.shortfall_pp) {
      o.shortfall_pp = gap;
      o.shortfall_class = classes.classes[c].name;
    }
    if (gap > 1.0) slo_ok = false;
    if (classes.classes[c].name == "LS") {
      o.ls_present = true;
      const double worst_ref =
          std::min(Attainment(o.by_policy[1][c]), Attainment(o.by_policy[2][c]));
      o.ls_missed_by_ref = worst_ref < 100.0 - 1e-9;
      o.ls_strictly_better = mine > best_ref + 1e-9;
    }
  }
  const int be = classes.Find("BE");
  const double be_mine = o.by_policy[0][static_cast<size_t>(be)].gpu_hours;
  const double be_k8s = o.by_policy[1][static_cast<size_t>(be)].gpu_hours;
  if (o.by_policy[1][static_cast<size_t>(be)].arrived > 0 && be_k8s > 0) {
    o.be_ratio = be_mine / be_k8s;
  }
  o.pass = slo_ok && (o.be_ratio < 0 || o.be_ratio >= 0.9);
  return o;
}

std::string Pct(double v) {
  if (v < 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string Row(const Outcome& o, const QosClasses& classes) {
  std::string row = "| " + o.name + " | " + std::to_string(o.gpus) + " |";
  for (size_t c = 0; c < classes.classes.size(); ++c) {
    if (classes.classes[c].slo_wait_s <= 0) continue;
    if (o.by_policy[0][c].arrived <= 0) {
      row += " - |";
      continue;
    }
    row += " " + Pct(Attainment(o.by_policy[0][c])) + " / " + Pct(Attainment(o.by_policy[1][c])) +
           " / " + Pct(Attainment(o.by_policy[2][c])) + " |";
  }
  const int be = classes.Find("BE");
  char buf[96];
  if (o.be_ratio >= 0) {
    std::snprintf(buf, sizeof buf, " %.0f / %.0f (%.2f) |",
                  o.by_policy[0][static_cast<size_t>(be)].gpu_hours,
                  o.by_policy[1][static_cast<size_t>(be)].gpu_hours, o.be_ratio);
  } else {
    std::snprintf(buf, sizeof buf, " - |");
  }
  row += buf;
  row += o.pass ? " yes |" : " **no** |";
  return row;
}

std::string Header(const QosClasses& classes) {
  std::string h = "| scenario | GPUs |";
  std::string line = "|---|---|";
  for (const tessera::QosClass& c : classes.classes) {
    if (c.slo_wait_s <= 0) continue;
    h += " " + c.name + " SLO % (tessera / k8s-default / fgd) |";
    line += "---|";
  }
  return h + " BE GPU-h (tessera / k8s-default, ratio) | passes |\n" + line + "---|---|\n";
}

}  // namespace

int main(int argc, char** argv) {
  int scenarios = 200, seeds = 3, gpus = 128, worst = 10;
  uint64_t gen_seed = 1;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::string out;
  std::vector<int> only;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) Die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--scenarios") {
      scenarios = std::stoi(value());
    } else if (a == "--seeds") {
      seeds = std::stoi(value());
    } else if (a == "--gpus") {
      gpus = std::stoi(value());
    } else if (a == "--gen-seed") {
      gen_seed = std::stoull(value());
    } else if (a == "--threads") {
      threads = static_cast<unsigned>(std::stoi(value()));
    } else if (a == "--out") {
      out = value();
    } else if (a == "--worst") {
      worst = std::stoi(value());
    } else if (a == "--only") {
      for (const std::string& s : tessera::SplitNonEmpty(value())) only.push_back(std::stoi(s));
    } else if (a == "--scenario") {
      files.push_back(value());
    } else {
      Die("unknown option " + a + " (see the header of bench/slo_family.cc)");
    }
  }
  if (scenarios < 0 || seeds < 1 || gpus < 1 || threads < 1) Die("bad option value");
  const QosClasses classes = tessera::DefaultQosClasses();

  // Named scenarios first.
  if (!files.empty()) {
    std::printf("## Named scenarios (%d seeds each)\n\n%s", seeds, Header(classes).c_str());
    for (const std::string& f : files) {
      tessera::Result<std::string> text = tessera::ReadFile(f);
      if (!text.ok()) Die(text.error().message);
      tessera::Result<Scenario> sc = tessera::ParseScenario(*text, f);
      if (!sc.ok()) Die(sc.error().message);
      std::printf("%s\n", Row(Run(*sc, seeds, classes), classes).c_str());
    }
    std::printf("\n");
  }

  std::vector<int> indices = only;
  if (indices.empty()) {
    for (int i = 0; i < scenarios; ++i) indices.push_back(i);
  }
  if (indices.empty()) return 0;
  std::vector<Outcome> outcomes(indices.size());
  std::vector<Scenario> generated(indices.size());
  std::atomic<size_t> next{0}, done{0};
  std::mutex print;
  const auto worker = [&] {
    for (size_t k = next++; k < indices.size(); k = next++) {
      generated[k] = tessera::GenerateSloScenario(gen_seed, indices[k], gpus);
      outcomes[k] = Run(generated[k], seeds, classes);
      const size_t n = ++done;
      if (n % 20 == 0 || n == indices.size()) {
        std::lock_guard<std::mutex> lock(print);
        std::fprintf(stderr, "tessera_slo_family: %zu/%zu scenarios\n", n, indices.size());
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::min<size_t>(threads, indices.size()); ++t)
    pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();

  int pass = 0, slo_ok = 0, be_ok = 0, be_present = 0, ls_cases = 0, ls_better = 0;
  for (const Outcome& o : outcomes) {
    pass += o.pass;
    slo_ok += o.shortfall_pp <= 1.0;
    if (o.be_ratio >= 0) {
      ++be_present;
      be_ok += o.be_ratio >= 0.9;
    }
    if (o.ls_present && o.ls_missed_by_ref) {
      ++ls_cases;
      ls_better += o.ls_strictly_better;
    }
  }
  const double n = static_cast<double>(outcomes.size());
  std::printf(
      "## SLO family: %zu scenarios (generation seed %llu, about %d GPUs), %d seeds each\n\n",
      outcomes.size(), static_cast<unsigned long long>(gen_seed), gpus, seeds);
  std::printf("| check | scenarios | share |\n|---|---|---|\n");
  std::printf(
      "| every SLO class of tessera within 1 pp of the better of k8s-default and fgd | "
      "%d of %zu | %.1f %% |\n",
      slo_ok, outcomes.size(), 100.0 * slo_ok / n);
  std::printf(
      "| BE GPU-hours >= 90 %% of k8s-default's (scenarios with BE) | %d of %d | %.1f %% |\n",
      be_ok, be_present, be_present ? 100.0 * be_ok / be_present : 100.0);
  std::printf("| both (the bar: >= 95 %%) | %d of %zu | %.1f %% |\n", pass, outcomes.size(),
              100.0 * pass / n);
  std::printf(
      "| LS strictly better than both, where either misses (the bar: >= 80 %%) | %d of %d | "
      "%.1f %% |\n\n",
      ls_better, ls_cases, ls_cases ? 100.0 * ls_better / ls_cases : 100.0);

  // The scenarios furthest behind: by SLO shortfall, then by BE ratio.
  std::vector<size_t> order(outcomes.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  const auto badness = [&](size_t k) {
    const Outcome& o = outcomes[k];
    return o.shortfall_pp + (o.be_ratio >= 0 ? 100.0 * std::max(0.0, 0.9 - o.be_ratio) : 0.0);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return badness(a) > badness(b); });
  const size_t listed = std::min<size_t>(static_cast<size_t>(worst), order.size());
  std::printf("### The %zu scenarios where tessera is furthest behind\n\n%s", listed,
              Header(classes).c_str());
  for (size_t k = 0; k < listed; ++k) {
    std::printf("%s\n", Row(outcomes[order[k]], classes).c_str());
  }
  std::printf("\n");

  if (!out.empty()) {
    // worst/ holds this run's scenarios only: those of an earlier run (another build, other
    // flags) would read as this one's.
    std::filesystem::remove_all(out + "/worst");
    std::filesystem::create_directories(out + "/worst");
    std::ostringstream csv;
    csv << "scenario,description,gpus,passes,shortfall_pp,shortfall_class,be_ratio";
    for (const std::string& p : kPolicies) {
      for (const tessera::QosClass& c : classes.classes) {
        csv << "," << p << "_" << c.name << "_slo_pct," << p << "_" << c.name << "_gpu_hours";
      }
    }
    csv << "\n";
    for (const Outcome& o : outcomes) {
      std::string description = o.description;  // an unquoted field: no comma in it
      std::replace(description.begin(), description.end(), ',', ';');
      csv << o.name << "," << description << "," << o.gpus << "," << (o.pass ? 1 : 0) << ","
          << Pct(o.shortfall_pp) << "," << o.shortfall_class << "," << Pct(o.be_ratio);
      for (size_t p = 0; p < kPolicies.size(); ++p) {
        for (size_t c = 0; c < classes.classes.size(); ++c) {
          csv << "," << Pct(Attainment(o.by_policy[p][c])) << ","
              << Pct(o.by_policy[p][c].gpu_hours);
        }
      }
      csv << "\n";
    }
    if (auto s = tessera::WriteFile(out + "/slo_family.csv", csv.str()); !s.ok()) {
      Die(s.error().message);
    }
    for (size_t k = 0; k < listed; ++k) {
      const Scenario& sc = generated[order[k]];
      if (auto s =
              tessera::WriteFile(out + "/worst/" + sc.name + ".yaml", tessera::ScenarioYaml(sc));
          !s.ok()) {
        Die(s.error().message);
      }
    }
    std::fprintf(stderr,
                 "tessera_slo_family: wrote %s/slo_family.csv and %zu scenarios in %s/worst\n",
                 out.c_str(), listed, out.c_str());
  }
  return 0;
}
