#pragma once

// GPU headroom for the protected classes: whole idle GPUs that pods below a priority may not
// take, sized statically, from a forecast of protected demand, or from the protected backlog
// (docs/REPLAY.md, "Headroom"), plus fixed floors per GPU model. One component for every
// front door; it reads time only through a Clock (the replay's virtual clock, the extender's
// wall clock). No I/O. Not thread-safe.

#include <bit>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "model/node.h"
#include "model/pod.h"
#include "util/clock.h"

namespace tessera {

class Cluster;

/// GPU headroom kept for the important classes (docs/REPLAY.md, "Headroom"): a pod
/// of a class with priority < `min_priority` is placed only if at least `H` whole idle GPUs
/// (GPUs with nothing on them) are left in the cluster afterwards, and, on a node of a GPU
/// model with a floor (`model_gpus`), at least that floor's idle GPUs of that model. Pods of
/// the protected classes may use the headroom. The idle GPUs are the holes a whole-GPU or
/// sharing pod of a protected class can always use.
/// The most whole GPUs a headroom target or a model's floor may name (config and flags).
inline constexpr int64_t kMaxHeadroomGpus = 10000000;

struct HeadroomOptions {
  enum class Mode { kNone, kStatic, kForecast, kBacklog };
  Mode mode = Mode::kNone;
  int min_priority = 1000;  ///< classes at or above this priority are protected
  /// Whether pods of non-preemptible classes below min_priority (Guaranteed) are held back
  /// too. Off: such a pod cannot be a victim and, held back, cannot preempt either, so under
  /// a large headroom it could wait for hours (measured on the trace: 2 of 7 Guaranteed pods
  /// waited until the horizon).
  bool hold_non_preemptible = false;
  /// Whether a held pod of a class with an SLO (Burstable) that finds room only in the
  /// headroom preempts lower-priority pods instead of waiting, so that protecting the top
  /// class does not cost another class its SLO: it takes their GPUs, not the idle ones.
  bool slo_classes_preempt = true;
  /// The headroom yields to a class with an SLO at risk of missing it: a held pod of a class
  /// with a wait SLO that has waited yield_after × its SLO may take the idle GPUs down to
  /// ceil(yield_keep · H) instead of H. H is sized with a margin (factor) for the protected
  /// classes' bursts; the at-risk pod takes from that margin, not from what they need.
  /// yield_after < 0: never. docs/REPLAY.md, "Headroom" (how the values were chosen).
  double yield_after = 0.25;
  double yield_keep = 0.2;
  int64_t gpus = 0;  ///< kStatic: H; kForecast, kBacklog: the floor of H
  /// kForecast: H = ceil(factor · q-quantile of the protected GPUs requested per bucket_s,
  /// over the buckets of the last window_s seconds), recomputed at each bucket boundary.
  double window_s = 3600;
  double bucket_s = 60;
  double quantile = 0.99;
  double factor = 1.0;
  /// kBacklog (no bucket to choose): a virtual queue is fed by the protected GPUs requested
  /// at each protected arrival and drained at r, the rate of whole GPUs made idle by
  /// departures over the last window_s seconds (observed so far; divided by window_s, so r
  /// starts low); its backlog B is the GPUs a burst takes from the headroom before departures
  /// have refilled it. B never exceeds the protected demand of the last window_s seconds
  /// (demand older than the window counts as refilled, as the drain rate forgets departures
  /// older than it), so that it decays once protected pods stop taking idle GPUs; nor the idle
  /// GPUs protected pods took and still hold (what a protected pod's own departure made idle
  /// again is refilled). The second bound keeps B from growing when only protected pods depart
  /// (the classes held back do not, so the drain equals the feed and B would be a random walk
  /// that never returns: docs/REPLAY.md, "Headroom").
  /// H = ceil(factor · the highest B of the last window_s seconds), growing at the arrival that
  /// raised B, shrinking at bucket_s boundaries as peaks age out.

  /// In every mode but kNone, H counts the idle GPUs of the models some protected pod of the
  /// last window_s seconds may use (all models when none arrived): a protected class limited to
  /// T4 nodes keeps idle T4 GPUs, not A10 ones, and a held pod on a node of a model no such
  /// pod may use is not held there. The set is recomputed at bucket_s boundaries, as the
  /// backlog's peaks age out.

