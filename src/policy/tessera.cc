// tessera: FGD's fragmentation-aware placement, with FGD's frequent ties broken by how much
// idle GPU the placement strands for want of CPU.
//
// FGD (fgd.cc) scores a node by the change of its fragmentation F_n(M), quantized to
// ⌊100 · sigmoid(Δ / 1000)⌋, so many nodes tie and the per-seed node order decides. F_n(M)
// asks, per target class m, whether *one* more pod of m fits; it does not see that a node with
// 8 idle GPUs and 16 cores left can take one 12-core GPU pod, not eight: seven GPUs are
// stranded. At the end of a default-trace FGD run about a fifth of the idle GPUs sit on such
// CPU-exhausted nodes.
//
// Among FGD's ties this policy prefers the placement that strands the least idle GPU:
//   S_n(m) = R_n − min(GPU milli m could use, (CPU left / cpu_m) · milli_m · n_m)
//            (R_n when m cannot use the node at all), S_n = Σ_m w_m S_n(m),
// over M (with `multi_gpu_classes`, off by default, also the list's multi-GPU classes that M's
// cut drops), with weights raised for multi-GPU classes and for classes limited to scarce GPU
// models. The secondary score is ⌊1000 · sigmoid(ΔS / 1000)⌋. Idle nodes are scored as
// stranding nothing (with `sharing_open_cost`, off by default, a sharing pod pays for opening
// one). `adaptive_open` (on by default) watches whether idle nodes are projected to remain
// plentiful for the multi-GPU demand seen so far, a cluster-wide context (Policy::ContextKey)
// that the scheduler passes in NodeView::context; it chooses the workload of FGD's term (below,
// "Demand-weighted M"). With `model_pressure`, pods that may use other GPU models pay, in
// FGD's own score, for GPUs of a model that the list's model-constrained pods are expected to need
// (constrained request still to come per free GPU of that model, also in the context), so
// that, e.g., unconstrained pods leave the T4 nodes to T4-only pods. With hole fill
// (`hole_fill_primary`), a sharing pod's ΔF is also charged for the GPU milli its GPU's hole
// can no longer use, waste(r) = r − the most that the list's frequent sharing sizes fill of
// r, relative to putting the pod on a free GPU: a 320-milli pod no longer takes the 530 next
// to a 470 (210 left, which no frequent size fits) when a 680 next to a 320 is free (360
// left, which a 320 closes). See docs/POLICIES.md.
//
// Demand-weighted M (`demand_weight`): M keeps the classes that cover 95 % of the *pods*, so a
// class of 2 % of the pods that asks for 8 GPUs, a sixth of the GPU request, is not in it and
// FGD's term never charges a placement for breaking the last idle node such a pod needs. While
// idle nodes are short (the adaptive_open context), FGD's term is over the list's classes
// weighed by count × GPU request instead; while plentiful, over M (the openb lists' figures
// depend on it). See docs/POLICIES.md, "Demand-weighted M", and its robustness benchmark.
//
// GPU memory (docs/GPU_MEMORY.md): for pod lists that ask for GPU memory, nodes whose GPU
// memory is known are scored in two dimensions (ScorePair2D): a GPU serves a class only if
// both its free milli and its usable memory fit, every placement is weighed with its memory,
// and FGD's ties go to the placement that leaves the node the least usable GPU memory; where
// the target workload asks for a larger share of the cluster's GPU memory than of its compute
// (MemoryBound), a memory hole fill and pod-count weights of the sharing classes join the score.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <map>
#include <vector>

#include "frag/target_workload.h"
#include "model/fit.h"
#include "policy/builtin.h"
#include "policy/hypothetical.h"
#include "policy/tessera_policy.h"
#include "util/check.h"

namespace tessera {
namespace {

constexpr int64_t kSecondaryLevels = 1000;  // resolution of the tie-break score
constexpr double kSecondaryScale = 1000.0;  // milli-GPU: one GPU moves the sigmoid by one unit

bool SameClass(const TargetClass& a, const TargetClass& b) {
  return a.cpu_milli == b.cpu_milli && a.gpu_milli == b.gpu_milli && a.gpu_count == b.gpu_count &&
         a.gpu_spec == b.gpu_spec;
}

class TesseraPolicy final : public Policy {
 public:
  TesseraPolicy(const TargetWorkload* workload, const TesseraParams& params)
      : workload_(workload), params_(params) {
    classes_ = workload_->classes();
    m_size_ = classes_.size();
    if (params_.multi_gpu_classes) {
      for (const TargetClass& c : workload_->all_classes()) {
        const bool in_m = std::any_of(classes_.begin(), classes_.end(),
                                      [&](const TargetClass& m) { return SameClass(m, c); });
        if (c.gpu_count > 1 && !in_m) classes_.push_back(c);
      }
    }
    BuildPrimary();
    for (const TargetClass& c : workload_->all_classes()) {
      whole_gpu_classes_ = whole_gpu_classes_ || (c.gpu_count > 0 && c.gpu_milli >= kMilliPerGpu);
    }
    const double all_gpus = static_cast<double>(workload_->GpusOfModels(kAnyModel));
    for (const TargetClass& c : classes_) {
      double w = c.probability;
      const double allowed = static_cast<double>(workload_->GpusOfModels(c.models));
      if (c.gpu_count > 0 && allowed > 0) w *= std::pow(all_gpus / allowed, params_.scarcity);
      if (c.gpu_count > 1) w *= 1.0 + params_.multi_gpu_weight * (c.gpu_count - 1);
      weights_.push_back(w);
    }
    // Model pressure: the GPU request of the list's model-constrained classes, each spread
    // over its allowed models in proportion to their GPUs, as a share of the list's request.
    double total_request = 0;
    std::array<double, kMaxGpuModels> demand{};
    for (const TargetClass& c : workload_->all_classes()) {
      const double req = static_cast<double>(c.count) * c.gpu_milli * c.gpu_count;
      total_request += req;
      if (req == 0 || c.models == kAnyModel) continue;
      const double allowed = static_cast<double>(workload_->GpusOfModels(c.models));
      for (int k = 0; k < kMaxGpuModels && allowed > 0; ++k) {
        if (((c.models >> k) & 1) == 0) continue;
        demand[k] +=
            req * static_cast<double>(workload_->GpusOfModels(ModelMask{1} << k)) / allowed;
      }
    }
    for (int k = 0; k < kMaxGpuModels; ++k) {
      has_model_[k] = workload_->GpusOfModels(ModelMask{1} << k) > 0;
      if (!has_model_[k] || demand[k] <= 0 || params_.model_pressure <= 0) continue;
      if (pressured_.size() == kMaxPressured) break;  // the rest count as unpressured
      pressured_slot_[k] = static_cast<int>(pressured_.size());
      pressured_.push_back(k);
      demand_share_.push_back(demand[k] / total_request);
    }
    for (int k = 0; k < kMaxGpuModels; ++k) {
      if (has_model_[k] && pressured_slot_[k] < 0) unpressured_ |= ModelMask{1} << k;
    }
    BuildMeasureTables();
    for (const TargetClass& c : workload_->all_classes()) memory_ |= c.gpu_memory_mib > 0;
    for (const TargetClass& c : workload_->classes()) memory_ |= c.gpu_memory_mib > 0;
    if (params_.hole_fill != 0 || params_.hole_fill_primary != 0) BuildHoleWaste();
    // The memory-bound mode (docs/GPU_MEMORY.md), decided once from M and the cluster's mean
    // GPU memory; memory_bound_mode off applies it wherever memory is known.
    const double mean_mib = workload_->gpu_memory_mean_mib();
    if (memory_ && mean_mib > 0 && (!params_.memory_bound_mode || MemoryBound(mean_mib))) {
      if (params_.memory_hole_fill != 0) BuildMemoryWaste();
      if (params_.count_weight != 0) BuildCountWeights(mean_mib);
    }
  }

