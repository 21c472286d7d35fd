#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/cluster.h"
#include "model/pod.h"

namespace tessera {

/// One class of the target workload M: pods that share (CPU, per-GPU milli, GPU count,
/// GPU-model constraint, per-GPU GPU memory). Host memory is not part of the key (as in the
/// FGD paper); GPU memory is, so that a GPU with free compute but too little free memory for
/// a class counts as fragment to it (0 for pod lists without GPU memory, such as the openb
/// lists, where M is the FGD paper's).
struct TargetClass {
  int64_t cpu_milli = 0;
  int32_t gpu_milli = 0;  ///< per GPU; 0 for CPU-only classes
  int32_t gpu_count = 0;
  std::string gpu_spec;          ///< "A|B"; empty = any model
  double probability = 0;        ///< p_m, in [0, 1]
  int64_t count = 0;             ///< pods of this class in the source list
  ModelMask models = kAnyModel;  ///< gpu_spec resolved against a cluster (see Resolve)
  int64_t gpu_memory_mib = 0;    ///< per GPU; 0 = none (and for CPU-only classes)
};

/// The target workload M of the FGD paper: the most frequent pod classes of a pod list,
/// taken in decreasing count until they cover `coverage` of the pods, then renormalised.
/// Immutable once built and resolved; safe to share between threads.
class TargetWorkload {
 public:
  TargetWorkload() = default;
  /// Builds M from `pods` (CPU-only pods included). Ties in count are ordered as the FGD
  /// artifact does (larger CPU, then larger milli, GPU count and model string first).
  static TargetWorkload FromPods(const std::vector<PodSpec>& pods, double coverage = 0.95);
  /// Builds M from explicit classes; probabilities are used as given.
  static TargetWorkload FromClasses(std::vector<TargetClass> classes);

  /// Resolves every class's GPU-model constraint against `cluster`'s model ids, and records
  /// how many GPUs of each model the cluster has.
  void Resolve(const Cluster& cluster);
  /// GPUs in the cluster whose model is in `models` (after Resolve).
  int64_t GpusOfModels(ModelMask models) const;
  /// The mean GPU memory (MiB) of the cluster's GPUs whose memory is known (after Resolve; 0
  /// when none is).
  double gpu_memory_mean_mib() const { return gpu_memory_mean_mib_; }

  const std::vector<TargetClass>& classes() const { return classes_; }
  /// Every class of the source pod list, M's and the rest, in the same order and with
  /// probabilities on the same scale as M's (count / pods covered by M). Empty for
  /// FromClasses workloads.
  const std::vector<TargetClass>& all_classes() const { return all_classes_; }

