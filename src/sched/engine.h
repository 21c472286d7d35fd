#pragma once

// The scheduling engine as every front door assembles it — `tessera frag`, `replay`, `plan`
// and `serve` alike: a Cluster, the placement Policy with its context (the target workload M),
// and a Scheduler over them whose tie order follows one rule (TieOrder). No I/O.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "frag/target_workload.h"
#include "model/cluster.h"
#include "model/node.h"
#include "policy/policy.h"
#include "sched/scheduler.h"
#include "util/result.h"

namespace tessera {

/// The tie order of `node_count` nodes for `seed`: the order the front door lists its nodes
/// in (a node list's, or by name), shuffled with the seed, as the FGD paper's simulator does
/// per seed. Ties between equally scored nodes go to the node that comes first.
std::vector<int> TieOrder(size_t node_count, uint64_t seed);
/// The seed of the Scheduler's own draws (the `random` policy) for an engine of `seed`.
uint64_t SchedulerSeed(uint64_t seed);

/// A cluster of nodes with a placement policy and a scheduler over them.
///
/// Two ways to build one: Create owns everything (M from the given pods, the policy by name);
/// Borrow shares a policy and its workload that outlive the engine (the inflation grid builds
/// a policy once and runs many seeds). Not copyable (the scheduler points into the cluster);
/// not thread-safe.
class Engine {
 public:
  /// The target workload M of `pods` (TargetWorkload::FromPods; with no pods, one class of a
  /// whole GPU, so that fgd keeps whole GPUs free), resolved against `nodes`, and the policy
  /// `policy` built with it. Error: unknown policy (the message lists the known ones).
  static Result<std::unique_ptr<Engine>> Create(std::vector<NodeSpec> nodes,
                                                const std::vector<PodSpec>& pods,
                                                const std::string& policy, uint64_t seed);
  /// An engine over `nodes` that uses `policy` (built with `workload`, which may be null, as
  /// its context); both must outlive the engine.
  static std::unique_ptr<Engine> Borrow(std::vector<NodeSpec> nodes, const Policy& policy,
                                        const TargetWorkload* workload, uint64_t seed);
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  Cluster& cluster() { return cluster_; }
  const Cluster& cluster() const { return cluster_; }
  Scheduler& scheduler() { return *scheduler_; }
  const Policy& policy() const { return *policy_; }
  /// The policy's target workload M; null for a borrowed policy built without one.
  const TargetWorkload* workload() const { return workload_; }
  /// The tie order (TieOrder) and each node's place in it.
  const std::vector<int>& order() const { return order_; }
  int rank(int node) const { return rank_[node]; }

 private:
  Engine(std::vector<NodeSpec> nodes, uint64_t seed);
  void Start(uint64_t seed);

  Cluster cluster_;
  std::unique_ptr<TargetWorkload> own_workload_;
  std::unique_ptr<Policy> own_policy_;
  const TargetWorkload* workload_ = nullptr;
  const Policy* policy_ = nullptr;
  std::vector<int> order_;
  std::vector<int> rank_;
  std::unique_ptr<Scheduler> scheduler_;
};

/// The list of policy names MakePolicy knows, for error messages ("fgd, bestfit, ...").
std::string KnownPolicies();
/// Whether MakePolicy knows `name`.
bool IsPolicyName(const std::string& name);

}  // namespace tessera
