#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/fit.h"
#include "model/node.h"
#include "model/pod.h"
#include "model/resources.h"

namespace tessera {

/// A set of nodes and what is allocated on them. The only place where resources are taken
/// and given back; it checks that nothing is ever over-allocated or released twice.
///
/// Node specs must be valid (see trace/ readers): at most kMaxGpusPerNode GPUs, at most
/// kMaxGpuModels distinct models. Copyable on purpose: each simulation run owns one copy.
/// Not thread-safe.
class Cluster {
 public:
  explicit Cluster(std::vector<NodeSpec> nodes);

  int size() const { return static_cast<int>(specs_.size()); }
  const NodeSpec& spec(int node) const { return specs_[node]; }
  const NodeState& state(int node) const { return states_[node]; }
  /// Model id of the node's GPUs, or -1 for a node without GPUs.
  int model_id(int node) const { return model_ids_[node]; }
  const std::vector<std::string>& models() const { return models_; }
  /// The node's GPU topology, or null for none. Topologies are interned by value: nodes with
  /// equal topologies share one (spec(node).topology is that one too).
  const GpuTopology* topology(int node) const { return specs_[node].topology.get(); }
  /// 0 for a node without topology, else 1 + the index of its interned topology: equal ids
  /// if and only if equal topologies.
  int topology_id(int node) const { return topology_ids_.empty() ? 0 : topology_ids_[node]; }
  /// The distinct topologies of the cluster (topology_id − 1 indexes them).
  const std::vector<TopologyPtr>& topologies() const { return topologies_; }

  /// Resolves "A|B" to the ids of those models in this cluster; "" means any model.
  /// Names not in the cluster are ignored (a pod allowing only those never fits).
  ModelMask ResolveModels(std::string_view gpu_spec) const;
  /// The engine's form of a pod for this cluster. A GPU-memory percentage becomes MiB of the
  /// largest GPU among the models the pod allows (exact when those GPUs are alike).
  PodRequest MakeRequest(const PodSpec& pod) const;

  int64_t total_gpu_milli() const { return total_gpu_milli_; }
  int64_t allocated_gpu_milli() const { return allocated_gpu_milli_; }
  int64_t total_gpus() const { return total_gpu_milli_ / kMilliPerGpu; }

  FitReason Check(int node, const PodRequest& pod) const {
    return CheckFit(specs_[node].gpu_count, model_ids_[node], states_[node], pod, topology(node));
  }

  /// Takes `pod`'s resources on `node`, GPU share on each GPU in `gpus` (empty for
  /// CPU-only pods). Aborts if that would over-allocate anything: callers decide with Check.
  void Allocate(int node, const PodRequest& pod, GpuSet gpus);
  /// Gives back what Allocate took. Aborts if it was not taken.
  void Release(int node, const PodRequest& pod, GpuSet gpus);

 private:
  void InternTopologies();

  std::vector<NodeSpec> specs_;
  std::vector<NodeState> states_;
  std::vector<int> model_ids_;
  std::vector<std::string> models_;
  std::vector<TopologyPtr> topologies_;  // distinct by value
  std::vector<uint16_t> topology_ids_;   // by node; empty when no node has a topology
  int64_t total_gpu_milli_ = 0;
  int64_t allocated_gpu_milli_ = 0;
};

}  // namespace tessera
