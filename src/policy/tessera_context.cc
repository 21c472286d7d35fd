#include "policy/tessera_context.h"

#include <algorithm>
#include <cmath>

namespace tessera {

TesseraContext::TesseraContext(const TargetWorkload& workload, const TesseraParams& params)
    : adaptive_open_(params.adaptive_open),
      count_needs_multi_(params.count_needs_multi),
      open_reserve_(params.open_reserve),
      project_opening_(params.project_opening),
      model_pressure_(params.model_pressure),
      pressure_step_(params.pressure_step) {
  pressured_slot_.fill(-1);
  for (const TargetClass& c : workload.all_classes()) {
    whole_gpu_classes_ = whole_gpu_classes_ || (c.gpu_count > 0 && c.gpu_milli >= kMilliPerGpu);
  }
  // Model pressure: the GPU request of the list's model-constrained classes, each spread
  // over its allowed models in proportion to their GPUs, as a share of the list's request.
  double total_request = 0;
  std::array<double, kMaxGpuModels> demand{};
  for (const TargetClass& c : workload.all_classes()) {
    const double req = static_cast<double>(c.count) * c.gpu_milli * c.gpu_count;
    total_request += req;
    if (req == 0 || c.models == kAnyModel) continue;
    const double allowed = static_cast<double>(workload.GpusOfModels(c.models));
    for (int k = 0; k < kMaxGpuModels && allowed > 0; ++k) {
      if (((c.models >> k) & 1) == 0) continue;
      demand[k] += req * static_cast<double>(workload.GpusOfModels(ModelMask{1} << k)) / allowed;
    }
  }
  for (int k = 0; k < kMaxGpuModels; ++k) {
    has_model_[k] = workload.GpusOfModels(ModelMask{1} << k) > 0;
    if (!has_model_[k] || demand[k] <= 0 || model_pressure_ <= 0) continue;
    if (pressured_.size() == kMaxPressured) break;  // the rest count as unpressured
    pressured_slot_[k] = static_cast<int>(pressured_.size());
    pressured_.push_back(k);
    demand_share_.push_back(demand[k] / total_request);
  }
  for (int k = 0; k < kMaxGpuModels; ++k) {
    if (has_model_[k] && pressured_slot_[k] < 0) unpressured_ |= ModelMask{1} << k;
  }
}

int64_t TesseraContext::Key(const ClusterSummary& s) const {
  int64_t key = adaptive_open_ ? Plentiful(s) : 0;
  if (key != 0 && !CountPrimary(s)) key |= kDemandWhilePlentifulBit;
  const double free = static_cast<double>(s.free_gpu_milli);
  for (size_t i = 0; i < pressured_.size(); ++i) {
    // Expected constrained request still to come on model k (its share of what the free GPUs
    // will take) per free GPU of model k.
    const double free_k = static_cast<double>(s.free_gpu_milli_by_model[pressured_[i]]);
    const double level = free_k > 0 ? demand_share_[i] * free / free_k / pressure_step_ : kMaxLevel;
    key |= static_cast<int64_t>(std::min<double>(kMaxLevel, std::floor(level + 0.5)))
           << (1 + 4 * i);
  }
  return key;
}

// A score reads the context through the plentiful bits and PodPressure, which depends on
// the pressure level of the node's model and the least level among the models the pod may
// use: bits 0 and 62 as in Key (adaptive_open only), bits 1..4 the level here, bits 5..8 the
// least.
int64_t TesseraContext::For(int64_t context, int model_id, const PodRequest& pod) const {
  int64_t key = adaptive_open_ ? (context & (kPlentifulBit | kDemandWhilePlentifulBit)) : 0;
  if (pressured_.empty() || pod.IsCpuOnly() || model_id < 0 || model_id >= kMaxGpuModels)
    return key;
  const int64_t here = Level(model_id, context);
  int64_t least = here;  // as in PodPressure; unpressured models have level 0
  if ((pod.models & unpressured_) != 0) least = 0;
  for (size_t i = 0; i < pressured_.size() && least > 0; ++i) {
    if ((pod.models >> pressured_[i]) & 1) least = std::min(least, Level(pressured_[i], context));
  }
  // PodPressure is 0 whenever the node's model is (one of) the least pressured the pod may
  // use, whatever the level: one tag for all those, so that level changes keep their scores.
  if (least == here) return key;
  return key | here << 1 | least << 5;
}

// Whether FGD's term is over M itself (demand_weight): while idle nodes are plentiful and
// (count_needs_multi) some multi-GPU pod has been seen.
bool TesseraContext::CountPrimary(const ClusterSummary& s) const {
  if (!count_needs_multi_ || !whole_gpu_classes_) return true;
  for (int k = 2; k <= kMaxGpusPerNode; ++k) {
    if (s.seen_gpu_milli_by_count[k] > 0) return true;
  }
  return false;
}

// 1 while idle nodes are plentiful for the multi-GPU demand expected from now on, else 0.
int64_t TesseraContext::Plentiful(const ClusterSummary& s) const {
  int64_t seen_all = 0;
  for (int64_t v : s.seen_gpu_milli_by_count) seen_all += v;
  if (seen_all == 0) return 1;
  int64_t idle_at_least_k = 0;   // idle GPUs (milli) on idle nodes with ≥ k GPUs
  int64_t start_at_least_k = 0;  // the same at the start
  int64_t seen_at_least_k = 0;   // GPU milli seen from pods with ≥ k GPUs
  const double free = static_cast<double>(s.free_gpu_milli);
  const double allocated_since = static_cast<double>(s.start_free_gpu_milli - s.free_gpu_milli);
  for (int k = kMaxGpusPerNode; k >= 2; --k) {
    idle_at_least_k += int64_t{s.idle_nodes_by_gpus[k]} * k * kMilliPerGpu;
    start_at_least_k += int64_t{s.start_idle_nodes_by_gpus[k]} * k * kMilliPerGpu;
    seen_at_least_k += s.seen_gpu_milli_by_count[k];
    if (seen_at_least_k == 0) continue;
    const double expected =
        free * static_cast<double>(seen_at_least_k) / static_cast<double>(seen_all);
    double supply = static_cast<double>(idle_at_least_k);
    if (allocated_since > 0) {
      const double rate = static_cast<double>(start_at_least_k - idle_at_least_k) / allocated_since;
      supply -= project_opening_ * rate * free;
    }
    if (supply < open_reserve_ * expected) return 0;
  }
  return 1;
}

// Pressure level of model k (0..15, in steps of pressure_step) under `context`.
int64_t TesseraContext::Level(int k, int64_t context) const {
  const int slot = pressured_slot_[k];
  return slot < 0 ? 0 : (context >> (1 + 4 * slot)) & 15;
}
// Pressure of model k (per milli-GPU) under the context value `context`.
double TesseraContext::ModelPressure(int k, int64_t context) const {
  return static_cast<double>(Level(k, context)) * pressure_step_;
}

double TesseraContext::PodPressure(const PodRequest& pod, int model_id, int64_t context) const {
  if (pressured_.empty() || pod.IsCpuOnly() || model_id < 0 || model_id >= kMaxGpuModels) return 0;
  const double here = ModelPressure(model_id, context);
  double least = here;
  for (int k = 0; k < kMaxGpuModels && least > 0; ++k) {
    if (has_model_[k] && ((pod.models >> k) & 1))
      least = std::min(least, ModelPressure(k, context));
  }
  return model_pressure_ * (here - least) * static_cast<double>(pod.TotalGpuMilli());
}

}  // namespace tessera
