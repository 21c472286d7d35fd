#pragma once

// The `tessera` policy's measures in two dimensions, GPU compute and GPU memory
// (docs/GPU_MEMORY.md, "The two-dimensional measure"): for pod lists that ask for GPU memory,
// a node whose GPUs' memory is known is judged by them. A GPU serves a class only if both its
// free milli and its usable memory fit one pod of it (a GPU without free compute has no usable
// memory), so F_n(M) counts the compute stranded for want of memory, and memory_weight adds
// the memory stranded for want of compute. Where M asks for a larger share of the cluster's
// GPU memory than of its compute (memory-bound mode, "When memory runs out first"), two more
// terms join: a memory hole fill (HoleWaste over MiB) and pod-count weights of the sharing
// classes in F_n(M) (count_weight). Immutable after construction; borrows the target workload
// and the one-dimensional measure (for the stranding classes), which must outlive it.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "frag/target_workload.h"
#include "model/node.h"
#include "policy/tessera_hole_fill.h"
#include "policy/tessera_measure.h"
#include "policy/tessera_policy.h"

namespace tessera {

class MemoryMeasure {
 public:
  MemoryMeasure(const TargetWorkload* workload, const TesseraMeasure* stranding,
                const TesseraParams& params);
  MemoryMeasure(const MemoryMeasure&) = delete;
  MemoryMeasure& operator=(const MemoryMeasure&) = delete;

  /// Whether a node of `spec` is judged in two dimensions: some class of the list asks for GPU
  /// memory and the node's GPUs have known memory.
  bool Judges(const NodeSpec& spec) const {
    return memory_ && spec.gpu_memory_mib > 0 && spec.gpu_count > 0;
  }
  /// The GPU memory of a GPU with `free` milli and `mem` MiB free that a pod could still
  /// use: none when it has no free compute.
  static int64_t UsableMib(int32_t free, int32_t mem) {
    return free > 0 ? std::max<int32_t>(0, mem) : 0;
  }
  /// F_n(M) in two dimensions, in milli: for each class of M, the free milli of the GPUs that
  /// cannot serve it (all of them when the node cannot host it), plus memory_weight · 1000 ·
  /// their usable MiB / `mem_cap` (the memory stranded by compute; off by default). With the
  /// pod-count weights, class k weighs its count weight instead of p_m.
  double Frag(int model_id, int64_t cpu_left, const int32_t* free, const int32_t* mem, int g,
              int64_t mem_cap) const;
  /// S_n in two dimensions (memory_best_fit off), over the first `n_classes` of the stranding
  /// classes (TesseraMeasure::classes) with the serving rule above.
  double Stranded(int model_id, int64_t cpu_left, const int32_t* free, const int32_t* mem, int g,
                  size_t n_classes) const;
  /// The memory hole fill's table in MiB (empty: off).
  const HoleWaste& waste() const { return waste_; }

 private:
  // Whether the node can host c (model, CPU, enough serving GPUs), with the free milli of the
  // serving GPUs and the free milli and usable MiB of the others.
  struct Served {
    bool hosts = false;
    int64_t serving_milli = 0;
    int64_t other_milli = 0;
    int64_t other_mib = 0;
  };
  static Served Serve(const TargetClass& c, int model_id, int64_t cpu_left, const int32_t* free,
                      const int32_t* mem, int g);
  bool MemoryBound(double cap) const;
  void BuildCountWeights(double cap, double count_weight, bool shares_only);

  const TargetWorkload* workload_;
  const TesseraMeasure* stranding_;
  const double memory_weight_;        // TesseraParams::memory_weight
  bool memory_ = false;               // some class of the list asks for GPU memory
  HoleWaste waste_;                   // memory_hole_fill's table (MiB; empty: off)
  std::vector<double> count_weight_;  // count_weight: gpu_classes()' weights (empty: p_m)
};

}  // namespace tessera