  /// Per GPU model floors, in every mode but kNone and in addition to H: (model name as in
  /// NodeSpec::gpu_model, whole GPUs). A held pod on a node of model m must leave at least
  /// floor(m) idle GPUs of model m. A floor never exceeds its model's GPUs; a name the cluster
  /// does not have is kept but matches no node. Names are distinct.
  std::vector<std::pair<std::string, int64_t>> model_gpus;
};

/// The whole idle GPUs a held pod's placement on a node is judged by: the cluster's, and
/// those of the node's GPU model.
struct HeadroomIdle {
  int64_t cluster = 0;     ///< idle GPUs in the cluster
  int model = -1;          ///< the node's model id (Cluster::model_id; -1: no GPUs)
  int64_t model_idle = 0;  ///< idle GPUs of that model in the cluster
  /// Whether the node's GPUs count toward H (Headroom::Protects): where they do not, a held
  /// pod breaks no H there (only its model's floor) and `cluster` counts no GPU of the model.
  bool counts = true;
  /// The pod is of a class with a wait SLO and at risk of missing it (Headroom::AtRisk): it is
  /// judged by Headroom::at_risk_target() instead of H.
  bool at_risk = false;
};

/// The headroom H of one run, fed with protected demand and releases as they happen.
class Headroom {
 public:
  /// `clock` (not owned) must outlive the Headroom.
  Headroom(const HeadroomOptions& options, const Clock* clock);

  const HeadroomOptions& options() const { return options_; }
  /// The cluster the headroom keeps GPUs in (call again for each new cluster model): H and the
  /// backlog never exceed its GPUs (default: unbounded), and the model floors are resolved to
  /// its model ids, each at most its model's GPUs (default: no floor matches).
  void SetCluster(const Cluster& cluster);
  bool active() const { return options_.mode != HeadroomOptions::Mode::kNone; }
  /// H, in whole GPUs (0 when inactive).
  int64_t target() const { return target_; }
  /// What a held pod at risk of missing its class's SLO must leave idle: ceil(yield_keep · H).
  int64_t at_risk_target() const;
  /// Whether a held pod of a class with wait SLO `slo_wait_s` (< 0: none) that has waited
  /// `waited_s` is at risk of missing it: waited_s >= yield_after · slo_wait_s.
  bool AtRisk(double slo_wait_s, double waited_s) const {
    return options_.yield_after >= 0 && slo_wait_s >= 0 &&
           waited_s >= options_.yield_after * slo_wait_s;
  }
  /// The floor of the GPU model with id `model` (as resolved by SetCluster), in whole GPUs:
  /// 0 for a model without one, for -1, and when inactive.
  int64_t model_target(int model) const {
    return model >= 0 && static_cast<size_t>(model) < model_targets_.size()
               ? model_targets_[static_cast<size_t>(model)]
               : 0;
  }
  /// Whether some GPUs are kept now: H above zero or a model's floor above zero.
  bool keeps_some() const { return target_ > 0 || some_model_target_; }
  /// Whether a pod of `priority` is held to the headroom: below min_priority, and preemptible
  /// unless hold_non_preemptible.
  bool Holds(int priority, bool preemptible) const;
  /// What a held pod would break: nothing, H (the cluster's idle GPUs), or its node's model's
  /// floor (H is checked first).
  enum class Shortfall : uint8_t { kNone, kCluster, kModel };
  /// What a held pod that makes `consumed` idle GPUs busy on a node with the idle counts
  /// `idle` would break (a pod that takes no idle GPU breaks nothing).
  Shortfall Short(const HeadroomIdle& idle, int consumed) const {
    if (consumed == 0) return Shortfall::kNone;
    if (idle.counts && idle.cluster - consumed < (idle.at_risk ? at_risk_target() : target_)) {
      return Shortfall::kCluster;
    }
    if (idle.model_idle - consumed < model_target(idle.model)) return Shortfall::kModel;
    return Shortfall::kNone;
  }

  /// A pod of `priority` that may use the GPU models `models` (ids of the cluster of
  /// SetCluster) took `gpu_milli` idle GPU now: protected demand feeds the forecast (kForecast)
  /// or the backlog (kBacklog, which may raise H at once), and its models count toward H.
  /// Returns whether held pods may go where they could not (H shrank, or the models that
  /// count changed).
  bool NoteDemand(int priority, int64_t gpu_milli, ModelMask models = kAnyModel);
  /// Whether the idle GPUs of every model count toward H now.
  bool ProtectsEveryModel() const { return protected_models_ == kAnyModel; }
  /// Whether idle GPUs of model id `model` count toward H now (true when inactive and for -1).
  bool Protects(int model) const {
    return model < 0 || model >= kMaxGpuModels || (protected_models_ >> model & 1) != 0;
  }
  /// `gpus` whole GPUs became idle now by the departure of a pod of `priority` (kBacklog's
  /// drain rate; a protected pod's also lowers what protected pods hold). Not for a
  /// preemption victim: its GPUs go to its preemptor, they refill nothing.
  void NoteRelease(int gpus, int priority);
  /// The clock moved: at a bucket boundary H is recomputed (forecast quantiles, backlog peaks
  /// that aged out) and so are the protected models. Returns whether it was recomputed; *shrank
  /// tells whether held pods may take more now (H went down, or a model stopped counting).
  bool Update(bool* shrank);
  /// After an Update that recomputed: the next bucket boundary when there is data that may
  /// age out, else a negative value.
  double NextTick() const { return next_tick_; }

