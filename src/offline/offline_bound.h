#pragma once

#include <cstdint>
#include <vector>

#include "model/node.h"
#include "model/pod.h"
#include "util/result.h"

namespace tessera {

// The offline bound of `tessera frag --offline`: a lower bound on the unallocated GPU % that
// ANY placement of a given pod multiset on an empty cluster must leave, whatever the order and
// whatever the policy, even one that knows every pod in advance. It is the optimum of a linear
// program (LP) that relaxes the placement problem; every real placement is a feasible point of
// the LP, so no placement allocates more GPU milli than the LP optimum.
//
// The LP (solved with GLPK, column generation for the GPU-sharing patterns):
//  - node types: nodes with equal (GPU model, GPU count, CPU, memory, GPU memory), N_t nodes;
//    pod shapes: GPU pods with equal requests (PodRequest ==), n_s pods. CPU-only pods are
//    left out (placing them only takes CPU and memory away; leaving them out is a relaxation).
//  - x[s,t] ≥ 0: pods of shape s on nodes of type t, only where one such pod fits one empty
//    node of type t by the engine's own filter (model, GPU count, CPU, memory, GPU memory).
//  - z[t,p] ≥ 0: GPUs of type t that hold the sharing pattern p, a multiset of sharing milli
//    values with sum ≤ 1000 (how one GPU may be shared).
//  maximise Σ GPU milli of x subject to, per shape: Σ_t x[s,t] ≤ n_s; per type: Σ CPU·x ≤
//  N_t·CPU_t, Σ memory·x ≤ N_t·memory_t, Σ gpu_count·x (whole-GPU pods) + Σ_p z[t,p] ≤ N_t·G_t,
//  per sharing milli value v: sharing pods of v ≤ Σ_p (copies of v in p)·z[t,p], GPU memory of
//  sharing pods ≤ GPU memory of the sharing GPUs; and per-node cuts: at most N_t pods that need
//  more than half of a type-t node's CPU, memory or GPUs.
//  Relaxed: integrality (fractional pods and GPUs), and CPU, memory and GPUs are pooled per
//  node type (a pod may draw on several nodes of its type), GPU memory is pooled over the
//  sharing GPUs of a type. Kept exactly: which pods fit which nodes, whole-GPU pods on whole
//  GPUs, a sharing pod inside one GPU together with pods whose milli sum stays ≤ 1000.

struct OfflineBoundOptions {
  /// Column-generation rounds at most; if reached, the bound stays valid (a Lagrangian bound
  /// is added, see OfflineBound::converged) but is looser.
  int max_rounds = 500;
  /// A what-if (0–1): bound only the placements that place at least this share of the pods
  /// of every GPU-sharing shape that fits some node type (x's per-shape rows get this lower
  /// bound; 1: every such sharing pod is placed). The plain bound (0) may leave any pod out:
  /// where whole-GPU pods are left over, it drops sharing pods whose GPU's rest no other pod
  /// can use, even ones that arrive while the cluster has room, which a scheduler places.
  double min_sharing_placed = 0;
};

/// The GPU pods of one size in the multiset, and how many of them the LP's optimum places
/// (fractional; summed over the pod shapes and node types of that size).
struct OfflineClass {
  int gpu_count = 0;
  int32_t gpu_milli = 0;  ///< per GPU: < 1000 for sharing pods
  int arrived = 0;
  double placed = 0;
};

struct OfflineBound {
  int64_t capacity_milli = 0;  ///< GPU capacity of the cluster
  int64_t arrived_milli = 0;   ///< GPU request of the pod multiset
  int pods = 0;                ///< pods in the multiset (CPU-only ones included)
  /// Upper bound on the GPU milli any placement of the multiset can allocate.
  double max_placed_milli = 0;
  /// Lower bound on unallocated GPU %: 100 − 100 · max_placed_milli / capacity_milli.
  double unallocated_pct = 0;
  int node_types = 0;  ///< node types with GPUs
  int pod_shapes = 0;  ///< distinct GPU pod requests in the multiset
  int patterns = 0;    ///< sharing patterns in the final LP (all types)
  int rounds = 0;      ///< LP solves
  /// The column generation proved the LP optimum (no pattern could improve it); when false,
  /// max_placed_milli is the LP value plus a Lagrangian term, still a valid bound.
  bool converged = true;
  /// Per GPU pod size (gpu_count, gpu_milli), ascending: what the LP's optimum places. Where
  /// `converged` is false, the split of the LP before the Lagrangian term.
  std::vector<OfflineClass> classes;
};

/// The bound for the multiset `arrived` (indices into `pods`, repeated for clones) on an empty
/// cluster of `nodes`. Error if `options` are out of range, if the LP solver fails, or if no
/// placement meets `min_sharing_placed`.
Result<OfflineBound> ComputeOfflineBound(const std::vector<NodeSpec>& nodes,
                                         const std::vector<PodSpec>& pods,
                                         const std::vector<int>& arrived,
                                         const OfflineBoundOptions& options = {});

/// The pods that have arrived at `arrival_pct` in the inflation experiment for `seed`
/// (sim/inflation.h): the prefix of InflatedSequence(pods, capacity_milli, seed,
/// max_arrival_pct) up to and including the first pod whose cumulative GPU request reaches
/// arrival_pct % of capacity_milli (the whole sequence if none does), as pod indices.
/// These are exactly the pods submitted when RunInflation records that arrival level.
std::vector<int> ArrivedPods(const std::vector<PodSpec>& pods, int64_t capacity_milli,
                             uint64_t seed, double max_arrival_pct, double arrival_pct);

}  // namespace tessera
