#pragma once

#include <vector>

#include "model/cluster.h"
#include "model/pod.h"

namespace tessera {

/// A running pod that a preemptor may evict (already filtered: lower priority, preemptible,
/// not already terminating).
struct VictimCandidate {
  int id = -1;  ///< the caller's pod id
  int priority = 0;
  PodRequest request;
  GpuSet gpus = 0;
};

/// The victims on one node, as Kubernetes chooses them: with every candidate gone the pod
/// must fit (otherwise none: returns false); then candidates are reprieved one by one, the
/// highest priority first and, among equals, the smallest GPU request first, as long as the
/// pod still fits. What is left are the victims (`*victims`, ids). Pure; thread-safe.
bool VictimsOnNode(const Cluster& cluster, int node, const PodRequest& pod,
                   std::vector<VictimCandidate> candidates, std::vector<int>* victims);

/// Which of two nodes' victim sets is better: the lower highest victim priority, then fewer
/// victims, then the smaller sum of victim GPU milli. `a` and `b` are (priority, milli) of
/// the victims. True if `a` is strictly better.
struct VictimCost {
  int max_priority = 0;
  int count = 0;
  int64_t gpu_milli = 0;
  bool operator<(const VictimCost& o) const;
};

}  // namespace tessera