  std::string_view name() const override { return "tessera"; }

  bool ReadsPodMemory() const override { return false; }

  bool UsesContext() const override {
    return params_.cpu_stranding && (params_.adaptive_open || !pressured_.empty());
  }

  // Bit 0: idle nodes are plentiful (adaptive_open); bit 62 with it: FGD's term stays over the
  // demand-weighted classes (CountPrimary). Bits 1 + 4i .. 4 + 4i: the pressure level of the
  // i-th pressured model, in steps of pressure_step (0..15).
  int64_t ContextKey(const ClusterSummary& s) const override {
    if (!UsesContext()) return 0;
    int64_t key = params_.adaptive_open ? Plentiful(s) : 0;
    if (key != 0 && !CountPrimary(s)) key |= kDemandWhilePlentifulBit;
    const double free = static_cast<double>(s.free_gpu_milli);
    for (size_t i = 0; i < pressured_.size(); ++i) {
      // Expected constrained request still to come on model k (its share of what the free GPUs
      // will take) per free GPU of model k.
      const double free_k = static_cast<double>(s.free_gpu_milli_by_model[pressured_[i]]);
      const double level =
          free_k > 0 ? demand_share_[i] * free / free_k / params_.pressure_step : kMaxLevel;
      key |= static_cast<int64_t>(std::min<double>(kMaxLevel, std::floor(level + 0.5)))
             << (1 + 4 * i);
    }
    return key;
  }

  // Score reads the context through the plentiful bit and PodPressure, which depends on the
  // pressure level of the node's model and the least level among the models the pod may use:
  // bits 0 and 62 as in ContextKey (adaptive_open only), bits 1..4 the level here, bits 5..8
  // the least.
  int64_t ContextFor(int64_t context, int model_id, const PodRequest& pod) const override {
    int64_t key = params_.adaptive_open ? (context & (1 | kDemandWhilePlentifulBit)) : 0;
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
  bool CountPrimary(const ClusterSummary& s) const {
    if (!params_.count_needs_multi || !whole_gpu_classes_) return true;
    for (int k = 2; k <= kMaxGpusPerNode; ++k) {
      if (s.seen_gpu_milli_by_count[k] > 0) return true;
    }
    return false;
  }
  // Set with bit 0 while FGD's term stays over the demand-weighted classes (no multi-GPU pod
  // seen yet).
  static constexpr int64_t kDemandWhilePlentifulBit = int64_t{1} << 62;

  // 1 while idle nodes are plentiful for the multi-GPU demand expected from now on, else 0.
  int64_t Plentiful(const ClusterSummary& s) const {
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
        const double rate =
            static_cast<double>(start_at_least_k - idle_at_least_k) / allocated_since;
        supply -= params_.project_opening * rate * free;
      }
      if (supply < params_.open_reserve * expected) return 0;
    }
    return 1;
  }

  // Pressure level of model k (0..15, in steps of pressure_step) under `context`.
  int64_t Level(int k, int64_t context) const {
    const int slot = pressured_slot_[k];
    return slot < 0 ? 0 : (context >> (1 + 4 * slot)) & 15;
  }
  // Pressure of model k (per milli-GPU) under the context value `context`.
  double ModelPressure(int k, int64_t context) const {
    return static_cast<double>(Level(k, context)) * params_.pressure_step;
  }

  // What placing `pod` on a GPU of model `model_id` costs (milli, subtracted from FGD's
  // ΔF): model_pressure · (that model's pressure − the least pressure among the models the pod
  // may use) · the pod's GPU milli. Zero for pods that must use this model or need no GPU.
  double PodPressure(const PodRequest& pod, int model_id, int64_t context) const {
    if (pressured_.empty() || pod.IsCpuOnly() || model_id < 0 || model_id >= kMaxGpuModels)
      return 0;
    const double here = ModelPressure(model_id, context);
    double least = here;
    for (int k = 0; k < kMaxGpuModels && least > 0; ++k) {
      if (has_model_[k] && ((pod.models >> k) & 1))
        least = std::min(least, ModelPressure(k, context));
    }
    return params_.model_pressure * (here - least) * static_cast<double>(pod.TotalGpuMilli());
  }

  NodeScore Score(const NodeView& node, const PodRequest& pod) const override {
    if (UsesMemory(node)) {
      NodeScore out[2];
      ScorePair2D(node, pod, out);
      return out[params_.adaptive_open && (node.context & 1) != 0 ? 1 : 0];
    }
    const int g = node.spec.gpu_count;
    bool idle = node.state.cpu_left == node.spec.cpu_milli;
    for (int i = 0; i < g && idle; ++i) idle = node.state.gpu_free[i] == kMilliPerGpu;
    const bool plentiful = params_.adaptive_open && (node.context & 1) != 0;
    const size_t n_classes =
        plentiful && params_.plentiful_drop_multi_gpu ? m_size_ : classes_.size();
    const double pressure = PodPressure(pod, node.model_id, node.context);
    const GpuTopology* topo = MeasuredTopology(node);
    const Measures before = n_classes == classes_.size()
                                ? MeasureBefore(node, g, idle, topo)
                                : Measure(node.model_id, node.state.cpu_left,
                                          node.state.gpu_free.data(), g, idle, n_classes, topo);
    const HoleFill holes = HoleFillFor(node, pod);
    NodeScore out =
        BestHypotheticalPlacement(node, pod, [&](int64_t cpu_after, const int32_t* free) {
          const double fill = holes.Fill(*this, free, g);
          return Combine(before, Measure(node.model_id, cpu_after, free, g, idle, n_classes, topo),
                         idle, plentiful, pod, pressure, fill,
                         plentiful && (node.context & kDemandWhilePlentifulBit) == 0);
        });
    PreferAligned(node, pod, &out);
    return out;
  }

  // The plentiful bit (adaptive_open): both of its values are scored in one pass over the
  // placements, which share the measures (S_n over M is a prefix of S_n over all classes).
  int64_t PairedContextBit() const override {
    return params_.adaptive_open && params_.cpu_stranding ? 1 : 0;
  }

