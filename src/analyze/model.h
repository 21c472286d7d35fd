#pragma once

// A snapshot in the engine's terms: a Cluster with every bound pod allocated on the GPUs serve
// would count for it, and every pod's request, owner, budgets and disruption cost. The bound
// pods' GPUs are placed by serve's own extender in file mode (k8s::Extender::FromJson: facts
// from tessera.io/gpu-indices and HAMi's vgpu-devices-allocated first, then the generic
// choice, fail closed), so analyze counts what serve counts. Not thread-safe; not copyable.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "analyze/snapshot.h"
#include "frag/target_workload.h"
#include "k8s/extender/extender.h"
#include "model/cluster.h"
#include "model/pod.h"
#include "util/result.h"

namespace tessera::analyze {

/// Priorities at or above this (system-cluster-critical and system-node-critical) are never
/// moved.
inline constexpr int64_t kSystemPriority = 2000000000;

/// Weights of a move's disruption cost: 1 (an eviction and a restart elsewhere) + priority /
/// 1000 · priority_per_1000 (capped at priority_cap) + class_ls for a latency-sensitive class
/// (tessera.io/class LS) or class_guaranteed for a Guaranteed QoS class + restart · restarts
/// (capped at restart_cap).
struct CostWeights {
  double priority_per_1000 = 1.0;
  double priority_cap = 5.0;
  double class_ls = 2.0;
  double class_guaranteed = 0.5;
  double restart = 0.1;
  double restart_cap = 1.0;
};

/// One pod of the model.
struct ModelPod {
  std::string key;  ///< "namespace/name"
  std::string namespace_name;
  std::string uid;
  PodSpec spec;
  /// The request as the engine takes it on its node (any model: a running pod is where it is).
  PodRequest request;
  /// The request with its GPU-model constraint, for placing it elsewhere.
  PodRequest target_request;
  int node = -1;         ///< node index, -1 if not bound (or bound to an unknown node)
  GpuSet gpus = 0;       ///< its GPUs on `node` (allocated in the model)
  bool placed = false;   ///< allocated in the model
  bool pending = false;  ///< not bound, not ended, not being deleted
  bool gpu = false;      ///< requests GPUs
  bool movable = false;
  std::string unmovable;  ///< why not movable ("" when movable)
  std::string workload;   ///< "Kind/namespace/name" of the controlling owner, "" for bare pods
  int32_t priority = 0;
  std::string cls;  ///< PodSpec::qos: tessera.io/class, else the QoS class
  int64_t restarts = 0;
  double cost = 0;        ///< disruption cost of moving it (CostWeights)
  std::vector<int> pdbs;  ///< budgets that cover it
  uint8_t families = 0;   ///< k8s::GpuFamily bits it asks for
  int snapshot_index = -1;
  /// The API object, kept for pending GPU pods (the extender's filter reads it).
  std::shared_ptr<const k8s::Pod> object;
};

/// One node of the model.
struct ModelNode {
  std::string name;
  bool usable = true;    ///< not cordoned, not blocked: may receive pods
  std::string unusable;  ///< why not ("" when usable)
  uint8_t families = 0;  ///< k8s::GpuFamily bits it offers
};

/// One budget of the model, with the disruptions it allows now.
struct ModelPdb {
  std::string key;   ///< "namespace/name"
  int matching = 0;  ///< pods it covers (bound, not ended)
  int healthy = 0;   ///< of those, Running and not being deleted
  /// How many covered pods may be evicted: from minAvailable / maxUnavailable against the
  /// matching pods (percentages of `matching`, minAvailable rounded up, maxUnavailable down),
  /// and never more than status.disruptionsAllowed when the status is present.
  int allowed = 0;
};

struct Model {
  Cluster cluster{std::vector<NodeSpec>{}};
  std::vector<ModelNode> nodes;
  std::vector<ModelPod> pods;
  std::vector<ModelPdb> pdbs;
  std::map<std::string, int> node_index;
  /// The target workload M of every pod that is bound or pending (CPU-only pods included),
  /// resolved against `cluster`.
  TargetWorkload workload;
  /// serve's extender over the same objects (file mode), for the filter's reasons.
  std::unique_ptr<k8s::Extender> extender;
  std::vector<std::string> warnings;  ///< what could not be counted as given
  /// Snapshot::budgets_not_read: why the budgets are unknown ("" = read); also a warning.
  std::string budgets_not_read;

  int NodeOf(const std::string& name) const {
    auto it = node_index.find(name);
    return it == node_index.end() ? -1 : it->second;
  }
};

/// Builds the model of `snapshot`. Error: a node the extender rejects (bad capacity labels or
/// register annotations), with its JSON path.
Result<std::unique_ptr<Model>> BuildModel(const Snapshot& snapshot,
                                          const CostWeights& weights = {});

}  // namespace tessera::analyze
