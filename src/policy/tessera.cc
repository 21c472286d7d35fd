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
//
// The parts live beside this file: the one-dimensional measures F_n(M) and S_n and their
// tables (tessera_measure.h), the two-dimensional ones (tessera_memory.h), hole fill
// (tessera_hole_fill.h), the cluster-wide context and the model pressure (tessera_context.h)
// and the topology terms (tessera_topology.h). This file puts them together into the scores.
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "frag/target_workload.h"
#include "model/fit.h"
#include "policy/builtin.h"
#include "policy/hypothetical.h"
#include "policy/tessera_context.h"
#include "policy/tessera_hole_fill.h"
#include "policy/tessera_measure.h"
#include "policy/tessera_memory.h"
#include "policy/tessera_policy.h"
#include "policy/tessera_topology.h"

namespace tessera {
namespace {

constexpr int64_t kSecondaryLevels = 1000;  // resolution of the tie-break score
constexpr double kSecondaryScale = 1000.0;  // milli-GPU: one GPU moves the sigmoid by one unit

using Measures = TesseraMeasures;

class TesseraPolicy final : public Policy {
 public:
  TesseraPolicy(const TargetWorkload* workload, const TesseraParams& params)
      : params_(params),
        measure_(workload, params),
        memory_(workload, &measure_, params),
        context_(*workload, params) {
    if (params_.hole_fill != 0 || params_.hole_fill_primary != 0) {
      waste_ = HoleWaste::OfMilli(*workload, params_.hole_min_share);
    }
  }

  std::string_view name() const override { return "tessera"; }

  bool ReadsPodMemory() const override { return false; }

  bool UsesContext() const override {
    return params_.cpu_stranding && (params_.adaptive_open || context_.pressured());
  }

  // TesseraContext: bit 0 plentiful, bit 62 FGD's term over the demand-weighted classes while
  // plentiful, bits 1 + 4i .. 4 + 4i the pressure levels.
  int64_t ContextKey(const ClusterSummary& s) const override {
    if (!UsesContext()) return 0;
    return context_.Key(s);
  }

  int64_t ContextFor(int64_t context, int model_id, const PodRequest& pod) const override {
    return context_.For(context, model_id, pod);
  }