  void ScorePair(const NodeView& node, const PodRequest& pod, NodeScore out[2]) const override {
    if (UsesMemory(node)) return ScorePair2D(node, pod, out);
    const int g = node.spec.gpu_count;
    bool idle = node.state.cpu_left == node.spec.cpu_milli;
    for (int i = 0; i < g && idle; ++i) idle = node.state.gpu_free[i] == kMilliPerGpu;
    const double pressure = PodPressure(pod, node.model_id, node.context);  // not bit 0
    const bool drop = params_.plentiful_drop_multi_gpu;
    auto plentiful_view = [drop](Measures m) {
      if (drop) m.stranded = m.stranded_m;
      return m;
    };
    const GpuTopology* topo = MeasuredTopology(node);
    const Measures before = MeasureBefore(node, g, idle, topo);
    const Measures before_p = plentiful_view(before);
    const HoleFill holes = HoleFillFor(node, pod);
    const std::array<NodeScore, 2> scores =
        BestHypotheticalPlacements<2>(node, pod, [&](int64_t cpu_after, const int32_t* free) {
          const Measures after =
              Measure(node.model_id, cpu_after, free, g, idle, classes_.size(), topo);
          const double fill = holes.Fill(*this, free, g);
          return CombinePair(Changes(before, after, idle, false, pod, pressure, fill, false),
                             Changes(before_p, plentiful_view(after), idle, true, pod, pressure,
                                     fill, (node.context & kDemandWhilePlentifulBit) == 0));
        });
    out[0] = scores[0];
    out[1] = scores[1];
    PreferAligned(node, pod, &out[0]);
    PreferAligned(node, pod, &out[1]);
  }

 private:
  // The node's topology when it splits the measure's scope (MeasureScope) into domains that
  // constrain multi-GPU classes, else null: the node is measured as without topology.
  static const GpuTopology* MeasuredTopology(const NodeView& node) {
    const GpuTopology* topo = node.spec.topology.get();
    if (topo == nullptr) return nullptr;
    const uint8_t bits = TopologyBits(topo, node.spec.gpu_count);
    const uint8_t scope = MeasureScope(*topo) == TopologyScope::kNvlink
                              ? kTopoNvlinkSplit
                              : kTopoNumaSplit | kTopoKubelet;
    return (bits & scope) != 0 ? topo : nullptr;
  }
  // A `preferred` pod: a placement outside one domain's alignment (Aligned in the pod's
  // scope) scores below every aligned one, on any node. (The test for a topology is apart so
  // that it stays inline in the scores: most nodes have none.)
  void PreferAligned(const NodeView& node, const PodRequest& pod, NodeScore* score) const {
    if (node.spec.topology != nullptr) PreferAligned(*node.spec.topology, node, pod, score);
  }
  void PreferAligned(const GpuTopology& topo, const NodeView& node, const PodRequest& pod,
                     NodeScore* score) const {
    if (pod.topology.intent != TopologyIntent::kPreferred || pod.IsCpuOnly() || pod.gpu_count < 2 ||
        Aligned(topo, pod.topology.scope, node.spec.gpu_count, score->gpus)) {
      return;
    }
    score->score -= params_.cpu_stranding ? 101.0 * kSecondaryLevels : 101.0;
  }

  // waste_[r] = r − the largest sum of frequent sharing sizes (any number of each) ≤ r.
  void BuildHoleWaste() {
    std::array<int64_t, kMilliPerGpu> by_milli{};
    int64_t sharing = 0;
    for (const TargetClass& c : workload_->all_classes()) {
      if (c.gpu_count != 1 || c.gpu_milli <= 0 || c.gpu_milli >= kMilliPerGpu) continue;
      by_milli[c.gpu_milli] += c.count;
      sharing += c.count;
    }
    std::vector<int> sizes;
    for (int m = 1; m < kMilliPerGpu; ++m) {
      if (sharing > 0 &&
          static_cast<double>(by_milli[m]) >= params_.hole_min_share * static_cast<double>(sharing))
        sizes.push_back(m);
    }
    std::vector<int> best(kMilliPerGpu + 1, 0);
    for (int r = 1; r <= kMilliPerGpu; ++r) {
      best[r] = best[r - 1];
      for (int m : sizes) {
        if (m <= r) best[r] = std::max(best[r], best[r - m] + m);
      }
    }
    waste_.assign(kMilliPerGpu + 1, 0);
    for (int r = 0; r <= kMilliPerGpu; ++r) waste_[r] = r - best[r];
  }

  // mem_waste_[r] = r − the largest sum of frequent sharing memory sizes ≤ r (MiB).
  void BuildMemoryWaste() {
    std::map<int64_t, int64_t> by_mib;
    int64_t sharing = 0;
    for (const TargetClass& c : workload_->all_classes()) {
      if (c.gpu_count != 1 || c.gpu_milli <= 0 || c.gpu_milli >= kMilliPerGpu ||
          c.gpu_memory_mib <= 0)
        continue;
      by_mib[c.gpu_memory_mib] += c.count;
      sharing += c.count;
    }
    std::vector<int64_t> sizes;
    for (const auto& [mib, n] : by_mib) {
      if (static_cast<double>(n) >= params_.hole_min_share * static_cast<double>(sharing))
        sizes.push_back(mib);
    }
    // MiB: 256 GiB, more than any GPU has today; a larger free memory counts as this much.
    constexpr int64_t kMax = 262144;
    std::vector<int32_t> best(kMax + 1, 0);
    for (int64_t r = 1; r <= kMax; ++r) {
      best[r] = best[r - 1];
      for (int64_t m : sizes) {
        if (m <= r) best[r] = std::max<int32_t>(best[r], best[r - m] + static_cast<int32_t>(m));
      }
    }
    mem_waste_.assign(kMax + 1, 0);
    for (int64_t r = 0; r <= kMax; ++r) mem_waste_[r] = static_cast<int32_t>(r - best[r]);
  }
  // Whether M asks for a larger share of GPUs of `cap` MiB's memory than of their compute
  // (whole-GPU pods take all of both).
  bool MemoryBound(double cap) const {
    double m = 0, u = 0;
    for (const TargetClass& c : workload_->gpu_classes()) {
      const bool whole = c.gpu_milli >= kMilliPerGpu;
      m +=
          c.probability * c.gpu_count * (whole ? 1.0 : static_cast<double>(c.gpu_memory_mib) / cap);
      u += c.probability * c.gpu_count * (whole ? 1.0 : c.gpu_milli / 1000.0);
    }
    return m > u;
  }

  // count_weight_[k] = p_k · (s̄ / s_k)^count_weight, rescaled to the weighed classes' Σ p
  // (the sharing classes; every class without count_shares_only), for M's GPU classes: s_k is
  // the larger of a pod's milli and memory shares of a GPU of `cap` MiB (1 for a whole GPU)
  // times its GPU count, s̄ their p-weighted mean. Unweighed classes keep p_k.
  void BuildCountWeights(double cap) {
    const std::vector<TargetClass>& classes = workload_->gpu_classes();
    const auto weighed = [&](const TargetClass& c) {
      return !params_.count_shares_only || c.gpu_milli < kMilliPerGpu;
    };
    const auto size_of = [&](const TargetClass& c) {
      const double share = c.gpu_milli >= kMilliPerGpu
                               ? 1.0
                               : std::max(c.gpu_milli / static_cast<double>(kMilliPerGpu),
                                          static_cast<double>(c.gpu_memory_mib) / cap);
      return c.gpu_count * share;
    };
    double mean = 0, psum = 0, wsum = 0;
    for (const TargetClass& c : classes) {
      if (!weighed(c)) continue;
      mean += c.probability * size_of(c);
      psum += c.probability;
    }
    if (psum <= 0) return;
    mean /= psum;
    count_weight_.resize(classes.size());
    for (size_t k = 0; k < classes.size(); ++k) {
      const TargetClass& c = classes[k];
      count_weight_[k] = weighed(c)
                             ? c.probability * std::pow(mean / size_of(c), params_.count_weight)
                             : c.probability;
      if (weighed(c)) wsum += count_weight_[k];
    }
    for (size_t k = 0; k < classes.size(); ++k) {
      if (weighed(classes[k])) count_weight_[k] *= psum / wsum;
    }
  }

