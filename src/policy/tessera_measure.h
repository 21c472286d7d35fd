#pragma once

// The measures by which the `tessera` policy (policy/tessera.cc) judges a node state in GPU
// compute: FGD's fragmentation F_n(M), over the workload of FGD's term and over M itself, and
// the CPU stranding S_n, over the stranding classes and over M's alone (docs/POLICIES.md).
//  - FGD's term is over M or, with TesseraParams::demand_weight, over the list's classes
//    weighed by count × GPU request as well as count ("Demand-weighted M"), the heaviest
//    first until demand_coverage of the weight.
//  - S_n(m) = R_n − min(GPU milli m could use, (CPU left / cpu_m) · milli_m · n_m) (R_n when m
//    cannot use the node at all), S_n = Σ_m w_m S_n(m), over the stranding classes: M's, then
//    (multi_gpu_classes) the list's multi-GPU classes that M's cut drops; w_m is p_m raised
//    for multi-GPU classes and for classes limited to scarce GPU models.
// Measure gives all four in one pass over tables built once: what a class needs of the GPUs
// depends only on its GPU milli, so the GPUs are counted once per distinct milli, and the
// classes are summed per bucket of equal (milli, GPU count) with prefix sums over CPU
// requests. The plain per-class loops (reference_measure, and nodes with a topology) give
// the same values up to the rounding of the sums' order.
//
// Immutable after construction; borrows the target workload, which must outlive it. Not
// copyable.

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "frag/target_workload.h"
#include "model/topology.h"
#include "policy/tessera_policy.h"

namespace tessera {

/// A node state's measures, in milli-GPU.
struct TesseraMeasures {
  double frag = 0;        ///< FGD's F_n(M) (over the demand-weighted M with demand_weight)
  double frag_p = 0;      ///< F_n(M) itself (while idle nodes are plentiful; = frag without
                          ///< demand_weight)
  double stranded = 0;    ///< S_n
  double stranded_m = 0;  ///< S_n over M's classes only
};

class TesseraMeasure {
 public:
  TesseraMeasure(const TargetWorkload* workload, const TesseraParams& params);
  TesseraMeasure(const TesseraMeasure&) = delete;
  TesseraMeasure& operator=(const TesseraMeasure&) = delete;

  /// The measures of a node of GPU model `model_id` (−1: none) with `cpu_left` milli-CPU
  /// and `gpu_free` milli free on each of its `g` GPUs; `idle`: the node is idle (S_n is then
  /// 0). S_n over the first `n_classes` of classes() (m_size(), or all). `topo`: the node's
  /// topology where it constrains the measure (a multi-GPU class then uses only the GPUs of an
  /// aligned set in S_n), else null.
  TesseraMeasures Measure(int model_id, int64_t cpu_left, const int32_t* gpu_free, int g, bool idle,
                          size_t n_classes, const GpuTopology* topo = nullptr) const;

  /// The stranding classes: M's first, then the multi-GPU classes.
  const std::vector<TargetClass>& classes() const { return classes_; }
  /// classes()[0, m_size()) is M.
  size_t m_size() const { return m_size_; }
  /// w_m, by classes() index.
  const std::vector<double>& weights() const { return weights_; }

 private:
  // Measure's tables: the classes that may use one GPU model, by (GPU milli, GPU count), each
  // bucket sorted by CPU request with the prefix sums of the weights (p_m for F_n, w_m for
  // S_n) and of weight / CPU request.
  struct Bucket {
    int threshold = 0;                       // index of the classes' GPU milli in thresholds_
    int gpu_count = 0;                       // GPUs per pod
    double gpu_request = 0;                  // milli · count
    std::vector<int64_t> cpu;                // CPU requests, ascending
    std::vector<double> weight_sum;          // [i]: Σ weight of the first i classes
    std::vector<double> weight_per_cpu_sum;  // [i]: Σ weight / cpu of the first i (cpu > 0)
    std::vector<double> weight_sum_p;        // frag_pair_buckets_: [i]: Σ p_m of M's classes
    // How many classes request at most `cpu_left` (buckets hold a few classes: a scan).
    size_t AtMost(int64_t cpu_left) const {
      if (cpu_left >= cpu.back()) return cpu.size();
      size_t e = 0;
      while (cpu[e] <= cpu_left) ++e;
      return e;
    }
  };
  using ModelBuckets = std::array<std::vector<Bucket>, kMaxGpuModels>;
  static constexpr size_t kMaxThresholds = 64;  // more distinct GPU milli: ReferenceMeasure

  void BuildPrimary(double demand_weight, double demand_coverage);
  void BuildTables();
  void BuildPairTables();
  TesseraMeasures ReferenceMeasure(int model_id, int64_t cpu_left, const int32_t* gpu_free, int g,
                                   bool idle, size_t n_classes, const GpuTopology* topo) const;
  double ReferenceStranded(int model_id, int64_t cpu_left, const int32_t* gpu_free, int g,
                           size_t n_classes, const GpuTopology* topo) const;

  const TargetWorkload* workload_;
  const TargetWorkload* primary_ = nullptr;  // F_n's workload: workload_ or &own_primary_
  TargetWorkload own_primary_;
  const bool cpu_stranding_;          // TesseraParams::cpu_stranding (off: S_n stays 0)
  const bool reference_;              // TesseraParams::reference_measure
  std::vector<TargetClass> classes_;  // M plus the multi-GPU classes
  size_t m_size_ = 0;                 // classes_[0, m_size_) is M
  std::vector<double> weights_;       // w_m, by classes_ index
  // By free milli f: how many of thresholds_ are ≤ f (Measure's count of the GPUs by p).
  std::array<uint8_t, kMilliPerGpu + 1> p_of_{};
  std::vector<int32_t> thresholds_;  // the distinct GPU milli of the classes, ascending
  ModelBuckets frag_buckets_;        // primary_->gpu_classes() with p_m, for F_n
  ModelBuckets frag_p_buckets_;      // workload_->gpu_classes(), when not primary_
  ModelBuckets frag_pair_buckets_;   // both of them (BuildPairTables)
  ModelBuckets strand_m_buckets_;    // M's classes with w_m, for S_n
  ModelBuckets strand_x_buckets_;    // the other classes of classes_ with w_m
  double frag_weight_ = 0;           // the cpu-only classes' p plus Σ p_m
  double frag_p_weight_ = 0;         // the same for frag_p_buckets_
  double strand_m_weight_ = 0;       // Σ w_m over M
  double strand_x_weight_ = 0;       // Σ w_m over the other classes
};

}  // namespace tessera
