// tessera_policy_compare: FGD against `tessera` and its ablations (each ingredient removed in
// turn) on every pod list of the data set, same seeds, same run. Prints Markdown tables for
// docs/POLICIES.md. Not a Google Benchmark: it measures placement quality, not time.
//
// Usage: tessera_policy_compare [DATA_DIR] [--lists default,cpu050,...] [--ablation]
//                               [--variant NAME=VALUE[,NAME=VALUE...]]...
// Each --variant adds a column: `tessera` with the named TesseraParams fields changed, e.g.
// `--variant sharing_open_cost=0 --variant scarcity=3,multi_gpu_weight=1`. Names: the
// TesseraParams fields (bench/params_text.h).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "frag/target_workload.h"
#include "model/cluster.h"
#include "params_text.h"
#include "policy/policy.h"
#include "policy/tessera_policy.h"
#include "report/report.h"
#include "sim/inflation.h"
#include "trace/csv_reader.h"
#include "util/file.h"

namespace tessera {
namespace {

struct Variant {
  std::string name;
  std::function<std::unique_ptr<Policy>(const PolicyContext&)> make;
};

// Mean unallocated % per arrival level 0..100 and the per-seed values at 100.
struct Curve {
  std::vector<double> mean_by_level;
  std::vector<double> at100;
};

// Applies "name=value,name=value" to `p`; returns false (and says why) on an unknown name or
// a value that is not a number.
bool ApplyVariant(const std::string& spec, TesseraParams& p) {
  const std::string error = ApplyTesseraParams(spec, &p);
  if (!error.empty()) std::fprintf(stderr, "--variant: %s\n", error.c_str());
  return error.empty();
}

Curve Run(const std::vector<NodeSpec>& nodes, const std::vector<PodSpec>& pods,
          const TargetWorkload& w, const Variant& v) {
  PolicyContext ctx;
  ctx.workload = &w;
  std::unique_ptr<Policy> policy = v.make(ctx);
  InflationOptions options;
  options.record_placements = false;
  Curve c;
  c.mean_by_level.assign(101, 0);
  std::vector<RunResult> runs(10);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int s = t; s < 10; s += 2)
        runs[s] = RunInflation(nodes, pods, w, *policy, 42 + s, options);
    });
  }
  for (auto& t : threads) t.join();
  for (const RunResult& r : runs) {
    for (int l = 0; l <= 100; ++l) c.mean_by_level[l] += r.curve[l].unallocated_pct / 10.0;
    c.at100.push_back(r.curve[100].unallocated_pct);
  }
  return c;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) {
  using namespace tessera;
  std::string dir = TESSERA_DATA_DIR;
  std::vector<std::string> only;
  bool ablation = false;
  std::vector<std::string> variant_specs;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--ablation") == 0) {
      ablation = true;
    } else if (std::strcmp(argv[i], "--variant") == 0 && i + 1 < argc) {
      variant_specs.push_back(argv[++i]);
      TesseraParams check;
      if (!ApplyVariant(variant_specs.back(), check)) return 2;
    } else if (std::strcmp(argv[i], "--lists") == 0 && i + 1 < argc) {
      std::stringstream ss(argv[++i]);
      std::string item;
      while (std::getline(ss, item, ',')) only.push_back("openb_pod_list_" + item + ".csv");
    } else {
      dir = argv[i];
    }
  }
  std::vector<std::string> lists;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("openb_pod_list_", 0) != 0) continue;
    if (!only.empty() && std::find(only.begin(), only.end(), name) == only.end()) continue;
    lists.push_back(name);
  }
  std::sort(lists.begin(), lists.end());
  auto nodes = ReadNodeCsv(ReadFile(dir + "/openb_node_list_gpu_node.csv").value(), "nodes");
  if (!nodes) {
    std::fprintf(stderr, "%s\n", nodes.error().message.c_str());
    return 2;
  }

  auto variant = [](std::string name, std::function<void(TesseraParams&)> change) {
    return Variant{name, [change](const PolicyContext& ctx) {
                     TesseraParams p;
                     change(p);
                     return MakeTesseraPolicy(ctx, p);
                   }};
  };
  std::vector<Variant> variants = {
      {"fgd", [](const PolicyContext& ctx) { return MakePolicy("fgd", ctx); }},
      variant("tessera", [](TesseraParams&) {}),
  };
  for (const std::string& spec : variant_specs) {
    variants.push_back(variant(spec, [spec](TesseraParams& p) { ApplyVariant(spec, p); }));
  }
  if (ablation) {
    // Each ingredient switched off, or on for those shipped off (docs/POLICIES.md, "Ablation").
    variants.push_back(
        variant("multi-GPU classes on", [](TesseraParams& p) { p.multi_gpu_classes = true; }));
    variants.push_back(
        variant("multi_gpu_weight 0", [](TesseraParams& p) { p.multi_gpu_weight = 0; }));
    variants.push_back(variant("scarcity 0", [](TesseraParams& p) { p.scarcity = 0; }));
    variants.push_back(
        variant("sharing_open_cost 200", [](TesseraParams& p) { p.sharing_open_cost = 200; }));
    variants.push_back(
        variant("adaptive_open 0", [](TesseraParams& p) { p.adaptive_open = false; }));
    variants.push_back(variant("model_pressure 0", [](TesseraParams& p) { p.model_pressure = 0; }));
    variants.push_back(
        variant("hole_fill_primary 0", [](TesseraParams& p) { p.hole_fill_primary = 0; }));
    variants.push_back(variant("demand_weight 0", [](TesseraParams& p) { p.demand_weight = 0; }));
  }

  // Per pod list and variant: mean unallocated % at 100 % arrival, and in brackets the worst
  // mean gap to fgd at any arrival level before 100 % (pp; positive = behind fgd).
  std::printf("| pod list |");
  for (const Variant& v : variants) std::printf(" %s |", v.name.c_str());
  std::printf("\n|---|");
  for (size_t i = 0; i < variants.size(); ++i) std::printf("---|");
  std::printf("\n");
  std::vector<int> better(variants.size(), 0), within_sd(variants.size(), 0),
      curve_ok(variants.size(), 0);
  for (const std::string& list : lists) {
    auto pods = ReadPodCsv(ReadFile(dir + "/" + list).value(), list);
    if (!pods) {
      std::fprintf(stderr, "%s\n", pods.error().message.c_str());
      return 2;
    }
    TargetWorkload w = TargetWorkload::FromPods(*pods);
    w.Resolve(Cluster(*nodes));
    std::vector<Curve> curves;
    for (const Variant& v : variants) curves.push_back(Run(*nodes, *pods, w, v));
    const std::string short_name = list.substr(15, list.size() - 19);
    std::printf("| %s |", short_name.c_str());
    const SummaryCell f = MeanSd(curves[0].at100);
    for (size_t i = 0; i < curves.size(); ++i) {
      const SummaryCell s = MeanSd(curves[i].at100);
      if (i == 0) {
        std::printf(" %.2f ± %.2f |", s.mean, s.sd);
        continue;
      }
      double worst = -1e9;
      for (int l = 1; l < 100; ++l)
        worst = std::max(worst, curves[i].mean_by_level[l] - curves[0].mean_by_level[l]);
      std::printf(" %.2f ± %.2f (%+.2f) |", s.mean, s.sd, worst);
      better[i] += s.mean < f.mean;
      within_sd[i] += s.mean - f.mean <= std::max(f.sd, s.sd);
      curve_ok[i] += worst <= 0.3;
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  std::printf(
      "\n| variant | better than fgd @100 | within one s.d. of fgd or better | never > 0.3 pp "
      "behind before 100 |\n");
  std::printf("|---|---|---|---|\n");
  for (size_t i = 1; i < variants.size(); ++i) {
    std::printf("| %s | %d / %zu | %d / %zu | %d / %zu |\n", variants[i].name.c_str(), better[i],
                lists.size(), within_sd[i], lists.size(), curve_ok[i], lists.size());
  }
  return 0;
}
