// The engine's names of GPU models (model/gpu_catalog.h): what device plugins, NVIDIA's GPU
// feature discovery and HAMi write becomes the trace's name, and the engine's names stay.

#include "model/gpu_catalog.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

TEST(CanonicalGpuModel, ProductNamesOfGpuFeatureDiscoveryAndHamiBecomeTheTraceNames) {
  // nvidia.com/gpu.product as GPU feature discovery labels nodes.
  EXPECT_EQ(CanonicalGpuModel("Tesla-T4"), "T4");
  EXPECT_EQ(CanonicalGpuModel("NVIDIA-A10"), "A10");
  EXPECT_EQ(CanonicalGpuModel("Tesla-V100-SXM2-16GB"), "V100M16");
  EXPECT_EQ(CanonicalGpuModel("Tesla-V100-PCIE-32GB"), "V100M32");
  EXPECT_EQ(CanonicalGpuModel("Tesla-P100-PCIE-16GB"), "P100");
  // HAMi's register: "NVIDIA-" and the driver's name, blanks included.
  EXPECT_EQ(CanonicalGpuModel("NVIDIA-Tesla V100-SXM2-32GB"), "V100M32");
  EXPECT_EQ(CanonicalGpuModel("NVIDIA-NVIDIA A10"), "A10");
  EXPECT_EQ(CanonicalGpuModel("NVIDIA-Tesla T4"), "T4");
  EXPECT_EQ(CanonicalGpuModel("  Tesla   T4 "), "T4");
  // Models the trace does not have keep their product name, without the vendor.
  EXPECT_EQ(CanonicalGpuModel("NVIDIA-A100-SXM4-80GB"), "A100-SXM4-80GB");
  EXPECT_EQ(CanonicalGpuModel("NVIDIA-A10G"), "A10G");
  EXPECT_EQ(CanonicalGpuModel("Tesla-P100-PCIE-12GB"), "P100-PCIE-12GB");
  EXPECT_EQ(CanonicalGpuModel("NVIDIA-H100-80GB-HBM3"), "H100-80GB-HBM3");
  EXPECT_EQ(CanonicalGpuModel("Tesla-V100"), "V100");
  EXPECT_EQ(CanonicalGpuModel("V100S-PCIE-32GB"), "V100S-PCIE-32GB");
  EXPECT_EQ(CanonicalGpuModel("NVIDIA"), "NVIDIA");
  EXPECT_EQ(CanonicalGpuModel(""), "");
  // The memory of the names it gives is known.
  EXPECT_EQ(KnownGpuMemoryMib(CanonicalGpuModel("Tesla-T4")), 15360);
  EXPECT_EQ(KnownGpuMemoryMib(CanonicalGpuModel("NVIDIA-A10")), 24576);
  EXPECT_EQ(KnownGpuMemoryMib(CanonicalGpuModel("Tesla-V100-SXM2-16GB")), 16384);
}

TEST(CanonicalGpuModel, TheEngineNamesStayAsTheyAre) {
  for (const char* name : {"V100M16", "V100M32", "P100", "T4", "A10", "G2", "G3", "unknown"}) {
    EXPECT_EQ(CanonicalGpuModel(name), name);
  }
}

TEST(CanonicalGpuModels, EachEntryByItsEngineNameEmptiesAndRepeatsDropped) {
  EXPECT_EQ(CanonicalGpuModels("A10|T4"), "A10|T4");
  EXPECT_EQ(CanonicalGpuModels(" A10 | Tesla-T4||T4 "), "A10|T4");
  EXPECT_EQ(CanonicalGpuModels("NVIDIA-A10|Tesla-V100-SXM2-16GB|V100M16"), "A10|V100M16");
  EXPECT_EQ(CanonicalGpuModels("||"), "");
  EXPECT_EQ(CanonicalGpuModels(""), "");
  EXPECT_EQ(CanonicalGpuModels("T4|T4X"), "T4|T4X");
}

}  // namespace
}  // namespace tessera