  NodeScore Score(const NodeView& node, const PodRequest& pod) const override {
    if (memory_.Judges(node.spec)) {
      NodeScore out[2];
      ScorePair2D(node, pod, out);
      return out[params_.adaptive_open && (node.context & 1) != 0 ? 1 : 0];
    }
    const int g = node.spec.gpu_count;
    bool idle = node.state.cpu_left == node.spec.cpu_milli;
    for (int i = 0; i < g && idle; ++i) idle = node.state.gpu_free[i] == kMilliPerGpu;
    const bool plentiful = params_.adaptive_open && (node.context & 1) != 0;
    const size_t n_classes = plentiful && params_.plentiful_drop_multi_gpu
                                 ? measure_.m_size()
                                 : measure_.classes().size();
    const double pressure = context_.PodPressure(pod, node.model_id, node.context);
    const GpuTopology* topo = MeasuredTopology(node);
    const Measures before =
        n_classes == measure_.classes().size()
            ? MeasureBefore(node, g, idle, topo)
            : measure_.Measure(node.model_id, node.state.cpu_left, node.state.gpu_free.data(), g,
                               idle, n_classes, topo);
    const NodeHoleFill holes(waste_, node.state, pod, params_.hole_relative);
    NodeScore out =
        BestHypotheticalPlacement(node, pod, [&](int64_t cpu_after, const int32_t* free) {
          const double fill = holes.Fill(free, g);
          return Combine(
              before, measure_.Measure(node.model_id, cpu_after, free, g, idle, n_classes, topo),
              idle, plentiful, pod, pressure, fill,
              plentiful && (node.context & TesseraContext::kDemandWhilePlentifulBit) == 0);
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
    if (memory_.Judges(node.spec)) return ScorePair2D(node, pod, out);
    const int g = node.spec.gpu_count;
    bool idle = node.state.cpu_left == node.spec.cpu_milli;
    for (int i = 0; i < g && idle; ++i) idle = node.state.gpu_free[i] == kMilliPerGpu;
    const double pressure = context_.PodPressure(pod, node.model_id, node.context);  // not bit 0
    const bool drop = params_.plentiful_drop_multi_gpu;
    auto plentiful_view = [drop](Measures m) {
      if (drop) m.stranded = m.stranded_m;
      return m;
    };
    const GpuTopology* topo = MeasuredTopology(node);
    const Measures before = MeasureBefore(node, g, idle, topo);
    const Measures before_p = plentiful_view(before);
    const NodeHoleFill holes(waste_, node.state, pod, params_.hole_relative);
    const std::array<NodeScore, 2> scores =
        BestHypotheticalPlacements<2>(node, pod, [&](int64_t cpu_after, const int32_t* free) {
          const Measures after = measure_.Measure(node.model_id, cpu_after, free, g, idle,
                                                  measure_.classes().size(), topo);
          const double fill = holes.Fill(free, g);
          return CombinePair(
              Changes(before, after, idle, false, pod, pressure, fill, false),
              Changes(before_p, plentiful_view(after), idle, true, pod, pressure, fill,
                      (node.context & TesseraContext::kDemandWhilePlentifulBit) == 0));
        });
    out[0] = scores[0];
    out[1] = scores[1];
    PreferAligned(node, pod, &out[0]);
    PreferAligned(node, pod, &out[1]);
  }

 private:
  // The node's own measures over all classes: they depend only on the node state, so they are
  // kept in the scheduler's memo of that state (NodeView::scratch) when there is one.
  Measures MeasureBefore(const NodeView& node, int g, bool idle,
                         const GpuTopology* topo = nullptr) const {
    PolicyScratch* memo = node.scratch;
    if (memo != nullptr && memo->valid) {
      return Measures{memo->values[0], memo->values[3], memo->values[1], memo->values[2]};
    }
    const Measures m =
        measure_.Measure(node.model_id, node.state.cpu_left, node.state.gpu_free.data(), g, idle,
                         measure_.classes().size(), topo);
    if (memo != nullptr) {
      memo->values[0] = m.frag;
      memo->values[1] = m.stranded;
      memo->values[2] = m.stranded_m;
      memo->values[3] = m.frag_p;
      memo->valid = true;
    }
    return m;
  }

  // Score in two dimensions (the same under both values of the plentiful bit, which the
  // memory scores do not read): FGD's quantized ΔF_n(M) with MemoryMeasure::Frag, less the model
  // pressure; among its ties (memory_best_fit), the placement that leaves the node the least
  // usable GPU memory, ⌊999 · (1 − usable MiB left / the node's GPU memory)⌋, else the
  // one-dimensional tie-break (Combine, with S_n from MemoryMeasure::Stranded).
  void ScorePair2D(const NodeView& node, const PodRequest& pod, NodeScore out[2]) const {
    const int g = node.spec.gpu_count;
    bool idle = node.state.cpu_left == node.spec.cpu_milli;
    for (int i = 0; i < g && idle; ++i) idle = node.state.gpu_free[i] == kMilliPerGpu;
    const int64_t context = node.context & ~PairedContextBit();
    const double pressure = context_.PodPressure(pod, node.model_id, context);
    const int64_t cap = node.spec.gpu_memory_mib;
    const bool best_fit = params_.memory_best_fit;
    const size_t n_plentiful =
        params_.plentiful_drop_multi_gpu ? measure_.m_size() : measure_.classes().size();
    auto measure = [&](int64_t cpu, const int32_t* free, const int32_t* mem, size_t n) {
      Measures m;
      m.frag = memory_.Frag(node.model_id, cpu, free, mem, g, cap);
      m.frag_p = m.frag;
      if (!best_fit && params_.cpu_stranding && !idle) {
        m.stranded = memory_.Stranded(node.model_id, cpu, free, mem, g, n);
        m.stranded_m = m.stranded;
      }
      return m;
    };
    const Measures before = measure(node.state.cpu_left, node.state.gpu_free.data(),
                                    node.state.gpu_mem_free.data(), measure_.classes().size());
    const Measures before_p = best_fit ? before
                                       : measure(node.state.cpu_left, node.state.gpu_free.data(),
                                                 node.state.gpu_mem_free.data(), n_plentiful);
    const NodeHoleFill holes(waste_, node.state, pod, params_.hole_relative);
    // Memory hole fill (memory-bound mode): Σ waste over the GPUs now, and the drop the pod
    // makes on a free GPU, which the fill is taken relative to.
    const bool mem_fill = !memory_.waste().empty() && pod.IsSharing() && pod.gpu_memory_mib > 0;
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
          const Measures after = measure(cpu_after, free, mem, measure_.classes().size());
          const double fill = holes.Fill(free, g);
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
            for (int i = 0; i < g; ++i) left += MemoryMeasure::UsableMib(free[i], mem[i]);
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

  // The memory hole fill's waste on a GPU with `free` milli and `mem` MiB free.
  int64_t MemWaste(int32_t free, int32_t mem) const {
    return memory_.waste().Clamped(MemoryMeasure::UsableMib(free, mem));
  }
  // A `preferred` pod's unaligned placements go below every aligned one. (The test for a
  // topology is apart so that it stays inline in the scores: most nodes have none.)
  void PreferAligned(const NodeView& node, const PodRequest& pod, NodeScore* score) const {
    if (node.spec.topology == nullptr) return;
    tessera::PreferAligned(*node.spec.topology, node, pod,
                           params_.cpu_stranding ? 101.0 * kSecondaryLevels : 101.0, score);
  }

  TesseraParams params_;
  TesseraMeasure measure_;  // F_n(M) and S_n; the stranding classes
  MemoryMeasure memory_;    // the same in two dimensions, for lists with GPU memory
  TesseraContext context_;  // the context value and the model pressure
  HoleWaste waste_;         // hole fill's table (milli; empty: off)
};

}  // namespace

std::unique_ptr<Policy> MakeTesseraPolicy(const PolicyContext& context,
                                          const TesseraParams& params) {
  if (context.workload == nullptr) return nullptr;
  return std::make_unique<TesseraPolicy>(context.workload, params);
}

}  // namespace tessera