 private:
  bool Set(int64_t gpus);           // true if H shrank
  bool UpdateModels(double t);      // protected_models_ as of t; true if it changed
  int64_t BacklogTarget(double t);  // peaks older than t - window_s have aged out
  double now() const { return clock_->NowSeconds(); }

  HeadroomOptions options_;
  const Clock* clock_;
  int64_t target_ = 0;
  int64_t capacity_gpus_ = INT64_MAX;
  std::vector<int64_t> model_targets_;  // by model id of the cluster of SetCluster
  bool some_model_target_ = false;      // some entry of model_targets_ > 0
  int64_t bucket_ = INT64_MIN;
  double next_tick_ = -1;
  std::deque<std::pair<int64_t, double>> demand_;   // kForecast: (bucket, milli-GPU)
  std::deque<std::pair<double, double>> releases_;  // kBacklog: (time, milli-GPU made idle)
  double released_milli_ = 0;                       // their sum
  double backlog_ = 0, backlog_t_ = 0;              // kBacklog: B and when it was last updated
  std::deque<std::pair<double, double>> arrivals_;  // kBacklog: (time, milli-GPU demanded)
  double arrived_milli_ = 0;                        // their sum over the last window_s
  double held_milli_ = 0;                           // kBacklog: idle GPUs protected pods hold
  std::deque<std::pair<double, double>> peaks_;     // (time, B), B decreasing: a sliding max
  // The models protected demand may use: by model name (ids change with the cluster), the last
  // time a protected pod that may use it arrived; the last protected arrival; the set as of
  // the last update, by model id of the cluster of SetCluster.
  std::vector<std::string> model_names_;
  std::vector<double> model_last_;  // by model id
  double protected_last_ = -1e300;
  ModelMask protected_models_ = kAnyModel;
};

/// The whole idle GPUs that a pod given `gpus` on a node in `state` makes busy: the GPUs of
/// `gpus` with nothing allocated (a share on a used GPU takes none). Protected demand is counted
/// in these (Headroom::NoteDemand).
inline int IdleGpusTaken(const NodeState& state, GpuSet gpus) {
  int taken = 0;
  for (GpuSet g = gpus; g != 0; g &= g - 1) {
    taken += state.gpu_free[std::countr_zero(g)] == kMilliPerGpu;
  }
  return taken;
}

/// The idle GPUs of `cluster` now: their sum (the return value) and, unless `by_model` is null,
/// in *by_model by model id (resized to its models).
int64_t CountIdleGpus(const Cluster& cluster, std::vector<int64_t>* by_model);
/// The idle counts a held pod's placement on `node` is judged by, from the cluster's `idle`
/// GPUs and `by_model` (CountIdleGpus' by model id): those of the models `headroom` protects.
HeadroomIdle HeadroomIdleOf(const Headroom& headroom, const Cluster& cluster, int node,
                            int64_t idle, const std::vector<int64_t>& by_model);

/// The headroom rule of a held pod's placement, one for every front door (the replay's
/// in-process placement, serve's filter and bind). `idle`: the cluster's idle GPUs now and
/// those of the node's model; `state`, `gpu_count`: the node's. `why` (optional) is set to
/// what the pod would break where it may not go (Shortfall::kNone where it may). A pod that
/// preempted is placed on its node without these checks (it takes its victims' GPUs): the replay
/// when the grace period ends, serve on the pod's status.nominatedNodeName.
///
/// Whether some GPU choice on the node keeps the headroom for a held pod that fits there: a
/// share takes no idle GPU where a used GPU has room, else one; a whole-GPU pod takes its
/// count.
bool HeldMayUse(const Headroom& headroom, const HeadroomIdle& idle, const NodeState& state,
                int gpu_count, const PodRequest& request, Headroom::Shortfall* why = nullptr);
/// The GPUs a held pod takes on a node where the policy chose `*gpus` (which fit): the choice
/// when it keeps the headroom; else, for a share, the node's tightest used GPU with room,
/// which takes no idle GPU. False when neither keeps it (the pod must not go there).
bool PlaceHeld(const Headroom& headroom, const HeadroomIdle& idle, const NodeState& state,
               int gpu_count, const PodRequest& request, GpuSet* gpus,
               Headroom::Shortfall* why = nullptr);

}  // namespace tessera
