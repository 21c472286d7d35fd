// tessera_gpu_memory_variants: `tessera` with some TesseraParams changed, next to any
// registered policy, on a GPU-memory scenario (docs/GPU_MEMORY.md): at 100 % arrival, over
// seeds 42-51, the usable free GPU memory (% of GPU memory), the unallocated GPU compute (% of
// capacity) and the pods refused among those arrived. Prints one Markdown table. Measures
// placement quality, not time.
//
// Usage: tessera_gpu_memory_variants [--by-class] [--count-bound] SCENARIO COLUMN...
// SCENARIO is an embedded scenario name (mem-v100, ...) or a YAML file. Each COLUMN is a
// policy name (tessera, fgd, mem-bestfit, ...) or NAME=VALUE[,NAME=VALUE...]: `tessera` with
// those TesseraParams changed (bench/params_text.h), e.g. memory_best_fit=0,count_weight=2. With
// --by-class, each row is followed by the mean pods refused per pod class (the pod's name without
// its last '-N' part), from the runs' placements. With --count-bound, the table is followed by
// the fewest refusals any placement of the same arrived pods can reach (bench/count_bound.h),
// without a condition and among the placements that allocate at least each column's compute.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "count_bound.h"
#include "frag/target_workload.h"
#include "model/cluster.h"
#include "offline/offline_bound.h"
#include "params_text.h"
#include "policy/policy.h"
#include "policy/tessera_policy.h"
#include "report/report.h"
#include "sim/inflation.h"
#include "trace/scenario.h"
#include "util/file.h"

namespace tessera {
namespace {

// The class of a scenario pod: its name without the last '-N'.
std::string ClassOf(const std::string& pod) { return pod.substr(0, pod.find_last_of('-')); }

int Main(int argc, char** argv) {
  bool by_class = false, count_bound = false;
  while (argc > 1 &&
         (std::string(argv[1]) == "--by-class" || std::string(argv[1]) == "--count-bound")) {
    (std::string(argv[1]) == "--by-class" ? by_class : count_bound) = true;
    --argc;
    ++argv;
  }
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s [--by-class] [--count-bound] SCENARIO COLUMN...\n", argv[0]);
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
  constexpr int kSeeds = 10;
  int64_t capacity = 0;
  for (const NodeSpec& n : nodes) capacity += int64_t{n.gpu_count} * kMilliPerGpu;
  // Per column, the GPU milli allocated at 100 % arrival summed over the seeds (--count-bound).
  std::vector<std::pair<std::string, double>> allocated;
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
      const std::string error = ApplyTesseraParams(column, &params);
      if (!error.empty()) {
        std::fprintf(stderr, "column '%s': %s\n", column.c_str(), error.c_str());
        return 2;
      }
      policy = MakeTesseraPolicy(context, params);
    }
    if (policy == nullptr) {
      std::fprintf(stderr, "unknown policy '%s'\n", column.c_str());
      return 2;
    }
    std::vector<double> mem(kSeeds), compute(kSeeds), failed(kSeeds);
    InflationOptions options;
    options.record_placements = by_class;
    std::vector<std::map<std::string, int>> refused(kSeeds);  // per seed, per class
    std::vector<std::thread> threads;
    const int n = std::max(1u, std::thread::hardware_concurrency());
    for (int t = 0; t < n; ++t) {
      threads.emplace_back([&, t] {
        for (int k = t; k < kSeeds; k += n) {
          const RunResult r = RunInflation(nodes, pods, workload, *policy, 42 + k, options);
          mem[k] = r.curve[100].unallocated_mem_pct;
          compute[k] = r.curve[100].unallocated_pct;
          failed[k] = r.curve[100].failed;
          // The first `failed` refusals in submission order are those among the arrived.
          int left = r.curve[100].failed;
          for (const PlacementRecord& p : r.placements) {
            if (left == 0) break;
            if (p.node >= 0) continue;
            --left;
            ++refused[k][ClassOf(pods[p.pod].name)];
          }
        }
      });
    }
    for (std::thread& t : threads) t.join();
    const SummaryCell m = MeanSd(mem), u = MeanSd(compute), f = MeanSd(failed);
    double milli = 0;
    for (double pct : compute) milli += static_cast<double>(capacity) * (1 - pct / 100);
    allocated.push_back({column, milli});
    std::printf("| %s | %.2f ± %.2f | %.2f ± %.2f | %.1f ± %.1f |\n", column.c_str(), m.mean, m.sd,
                u.mean, u.sd, f.mean, f.sd);
    if (by_class) {
      std::map<std::string, double> mean;
      for (const auto& seed : refused) {
        for (const auto& [cls, n] : seed) mean[cls] += n / static_cast<double>(kSeeds);
      }
      std::printf("|   refused per class: |");
      for (const auto& [cls, n] : mean) std::printf(" %s %.1f", cls.c_str(), n);
      std::printf(" | | |\n");
    }
    std::fflush(stdout);
  }
  if (count_bound) {
    std::vector<std::vector<int>> arrived;
    for (int k = 0; k < kSeeds; ++k) {
      arrived.push_back(
          ArrivedPods(pods, capacity, 42 + k, InflationOptions{}.max_arrival_pct, 100));
    }
    const CountBound free = PodCountBound(nodes, pods, arrived, -1);
    if (!free.ok) {
      std::fprintf(stderr, "count bound: %s\n", free.error.c_str());
      return 1;
    }
    std::printf(
        "\nFewest pods refused of any placement of the %.1f pods arrived (mean over the seeds; "
        "LP, %d per-GPU patterns): %.1f\n",
        free.arrived_mean, free.patterns, free.refused_mean);
    for (const auto& [column, milli] : allocated) {
      const CountBound b = PodCountBound(nodes, pods, arrived, milli);
      char figure[32];
      std::snprintf(figure, sizeof figure, "%.1f", b.refused_mean);
      std::printf("  of those that allocate at least %s's GPU compute: %s\n", column.c_str(),
                  b.ok ? figure : b.error.c_str());
    }
  }
  return 0;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) { return tessera::Main(argc, argv); }
