// Replay benchmarks (Google Benchmark): one replay of the default trace
// (8152 pods, 7255 with usable times) with each policy, one thread, including building the
// policy and its target workload; and an overloaded two-class scenario at growing horizons,
// whose queue grows all run long (a replay's cost must stay linear in its events).
// Results and machine in docs/PERFORMANCE.md.
// Run: build/bench/tessera_replay_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <filesystem>
#include <map>
#include <string>

#include "replay/node_subset.h"
#include "replay/replay_policy.h"
#include "replay/scenario_timeline.h"
#include "trace/csv_reader.h"
#include "trace/scenario.h"
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

// Two one-GPU classes on 16 eight-GPU nodes (128 GPUs): LS asks about 60 GPUs on average, BE
// about 100, so the cluster is overloaded by a quarter and the BE queue grows for as long as
// the run lasts (at 200 h: 40,000 BE pods pending with `tessera`, whose headroom keeps LS
// waits at zero, 13,600 with `k8s-default`, whose LS pods preempt BE ones instead).
constexpr std::string_view kOverloadedTwoClass = R"yaml(
name: overloaded-two-class
pods: 1000
seed: 3
horizon_h: 50
nodes:
  - {name: g8, model: A100, gpus: 8, cpu_milli: 96000, memory_mib: 786432, count: 16}
classes:
  - name: ls
    cpu_milli: 8000
    memory_mib: 32768
    gpu_count: 1
    qos: LS
    share: 50
    arrival: {rate_per_h: 120}
    duration: {dist: lognormal, mean_s: 1800, sigma: 1}
  - name: be
    cpu_milli: 8000
    memory_mib: 65536
    gpu_count: 1
    qos: BE
    share: 50
    arrival: {rate_per_h: 200}
    duration: {dist: exponential, mean_s: 1800}
)yaml";

const Input& OverloadedTwoClass(int hours) {
  static std::map<int, Input> cache;
  auto it = cache.find(hours);
  if (it != cache.end()) return it->second;
  Scenario scenario = ParseScenario(kOverloadedTwoClass, "overloaded-two-class").value();
  scenario.horizon_h = hours;
  Input in;
  in.nodes = ScenarioNodes(scenario);
  in.timeline = ScenarioTimeline(scenario, 1.0);
  return cache.emplace(hours, std::move(in)).first->second;
}

// args: horizon in hours. `s_per_sim_h`: CPU seconds per simulated hour, which a replay linear
// in its events keeps flat as the horizon grows (200 h within 3x of 50 h).
void BM_ReplayOverloaded(benchmark::State& state, const char* policy_name) {
  const int hours = static_cast<int>(state.range(0));
  const Input& in = OverloadedTwoClass(hours);
  const ReplayPolicy policy = ReplayPolicyByName(policy_name).value();
  ReplayOptions options;
  options.horizon_s = hours * 3600.0;
  int pending = 0;
  for (auto _ : state) {
    const ReplayResult r = RunReplayPolicy(in.nodes, in.timeline, policy, options);
    pending = 0;
    for (const ClassStats& c : r.classes) pending += c.pending;
    benchmark::DoNotOptimize(r.classes.front().wait_p99_s);
  }
  state.counters["pods"] = static_cast<double>(in.timeline.pods.size());
  state.counters["pending_at_end"] = pending;
  state.counters["s_per_sim_h"] = benchmark::Counter(
      hours, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

#define OVERLOADED_BENCH(name, policy)                 \
  BENCHMARK_CAPTURE(BM_ReplayOverloaded, name, policy) \
      ->ArgName("hours")                               \
      ->Arg(50)                                        \
      ->Arg(100)                                       \
      ->Arg(200)                                       \
      ->Unit(benchmark::kMillisecond)
OVERLOADED_BENCH(tessera, "tessera");
OVERLOADED_BENCH(k8s_default, "k8s-default");

}  // namespace
}  // namespace tessera

BENCHMARK_MAIN();
