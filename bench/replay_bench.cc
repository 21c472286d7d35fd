// Replay benchmarks (Google Benchmark): one replay of the default trace
// (8152 pods, 7255 with usable times) with each policy, one thread, including building the
// policy and its target workload. Results and machine in docs/PERFORMANCE.md.
// Run: build/bench/tessera_replay_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <filesystem>
#include <map>
#include <string>

#include "replay/node_subset.h"
#include "replay/replay_policy.h"
#include "trace/csv_reader.h"
#include "util/file.h"

namespace tessera {
namespace {

struct Input {
  std::vector<NodeSpec> nodes;
  Timeline timeline;
};

const Input& DefaultTrace(double time_scale) {
  static std::map<double, Input> cache;
  auto it = cache.find(time_scale);
  if (it != cache.end()) return it->second;
  const std::string dir = TESSERA_DATA_DIR;
  Input in;
  in.nodes = ReadNodeCsv(ReadFile(dir + "/openb_node_list_gpu_node.csv").value(), "nodes").value();
  const std::string text = ReadFile(dir + "/openb_pod_list_default.csv").value();
  const std::vector<PodSpec> pods = ReadPodCsv(text, "pods").value();
  in.timeline = TimelineFromTrace(pods, "pods", CsvDataLines(text), time_scale);
  return cache.emplace(time_scale, std::move(in)).first->second;
}

// args: time scale, nodes (0 = all 1213).
void BM_ReplayDefaultTrace(benchmark::State& state, const char* policy_name) {
  if (!std::filesystem::exists(std::string(TESSERA_DATA_DIR) + "/openb_pod_list_default.csv")) {
    state.SkipWithError("trace not found");
    return;
  }
  const Input& in = DefaultTrace(static_cast<double>(state.range(0)));
  const std::vector<NodeSpec> nodes =
      state.range(1) > 0 ? SubsetNodes(in.nodes, static_cast<int>(state.range(1)), 42) : in.nodes;
  const ReplayPolicy policy = ReplayPolicyByName(policy_name).value();
  ReplayOptions options;
  int preemptions = 0;
  for (auto _ : state) {
    const ReplayResult r = RunReplayPolicy(nodes, in.timeline, policy, options);
    preemptions = r.preemptions;
    benchmark::DoNotOptimize(r.classes.front().wait_p99_s);
  }
  state.counters["pods"] = static_cast<double>(in.timeline.pods.size());
  state.counters["preemptions"] = preemptions;
}

#define REPLAY_BENCH(name, policy)                       \
  BENCHMARK_CAPTURE(BM_ReplayDefaultTrace, name, policy) \
      ->ArgNames({"scale", "nodes"})                     \
      ->Args({1, 0})                                     \
      ->Args({50, 84})                                   \
      ->Unit(benchmark::kMillisecond)
REPLAY_BENCH(tessera, "tessera");
REPLAY_BENCH(k8s_default, "k8s-default");
REPLAY_BENCH(fgd, "fgd");
REPLAY_BENCH(bestfit, "bestfit");
REPLAY_BENCH(random, "random");

}  // namespace
}  // namespace tessera

BENCHMARK_MAIN();
