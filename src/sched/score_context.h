#pragma once

// The policy's cluster-wide context as the Scheduler keeps it (Policy::UsesContext): the value
// of Policy::ContextKey over the ClusterSummary, taken again before each question, and its
// projection for the pod asked about on each GPU model of the cluster (Policy::ContextFor),
// which the score cache and the tagged columns key their scores by, so that a context change
// recomputes only the scores it concerns. Borrows the policy, which must outlive it; not
// copyable; not thread-safe.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "model/cluster.h"
#include "policy/policy.h"

namespace tessera {

class ScoreContext {
 public:
  /// Value 0 until Start.
  ScoreContext(const Policy& policy, const Cluster& cluster) : policy_(policy) {
    for (int i = 0; i < cluster.size(); ++i) {
      if (std::find(models_.begin(), models_.end(), cluster.model_id(i)) == models_.end()) {
        models_.push_back(cluster.model_id(i));
      }
    }
    project_.assign(kMaxGpuModels + 1, 0);
  }
  ScoreContext(const ScoreContext&) = delete;
  ScoreContext& operator=(const ScoreContext&) = delete;

  /// Takes the value of `summary`, as the first one (no change counted).
  void Start(const ClusterSummary& summary) { value_ = policy_.ContextKey(summary); }
  /// Takes the value of `summary`; a value other than the last counts as a change.
  void Update(const ClusterSummary& summary) {
    const int64_t key = policy_.ContextKey(summary);
    if (key == value_) return;
    value_ = key;
    ++changes_;
  }
  /// Projects the value for `pod` on every GPU model of the cluster.
  void Project(const PodRequest& pod) {
    for (int m : models_) project_[m + 1] = policy_.ContextFor(value_, m, pod);
  }

  /// The value (NodeView::context).
  int64_t value() const { return value_; }
  /// The last Project's value on GPU model `model` (−1: nodes without GPUs).
  int64_t of_model(int model) const { return project_[model + 1]; }
  /// The same as an array by GPU model id (index −1 included).
  const int64_t* by_model() const { return project_.data() + 1; }
  /// Whether every GPU model of the cluster has the same projection; *first is set to the
  /// first model's (0 for a cluster without nodes).
  bool Uniform(int64_t* first) const {
    *first = models_.empty() ? 0 : project_[models_.front() + 1];
    bool uniform = true;
    for (int m : models_) uniform = uniform && project_[m + 1] == *first;
    return uniform;
  }
  /// How often the value changed (Update).
  int changes() const { return changes_; }

 private:
  const Policy& policy_;
  int64_t value_ = 0;
  int changes_ = 0;
  std::vector<int> models_;       // GPU model ids of the cluster (−1 for nodes without GPUs)
  std::vector<int64_t> project_;  // the last Project, by model id + 1
};

}  // namespace tessera