  /// F_n(M) in milli-GPU for a node of GPU model `model_id` (-1: none) with `cpu_left`
  /// milli-CPU and `gpu_count` GPUs whose free milli are `gpu_free[0..gpu_count)`. With
  /// `gpu_mem_free` (MiB free per GPU), a GPU can host a class only if both its free milli and
  /// its free memory fit the class; without it (the fgd and tessera policies' scores), only
  /// the milli. The same for classes without GPU memory.
  ///
  /// Topology: on a node with `topology`, a class of k ≥ 2 GPUs can use a free GPU only inside
  /// a set of k GPUs that fit it and are aligned in the measure's scope (MeasureScope: the
  /// NVLink domains, or the NUMA nodes where the node's kubelet policy is restricted or
  /// single-numa-node; AlignedUsable): the free milli of every other GPU is fragment to that
  /// class, all of it when no such set exists. A GPU in a broken island counts as fragment
  /// for the classes that need the island whole. Classes of one GPU or a share, and nodes
  /// without topology, are measured as without it. (The fgd policy's score passes no
  /// topology: FGD as published.)
  ///
  /// Inline, so that a caller that passes neither memory nor topology (the fgd policy's score,
  /// for every hypothetical placement) calls the loop without either test directly; pod lists
  /// without GPU memory take the loops without the memory test whatever the caller passes.
  double NodeFragmentation(int model_id, int64_t cpu_left, const int32_t* gpu_free, int gpu_count,
                           const int32_t* gpu_mem_free = nullptr,
                           const GpuTopology* topology = nullptr) const {
    const bool memory = gpu_mem_free != nullptr && any_gpu_memory_;
    if (topology == nullptr) {
      return memory ? Fragmentation<true, false>(model_id, cpu_left, gpu_free, gpu_count,
                                                 gpu_mem_free, nullptr)
                    : Fragmentation<false, false>(model_id, cpu_left, gpu_free, gpu_count, nullptr,
                                                  nullptr);
    }
    return memory ? Fragmentation<true, true>(model_id, cpu_left, gpu_free, gpu_count, gpu_mem_free,
                                              topology)
                  : Fragmentation<false, true>(model_id, cpu_left, gpu_free, gpu_count, nullptr,
                                               topology);
  }
  /// F_n(M) of a cluster's node, in both dimensions and with its topology.
  double NodeFragmentation(const Cluster& cluster, int node) const {
    return NodeFragmentation(cluster.model_id(node), cluster.state(node).cpu_left,
                             cluster.state(node).gpu_free.data(), cluster.spec(node).gpu_count,
                             cluster.state(node).gpu_mem_free.data(), cluster.topology(node));
  }
  /// NodeFragmentation's two parts: M's classes that use GPUs (gpu_milli and gpu_count > 0),
  /// in M's order, and Σ p_m over the others (their fragment is all idle GPU), summed in M's
  /// order. For policies that evaluate F_n(M) together with measures of their own.
  const std::vector<TargetClass>& gpu_classes() const { return gpu_classes_; }
  double cpu_only_probability() const { return cpu_only_probability_; }
  /// Σ_n F_n(M) over the cluster, in milli-GPU, in both dimensions.
  double ClusterFragmentation(const Cluster& cluster) const;
  /// Stranded GPU on a node, in milli-GPU: the free milli of each GPU that no GPU class of M
  /// could use there — for every class the node cannot host (model, CPU left, fewer than
  /// gpu_count GPUs with gpu_milli free) or whose gpu_milli the GPU's free share is below. An
  /// idle GPU on a node that hosts some class of M is not stranded. 0 when M has no GPU class.
  int64_t NodeStranded(int model_id, int64_t cpu_left, const int32_t* gpu_free,
                       int gpu_count) const;
  /// GPUs of a node stranded in one dimension (docs/GPU_MEMORY.md): among its GPUs with free
  /// compute that can serve no GPU class of M allowed on its model (free milli ≥ milli_m and
  /// free MiB ≥ mem_m for none), `compute_no_memory` counts those where some class's compute
  /// would fit (its memory is short), `memory_no_compute` those where the memory of some class
  /// that asks for memory would fit (its compute is short); a GPU may count in both. CPU is
  /// not looked at. 0 and 0 when M has no GPU class.
  struct GpuStranding {
    int compute_no_memory = 0;
    int memory_no_compute = 0;
  };
  GpuStranding NodeGpuStranding(int model_id, const int32_t* gpu_free, const int32_t* gpu_mem_free,
                                int gpu_count) const;
  int64_t NodeStranded(const Cluster& cluster, int node) const {
    return NodeStranded(cluster.model_id(node), cluster.state(node).cpu_left,
                        cluster.state(node).gpu_free.data(), cluster.spec(node).gpu_count);
  }

 private:
  std::vector<TargetClass> classes_;
  std::vector<TargetClass> all_classes_;
  std::vector<int64_t> gpus_by_model_;
  double gpu_memory_mean_mib_ = 0;
  double cpu_only_probability_ = 0;  // Σ p_m over CPU-only classes (their fragment is R_n)
  std::vector<TargetClass> gpu_classes_;
  bool any_gpu_memory_ = false;  // some class of gpu_classes_ asks for GPU memory

  /// NodeFragmentation with the memory test (kMemory: gpu_mem_free given and some class asks
  /// for memory) and the topology test (kTopology: topology given) compiled in or out; the
  /// four are instantiated in target_workload.cc.
  template <bool kMemory, bool kTopology>
  double Fragmentation(int model_id, int64_t cpu_left, const int32_t* gpu_free, int gpu_count,
                       const int32_t* gpu_mem_free, const GpuTopology* topology) const;
};

}  // namespace tessera