  int64_t MemWaste(int32_t free, int32_t mem) const {
    const int64_t u = std::min<int64_t>(UsableMib(free, mem), mem_waste_.size() - 1);
    return mem_waste_[u];
  }

  // The hole fill of one pod on one node: what does not depend on the placement is computed
  // once; Fill gives it for one placement (0 for pods that do not share a GPU, or when off).
  // The drop of Σ waste over the node's GPUs is the drop on the one GPU a sharing pod takes
  // (the sums are of integers: exact).
  struct HoleFill {
    bool on = false;
    const int32_t* before = nullptr;  // the node's free milli per GPU now
    double fresh_fill = 0;            // the same drop on a free GPU (with hole_relative)
    // Relative to putting the pod on a free GPU, so that only holes shared with other pods
    // are judged (and a fresh GPU keeps FGD's own score).
    double Fill(const TesseraPolicy& policy, const int32_t* free, int g) const {
      if (!on) return 0;
      for (int i = 0; i < g; ++i) {
        if (free[i] != before[i]) {
          return static_cast<double>(policy.waste_[before[i]] - policy.waste_[free[i]]) -
                 fresh_fill;
        }
      }
      return -fresh_fill;
    }
  };
  HoleFill HoleFillFor(const NodeView& node, const PodRequest& pod) const {
    HoleFill h;
    h.on = pod.IsSharing() && !waste_.empty();
    if (!h.on) return h;
    h.before = node.state.gpu_free.data();
    if (params_.hole_relative)
      h.fresh_fill =
          static_cast<double>(waste_[kMilliPerGpu] - waste_[kMilliPerGpu - pod.gpu_milli]);
    return h;
  }

  struct Measures {
    double frag = 0;        // FGD's F_n(M) (over the demand-weighted M with demand_weight)
    double frag_p = 0;      // F_n(M) while idle nodes are plentiful (M itself; = frag without
                            // demand_weight)
    double stranded = 0;    // S_n
    double stranded_m = 0;  // S_n over M's classes only
  };

  // F_n(M) and S_n (over the first n_classes of classes_: M, or all) of one node state: what a
  // class needs of the GPUs (how many have ≥ its milli free, and the free milli on the others)
  // depends only on its GPU milli, so it is counted once per distinct milli; the classes are
  // then summed per bucket of equal (milli, GPU count) with prefix sums over CPU requests
  // (BuildMeasureTables), not one by one. The same values as NodeFragmentation and
  // ReferenceStranded up to the rounding of the sums' order; the scores are compared with
  // reference_measure's in tests/policy/tessera_policy_test.cc.
  // On a node with a topology (`topo`, MeasuredTopology), the plain loops with the topology.
  Measures Measure(int model_id, int64_t cpu_left, const int32_t* gpu_free, int g, bool idle,
                   size_t n_classes, const GpuTopology* topo = nullptr) const {
    if (params_.reference_measure || thresholds_.empty() || thresholds_.size() > kMaxThresholds ||
        (n_classes != m_size_ && n_classes < classes_.size()) || topo != nullptr) {
      return ReferenceMeasure(model_id, cpu_left, gpu_free, g, idle, n_classes, topo);
    }
    Measures m;
    // fitting[j]: GPUs with ≥ thresholds_[j] free; too_small[j]: the free milli on the others.
    // With p(f) the number of thresholds ≤ f (thresholds_ ascends), a GPU with f free fits
    // exactly the thresholds j < p(f): count the GPUs by p, then sum up.
    const size_t nt = thresholds_.size();
    std::array<int, kMaxThresholds + 1> by_p;
    std::array<int64_t, kMaxThresholds + 1> free_by_p;
    std::fill_n(by_p.begin(), nt + 1, 0);
    std::fill_n(free_by_p.begin(), nt + 1, 0);
    int64_t free_total = 0;
    for (int i = 0; i < g; ++i) {
      const int32_t f = gpu_free[i];
      const size_t p = f >= 0 && f <= kMilliPerGpu ? p_of_[f] : (f < 0 ? 0 : nt);
      ++by_p[p];
      free_by_p[p] += f;
      free_total += f;
    }
    if (free_total == 0) return m;
    const double r = static_cast<double>(free_total);
    std::array<int, kMaxThresholds> fitting;
    std::array<int64_t, kMaxThresholds> too_small;
    int above = g - by_p[0];
    int64_t below = free_by_p[0];
    for (size_t j = 0; j < nt; ++j) {
      fitting[j] = above;
      too_small[j] = below;
      above -= by_p[j + 1];
      below += free_by_p[j + 1];
    }
    // F_n(M) = Σ_m p_m · (too_small if m fits, else r) = r · Σ p − Σ_fitting p_m · (r − too_small),
    // where the classes that fit are, per (threshold, GPU count) of the node's model with
    // enough GPUs fitting, those whose CPU request is at most cpu_left: a prefix of the bucket.
    // The same as TargetWorkload::NodeFragmentation up to the order of the sums (the scores
    // are compared with reference_measure's in tests/policy/tessera_policy_test.cc).
    const bool known_model = model_id >= 0 && model_id < kMaxGpuModels;
    const auto frag_over = [&](double weight, const ModelBuckets& tables) {
      double frag = r * weight;
      if (known_model) {
        for (const Bucket& b : tables[model_id]) {
          if (fitting[b.threshold] < b.gpu_count) continue;
          frag -=
              b.weight_sum[b.AtMost(cpu_left)] * (r - static_cast<double>(too_small[b.threshold]));
        }
      }
      return frag;
    };
    if (primary_ == workload_) {
      m.frag = frag_over(frag_weight_, frag_buckets_);
      m.frag_p = m.frag;
    } else {  // both workloads in one pass over frag_pair_buckets_ (the same sums)
      m.frag = r * frag_weight_;
      m.frag_p = r * frag_p_weight_;
      if (known_model) {
        for (const Bucket& b : frag_pair_buckets_[model_id]) {
          if (fitting[b.threshold] < b.gpu_count) continue;
          const size_t e = b.AtMost(cpu_left);
          const double gap = r - static_cast<double>(too_small[b.threshold]);
          m.frag -= b.weight_sum[e] * gap;
          m.frag_p -= b.weight_sum_p[e] * gap;
        }
      }
    }
    if (!params_.cpu_stranding || idle) return m;
    // S_n(m) = r − min(U, cpu_left / cpu_m · milli_m · n_m) for a class that fits, with U the
    // free milli on the GPUs with ≥ milli_m free, else r. In a bucket sorted by CPU request,
    // the classes up to cpu_left · milli · n / U are held by U, the rest by CPU.
    const double cpu = static_cast<double>(cpu_left);
    auto usable = [&](const std::vector<Bucket>& buckets) {
      double sum = 0;
      for (const Bucket& b : buckets) {
        if (fitting[b.threshold] < b.gpu_count) continue;
        const size_t e = b.AtMost(cpu_left);
        if (e == 0) continue;
        const double u = static_cast<double>(free_total - too_small[b.threshold]);
        const double split = cpu * b.gpu_request / u;  // u > 0: a fitting GPU has ≥ milli free
        size_t s = 0;  // the classes with CPU request ≤ split, among the first e
        if (split >= static_cast<double>(b.cpu[e - 1])) {
          s = e;
        } else {
          while (static_cast<double>(b.cpu[s]) <= split) ++s;
        }
        sum += u * b.weight_sum[s] +
               cpu * b.gpu_request * (b.weight_per_cpu_sum[e] - b.weight_per_cpu_sum[s]);
      }
      return sum;
    };
    m.stranded_m = r * strand_m_weight_ - (known_model ? usable(strand_m_buckets_[model_id]) : 0);
    m.stranded = m.stranded_m;
    if (n_classes > m_size_) {
      m.stranded += r * strand_x_weight_ - (known_model ? usable(strand_x_buckets_[model_id]) : 0);
    }
    return m;
  }

