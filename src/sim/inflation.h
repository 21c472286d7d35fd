#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "frag/target_workload.h"
#include "model/node.h"
#include "model/pod.h"
#include "model/resources.h"
#include "policy/policy.h"
#include "util/result.h"

namespace tessera {

/// The inflation experiment of the FGD paper (docs/ARCHITECTURE.md, "Definitions").
struct InflationOptions {
  /// Clones are appended until the arrived GPU request reaches this % of capacity.
  double max_arrival_pct = 130.0;
  /// Record every placement (placements.csv); costs memory on big grids.
  bool record_placements = true;
  /// Called with (pods submitted so far, pods in the sequence) every `progress_every`
  /// submitted pods, from the thread running the experiment; empty: never.
  std::function<void(int64_t submitted, int64_t total)> progress;
  int64_t progress_every = 1024;
};

/// The cluster when exactly `arrival_pct` % of the GPU capacity has arrived. Pods arrive
/// whole, so the level is usually crossed inside one pod: the point is then interpolated
/// linearly between the state before and the state after that pod, as if its GPU request
/// arrived in fractions (allocation and fragmentation alike). That way a point never beats
/// the ideal line: allocated ≤ arrived = the level (a small cluster, where one pod is a few %
/// of capacity, would otherwise show the state at, say, 86.5 % arrived in the 80 % column).
/// Levels the sequence never reaches keep the final state (arrived_pct < arrival_pct there).
struct CurvePoint {
  double arrival_pct = 0;  ///< the level (0, 1, ..., max)
  double arrived_pct = 0;  ///< arrived GPU request, % of capacity: the level, or less at the end
  double allocated_milli = 0;  ///< interpolated across the crossing pod (not an integer then)
  double unallocated_pct = 0;  ///< 100 − allocated / capacity · 100
  double frag_milli = 0;       ///< Σ_n F_n(M), interpolated likewise
  double frag_ratio = 0;       ///< frag_milli / (capacity − allocated) (0 when nothing is idle)
  /// GPU memory (only when RunResult::has_gpu_memory; docs/GPU_MEMORY.md): the usable free
  /// GPU memory, MiB, interpolated like allocated_milli. A GPU's free memory is usable while
  /// it has free compute (a GPU whose compute is all taken holds no memory anyone can use).
  double unallocated_mem_mib = 0;
  double unallocated_mem_pct = 0;  ///< of the GPU memory of the GPUs whose memory is known
  int failed = 0;  ///< pods failed among those arrived by the level (the crossing pod if whole)
  /// GPUs stranded in one dimension (TargetWorkload::NodeGpuStranding), summed over the
  /// nodes, in the state after the pods counted in `failed`.
  int gpus_compute_no_memory = 0;
  int gpus_memory_no_compute = 0;
};

/// One submitted pod and what became of it.
struct PlacementRecord {
  int seq = 0;    ///< submission order, from 0
  int pod = 0;    ///< index into the pod list (clones repeat an index)
  int clone = 0;  ///< 0 for the original, k for its k-th clone
  int node = -1;  ///< -1 if it failed
  GpuSet gpus = 0;
  std::string reason;  ///< why it failed ("cpu:12 gpu:1201"), empty if placed
};

struct RunResult {
  std::string policy;
  uint64_t seed = 0;
  int64_t capacity_milli = 0;
  int submitted = 0;
  int failed = 0;
  std::vector<CurvePoint> curve;            ///< at arrival 0, 1, ..., max_arrival_pct
  std::vector<PlacementRecord> placements;  ///< if options.record_placements
  int max_distinct_states = 0;              ///< most node groups the scheduler held
  /// Some pod asks for GPU memory and some GPU's memory is known: the curve's memory fields
  /// are filled and the reports show them.
  bool has_gpu_memory = false;
  int64_t capacity_mem_mib = 0;  ///< Σ GPU memory of the GPUs whose memory is known
};

/// The pod sequence for `seed`: the pods shuffled, then clones drawn uniformly with
/// replacement appended while the total GPU request stays within max_arrival_pct of
/// `capacity_milli` (random pods removed instead if the list exceeds it). Pairs are
/// (pod index, clone number).
std::vector<std::pair<int, int>> InflatedSequence(const std::vector<PodSpec>& pods,
                                                  int64_t capacity_milli, uint64_t seed,
                                                  double max_arrival_pct);

/// One run of the experiment: `policy` on `nodes` with the inflated `pods` for `seed`.
/// `workload` must be resolved against a cluster of `nodes`. Deterministic for a seed.
/// Returns an error only for an unknown policy name.
Result<RunResult> RunInflation(const std::vector<NodeSpec>& nodes, const std::vector<PodSpec>& pods,
                               const TargetWorkload& workload, const std::string& policy,
                               uint64_t seed, const InflationOptions& options);
/// The same with a policy object (e.g. a variant built with its own parameters).
RunResult RunInflation(const std::vector<NodeSpec>& nodes, const std::vector<PodSpec>& pods,
                       const TargetWorkload& workload, const Policy& policy, uint64_t seed,
                       const InflationOptions& options);

}  // namespace tessera
