#pragma once

#include <memory>

#include "policy/policy.h"

namespace tessera {

/// The knobs of the `tessera` policy (docs/POLICIES.md explains each and measures it).
/// The defaults are the shipped policy; switching an ingredient off is the ablation study.
struct TesseraParams {
  /// Break FGD's ties by the CPU-stranding score (off: FGD as published).
  bool cpu_stranding = true;
  /// Add the pod list's multi-GPU classes, which M's 95 % cut usually drops, to the stranding
  /// measure, each weighing p_m · (1 + multi_gpu_weight · (GPUs − 1)). Off: the demand-weighted
  /// M (demand_weight) protects them in FGD's own term (docs/POLICIES.md, ablation).
  bool multi_gpu_classes = false;
  double multi_gpu_weight = 3.0;
  /// Classes limited to some GPU models weigh (cluster GPUs / GPUs they may use)^scarcity.
  double scarcity = 2.0;
  /// A sharing pod opens an idle node only if the used nodes that tie with it would strand
  /// more than this (milli-GPU); other pods see idle nodes as stranding nothing. 0: off, as
  /// multi_gpu_classes.
  double sharing_open_cost = 0.0;
  /// Adaptive idle-node protection (docs/POLICIES.md, "The `tessera` policy"; its ablation
  /// there: default trace 4.06 % with it, 4.26 % without). Off, the protection above always
  /// applies. On, the policy watches the cluster (Policy::ContextKey) and calls idle nodes
  /// *plentiful* while, for every GPU count k ≥ 2 of the multi-GPU pods seen so far,
  ///   idle_k − project_opening · open_rate_k · free  ≥  open_reserve · share_k · free,
  /// where idle_k is the idle GPU milli on idle nodes with ≥ k GPUs, open_rate_k how many of
  /// those were opened so far per GPU milli allocated, free the free GPU milli of the
  /// cluster and share_k the share of pods with ≥ k GPUs in the GPU request seen so far (an
  /// online estimate: no pod is known before it is asked about). While plentiful, sharing pods
  /// open idle nodes at `plentiful_open_cost`, with `plentiful_drop_multi_gpu` the multi-GPU
  /// classes leave the stranding measure, and FGD's term is over M, not the demand-weighted
  /// classes (demand_weight).
  bool adaptive_open = true;
  double open_reserve = 0.5;
  double project_opening = 0.5;
  double plentiful_open_cost = 0.0;
  bool plentiful_drop_multi_gpu = true;
  /// Model pressure (docs/POLICIES.md, "The `tessera` policy"): placing a pod on a GPU of model k
  /// lowers the ΔF of FGD's score by model_pressure · (π_k − min π over the models the pod may use)
  /// · its GPU milli, where π_k is the model-constrained request of the pod list expected from now
  /// on for model k per free GPU of k (the list's constrained share of model k times the
  /// cluster's free GPU milli, over model k's free GPU milli), rounded to `pressure_step`. A
  /// cluster-wide context (Policy::ContextKey); lists without GPU-model constraints never
  /// see it. 0 switches it off.
  double model_pressure = 1.0;
  double pressure_step = 0.1;
  /// Tests only: evaluate F_n(M) and S_n with the plain per-class loops (TargetWorkload::
  /// NodeFragmentation and one loop over the GPUs per class) instead of the shared per-threshold
  /// table and per-bucket sums. Same scores (the sums' order differs, so the measures may
  /// differ in their last bits); slower.
  bool reference_measure = false;
  /// Hole fill (docs/POLICIES.md, "The `tessera` policy"): a sharing pod's placement is also judged
  /// by the GPU milli its GPU's hole can never use, waste(r) = r − the largest sum of the list's
  /// frequent sharing sizes (those with at least `hole_min_share` of its sharing pods, any
  /// number of each) that fits in r. The fill is the drop of Σ waste over the node's GPUs,
  /// less the same drop on a free GPU (with `hole_relative`; a fresh GPU then costs nothing);
  /// hole_fill_primary weighs it into FGD's ΔF (milli per milli), hole_fill into the
  /// tie-break (not shipped). 0 switches each off.
  double hole_fill = 0.0;
  double hole_fill_primary = 2.0;
  double hole_min_share = 0.03;
  bool hole_relative = true;
  /// GPU memory (docs/GPU_MEMORY.md, "The two-dimensional measure"): when some pod class of
  /// the list asks for GPU memory, a node whose GPUs' memory is known is judged in two
  /// dimensions: a GPU serves a class only if both its free milli and its usable memory fit
  /// it (a GPU without free compute has no usable memory), so F_n(M) counts the compute
  /// stranded for want of memory. `memory_weight` adds the memory stranded for want of
  /// compute: memory_weight · 1000 · the usable MiB of the GPUs that cannot serve a class /
  /// the node's GPU memory (0: off, the default; docs/GPU_MEMORY.md measures 1). With
  /// `memory_best_fit`, FGD's ties are broken by the usable GPU memory the placement leaves
  /// on the node (least first) instead of by the CPU-stranding score (whose measure and
  /// idle-node protection the memory scenarios measure as worse). Lists without GPU memory
  /// (the openb lists) never see either.
  double memory_weight = 0.0;
  bool memory_best_fit = true;
  /// Memory-bound mode (docs/GPU_MEMORY.md, "When memory runs out first"): where the target
  /// workload asks for a larger share of the cluster's GPU memory than of its GPU compute
  /// (whole-GPU pods counting all of both; TargetWorkload::gpu_memory_mean_mib), memory is
  /// what runs out, and the two-dimensional score also takes
  ///  - `memory_hole_fill`: a sharing pod is charged, in ΔF, for the memory its GPU's hole can
  ///    no longer use, as hole fill does for milli (waste(r) = r − the largest sum of frequent
  ///    sharing memory sizes ≤ r; weight · 1000 · ΔMiB / the GPU's memory), and
  ///  - `count_weight`: F_n(M) weighs a sharing class p_m · (s̄ / s_m)^count_weight (rescaled
  ///    to the sharing classes' Σ p_m), s_m its larger share (milli or memory) of a GPU with
  ///    the cluster's mean memory and s̄ their mean, so that a GPU's memory lost to a large share
  ///    counts as the several small ones it would have held (`count_shares_only` off: every class,
  ///    whole-GPU ones too).
  /// `memory_bound_mode` off applies both wherever the two-dimensional score runs.
  bool memory_bound_mode = true;
  double memory_hole_fill = 4.0;
  double count_weight = 4.0;
  bool count_shares_only = true;
  /// Demand-weighted M (docs/POLICIES.md, "Demand-weighted M"): while idle nodes are not
  /// plentiful (adaptive_open; always without it), FGD's F_n(M) is taken over the list's
  /// classes weighed p_m ∝ (1 − demand_weight) · count_m / pods + demand_weight · count_m ·
  /// GPU request_m / the list's GPU request, the heaviest first until `demand_coverage` of the
  /// weight: a class of 2 % of the pods that asks for 8 GPUs weighs what it asks of the GPUs,
  /// where M's 95 % cut of the pods drops it. While plentiful, M itself. 0: M throughout (FGD's).
  /// Pods that ask for GPU memory are scored with M (docs/GPU_MEMORY.md).
  double demand_weight = 1.0;
  double demand_coverage = 0.95;
  /// While plentiful, FGD's term stays over the demand-weighted classes until the first
  /// multi-GPU pod is seen, for lists that have whole-GPU pods: a workload whose whole-GPU pods
  /// all ask for one GPU gives the plentiful test nothing to watch (it stays plentiful), yet
  /// its whole GPUs are what sharing pods break.
  bool count_needs_multi = true;
  /// Levels of the two-dimensional primary score, ⌊levels · sigmoid(ΔF / 1000)⌋ (100: FGD's).
  double primary_levels = 100.0;
};

/// Builds the `tessera` policy; nullptr without a target workload in `context`.
std::unique_ptr<Policy> MakeTesseraPolicy(const PolicyContext& context,
                                          const TesseraParams& params);

}  // namespace tessera