  // The node's own measures over all classes: they depend only on the node state, so they are
  // kept in the scheduler's memo of that state (NodeView::scratch) when there is one.
  Measures MeasureBefore(const NodeView& node, int g, bool idle,
                         const GpuTopology* topo = nullptr) const {
    PolicyScratch* memo = node.scratch;
    if (memo != nullptr && memo->valid) {
      return Measures{memo->values[0], memo->values[3], memo->values[1], memo->values[2]};
    }
    const Measures m = Measure(node.model_id, node.state.cpu_left, node.state.gpu_free.data(), g,
                               idle, classes_.size(), topo);
    if (memo != nullptr) {
      memo->values[0] = m.frag;
      memo->values[1] = m.stranded;
      memo->values[2] = m.stranded_m;
      memo->values[3] = m.frag_p;
      memo->valid = true;
    }
    return m;
  }

  // Two dimensions (GPU memory; docs/GPU_MEMORY.md). Whether `node` is judged by them: the
  // list asks for GPU memory and the node's GPUs have known memory.
  bool UsesMemory(const NodeView& node) const {
    return memory_ && node.spec.gpu_memory_mib > 0 && node.spec.gpu_count > 0;
  }

  // Score in two dimensions (the same under both values of the plentiful bit, which the
  // memory scores do not read): FGD's quantized ΔF_n(M) with Frag2D, less the model
  // pressure; among its ties (memory_best_fit), the placement that leaves the node the least
  // usable GPU memory, ⌊999 · (1 − usable MiB left / the node's GPU memory)⌋, else the
  // one-dimensional tie-break (Combine, with S_n from Stranded2D).
  void ScorePair2D(const NodeView& node, const PodRequest& pod, NodeScore out[2]) const {
    const int g = node.spec.gpu_count;
    bool idle = node.state.cpu_left == node.spec.cpu_milli;
    for (int i = 0; i < g && idle; ++i) idle = node.state.gpu_free[i] == kMilliPerGpu;
    const int64_t context = node.context & ~PairedContextBit();
    const double pressure = PodPressure(pod, node.model_id, context);
    const int64_t cap = node.spec.gpu_memory_mib;
    const bool best_fit = params_.memory_best_fit;
    const size_t n_plentiful = params_.plentiful_drop_multi_gpu ? m_size_ : classes_.size();
    auto measure = [&](int64_t cpu, const int32_t* free, const int32_t* mem, size_t n) {
      Measures m;
      m.frag = Frag2D(node.model_id, cpu, free, mem, g, cap);
      m.frag_p = m.frag;
      if (!best_fit && params_.cpu_stranding && !idle) {
        m.stranded = Stranded2D(node.model_id, cpu, free, mem, g, n);
        m.stranded_m = m.stranded;
      }
      return m;
    };
    const Measures before = measure(node.state.cpu_left, node.state.gpu_free.data(),
                                    node.state.gpu_mem_free.data(), classes_.size());
    const Measures before_p = best_fit ? before
                                       : measure(node.state.cpu_left, node.state.gpu_free.data(),
                                                 node.state.gpu_mem_free.data(), n_plentiful);
    const HoleFill holes = HoleFillFor(node, pod);
    // Memory hole fill (memory-bound mode): Σ waste over the GPUs now, and the drop the pod
    // makes on a free GPU, which the fill is taken relative to.
    const bool mem_fill = !mem_waste_.empty() && pod.IsSharing() && pod.gpu_memory_mib > 0;
    int64_t mem_waste_before = 0;
    if (mem_fill) {
      const auto cap32 = static_cast<int32_t>(cap);
      for (int i = 0; i < g; ++i) {
        mem_waste_before += MemWaste(node.state.gpu_free[i], node.state.gpu_mem_free[i]);
      }
      mem_waste_before -=
          MemWaste(kMilliPerGpu, cap32) -
          MemWaste(kMilliPerGpu - pod.gpu_milli, cap32 - static_cast<int32_t>(pod.gpu_memory_mib));
    }
    const std::array<NodeScore, 2> scores = BestHypotheticalPlacements2D<2>(
        node, pod, [&](int64_t cpu_after, const int32_t* free, const int32_t* mem) {
          const Measures after = measure(cpu_after, free, mem, classes_.size());
          const double fill = holes.Fill(*this, free, g);
          if (best_fit) {
            double mfill = 0;
            if (mem_fill) {
              int64_t w = mem_waste_before;
              for (int i = 0; i < g; ++i) w -= MemWaste(free[i], mem[i]);
              mfill = params_.memory_hole_fill * static_cast<double>(w) * kMilliPerGpu /
                      static_cast<double>(cap);
            }
            const double delta = Snap(before.frag - after.frag - pressure +
                                      params_.hole_fill_primary * fill + mfill);
            const auto primary =
                static_cast<int64_t>(params_.primary_levels / (1.0 + std::exp(-delta / 1000.0)));
            int64_t left = 0;
            for (int i = 0; i < g; ++i) left += UsableMib(free[i], mem[i]);
            const int64_t top = kSecondaryLevels - 1;
            const int64_t v =
                primary * kSecondaryLevels + top - std::min(top, left * top / (int64_t{g} * cap));
            return std::array<int64_t, 2>{v, v};
          }
          const Measures after_p = measure(cpu_after, free, mem, n_plentiful);
          return std::array<int64_t, 2>{
              Combine(before, after, idle, false, pod, pressure, fill, false),
              Combine(before_p, after_p, idle, params_.adaptive_open, pod, pressure, fill, false)};
        });
    out[0] = scores[0];
    out[1] = scores[1];
  }

  // The GPU memory of a GPU with `free` milli and `mem` MiB free that a pod could still use:
  // none when it has no free compute.
  static int64_t UsableMib(int32_t free, int32_t mem) {
    return free > 0 ? std::max<int32_t>(0, mem) : 0;
  }

