#include "model/fit.h"

#include <gtest/gtest.h>

#include "model/cluster.h"

namespace tessera {
namespace {

NodeSpec Node(const std::string& name, int64_t cpu, int64_t mem, int gpus, const std::string& model,
              int64_t gpu_mem = 0) {
  return NodeSpec{name, cpu, mem, gpus, model, gpu_mem};
}

PodSpec Pod(int64_t cpu, int64_t mem, int gpus, int32_t milli, const std::string& spec = "",
            int64_t gpu_mem = 0) {
  PodSpec p;
  p.name = "p";
  p.cpu_milli = cpu;
  p.memory_mib = mem;
  p.gpu_count = gpus;
  p.gpu_milli = milli;
  p.gpu_spec = spec;
  p.gpu_memory_mib = gpu_mem;
  return p;
}

TEST(Filter, Cpu) {
  Cluster c({Node("n", 8000, 65536, 1, "T4")});
  EXPECT_EQ(c.Check(0, c.MakeRequest(Pod(8000, 1, 1, 1000))), FitReason::kFits);
  EXPECT_EQ(c.Check(0, c.MakeRequest(Pod(8001, 1, 1, 1000))), FitReason::kCpu);
  EXPECT_EQ(c.Check(0, c.MakeRequest(Pod(8001, 1, 0, 0))), FitReason::kCpu);
}

TEST(Filter, Memory) {
  Cluster c({Node("n", 8000, 65536, 1, "T4")});
  EXPECT_EQ(c.Check(0, c.MakeRequest(Pod(1000, 65536, 0, 0))), FitReason::kFits);
  EXPECT_EQ(c.Check(0, c.MakeRequest(Pod(1000, 65537, 0, 0))), FitReason::kMemory);
}

TEST(Filter, GpuSharingNeedsOneGpuWithEnoughMilli) {
  Cluster c({Node("n", 64000, 65536, 2, "T4")});
  const PodRequest big = c.MakeRequest(Pod(1000, 1, 1, 700));
  c.Allocate(0, big, 0b01);
  c.Allocate(0, big, 0b10);
  // Both GPUs have 300 free: 300 fits, 301 does not (600 free in total does not help).
  EXPECT_EQ(c.Check(0, c.MakeRequest(Pod(1000, 1, 1, 300))), FitReason::kFits);
  EXPECT_EQ(c.Check(0, c.MakeRequest(Pod(1000, 1, 1, 301))), FitReason::kGpu);
  EXPECT_EQ(c.Check(0, c.MakeRequest(Pod(1000, 1, 0, 0))), FitReason::kFits);
}

TEST(Filter, MultiGpuNeedsFullyFreeGpusOnOneNode) {
  Cluster c({Node("n", 64000, 65536, 4, "T4")});
  c.Allocate(0, c.MakeRequest(Pod(1000, 1, 1, 100)), 0b0001);
  EXPECT_EQ(c.Check(0, c.MakeRequest(Pod(1000, 1, 3, 1000))), FitReason::kFits);
  EXPECT_EQ(c.Check(0, c.MakeRequest(Pod(1000, 1, 4, 1000))), FitReason::kGpu);
  EXPECT_EQ(c.Check(0, c.MakeRequest(Pod(1000, 1, 8, 1000))), FitReason::kGpuCount);
}

TEST(Filter, GpuModel) {
  Cluster c({Node("a", 64000, 65536, 1, "T4"), Node("b", 64000, 65536, 1, "V100M32"),
             Node("cpu", 64000, 65536, 0, "")});
  const PodRequest v100 = c.MakeRequest(Pod(1000, 1, 1, 1000, "V100M16|V100M32"));
  EXPECT_EQ(c.Check(0, v100), FitReason::kGpuModel);
  EXPECT_EQ(c.Check(1, v100), FitReason::kFits);
  EXPECT_EQ(c.Check(2, v100), FitReason::kGpuModel);
  const PodRequest absent = c.MakeRequest(Pod(1000, 1, 1, 1000, "A100"));
  EXPECT_EQ(c.Check(0, absent), FitReason::kGpuModel);
  EXPECT_EQ(c.Check(1, absent), FitReason::kGpuModel);
  // A CPU-only pod ignores the GPU model constraint and fits a CPU node.
  EXPECT_EQ(c.Check(2, c.MakeRequest(Pod(1000, 1, 0, 0, "T4"))), FitReason::kFits);
}

TEST(Filter, GpuMemory) {
  Cluster c({Node("n", 64000, 65536, 2, "T4", 15360)});
  c.Allocate(0, c.MakeRequest(Pod(1000, 1, 1, 100, "", 15000)), 0b01);
  const PodRequest small = c.MakeRequest(Pod(1000, 1, 1, 100, "", 360));
  const PodRequest big = c.MakeRequest(Pod(1000, 1, 1, 100, "", 15360));
  EXPECT_EQ(c.Check(0, small), FitReason::kFits);
  EXPECT_EQ(c.Check(0, big), FitReason::kFits);  // GPU 1 is untouched
  c.Allocate(0, c.MakeRequest(Pod(1000, 1, 1, 100, "", 1)), 0b10);
  EXPECT_EQ(c.Check(0, big), FitReason::kGpuMemory);
}

TEST(DefaultGpuChoice, TightestForSharingLowestIndexForWhole) {
  Cluster c({Node("n", 64000, 65536, 4, "T4")});
  c.Allocate(0, c.MakeRequest(Pod(1000, 1, 1, 500)), 0b0010);  // GPU1: 500 free
  c.Allocate(0, c.MakeRequest(Pod(1000, 1, 1, 600)), 0b1000);  // GPU3: 400 free
  const NodeState& s = c.state(0);
  EXPECT_EQ(DefaultGpuChoice(4, s, c.MakeRequest(Pod(1000, 1, 1, 400))), 0b1000u);
  EXPECT_EQ(DefaultGpuChoice(4, s, c.MakeRequest(Pod(1000, 1, 1, 450))), 0b0010u);
  EXPECT_EQ(DefaultGpuChoice(4, s, c.MakeRequest(Pod(1000, 1, 1, 900))), 0b0001u);
  EXPECT_EQ(DefaultGpuChoice(4, s, c.MakeRequest(Pod(1000, 1, 2, 1000))), 0b0101u);
}

TEST(Cluster, AllocateAndReleaseRestoreState) {
  Cluster c({Node("n", 64000, 65536, 2, "T4")});
  const NodeState before = c.state(0);
  const PodRequest r = c.MakeRequest(Pod(4000, 1024, 1, 300));
  c.Allocate(0, r, 0b10);
  EXPECT_EQ(c.allocated_gpu_milli(), 300);
  EXPECT_EQ(c.state(0).gpu_free[1], 700);
  EXPECT_EQ(c.state(0).cpu_left, 60000);
  c.Release(0, r, 0b10);
  EXPECT_EQ(c.state(0), before);
  EXPECT_EQ(c.allocated_gpu_milli(), 0);
}

TEST(ClusterDeathTest, OverAllocationAborts) {
  Cluster c({Node("n", 64000, 65536, 1, "T4")});
  const PodRequest r = c.MakeRequest(Pod(1000, 1, 1, 600));
  c.Allocate(0, r, 0b1);
  EXPECT_DEATH(c.Allocate(0, r, 0b1), "invariant violated");
  EXPECT_DEATH(c.Release(0, r, 0b1); c.Release(0, r, 0b1), "invariant violated");
}

}  // namespace
}  // namespace tessera
