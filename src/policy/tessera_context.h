#pragma once

// The cluster-wide context of the `tessera` policy (Policy::ContextKey, docs/POLICIES.md):
// what its scores read of the cluster beyond the node. Three parts, in one 64-bit value:
//  - bit 0, adaptive idle-node protection (TesseraParams::adaptive_open): idle nodes are
//    plentiful for the multi-GPU demand seen so far;
//  - bit 62, with bit 0: FGD's term stays over the demand-weighted classes while plentiful
//    (count_needs_multi: no multi-GPU pod seen yet on a list that has whole-GPU pods);
//  - bits 1 + 4i .. 4 + 4i, model pressure (model_pressure): the pressure level of the i-th
//    pressured GPU model, in steps of pressure_step (0..15): the list's model-constrained GPU
//    request still expected on that model per free GPU milli of it.
// It also gives what a pod pays, in FGD's ΔF, for the pressure on the GPU model it would use.
// Immutable after construction; thread-safe.

#include <array>
#include <cstdint>
#include <vector>

#include "frag/target_workload.h"
#include "policy/policy.h"
#include "policy/tessera_policy.h"

namespace tessera {

class TesseraContext {
 public:
  static constexpr int64_t kPlentifulBit = 1;
  static constexpr int64_t kDemandWhilePlentifulBit = int64_t{1} << 62;

  TesseraContext(const TargetWorkload& workload, const TesseraParams& params);

  /// Whether some GPU model is pressured (model pressure is on and the list constrains models).
  bool pressured() const { return !pressured_.empty(); }
  /// The context value of the cluster `s` (Policy::ContextKey, for a policy that uses it).
  int64_t Key(const ClusterSummary& s) const;
  /// The part of `context` that a score of `pod` on a node of GPU model `model_id` reads
  /// (Policy::ContextFor): the plentiful bits, and the pressure levels only where the pod
  /// pays for one.
  int64_t For(int64_t context, int model_id, const PodRequest& pod) const;
  /// What placing `pod` on a GPU of model `model_id` costs under `context` (milli, taken off
  /// FGD's ΔF): model_pressure · (that model's pressure − the least pressure among the models
  /// the pod may use) · the pod's GPU milli. Zero for pods that must use this model or need no
  /// GPU.
  double PodPressure(const PodRequest& pod, int model_id, int64_t context) const;

 private:
  static constexpr size_t kMaxPressured = 15;  // 4 bits each in the context value
  static constexpr int kMaxLevel = 15;

  bool CountPrimary(const ClusterSummary& s) const;
  int64_t Plentiful(const ClusterSummary& s) const;
  int64_t Level(int k, int64_t context) const;
  double ModelPressure(int k, int64_t context) const;

  const bool adaptive_open_;
  const bool count_needs_multi_;
  const double open_reserve_;
  const double project_opening_;
  const double model_pressure_;
  const double pressure_step_;
  bool whole_gpu_classes_ = false;                 // the pod list has pods that ask for whole GPUs
  std::array<bool, kMaxGpuModels> has_model_{};    // the cluster has GPUs of model k
  std::array<int, kMaxGpuModels> pressured_slot_;  // index into pressured_, or -1
  std::vector<int> pressured_;                     // models some constrained class may use (≤ 15)
  ModelMask unpressured_ = 0;                      // the cluster's other GPU models
  std::vector<double> demand_share_;  // their constrained request share, by pressured_ index
};

}  // namespace tessera