  // Whether GPU i serves class c in two dimensions: both its free milli and its usable memory
  // fit one pod of c.
  static bool Serves(const TargetClass& c, int32_t free, int32_t mem) {
    return free >= c.gpu_milli && UsableMib(free, mem) >= c.gpu_memory_mib;
  }
  // Whether the node can host c (model, CPU, enough serving GPUs), with the free milli of the
  // serving GPUs and the free milli and usable MiB of the others.
  struct Served {
    bool hosts = false;
    int64_t serving_milli = 0;
    int64_t other_milli = 0;
    int64_t other_mib = 0;
  };
  static Served Serve(const TargetClass& c, int model_id, int64_t cpu_left, const int32_t* free,
                      const int32_t* mem, int g) {
    Served s;
    if (c.gpu_milli == 0 || c.gpu_count == 0 || model_id < 0 || ((c.models >> model_id) & 1) == 0 ||
        cpu_left < c.cpu_milli) {
      return s;
    }
    int serving = 0;
    for (int i = 0; i < g; ++i) {
      if (Serves(c, free[i], mem[i])) {
        ++serving;
        s.serving_milli += free[i];
      } else {
        s.other_milli += free[i];
        s.other_mib += UsableMib(free[i], mem[i]);
      }
    }
    s.hosts = serving >= c.gpu_count;
    return s;
  }

  // F_n(M) in two dimensions (docs/GPU_MEMORY.md): for each class of M, the free milli of
  // the GPUs that cannot serve it (all of them when the node cannot host it), plus
  // memory_weight · 1000 · their usable MiB / `mem_cap` (the memory stranded by compute; off
  // by default). TargetWorkload::NodeFragmentation with gpu_mem_free gives the milli part.
  // With count_weight_, class k weighs count_weight_[k] instead of p_m.
  double Frag2D(int model_id, int64_t cpu_left, const int32_t* free, const int32_t* mem, int g,
                int64_t mem_cap) const {
    int64_t r = 0;
    int64_t r_mib = 0;
    for (int i = 0; i < g; ++i) {
      r += free[i];
      r_mib += UsableMib(free[i], mem[i]);
    }
    if (r == 0) return 0;
    const double scale =
        params_.memory_weight * kMilliPerGpu / static_cast<double>(std::max<int64_t>(1, mem_cap));
    const double all = static_cast<double>(r) + scale * static_cast<double>(r_mib);
    double frag = workload_->cpu_only_probability() * all;
    const std::vector<TargetClass>& classes = workload_->gpu_classes();
    for (size_t k = 0; k < classes.size(); ++k) {
      const TargetClass& c = classes[k];
      const Served s = Serve(c, model_id, cpu_left, free, mem, g);
      const double w = count_weight_.empty() ? c.probability : count_weight_[k];
      frag += w * (s.hosts ? static_cast<double>(s.other_milli) +
                                 scale * static_cast<double>(s.other_mib)
                           : all);
    }
    return frag;
  }

  // S_n in two dimensions (memory_best_fit off): ReferenceStranded with the serving rule of
  // Serves, over the first n_classes of classes_.
  double Stranded2D(int model_id, int64_t cpu_left, const int32_t* free, const int32_t* mem, int g,
                    size_t n_classes) const {
    int64_t r = 0;
    for (int i = 0; i < g; ++i) r += free[i];
    if (r == 0) return 0;
    double total = 0;
    for (size_t k = 0; k < n_classes; ++k) {
      const TargetClass& c = classes_[k];
      const Served s = Serve(c, model_id, cpu_left, free, mem, g);
      double usable = 0;
      if (s.hosts) {
        usable = static_cast<double>(s.serving_milli);
        if (c.cpu_milli > 0) {
          usable =
              std::min(usable, static_cast<double>(cpu_left) / static_cast<double>(c.cpu_milli) *
                                   c.gpu_milli * c.gpu_count);
        }
      }
      total += weights_[k] * (static_cast<double>(r) - usable);
    }
    return total;
  }

  // The plain per-class loops (reference_measure). With `topo`, the topology enters the
  // stranding term only: a multi-GPU class can use only the GPUs of an aligned set there
  // (ReferenceStranded), while the FGD term stays the published, topology-blind F_n(M).
  // Measured on the 24 openb lists with 2×4-island 8-GPU nodes and every multi-GPU pod
  // `required` (docs/TOPOLOGY.md): the topology in both terms left up to 0.04 pp more GPUs
  // unallocated than this on 5 lists and the same on the others.
  Measures ReferenceMeasure(int model_id, int64_t cpu_left, const int32_t* gpu_free, int g,
                            bool idle, size_t n_classes, const GpuTopology* topo = nullptr) const {
    Measures m;
    m.frag = primary_->NodeFragmentation(model_id, cpu_left, gpu_free, g);
    m.frag_p = primary_ == workload_
                   ? m.frag
                   : workload_->NodeFragmentation(model_id, cpu_left, gpu_free, g);
    if (params_.cpu_stranding && !idle) {
      m.stranded = ReferenceStranded(model_id, cpu_left, gpu_free, g, n_classes, topo);
      m.stranded_m =
          ReferenceStranded(model_id, cpu_left, gpu_free, g, std::min(n_classes, m_size_), topo);
    }
    return m;
  }

  // FGD's score (with the model pressure taken off its ΔF) first; among its ties, the
  // stranding score.
  // A change under kNoChange milli-GPU is none: rounding of the sums must not decide which side
  // of a quantization step (50, 500: Δ = 0) a placement falls on.
  static constexpr double kNoChange = 1e-6;
  static double Snap(double delta) { return std::abs(delta) < kNoChange ? 0.0 : delta; }

  int64_t Combine(const Measures& before, const Measures& after, bool idle, bool plentiful,
                  const PodRequest& pod, double pressure, double fill, bool count_primary) const {
    const std::array<double, 2> changes =
        Changes(before, after, idle, plentiful, pod, pressure, fill, count_primary);
    return Key(Primary(changes[0]), Secondary(changes[1]));
  }
  // The changes that Combine quantizes: FGD's ΔF with the charges, and ΔS.
  std::array<double, 2> Changes(const Measures& before, const Measures& after, bool idle,
                                bool plentiful, const PodRequest& pod, double pressure, double fill,
                                bool count_primary) const {
    // count_primary (plentiful, and not kDemandWhilePlentifulBit): F_n over M itself (frag_p;
    // the same as frag without demand_weight).
    const double primary_delta =
        Snap((count_primary ? before.frag_p - after.frag_p : before.frag - after.frag) - pressure +
             params_.hole_fill_primary * fill);
    if (!params_.cpu_stranding) return {primary_delta, 0.0};
    double delta = Snap(before.stranded - after.stranded);
    if (idle) {
      const double cost = plentiful ? params_.plentiful_open_cost : params_.sharing_open_cost;
      delta = pod.IsSharing() ? -cost : 0.0;
    }
    return {primary_delta, Snap(delta + params_.hole_fill * fill)};
  }
  static int64_t Primary(double delta) {
    return static_cast<int64_t>(100.0 / (1.0 + std::exp(-delta / 1000.0)));
  }
  static int64_t Secondary(double delta) {
    return static_cast<int64_t>(static_cast<double>(kSecondaryLevels) /
                                (1.0 + std::exp(-delta / kSecondaryScale)));
  }
  int64_t Key(int64_t primary, int64_t secondary) const {
    if (!params_.cpu_stranding) return primary;
    return primary * kSecondaryLevels + std::min(secondary, kSecondaryLevels - 1);
  }
  // Combine for both values of the plentiful bit: a change equal in both is quantized once
  // (without the multi-GPU stranding classes, ΔS is the same in both).
  std::array<int64_t, 2> CombinePair(const std::array<double, 2>& a,
                                     const std::array<double, 2>& b) const {
    const int64_t primary_a = Primary(a[0]);
    const int64_t primary_b = b[0] == a[0] ? primary_a : Primary(b[0]);
    if (!params_.cpu_stranding) return {primary_a, primary_b};
    const int64_t secondary_a = Secondary(a[1]);
    const int64_t secondary_b = b[1] == a[1] ? secondary_a : Secondary(b[1]);
    return {Key(primary_a, secondary_a), Key(primary_b, secondary_b)};
  }

