#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/node.h"
#include "model/pod.h"

namespace tessera {

class TargetWorkload;

/// What a policy sees of a node: its capacity, GPU model and current state. The scheduler
/// may pass one view for a whole group of nodes in equal states.
struct NodeView {
  const NodeSpec& spec;  ///< capacity (the name may be any member of the group)
  int model_id;          ///< -1 for a node without GPUs
  const NodeState& state;
};

/// A policy's verdict on one feasible node.
struct NodeScore {
  double score = 0;  ///< higher wins
  GpuSet gpus = 0;   ///< the GPUs to use, or 0 for the generic choice (DefaultGpuChoice)
};

/// How the scheduler turns raw scores into the integer 0..100 that decides.
enum class ScoreMode {
  kInteger,        ///< the raw score is already the integer score
  kMinMax,         ///< min–max normalised across the feasible nodes to 0..100, then floored
  kUniformRandom,  ///< no score: a feasible node is drawn uniformly at random
};

/// A placement policy: scores nodes for a pod. Implementations are small classes, one per
/// file, registered in policy/registry.cc. Score must be a pure function of (node, pod):
/// the scheduler caches it per node state. Instances are immutable after construction and
/// safe to use from one thread per instance.
class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string_view name() const = 0;
  virtual ScoreMode mode() const { return ScoreMode::kInteger; }
  /// Scores `node`, on which `pod` fits (the filters already passed).
  virtual NodeScore Score(const NodeView& node, const PodRequest& pod) const = 0;
};

/// What a policy may need to be built.
struct PolicyContext {
  const TargetWorkload* workload = nullptr;  ///< the target workload M (fgd, tessera)
};

/// Builds the policy called `name`, or returns nullptr for an unknown name.
std::unique_ptr<Policy> MakePolicy(std::string_view name, const PolicyContext& context);
/// The names MakePolicy knows, in the order reports list them.
const std::vector<std::string>& PolicyNames();

}  // namespace tessera
