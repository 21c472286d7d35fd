// `tessera analyze` on a synthetic 5000-node snapshot (docs/ANALYZE.md, "Speed"): read the
// kubectl JSON, build the model (serve's extender counts the GPUs), and compute every figure,
// the offline LP bounds and the move plan included. Single-threaded; run it on one core:
//   taskset -c 0 build/bench/tessera_analyze_bench
// `--write=FILE` writes the snapshot instead, for timing the command itself:
//   build/bench/tessera_analyze_bench --write=/tmp/snap5000.json
//   taskset -c 0 build/tessera analyze /tmp/snap5000.json --out /tmp/analyze5000

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "analyze/analyze.h"
#include "analyze/model.h"
#include "analyze/snapshot.h"
#include "analyze/snapshot_writer.h"
#include "sched/engine.h"
#include "util/file.h"
#include "util/rng.h"

namespace tessera::analyze {
namespace {

/// 5000 nodes (3000 of 8 x V100M32, 2000 of 4 x T4), pods of the openb mix placed by
/// k8s-default until 92 % of the GPUs are requested, then 40 multi-GPU pods pending.
std::string MakeSnapshot(int nodes_count) {
  std::vector<NodeSpec> nodes;
  for (int i = 0; i < nodes_count; ++i) {
    NodeSpec n;
    n.name = "node-" + std::to_string(i);
    const bool big = i % 5 < 3;
    n.cpu_milli = big ? 96000 : 64000;
    n.memory_mib = big ? 393216 : 262144;
    n.gpu_count = big ? 8 : 4;
    n.gpu_model = big ? "V100M32" : "T4";
    n.gpu_memory_mib = big ? 32768 : 15360;
    nodes.push_back(n);
  }
  Rng rng(7);
  std::vector<PodSpec> shapes;
  auto shape = [&](int64_t cpu, int gpus, int32_t milli, const std::string& model) {
    PodSpec s;
    s.cpu_milli = cpu;
    s.memory_mib = cpu * 4;
    s.gpu_count = gpus;
    s.gpu_milli = milli;
    s.gpu_spec = model;
    shapes.push_back(s);
  };
  shape(6000, 1, 1000, "");
  shape(6000, 1, 1000, "");
  shape(8000, 1, 1000, "V100M32");
  shape(12000, 2, 1000, "");
  shape(32000, 4, 1000, "V100M32");
  shape(64000, 8, 1000, "V100M32");
  shape(3000, 1, 500, "");
  shape(2000, 1, 250, "");
  shape(2000, 1, 300, "T4");
  shape(1000, 0, 0, "");
  int64_t capacity = 0;
  for (const NodeSpec& n : nodes) capacity += int64_t{n.gpu_count} * kMilliPerGpu;
  std::vector<PodSpec> pods;
  int64_t requested = 0;
  while (requested < capacity * 92 / 100) {
    PodSpec p = shapes[rng.Below(shapes.size())];
    p.name = "w" + std::to_string(pods.size() / 8) + "-" + std::to_string(pods.size() % 8);
    requested += p.TotalGpuMilli();
    pods.push_back(p);
  }
  for (int i = 0; i < 40; ++i) {
    PodSpec p = shapes[i % 2 == 0 ? 4 : 5];
    p.name = "pending-" + std::to_string(i);
    pods.push_back(p);
  }
  Result<std::unique_ptr<Engine>> engine = Engine::Create(nodes, pods, "k8s-default", 42);
  std::vector<PodToWrite> written;
  for (const PodSpec& spec : pods) {
    const PodRequest req = (*engine)->cluster().MakeRequest(spec);
    const Decision d = (*engine)->scheduler().Decide(req);
    if (d.ok()) (*engine)->scheduler().Bind(d.node, req, d.gpus);
    PodToWrite w;
    w.spec = spec;
    w.namespace_name = "team-" + std::to_string(written.size() % 20);
    w.node = d.node;
    w.gpus = d.ok() ? d.gpus : 0;
    written.push_back(std::move(w));
  }
  return SnapshotJson(nodes, written);
}

const std::string& Snapshot5000() {
  static const std::string json = MakeSnapshot(5000);
  return json;
}

// The whole of `tessera analyze` but the output files: read, model, figures and plan.
void BM_Total5000(benchmark::State& state) {
  const std::string& json = Snapshot5000();
  for (auto _ : state) {
    Result<Snapshot> s = ReadSnapshot({{"snap5000.json", json}});
    Result<std::unique_ptr<Model>> m = BuildModel(*s);
    Result<Analysis> a = Analyze(**m, {});
    benchmark::DoNotOptimize(a);
    state.counters["moves"] = static_cast<double>(a->plan.moves.size());
    state.counters["pending"] = static_cast<double>(a->pending.size());
    state.counters["pods"] = static_cast<double>(s->pods.size());
    state.counters["json_mb"] = static_cast<double>(json.size()) / 1e6;
  }
}
BENCHMARK(BM_Total5000)->Unit(benchmark::kSecond)->Iterations(3);

// Its parts: reading the JSON, building the model (serve's extender places the GPUs), and the
// figures with the plan.
void BM_Read5000(benchmark::State& state) {
  const std::string& json = Snapshot5000();
  for (auto _ : state) benchmark::DoNotOptimize(ReadSnapshot({{"snap5000.json", json}}));
}
BENCHMARK(BM_Read5000)->Unit(benchmark::kSecond)->Iterations(3);

void BM_Model5000(benchmark::State& state) {
  Result<Snapshot> s = ReadSnapshot({{"snap5000.json", Snapshot5000()}});
  for (auto _ : state) benchmark::DoNotOptimize(BuildModel(*s));
}
BENCHMARK(BM_Model5000)->Unit(benchmark::kSecond)->Iterations(3);

void BM_Analyze5000(benchmark::State& state) {
  Result<Snapshot> s = ReadSnapshot({{"snap5000.json", Snapshot5000()}});
  Result<std::unique_ptr<Model>> m = BuildModel(*s);
  for (auto _ : state) benchmark::DoNotOptimize(Analyze(**m, {}));
}
BENCHMARK(BM_Analyze5000)->Unit(benchmark::kSecond)->Iterations(3);

}  // namespace
}  // namespace tessera::analyze

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--write=", 8) == 0) {
      tessera::Status s = tessera::WriteFile(argv[i] + 8, tessera::analyze::Snapshot5000());
      if (!s.ok()) {
        std::fprintf(stderr, "%s\n", s.error().message.c_str());
        return 2;
      }
      return 0;
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