  // S_n in milli-GPU (weighted; see the file comment).
  // Over the first n_classes of classes_ (M first, then the multi-GPU classes).
  // With `topo`, a multi-GPU class uses only the GPUs of an aligned set (AlignedUsable).
  double ReferenceStranded(int model_id, int64_t cpu_left, const int32_t* gpu_free, int g,
                           size_t n_classes, const GpuTopology* topo = nullptr) const {
    int64_t idle = 0;
    for (int i = 0; i < g; ++i) idle += gpu_free[i];
    if (idle == 0) return 0;
    const double r = static_cast<double>(idle);
    double total = 0;
    for (size_t k = 0; k < n_classes; ++k) {
      const TargetClass& c = classes_[k];
      if (c.gpu_milli == 0 || c.gpu_count == 0 || model_id < 0 ||
          ((c.models >> model_id) & 1) == 0 || cpu_left < c.cpu_milli) {
        total += weights_[k] * r;
        continue;
      }
      int fitting = 0;
      int64_t too_small = 0;
      for (int i = 0; i < g; ++i) {
        if (gpu_free[i] >= c.gpu_milli) {
          ++fitting;
        } else {
          too_small += gpu_free[i];
        }
      }
      if (fitting < c.gpu_count) {
        total += weights_[k] * r;
        continue;
      }
      double usable = static_cast<double>(idle - too_small);
      if (topo != nullptr && c.gpu_count >= 2) {
        GpuSet fits = 0;
        for (int i = 0; i < g; ++i) {
          if (gpu_free[i] >= c.gpu_milli) fits |= GpuSet{1} << i;
        }
        const GpuSet aligned = AlignedUsable(*topo, g, fits, c.gpu_count);
        if (aligned == 0) {
          total += weights_[k] * r;
          continue;
        }
        int64_t in_aligned = 0;
        for (GpuSet a = aligned; a != 0; a &= a - 1) in_aligned += gpu_free[std::countr_zero(a)];
        usable = static_cast<double>(in_aligned);
      }
      if (c.cpu_milli > 0) {
        usable = std::min(usable, static_cast<double>(cpu_left) / static_cast<double>(c.cpu_milli) *
                                      c.gpu_milli * c.gpu_count);
      }
      total += weights_[k] * (r - usable);
    }
    return total;
  }

  // Measure's tables: the classes that may use one GPU model, by (GPU milli, GPU count), each
  // bucket sorted by CPU request with the prefix sums of the weights (p_m for F_n, w_m for S_n)
  // and of weight / CPU request.
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

  void BuildMeasureTables() {
    for (const std::vector<TargetClass>* list :
         {static_cast<const std::vector<TargetClass>*>(&classes_), &primary_->gpu_classes(),
          &workload_->gpu_classes()}) {
      for (const TargetClass& c : *list) {
        if (c.gpu_milli != 0 && c.gpu_count != 0) thresholds_.push_back(c.gpu_milli);
      }
    }
    std::sort(thresholds_.begin(), thresholds_.end());
    thresholds_.erase(std::unique(thresholds_.begin(), thresholds_.end()), thresholds_.end());
    for (int32_t f = 0; f <= kMilliPerGpu; ++f) {
      p_of_[f] = static_cast<uint8_t>(std::min<ptrdiff_t>(
          255, std::upper_bound(thresholds_.begin(), thresholds_.end(), f) - thresholds_.begin()));
    }
    // Adds class c with `weight` to the buckets of every model it may use.
    auto add = [&](ModelBuckets& tables, const TargetClass& c, double weight) {
      if (c.gpu_milli == 0 || c.gpu_count == 0) return;  // uses no GPU: always r
      const int t =
          static_cast<int>(std::lower_bound(thresholds_.begin(), thresholds_.end(), c.gpu_milli) -
                           thresholds_.begin());
      for (int k = 0; k < kMaxGpuModels; ++k) {
        if (((c.models >> k) & 1) == 0) continue;
        std::vector<Bucket>& buckets = tables[k];
        auto it = std::find_if(buckets.begin(), buckets.end(), [&](const Bucket& b) {
          return b.threshold == t && b.gpu_count == c.gpu_count;
        });
        if (it == buckets.end()) {
          buckets.push_back(Bucket{
              t, c.gpu_count, static_cast<double>(c.gpu_milli) * c.gpu_count, {}, {0}, {0}, {}});
          it = buckets.end() - 1;
        }
        it->cpu.push_back(c.cpu_milli);
        it->weight_sum.push_back(weight);  // sorted and summed below
        it->weight_per_cpu_sum.push_back(c.cpu_milli > 0 ? weight / static_cast<double>(c.cpu_milli)
                                                         : 0.0);
      }
    };
    frag_weight_ = primary_->cpu_only_probability();
    for (const TargetClass& c : primary_->gpu_classes()) {
      frag_weight_ += c.probability;
      add(frag_buckets_, c, c.probability);
    }
    for (size_t k = 0; k < classes_.size(); ++k) {
      (k < m_size_ ? strand_m_weight_ : strand_x_weight_) += weights_[k];
      add(k < m_size_ ? strand_m_buckets_ : strand_x_buckets_, classes_[k], weights_[k]);
    }
    if (primary_ != workload_) {
      frag_p_weight_ = workload_->cpu_only_probability();
      for (const TargetClass& c : workload_->gpu_classes()) {
        frag_p_weight_ += c.probability;
        add(frag_p_buckets_, c, c.probability);
      }
    }
    for (ModelBuckets* tables :
         {&frag_buckets_, &frag_p_buckets_, &strand_m_buckets_, &strand_x_buckets_}) {
      for (std::vector<Bucket>& buckets : *tables) {
        for (Bucket& b : buckets) {
          // Entry i + 1 holds class i's values until here: sort by CPU, then sum up.
          std::vector<size_t> order(b.cpu.size());
          for (size_t i = 0; i < order.size(); ++i) order[i] = i;
          std::stable_sort(order.begin(), order.end(),
                           [&](size_t x, size_t y) { return b.cpu[x] < b.cpu[y]; });
          Bucket sorted{b.threshold, b.gpu_count, b.gpu_request, {}, {0}, {0}, {}};
          for (size_t i : order) {
            sorted.cpu.push_back(b.cpu[i]);
            sorted.weight_sum.push_back(sorted.weight_sum.back() + b.weight_sum[i + 1]);
            sorted.weight_per_cpu_sum.push_back(sorted.weight_per_cpu_sum.back() +
                                                b.weight_per_cpu_sum[i + 1]);
          }
          b = std::move(sorted);
        }
      }
    }
    if (primary_ != workload_) BuildPairTables();
  }

