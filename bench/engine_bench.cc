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

// A synthetic cluster of `num_nodes` nodes drawn from the openb node mix, with an FGD
// scheduler, loaded to half its GPUs by placing default-trace pods on random nodes where they
// fit (cheap, and it leaves as many distinct node states as a real run or more).
struct Synthetic {
  explicit Synthetic(int num_nodes) : rng(7), nodes(Nodes(num_nodes, rng)), cluster(nodes) {
    const Trace& t = DefaultTrace();
    workload = t.workload;
    workload.Resolve(cluster);
    PolicyContext ctx;
    ctx.workload = &workload;
    policy = MakePolicy("fgd", ctx);
    std::vector<int> order(num_nodes);
    std::iota(order.begin(), order.end(), 0);
    rng.Shuffle(order);
    for (const PodSpec& p : t.pods) reqs.push_back(cluster.MakeRequest(p));
    heap_before = HeapInUse();
    scheduler = std::make_unique<Scheduler>(&cluster, policy.get(), order, 1);
    while (cluster.allocated_gpu_milli() * 2 < cluster.total_gpu_milli()) {
      const PodRequest& r = reqs[rng.Below(reqs.size())];
      const int n = static_cast<int>(rng.Below(num_nodes));
      if (cluster.Check(n, r) == FitReason::kFits) {
        scheduler->Bind(
            n, r, r.IsCpuOnly() ? 0 : DefaultGpuChoice(nodes[n].gpu_count, cluster.state(n), r));
      }
      ++warmup_pods;
    }
  }
  static std::vector<NodeSpec> Nodes(int num_nodes, Rng& rng) {
    const Trace& t = DefaultTrace();
    std::vector<NodeSpec> out;
    out.reserve(num_nodes);
    for (int i = 0; i < num_nodes; ++i) {
      NodeSpec n = t.nodes[rng.Below(t.nodes.size())];
      n.name = "n" + std::to_string(i);
      out.push_back(n);
    }
    return out;
  }
  void Counters(benchmark::State& state) const {
    state.counters["distinct_states"] = scheduler->distinct_states();
    state.counters["warmup_pods"] = static_cast<double>(warmup_pods);
    state.counters["scheduler_bytes_per_node"] = (HeapInUse() - heap_before) / cluster.size();
  }

  Rng rng;
  std::vector<NodeSpec> nodes;
  Cluster cluster;
  TargetWorkload workload;
  std::unique_ptr<Policy> policy;
  std::vector<PodRequest> reqs;
  double heap_before = 0;
  std::unique_ptr<Scheduler> scheduler;
  size_t warmup_pods = 0;
};

// Per-pod decision time (Decide + Bind + Unbind) with FGD on synthetic clusters (Synthetic).
// Counters: distinct_states (groups of equal nodes at the end), warmup_pods, and
// scheduler_bytes_per_node: the heap the Scheduler holds at the end (its groups, records and
// score caches), from the heap in use just before it is built, per node.
void BM_DecisionSynthetic(benchmark::State& state) {
  Synthetic s(static_cast<int>(state.range(0)));
  // Measure decisions at this load; bind and unbind so the load stays put.
  for (auto _ : state) {
    const PodRequest& r = s.reqs[s.rng.Below(s.reqs.size())];
    const Decision d = s.scheduler->Decide(r);
    if (d.ok()) {
      s.scheduler->Bind(d.node, r, d.gpus);
      s.scheduler->Unbind(d.node, r, d.gpus);
    }
  }
  s.Counters(state);
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

// The engine's part of the extender's prioritize on a synthetic cluster (Synthetic): the
// scores of every node for a random default-trace pod (Scheduler::ScoreNodes, which scores a
// group once for all its nodes; no bound can spare a group, every node gets its score), then
// one pod placed and taken back on a random node where it fits, as binds change a live
// cluster. Counters as BM_DecisionSynthetic's.
void BM_ScoreNodesSynthetic(benchmark::State& state) {
  Synthetic s(static_cast<int>(state.range(0)));
  std::vector<int> all(s.cluster.size());
  std::iota(all.begin(), all.end(), 0);
  size_t scored = 0;
  for (auto _ : state) {
    const PodRequest& r = s.reqs[s.rng.Below(s.reqs.size())];
    scored += s.scheduler->ScoreNodes(r, all).size();
    const int n = static_cast<int>(s.rng.Below(all.size()));
    if (s.cluster.Check(n, r) == FitReason::kFits) {
      const GpuSet gpus =
          r.IsCpuOnly() ? 0 : DefaultGpuChoice(s.nodes[n].gpu_count, s.cluster.state(n), r);
      s.scheduler->Bind(n, r, gpus);
      s.scheduler->Unbind(n, r, gpus);
    }
  }
  s.Counters(state);
  state.counters["scored_per_call"] =
      static_cast<double>(scored) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_ScoreNodesSynthetic)->Arg(50000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace tessera

BENCHMARK_MAIN();
