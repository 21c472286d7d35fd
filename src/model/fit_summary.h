#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

#include "model/fit.h"
#include "model/node.h"
#include "model/pod.h"
#include "model/resources.h"

namespace tessera {

/// What the filters of CheckFit read of one node state, in two 64-bit words: CPU and memory
/// left, the largest free share of one GPU, the number of whole free GPUs, the GPU count, the
/// most GPU memory free on one GPU and the GPU model. A FitQuery tests a pod against it with
/// two subtractions and a bit test, without reading the node state.
///
/// Each field sits below a guard bit that is set in the summary: (word − need) keeps every
/// guard bit if and only if each field is at least its need, since a need never exceeds what
/// its field can hold and no borrow crosses a guard bit that stays set. Values too large for
/// their field are stored clamped to its largest value (CPU and GPU memory to 2^31 − 1,
/// memory to 2^30 − 1), which keeps every test a necessary condition; a FitQuery whose need
/// reaches a clamp is not exact (FitQuery::exact). Above the last guard of each word, where no
/// borrow reaches, sit a bit that every summary of a node state has (a summary without it,
/// such as kNone, fits no pod) and the GPU model id (0 for a node without GPUs, which no GPU
/// pod passes anyway: it has none).
///
/// Plain value.
struct FitSummary {
  /// CPU left (bits 0..30, guard 31), memory left (32..61, guard 62), a state (63).
  uint64_t cpu_memory = 0;
  /// The largest free milli of one GPU (bits 0..10, guard 11), GPUs with all 1000 milli free
  /// (12..16, guard 17), GPU count (18..22, guard 23), the most GPU memory free on one GPU in
  /// MiB (24..54, guard 55), the GPU model id (56..61).
  uint64_t gpus = 0;
  int8_t model = -1;  ///< GPU model id, −1 for a node without GPUs
  /// TopologyBits of the node: where a pod's topology may refuse it (0 without topology,
  /// where every FitQuery stays as exact as without topologies).
  uint8_t topology = 0;

  static constexpr uint64_t kCpuGuard = uint64_t{1} << 31;
  static constexpr uint64_t kMemoryGuard = uint64_t{1} << 62;
  static constexpr uint64_t kState = uint64_t{1} << 63;
  static constexpr uint64_t kCpuMemoryGuards = kCpuGuard | kMemoryGuard | kState;
  static constexpr uint64_t kShareGuard = uint64_t{1} << 11;
  static constexpr uint64_t kFullGuard = uint64_t{1} << 17;
  static constexpr uint64_t kCountGuard = uint64_t{1} << 23;
  static constexpr uint64_t kGpuMemoryGuard = uint64_t{1} << 55;
  static constexpr uint64_t kGpuGuards = kShareGuard | kFullGuard | kCountGuard | kGpuMemoryGuard;
  static constexpr int64_t kMaxCpu = (int64_t{1} << 31) - 1;
  static constexpr int64_t kMaxMemory = (int64_t{1} << 30) - 1;
  static constexpr int64_t kMaxShare = (int64_t{1} << 11) - 1;
  static constexpr int64_t kMaxCount = (int64_t{1} << 5) - 1;
  static constexpr int64_t kMaxGpuMemory = (int64_t{1} << 31) - 1;

  static uint64_t Clamp(int64_t v, int64_t max) {
    return static_cast<uint64_t>(std::clamp<int64_t>(v, 0, max));
  }

