// Engine benchmarks (Google Benchmark). Results and machine are recorded in
// docs/PERFORMANCE.md. Run: build/bench/tessera_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <filesystem>
#include <memory>
#include <numeric>

#include "frag/target_workload.h"
#include "model/cluster.h"
#include "policy/policy.h"
#include "sched/scheduler.h"
#include "sim/grid.h"
#include "trace/csv_reader.h"
#include "util/file.h"
#include "util/rng.h"

namespace tessera {
namespace {

struct Trace {
  std::vector<NodeSpec> nodes;
  std::vector<PodSpec> pods;
  TargetWorkload workload;
};

const std::string kDir = TESSERA_DATA_DIR;

Trace Load(const std::string& pod_file) {
  Trace t;
  t.nodes = ReadNodeCsv(ReadFile(kDir + "/openb_node_list_gpu_node.csv").value(), "nodes").value();
  t.pods = ReadPodCsv(ReadFile(kDir + "/" + pod_file).value(), pod_file).value();
  t.workload = TargetWorkload::FromPods(t.pods);
  t.workload.Resolve(Cluster(t.nodes));
  return t;
}

const Trace& DefaultTrace() {
  static const Trace t = Load("openb_pod_list_default.csv");
  return t;
}

// The grids of issue 2: the seven policies of the reproduction (tessera has its own numbers).
const std::vector<std::string> kGridPolicies = {"fgd",     "bestfit", "packing",    "clustering",
                                                "dotprod", "random",  "k8s-default"};

// One run of the inflation experiment on the default trace, one thread.
void BM_InflationRunDefaultTrace(benchmark::State& state, const char* policy) {
  const Trace& t = DefaultTrace();
  InflationOptions options;
  options.record_placements = false;
  uint64_t seed = 42;
  int pods = 0;
  for (auto _ : state) {
    Result<RunResult> r = RunInflation(t.nodes, t.pods, t.workload, policy, seed, options);
    pods = r->submitted;
    benchmark::DoNotOptimize(r->curve.back().unallocated_pct);
    seed = seed == 51 ? 42 : seed + 1;
  }
  state.counters["pods"] = pods;
}
BENCHMARK_CAPTURE(BM_InflationRunDefaultTrace, fgd, "fgd")
    ->Unit(benchmark::kMillisecond)
    ->MinTime(3);
BENCHMARK_CAPTURE(BM_InflationRunDefaultTrace, tessera, "tessera")
    ->Unit(benchmark::kMillisecond)
    ->MinTime(3);
BENCHMARK_CAPTURE(BM_InflationRunDefaultTrace, bestfit, "bestfit")
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2);

// The grid of 7 policies x 10 seeds on the default trace, both cores.
void BM_GridDefaultTrace(benchmark::State& state) {
  const Trace& t = DefaultTrace();
  InflationOptions options;
  options.record_placements = false;
  std::vector<uint64_t> seeds(10);
  std::iota(seeds.begin(), seeds.end(), 42);
  for (auto _ : state) {
    auto runs = RunGrid(t.nodes, t.pods, t.workload, kGridPolicies, seeds, 2, options);
    benchmark::DoNotOptimize(runs->size());
  }
}
BENCHMARK(BM_GridDefaultTrace)->Unit(benchmark::kSecond)->Iterations(3)->UseRealTime();

// Every pod list in the data set x 7 policies x 10 seeds, both cores.
void BM_GridAllPodLists(benchmark::State& state) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(kDir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("openb_pod_list_", 0) == 0) files.push_back(name);
  }
  std::sort(files.begin(), files.end());
  std::vector<uint64_t> seeds(10);
  std::iota(seeds.begin(), seeds.end(), 42);
  InflationOptions options;
  options.record_placements = false;
  for (auto _ : state) {
    for (const std::string& f : files) {
      const Trace t = Load(f);
      auto runs = RunGrid(t.nodes, t.pods, t.workload, kGridPolicies, seeds, 2, options);
      benchmark::DoNotOptimize(runs->size());
    }
  }
  state.counters["pod_lists"] = static_cast<double>(files.size());
}
BENCHMARK(BM_GridAllPodLists)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

// Bytes of heap in use (glibc's mallinfo2: the main arena and mmapped blocks; the benchmarks
// run on one thread).
double HeapInUse() {
  const struct mallinfo2 m = mallinfo2();
  return static_cast<double>(m.uordblks + m.hblkhd);
}

// Per-pod decision time (Decide + Bind + Unbind) with FGD on synthetic clusters built from the
// openb node mix, loaded to about half their GPUs with default-trace pods first. Counters:
// distinct_states (groups of equal nodes at the end), warmup_pods, and
// scheduler_bytes_per_node: the heap the Scheduler holds at the end (its groups, records and
// score caches), from the heap in use just before it is built, per node.
void BM_DecisionSynthetic(benchmark::State& state) {
  const Trace& t = DefaultTrace();
  const int num_nodes = static_cast<int>(state.range(0));
  Rng rng(7);
  std::vector<NodeSpec> nodes;
  nodes.reserve(num_nodes);
  for (int i = 0; i < num_nodes; ++i) {
    NodeSpec n = t.nodes[rng.Below(t.nodes.size())];
    n.name = "n" + std::to_string(i);
    nodes.push_back(n);
  }
  Cluster cluster(nodes);
  TargetWorkload w = t.workload;
  w.Resolve(cluster);
  PolicyContext ctx;
  ctx.workload = &w;
  std::unique_ptr<Policy> policy = MakePolicy("fgd", ctx);
  std::vector<int> order(num_nodes);
  std::iota(order.begin(), order.end(), 0);
  rng.Shuffle(order);
  std::vector<PodRequest> reqs;
  for (const PodSpec& p : t.pods) reqs.push_back(cluster.MakeRequest(p));
  const double heap_before = HeapInUse();
  Scheduler scheduler(&cluster, policy.get(), order, 1);
  // Warm-up: load the cluster to half its GPUs by placing pods on random nodes where they
  // fit (cheap, and it leaves as many distinct node states as a real run or more).
  size_t k = 0;
  while (cluster.allocated_gpu_milli() * 2 < cluster.total_gpu_milli()) {
    const PodRequest& r = reqs[rng.Below(reqs.size())];
    const int n = static_cast<int>(rng.Below(num_nodes));
    if (cluster.Check(n, r) == FitReason::kFits) {
      scheduler.Bind(n, r,
                     r.IsCpuOnly() ? 0 : DefaultGpuChoice(nodes[n].gpu_count, cluster.state(n), r));
    }
    ++k;
  }
  // Measure decisions at this load; bind and unbind so the load stays put.
  for (auto _ : state) {
    const PodRequest& r = reqs[rng.Below(reqs.size())];
    const Decision d = scheduler.Decide(r);
    if (d.ok()) {
      scheduler.Bind(d.node, r, d.gpus);
      scheduler.Unbind(d.node, r, d.gpus);
    }
  }
  state.counters["distinct_states"] = scheduler.distinct_states();
  state.counters["warmup_pods"] = static_cast<double>(k);
  state.counters["scheduler_bytes_per_node"] = (HeapInUse() - heap_before) / num_nodes;
}
BENCHMARK(BM_DecisionSynthetic)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMicrosecond);
// The same with a fixed count of decisions, for instruction counts (callgrind's Ir of
// Scheduler::Decide divided by 2000; see docs/PERFORMANCE.md, "Engine scale").
BENCHMARK(BM_DecisionSynthetic)
    ->Name("BM_DecisionCount")
    ->Arg(10000)
    ->Arg(100000)
    ->Iterations(2000)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace tessera

BENCHMARK_MAIN();
