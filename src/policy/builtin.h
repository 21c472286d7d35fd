#pragma once

#include <memory>

#include "policy/policy.h"

namespace tessera {

// Factories of the built-in policies, one per file beside this one (formulas at the top of each
// file and in docs/POLICIES.md).
std::unique_ptr<Policy> MakeRandomPolicy(const PolicyContext& context);
std::unique_ptr<Policy> MakeDotProdPolicy(const PolicyContext& context);
std::unique_ptr<Policy> MakeClusteringPolicy(const PolicyContext& context);
std::unique_ptr<Policy> MakePackingPolicy(const PolicyContext& context);
std::unique_ptr<Policy> MakeBestFitPolicy(const PolicyContext& context);
std::unique_ptr<Policy> MakeFgdPolicy(const PolicyContext& context);
std::unique_ptr<Policy> MakeK8sDefaultPolicy(const PolicyContext& context);
std::unique_ptr<Policy> MakeMemBestFitPolicy(const PolicyContext& context);
std::unique_ptr<Policy> MakeHamiBinpackPolicy(const PolicyContext& context);
std::unique_ptr<Policy> MakeHamiSpreadPolicy(const PolicyContext& context);
std::unique_ptr<Policy> MakeHamiTopologyPolicy(const PolicyContext& context);

/// The normalisation machine of the published policies: 128 cores, 8 GPUs.
inline constexpr double kSpecCpuMilli = 128000.0;
inline constexpr double kSpecGpuMilli = 8000.0;

/// Σ of free milli over the node's GPUs.
inline int64_t GpuMilliLeft(const NodeView& node) {
  int64_t sum = 0;
  for (int i = 0; i < node.spec.gpu_count; ++i) sum += node.state.gpu_free[i];
  return sum;
}

}  // namespace tessera
