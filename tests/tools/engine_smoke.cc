// Runs the scheduling engine alone: a small cluster, the fgd and tessera policies, pods placed
// until the cluster is full. Built by the engine-only configuration (TESSERA_ENGINE_ONLY=ON),
// where it links tessera_engine and nothing else: tests/e2e/engine_only_test.sh builds and runs
// it, so a use of a JSON, YAML, HTTP or LP library from the engine is a build failure there.
// Prints one line per policy and exits 1 unless the pods fill the cluster to at least 30 of its
// 32 GPUs and never past them.

#include <cstdio>
#include <string>
#include <vector>

#include "model/node.h"
#include "model/pod.h"
#include "sched/engine.h"

int main() {
  using tessera::Engine;
  std::vector<tessera::NodeSpec> nodes;
  for (int i = 0; i < 4; ++i) {
    nodes.push_back({"n" + std::to_string(i), 64000, 262144, 8, "A100", 81920});
  }
  std::vector<tessera::PodSpec> pods;
  for (int i = 0; i < 48; ++i) {
    tessera::PodSpec p;
    p.name = "p" + std::to_string(i);
    p.cpu_milli = 1000;
    p.memory_mib = 1024;
    p.gpu_count = i % 3 == 0 ? 2 : 1;
    p.gpu_milli = i % 3 == 1 ? 500 : 1000;
    pods.push_back(p);
  }
  int failures = 0;
  for (const std::string policy : {"fgd", "tessera"}) {
    auto engine = Engine::Create(nodes, pods, policy, 42);
    if (!engine.ok()) {
      std::fprintf(stderr, "engine_smoke: %s\n", engine.error().message.c_str());
      return 1;
    }
    Engine& e = **engine;
    int64_t placed_milli = 0;
    int placed = 0;
    for (const tessera::PodSpec& pod : pods) {
      const tessera::PodRequest request = e.cluster().MakeRequest(pod);
      const tessera::Decision d = e.scheduler().Decide(request);
      if (!d.ok()) continue;
      e.scheduler().Bind(d.node, request, d.gpus);
      placed_milli += pod.TotalGpuMilli();
      ++placed;
    }
    // 48 pods ask 16 x 2000 + 16 x 500 + 16 x 1000 = 56000 milli of 32 GPUs' 32000: the
    // cluster must fill up to at least 30 of its 32 GPUs, and never past them.
    const bool ok = placed_milli <= 32000 && placed_milli >= 30000;
    std::printf("%s: %d of %zu pods placed, %lld GPU milli of 32000%s\n", policy.c_str(), placed,
                pods.size(), static_cast<long long>(placed_milli), ok ? "" : " (WRONG)");
    failures += ok ? 0 : 1;
  }
  return failures == 0 ? 0 : 1;
}
