#pragma once

#include <memory>

#include "policy/policy.h"

namespace tessera {

/// The knobs of the `tessera` policy (docs/POLICIES.md explains each and measures it).
/// The defaults are the shipped policy; switching an ingredient off is the ablation study.
struct TesseraParams {
  /// Break FGD's ties by the CPU-stranding score (off: FGD as published).
  bool cpu_stranding = true;
  /// Add the pod list's multi-GPU classes, which M's 95 % cut usually drops, to the stranding
  /// measure, each weighing p_m · (1 + multi_gpu_weight · (GPUs − 1)).
  bool multi_gpu_classes = true;
  double multi_gpu_weight = 3.0;
  /// Classes limited to some GPU models weigh (cluster GPUs / GPUs they may use)^scarcity.
  double scarcity = 2.0;
  /// A sharing pod opens an idle node only if the used nodes that tie with it would strand
  /// more than this (milli-GPU); other pods see idle nodes as stranding nothing.
  double sharing_open_cost = 200.0;
};

/// Builds the `tessera` policy; nullptr without a target workload in `context`.
std::unique_ptr<Policy> MakeTesseraPolicy(const PolicyContext& context,
                                          const TesseraParams& params);

}  // namespace tessera
