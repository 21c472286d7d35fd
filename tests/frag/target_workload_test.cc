#include "frag/target_workload.h"

#include <gtest/gtest.h>

#include "model/cluster.h"

namespace tessera {
namespace {

// The 31-class workload of the FGD artifact's unit tests, probabilities in %.
TargetWorkload ArtifactWorkload(const Cluster& cluster) {
  struct Row {
    int64_t cpu;
    int32_t milli;
    int32_t gpus;
    double pct;
  };
  const Row rows[] = {
      {15700, 1000, 1, 28.69}, {11900, 1000, 1, 18.93}, {11400, 1000, 1, 12.27},
      {1000, 0, 0, 7.36},      {18710, 1000, 1, 4.85},  {8200, 1000, 1, 3.79},
      {16400, 1000, 1, 3.31},  {9810, 1000, 1, 1.97},   {15200, 1000, 1, 1.87},
      {11200, 1000, 1, 1.81},  {14200, 1000, 1, 1.76},  {12000, 0, 0, 1.65},
      {14900, 1000, 1, 1.39},  {60200, 1000, 4, 1.23},  {64200, 1000, 8, 1.07},
      {32200, 1000, 4, 1.01},  {17400, 1000, 2, .91},   {30200, 1000, 2, .69},
      {16000, 1000, 1, .64},   {15000, 1000, 1, .59},   {64000, 1000, 8, .53},
      {15000, 0, 0, .53},      {11910, 1000, 1, .53},   {120200, 1000, 8, .48},
      {11300, 1000, 1, .37},   {30000, 1000, 2, .32},   {9800, 1000, 1, .32},
      {8000, 1000, 1, .32},    {2000, 1000, 1, .27},    {2000, 80, 1, .27},
      {1000, 1000, 1, .27},
  };
  std::vector<TargetClass> classes;
  for (const Row& r : rows) {
    TargetClass c;
    c.cpu_milli = r.cpu;
    c.gpu_milli = r.milli;
    c.gpu_count = r.gpus;
    c.probability = r.pct / 100.0;
    classes.push_back(c);
  }
  TargetWorkload w = TargetWorkload::FromClasses(std::move(classes));
  w.Resolve(cluster);
  return w;
}

Cluster P100Node() { return Cluster({NodeSpec{"n", 96000, 786432, 8, "P100", 16384}}); }

TEST(FragmentationVectors, EightFreeGpus64CoresLeft) {
  const Cluster c = P100Node();
  const TargetWorkload w = ArtifactWorkload(c);
  const int32_t free[8] = {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000};
  EXPECT_NEAR(w.NodeFragmentation(c.model_id(0), 64000, free, 8), 887.20, 0.005);
}

TEST(FragmentationVectors, FourFreeFourUsed32CoresLeft) {
  const Cluster c = P100Node();
  const TargetWorkload w = ArtifactWorkload(c);
  const int32_t free[8] = {1000, 1000, 1000, 1000, 0, 0, 0, 0};
  EXPECT_NEAR(w.NodeFragmentation(c.model_id(0), 32000, free, 8), 554.4, 0.005);
}

TEST(FragmentationVectors, NoCpuLeftMakesAllIdleGpuFragment) {
  const Cluster c = P100Node();
  const TargetWorkload w = ArtifactWorkload(c);
  const int32_t free[8] = {1000, 1000, 1000, 1000, 0, 0, 0, 0};
  EXPECT_NEAR(w.NodeFragmentation(c.model_id(0), 0, free, 8), 4000.0, 0.005);
}

TEST(FragmentationVectors, SingleSharingClassLacksCpu) {
  const Cluster c({NodeSpec{"n", 96000, 786432, 4, "P100", 16384}});
  TargetClass k;
  k.cpu_milli = 6000;
  k.gpu_milli = 465;
  k.gpu_count = 1;
  k.probability = 0.0933;
  TargetWorkload w = TargetWorkload::FromClasses({k});
  w.Resolve(c);
  const int32_t free[4] = {200, 1000, 1000, 500};
  EXPECT_NEAR(w.NodeFragmentation(c.model_id(0), 1000, free, 4), 251.91, 0.005);
}

TEST(Fragmentation, HostableClassCountsOnlyTooSmallGpus) {
  const Cluster c({NodeSpec{"n", 96000, 786432, 4, "P100", 16384}});
  TargetClass k;
  k.cpu_milli = 1000;
  k.gpu_milli = 465;
  k.gpu_count = 1;
  k.probability = 1.0;
  TargetWorkload w = TargetWorkload::FromClasses({k});
  w.Resolve(c);
  const int32_t free[4] = {200, 1000, 1000, 500};
  // 200 is too small for 465; 500 and the free GPUs are not.
  EXPECT_DOUBLE_EQ(w.NodeFragmentation(c.model_id(0), 8000, free, 4), 200.0);
}

TEST(Fragmentation, ExcludedModelCountsAllIdleGpu) {
  const Cluster c(
      {NodeSpec{"a", 96000, 786432, 2, "T4", 0}, NodeSpec{"b", 96000, 786432, 2, "V100M32", 0}});
  TargetClass k;
  k.cpu_milli = 1000;
  k.gpu_milli = 1000;
  k.gpu_count = 1;
  k.gpu_spec = "V100M32";
  k.probability = 1.0;
  TargetWorkload w = TargetWorkload::FromClasses({k});
  w.Resolve(c);
  const int32_t free[2] = {1000, 300};
  EXPECT_DOUBLE_EQ(w.NodeFragmentation(c.model_id(0), 8000, free, 2), 1300.0);
  EXPECT_DOUBLE_EQ(w.NodeFragmentation(c.model_id(1), 8000, free, 2), 300.0);
}

TEST(Stranded, GpusNoClassOfMCanUse) {
  const Cluster c(
      {NodeSpec{"a", 96000, 786432, 4, "T4", 0}, NodeSpec{"b", 96000, 786432, 4, "V100M32", 0}});
  TargetClass share;  // 465 milli of one GPU, any model
  share.cpu_milli = 1000;
  share.gpu_milli = 465;
  share.gpu_count = 1;
  share.probability = 0.5;
  TargetClass pair = share;  // two whole V100s
  pair.gpu_milli = 1000;
  pair.gpu_count = 2;
  pair.gpu_spec = "V100M32";
  TargetWorkload w = TargetWorkload::FromClasses({share, pair});
  w.Resolve(c);
  const int32_t free[4] = {200, 1000, 1000, 500};
  // The share class fits: only the 200 milli GPU is too small for every class.
  EXPECT_EQ(w.NodeStranded(c.model_id(0), 8000, free, 4), 200);
  EXPECT_EQ(w.NodeStranded(c.model_id(1), 8000, free, 4), 200);
  // No CPU left: no class fits, all idle GPU is stranded.
  EXPECT_EQ(w.NodeStranded(c.model_id(0), 0, free, 4), 2700);
  // Only 460 free on each GPU: the share class needs 465, none fits.
  const int32_t small[4] = {460, 460, 0, 0};
  EXPECT_EQ(w.NodeStranded(c.model_id(1), 8000, small, 4), 920);
  const int32_t none[4] = {0, 0, 0, 0};
  EXPECT_EQ(w.NodeStranded(c.model_id(1), 8000, none, 4), 0);
}

TEST(TargetWorkloadFromPods, GroupsSortsAndCutsAt95Percent) {
  std::vector<PodSpec> pods;
  auto add = [&](int n, int64_t cpu, int32_t milli, int gpus, int64_t mem) {
    for (int i = 0; i < n; ++i) {
      PodSpec p;
      p.cpu_milli = cpu;
      p.gpu_milli = milli;
      p.gpu_count = gpus;
      p.memory_mib = mem + i;  // memory is not part of the key
      pods.push_back(p);
    }
  };
  add(60, 4000, 500, 1, 100);
  add(30, 8000, 1000, 1, 100);
  add(6, 2000, 0, 0, 100);
  add(4, 64000, 1000, 8, 100);
  const TargetWorkload w = TargetWorkload::FromPods(pods);
  // 60 + 30 = 90 < 95, + 6 = 96 >= 95: three classes, renormalised over 96 pods.
  ASSERT_EQ(w.classes().size(), 3u);
  EXPECT_EQ(w.classes()[0].cpu_milli, 4000);
  EXPECT_NEAR(w.classes()[0].probability, 60.0 / 96, 1e-12);
  EXPECT_EQ(w.classes()[2].gpu_count, 0);
  EXPECT_NEAR(w.classes()[2].probability, 6.0 / 96, 1e-12);
}

TEST(TargetWorkloadFromPods, TiesOrderLargerCpuFirst) {
  std::vector<PodSpec> pods(2);
  pods[0].cpu_milli = 1000;
  pods[1].cpu_milli = 3000;
  const TargetWorkload w = TargetWorkload::FromPods(pods, 0.5);
  ASSERT_EQ(w.classes().size(), 1u);
  EXPECT_EQ(w.classes()[0].cpu_milli, 3000);
}

// The memory hole of a 16 GiB V100: one 9.2 GiB pod (9421 MiB, 500 milli) leaves 6963 MiB that
// the next 9.2 GiB pod cannot use, although half the GPU's compute is free.
TEST(TwoDimensionalFragmentation, FreeComputeWithoutMemoryIsFragment) {
  std::vector<PodSpec> pods(2);
  for (PodSpec& p : pods) {
    p.cpu_milli = 1000;
    p.gpu_count = 1;
    p.gpu_milli = 500;
    p.gpu_memory_mib = 9421;
  }
  Cluster c({NodeSpec{"v100", 8000, 65536, 1, "V100M16", 16384}});
  TargetWorkload w = TargetWorkload::FromPods(pods);
  w.Resolve(c);
  ASSERT_EQ(w.classes().size(), 1u);
  EXPECT_EQ(w.classes()[0].gpu_memory_mib, 9421);
  const PodRequest r = c.MakeRequest(pods[0]);
  c.Allocate(0, r, 1);
  // Both dimensions: the 500 free milli are stranded by memory.
  EXPECT_DOUBLE_EQ(w.NodeFragmentation(c, 0), 500);
  EXPECT_DOUBLE_EQ(w.ClusterFragmentation(c), 500);
  // Compute only (the fgd and tessera scores): the free half GPU hosts the class.
  EXPECT_DOUBLE_EQ(
      w.NodeFragmentation(c.model_id(0), c.state(0).cpu_left, c.state(0).gpu_free.data(), 1), 0);

  // A class without GPU memory is as before, with or without the memory dimension.
  pods[0].gpu_memory_mib = pods[1].gpu_memory_mib = 0;
  TargetWorkload compute = TargetWorkload::FromPods(pods);
  compute.Resolve(c);
  EXPECT_DOUBLE_EQ(compute.NodeFragmentation(c, 0), 0);
}

}  // namespace
}  // namespace tessera
