#pragma once

// Cluster-wide counts that the Scheduler keeps up to date as nodes change state (Bind,
// Unbind): the whole idle GPUs, in all and by GPU model (what the headroom counts), and the
// ClusterSummary that a context-using policy reads (Policy::ContextKey). Each node is added
// once in its state and taken out before it changes; Observe counts the pods asked about.
// Reads the Cluster, which must outlive it; not copyable; not thread-safe.

#include <cstdint>
#include <vector>

#include "model/cluster.h"
#include "model/fit.h"
#include "policy/policy.h"

namespace tessera {

class ClusterCounts {
 public:
  /// Counts nothing yet. `by_model`: keep ClusterSummary::free_gpu_milli_by_model (for a
  /// policy that uses a context).
  ClusterCounts(const Cluster& cluster, bool by_model);
  ClusterCounts(const ClusterCounts&) = delete;
  ClusterCounts& operator=(const ClusterCounts&) = delete;

  /// Adds (sign +1) the node in its current state to the counts, or takes it out (−1).
  void Add(int node, int sign) {
    const NodeSpec& spec = cluster_->spec(node);
    const NodeState& st = cluster_->state(node);
    if (IsIdle(spec, st)) summary_.idle_nodes_by_gpus[spec.gpu_count] += sign;
    const int k = sign * IdleGpus(st, spec.gpu_count);
    idle_gpus_ += k;
    const int m = cluster_->model_id(node);
    if (m >= 0) idle_gpus_by_model_[static_cast<size_t>(m)] += k;
    if (!by_model_ || m < 0 || m >= kMaxGpuModels) return;
    int64_t free = 0;
    for (int i = 0; i < spec.gpu_count; ++i) free += st.gpu_free[i];
    summary_.free_gpu_milli_by_model[m] += sign * free;
  }
  /// Once every node is added: the summary's start values and free GPU milli.
  void MarkStart();
  /// Counts `pod` among the pods seen (ClusterSummary::seen_*).
  void Observe(const PodRequest& pod);
  /// Takes the cluster's free GPU milli again (ClusterSummary::free_gpu_milli).
  void RefreshFree();

  const ClusterSummary& summary() const { return summary_; }
  /// The whole idle GPUs (nothing allocated on them).
  int64_t idle_gpus() const { return idle_gpus_; }
  /// The same by GPU model id; they sum to idle_gpus().
  const std::vector<int64_t>& idle_gpus_by_model() const { return idle_gpus_by_model_; }

 private:
  // Whether a node of `spec` in state `st` is idle: all CPU and every GPU free.
  static bool IsIdle(const NodeSpec& spec, const NodeState& st) {
    if (st.cpu_left != spec.cpu_milli) return false;
    for (int i = 0; i < spec.gpu_count; ++i) {
      if (st.gpu_free[i] != kMilliPerGpu) return false;
    }
    return true;
  }

  const Cluster* cluster_;
  const bool by_model_;
  ClusterSummary summary_;
  int64_t idle_gpus_ = 0;
  std::vector<int64_t> idle_gpus_by_model_;  // by model id
};

}  // namespace tessera