  // frag_pair_buckets_: F_n's two workloads in one table, so that Measure counts the fitting
  // GPUs and the classes within the CPU left once for both. Both tables' buckets are put in
  // (GPU milli, GPU count) order first, so that a bucket present in one only (a zero in the
  // other's sums) keeps each sum's order; a merged bucket's CPU requests are the two sorted
  // lists merged, and its prefix sums are each table's own, copied: the same values.
  void BuildPairTables() {
    const auto by_key = [](const Bucket& a, const Bucket& b) {
      return std::pair(a.threshold, a.gpu_count) < std::pair(b.threshold, b.gpu_count);
    };
    for (int k = 0; k < kMaxGpuModels; ++k) {
      std::vector<Bucket>& a = frag_buckets_[k];
      std::vector<Bucket>& b = frag_p_buckets_[k];
      std::sort(a.begin(), a.end(), by_key);
      std::sort(b.begin(), b.end(), by_key);
      std::vector<Bucket>& out = frag_pair_buckets_[k];
      size_t i = 0, j = 0;
      while (i < a.size() || j < b.size()) {
        const Bucket* x = i < a.size() && (j == b.size() || !by_key(b[j], a[i])) ? &a[i] : nullptr;
        const Bucket* y = j < b.size() && (i == a.size() || !by_key(a[i], b[j])) ? &b[j] : nullptr;
        const Bucket& key = x != nullptr ? *x : *y;
        Bucket m{key.threshold, key.gpu_count, key.gpu_request, {}, {0}, {0}, {0}};
        const size_t nx = x != nullptr ? x->cpu.size() : 0;
        const size_t ny = y != nullptr ? y->cpu.size() : 0;
        size_t p = 0, q = 0;
        while (p < nx || q < ny) {
          if (p < nx && (q == ny || x->cpu[p] <= y->cpu[q])) {
            m.cpu.push_back(x->cpu[p++]);
          } else {
            m.cpu.push_back(y->cpu[q++]);
          }
          m.weight_sum.push_back(x != nullptr ? x->weight_sum[p] : 0.0);
          m.weight_sum_p.push_back(y != nullptr ? y->weight_sum[q] : 0.0);
        }
        out.push_back(std::move(m));
        i += x != nullptr;
        j += y != nullptr;
      }
    }
  }

  // The workload of FGD's term F_n: M itself, or (demand_weight > 0) the list's classes
  // weighed by their GPU request as well as their count (docs/POLICIES.md, "Demand-weighted M").
  void BuildPrimary() {
    primary_ = workload_;
    if (params_.demand_weight <= 0 || workload_->all_classes().empty()) return;
    std::vector<TargetClass> all = workload_->all_classes();
    // A class's demand per pod: its GPU request in milli (0 for CPU-only pods).
    const auto demand = [](const TargetClass& c) {
      return static_cast<double>(c.gpu_milli) * c.gpu_count;
    };
    double pods = 0, request = 0;
    for (const TargetClass& c : all) {
      pods += static_cast<double>(c.count);
      request += static_cast<double>(c.count) * demand(c);
    }
    if (pods <= 0 || request <= 0) return;
    const double beta = std::min(1.0, params_.demand_weight);
    for (TargetClass& c : all) {
      const double n = static_cast<double>(c.count);
      c.probability = (1 - beta) * n / pods + beta * n * demand(c) / request;
    }
    std::stable_sort(all.begin(), all.end(), [](const TargetClass& a, const TargetClass& b) {
      return a.probability > b.probability;
    });
    double covered = 0;
    size_t taken = 0;
    while (taken < all.size() && covered < params_.demand_coverage) {
      covered += all[taken].probability;
      ++taken;
    }
    all.resize(taken);
    for (TargetClass& c : all) c.probability /= covered;
    own_primary_ = TargetWorkload::FromClasses(std::move(all));
    primary_ = &own_primary_;
  }

  const TargetWorkload* workload_;
  const TargetWorkload* primary_ = nullptr;  // F_n's workload: workload_ or &own_primary_
  TargetWorkload own_primary_;
  bool whole_gpu_classes_ = false;  // the pod list has pods that ask for whole GPUs
  TesseraParams params_;
  // By free milli f: how many of thresholds_ are ≤ f (Measure's count of the GPUs by p).
  std::array<uint8_t, kMilliPerGpu + 1> p_of_{};
  std::vector<int32_t> thresholds_;            // the distinct GPU milli of the classes, ascending
  ModelBuckets frag_buckets_;                  // primary_->gpu_classes() with p_m, for F_n
  ModelBuckets frag_p_buckets_;                // workload_->gpu_classes(), when not primary_
  ModelBuckets frag_pair_buckets_;             // both of them (BuildPairTables)
  ModelBuckets strand_m_buckets_;              // M's classes with w_m, for S_n
  ModelBuckets strand_x_buckets_;              // the other classes of classes_ with w_m
  double frag_weight_ = 0;                     // the cpu-only classes' p plus Σ p_m
  double frag_p_weight_ = 0;                   // the same for frag_p_buckets_
  double strand_m_weight_ = 0;                 // Σ w_m over M
  double strand_x_weight_ = 0;                 // Σ w_m over the other classes
  std::vector<TargetClass> classes_;           // M plus the multi-GPU classes
  size_t m_size_ = 0;                          // classes_[0, m_size_) is M
  std::vector<double> weights_;                // w_m, by classes_ index
  static constexpr size_t kMaxPressured = 15;  // 4 bits each in the context value
  static constexpr int kMaxLevel = 15;
  std::array<bool, kMaxGpuModels> has_model_{};                // the cluster has GPUs of model k
  std::array<int, kMaxGpuModels> pressured_slot_ = NoSlots();  // index into pressured_, or -1
  std::vector<int> pressured_;        // models some constrained class may use (≤ 15)
  ModelMask unpressured_ = 0;         // the cluster's other GPU models
  std::vector<double> demand_share_;  // their constrained request share, by pressured_ index
  std::vector<int> waste_;            // hole fill: waste_[r] for r = 0..1000 (empty: off)
  bool memory_ = false;               // some class of the list asks for GPU memory
  std::vector<int32_t> mem_waste_;    // memory_hole_fill's table (MiB; empty: off)
  std::vector<double> count_weight_;  // count_weight: gpu_classes()' weights (empty: p_m)
  static std::array<int, kMaxGpuModels> NoSlots() {
    std::array<int, kMaxGpuModels> a;
    a.fill(-1);
    return a;
  }
};

}  // namespace

std::unique_ptr<Policy> MakeTesseraPolicy(const PolicyContext& context,
                                          const TesseraParams& params) {
  if (context.workload == nullptr) return nullptr;
  return std::make_unique<TesseraPolicy>(context.workload, params);
}

}  // namespace tessera