  /// The summary of `state` on a node with `gpu_count` GPUs of model `model_id` (−1: none)
  /// whose topology has TopologyBits `topology`.
  static FitSummary Of(int gpu_count, int model_id, const NodeState& state, uint8_t topology = 0) {
    int64_t share = 0;
    int64_t full = 0;
    int64_t memory = 0;
    for (int i = 0; i < gpu_count; ++i) {
      share = std::max<int64_t>(share, state.gpu_free[i]);
      full += state.gpu_free[i] >= kMilliPerGpu;
      memory = std::max<int64_t>(memory, state.gpu_mem_free[i]);
    }
    FitSummary s;
    s.cpu_memory = kCpuMemoryGuards | Clamp(state.cpu_left, kMaxCpu) |
                   Clamp(state.memory_left, kMaxMemory) << 32;
    s.gpus = kGpuGuards | Clamp(share, kMaxShare) | Clamp(full, kMaxCount) << 12 |
             Clamp(gpu_count, kMaxCount) << 18 | Clamp(memory, kMaxGpuMemory) << 24 |
             static_cast<uint64_t>(std::max(model_id, 0) & 63) << 56;
    s.model = static_cast<int8_t>(model_id);
    s.topology = topology;
    return s;
  }
  /// A summary that fits no pod (its guard bits set, so that no borrow reaches kState).
  static constexpr FitSummary None() {
    FitSummary s;
    s.cpu_memory = kCpuGuard | kMemoryGuard;
    s.gpus = kGpuGuards;
    return s;
  }
};

/// One pod's needs in FitSummary's terms. MayFit(summary) is false only if CheckFit on that
/// state says the pod does not fit; when exact(), MayFit is CheckFit's verdict and Reason its
/// reason, else a true MayFit must be confirmed with CheckFit (pods that ask for GPU memory,
/// several GPUs of less than 1000 milli each, or more than a field holds). Topology is not
/// in the two words: on a summary that shares a topology bit with the query (ExactOn false)
/// a true MayFit must be confirmed with CheckFit too; a false one stays CheckFit's verdict
/// and, when exact(), Reason its reason (topology is checked last). Plain value.
class FitQuery {
 public:
  explicit FitQuery(const PodRequest& pod) {
    cpu_memory_ = FitSummary::Clamp(pod.cpu_milli, FitSummary::kMaxCpu) |
                  FitSummary::Clamp(pod.memory_mib, FitSummary::kMaxMemory) << 32;
    exact_ = pod.cpu_milli < FitSummary::kMaxCpu && pod.memory_mib < FitSummary::kMaxMemory;
    if (!pod.IsCpuOnly()) {
      models_ = pod.models;
      gpu_pod_ = 1;
      // Sharing pods need one GPU with the share free; pods of whole GPUs that many GPUs
      // with all 1000 milli free; others at least one GPU with their share free (not exact).
      const bool whole = pod.gpu_milli == kMilliPerGpu;
      const uint64_t share = whole ? 0 : FitSummary::Clamp(pod.gpu_milli, FitSummary::kMaxShare);
      const uint64_t full = whole ? FitSummary::Clamp(pod.gpu_count, FitSummary::kMaxCount) : 0;
      gpus_ = share | full << 12 | FitSummary::Clamp(pod.gpu_count, FitSummary::kMaxCount) << 18 |
              FitSummary::Clamp(pod.gpu_memory_mib, FitSummary::kMaxGpuMemory) << 24;
      exact_ = exact_ && pod.gpu_memory_mib == 0 && pod.gpu_count < FitSummary::kMaxCount &&
               (pod.IsSharing() || whole);
      topology_ = TopologyQueryBits(pod);
    }
  }

  /// False only if the pod does not fit a node in the summarised state.
  bool MayFit(const FitSummary& s) const {
    return ((s.cpu_memory - cpu_memory_) & FitSummary::kCpuMemoryGuards) ==
               FitSummary::kCpuMemoryGuards &&
           ((s.gpus - gpus_) & FitSummary::kGpuGuards) == FitSummary::kGpuGuards &&
           ((models_ >> (s.gpus >> 56)) & 1) != 0;
  }
  /// Whether MayFit and Reason are CheckFit's verdict and reason on summaries without
  /// topology bits in common with the pod's (ExactOn).
  bool exact() const { return exact_; }
  /// Whether MayFit and Reason are CheckFit's verdict and reason on `s`.
  bool ExactOn(const FitSummary& s) const { return exact_ && (s.topology & topology_) == 0; }
  /// CheckFit's reason for a summarised state: the first of its filters that fails, in its
  /// order (without a branch). Precondition: exact().
  FitReason Reason(const FitSummary& s) const {
    const uint64_t a = ~(s.cpu_memory - cpu_memory_);  // a guard bit set: that need is not met
    const uint64_t b = ~(s.gpus - gpus_);
    const uint64_t no_gpus = static_cast<uint8_t>(s.model) >> 7;  // model −1
    const uint64_t model = (((models_ >> (s.gpus >> 56)) & 1) ^ 1) | (no_gpus & gpu_pod_);
    const uint64_t failed =
        model | (b & FitSummary::kCountGuard) >> 22 | (a & FitSummary::kCpuGuard) >> 29 |
        (a & FitSummary::kMemoryGuard) >> 59 |
        static_cast<uint64_t>((b & (FitSummary::kShareGuard | FitSummary::kFullGuard)) != 0) << 4;
    return failed == 0 ? FitReason::kFits : static_cast<FitReason>(std::countr_zero(failed) + 1);
  }

 private:
  uint64_t cpu_memory_ = 0;
  uint64_t gpus_ = 0;
  ModelMask models_ = kAnyModel;
  uint64_t gpu_pod_ = 0;  // 1 for a pod that asks for GPUs
  bool exact_ = true;
  uint8_t topology_ = 0;  // TopologyQueryBits
};

}  // namespace tessera
