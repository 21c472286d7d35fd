#pragma once

// The inverse of analyze/snapshot.h for tests and benchmarks: an engine state (nodes, pods
// with their node and GPUs) written as `kubectl get nodes,pods,pdb -A -o json` would print it,
// with the resources, labels and annotations serve reads (tessera.io/gpu, tessera.io/gpu-milli,
// tessera.io/gpu-indices, tessera.io/gpu-model, tessera.io/class). Pure.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/node.h"
#include "model/pod.h"
#include "model/resources.h"

namespace tessera::analyze {

/// A pod to write: its request, where it runs (node -1: pending) and what owns it.
struct PodToWrite {
  PodSpec spec;  ///< spec.name is the pod's name
  std::string namespace_name = "default";
  int node = -1;                          ///< index into the nodes; -1 = pending
  GpuSet gpus = 0;                        ///< its GPUs there (written as tessera.io/gpu-indices)
  std::string owner_kind = "ReplicaSet";  ///< "" = a bare pod
  std::string owner_name;                 ///< "" = the pod's name without its last "-<k>"
  int32_t priority = 0;
  int64_t restarts = 0;
  std::map<std::string, std::string> labels;
};

/// A PodDisruptionBudget to write (matchLabels selector; one of min/max set, -1 = unset).
struct PdbToWrite {
  std::string namespace_name = "default";
  std::string name;
  std::map<std::string, std::string> match_labels;
  int min_available = -1;
  int max_unavailable = -1;
};

/// A v1 List of the nodes, then the pods, then the budgets.
std::string SnapshotJson(const std::vector<NodeSpec>& nodes, const std::vector<PodToWrite>& pods,
                         const std::vector<PdbToWrite>& pdbs = {});

}  // namespace tessera::analyze
