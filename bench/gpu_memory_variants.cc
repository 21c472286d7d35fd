// tessera_gpu_memory_variants: `tessera` with some TesseraParams changed, next to any
// registered policy, on a GPU-memory scenario (docs/GPU_MEMORY.md): at 100 % arrival, over
// seeds 42-51, the usable free GPU memory (% of GPU memory), the unallocated GPU compute (% of
// capacity) and the pods refused among those arrived. Prints one Markdown table. Measures
// placement quality, not time.
//
// Usage: tessera_gpu_memory_variants SCENARIO COLUMN...
// SCENARIO is an embedded scenario name (mem-v100, ...) or a YAML file. Each COLUMN is a
// policy name (tessera, fgd, mem-bestfit, ...) or NAME=VALUE[,NAME=VALUE...]: `tessera` with
// those parameters, among memory_weight, memory_best_fit (0/1), cpu_stranding (0/1),
// sharing_open_cost, adaptive_open (0/1), hole_fill_primary, model_pressure.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "frag/target_workload.h"
#include "model/cluster.h"
#include "policy/policy.h"
#include "policy/tessera_policy.h"
#include "sim/inflation.h"
#include "trace/scenario.h"
#include "util/file.h"

namespace tessera {
namespace {

bool SetParam(TesseraParams* p, const std::string& name, double v) {
  if (name == "memory_weight") {
    p->memory_weight = v;
  } else if (name == "memory_best_fit") {
    p->memory_best_fit = v != 0;
  } else if (name == "cpu_stranding") {
    p->cpu_stranding = v != 0;
  } else if (name == "sharing_open_cost") {
    p->sharing_open_cost = v;
  } else if (name == "adaptive_open") {
    p->adaptive_open = v != 0;
  } else if (name == "hole_fill_primary") {
    p->hole_fill_primary = v;
  } else if (name == "model_pressure") {
    p->model_pressure = v;
  } else {
    return false;
  }
  return true;
}

struct Stats {
  double mean = 0, sd = 0;
};
Stats Of(const std::vector<double>& v) {
  Stats s;
  for (double x : v) s.mean += x;
  s.mean /= static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.sd = v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0;
  return s;
}

int Main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s SCENARIO COLUMN...\n", argv[0]);
    return 2;
  }
  const std::string name = argv[1];
  std::string yaml(EmbeddedScenario(name));
  if (yaml.empty()) {
    Result<std::string> text = ReadFile(name);
    if (!text) {
      std::fprintf(stderr, "%s\n", text.error().message.c_str());
      return 2;
    }
    yaml = *text;
  }
  Result<Scenario> scenario = ParseScenario(yaml, name);
  if (!scenario) {
    std::fprintf(stderr, "%s\n", scenario.error().message.c_str());
    return 2;
  }
  const std::vector<NodeSpec> nodes = ScenarioNodes(*scenario);
  const std::vector<PodSpec> pods = ScenarioPods(*scenario);
  TargetWorkload workload = TargetWorkload::FromPods(pods);
  workload.Resolve(Cluster(nodes));
  PolicyContext context;
  context.workload = &workload;
  std::printf("%s, seeds 42-51, at 100 %% arrival (mean ± s.d.):\n\n", name.c_str());
  std::printf(
      "| column | unallocated GPU memory %% | unallocated GPU compute %% | pods failed |\n"
      "|---|---|---|---|\n");
  for (int c = 2; c < argc; ++c) {
    const std::string column = argv[c];
    std::unique_ptr<Policy> policy;
    if (column.find('=') == std::string::npos) {
      policy = MakePolicy(column, context);
    } else {
      TesseraParams params;
      std::stringstream items(column);
      std::string item;
      while (std::getline(items, item, ',')) {
        const size_t eq = item.find('=');
        char* end = nullptr;
        const double v = eq == std::string::npos ? 0 : std::strtod(item.c_str() + eq + 1, &end);
        if (eq == std::string::npos || end == item.c_str() + eq + 1 || *end != '\0' ||
            !SetParam(&params, item.substr(0, eq), v)) {
          std::fprintf(stderr, "bad column item '%s'\n", item.c_str());
          return 2;
        }
      }
      policy = MakeTesseraPolicy(context, params);
    }
    if (policy == nullptr) {
      std::fprintf(stderr, "unknown policy '%s'\n", column.c_str());
      return 2;
    }
    constexpr int kSeeds = 10;
    std::vector<double> mem(kSeeds), compute(kSeeds), failed(kSeeds);
    InflationOptions options;
    options.record_placements = false;
    std::vector<std::thread> threads;
    const int n = std::max(1u, std::thread::hardware_concurrency());
    for (int t = 0; t < n; ++t) {
      threads.emplace_back([&, t] {
        for (int k = t; k < kSeeds; k += n) {
          const RunResult r = RunInflation(nodes, pods, workload, *policy, 42 + k, options);
          mem[k] = r.curve[100].unallocated_mem_pct;
          compute[k] = r.curve[100].unallocated_pct;
          failed[k] = r.curve[100].failed;
        }
      });
    }
    for (std::thread& t : threads) t.join();
    const Stats m = Of(mem), u = Of(compute), f = Of(failed);
    std::printf("| %s | %.2f ± %.2f | %.2f ± %.2f | %.1f ± %.1f |\n", column.c_str(), m.mean, m.sd,
                u.mean, u.sd, f.mean, f.sd);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) { return tessera::Main(argc, argv); }
