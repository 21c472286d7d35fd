#pragma once

// `tessera plan`'s method (docs/PLAN.md): for each policy, the cheapest mix of node types from
// a catalog for which every class meets its SLO when the demand is replayed on every seed;
// then the chosen plan checked on held-out seeds and under more demand, and the baselines
// (the cluster today, a static quota, "p95 GPUs / target utilization", a Cluster-Autoscaler-
// style first-fit-decreasing estimate) replayed on the same demand.
//
// The search is cut into units (one per policy and, with two or more node types, per count
// of the first type) that share nothing, so that `--shard K/N` can run a deterministic share
// of them and `plan merge` combine them: FinishPlan gives the same PlanResult from the units
// of one run as from those of N shards. Within a unit: the mix with every type at its most
// allowed first (if it misses, the unit has no plan), then the cheapest mix with at least the
// Erlang C first guess of GPUs, then the median-cost mix of those still open, until none is
// open. A mix that misses closes every mix with no more nodes of any type (adding nodes is
// taken not to make waits longer); one that meets closes every mix that costs as much or
// more. Mixes with fewer GPUs than 90 % of the SLO classes' offered load over the run are
// closed without a replay. Probes replay the first seed only; when no mix is open, the
// cheapest that met is replayed on every seed (stopping at the first that misses): if it
// meets, it is the unit's plan, else it counts as missed and the search goes on.
//
// Pure: no I/O, no clock. RunUnits runs units on `threads` threads; the result does not
// depend on the thread count.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "plan/catalog.h"
#include "plan/forecast.h"
#include "plan/slo.h"
#include "replay/replay.h"
#include "replay/replay_policy.h"
#include "replay/timeline.h"
#include "util/result.h"

namespace tessera {

/// Draws of the demand, by seed and growth factor (relative to the plan's demand), made once
/// and kept, and what the served floor's reference policy serves each class on a mix of them
/// (also computed once: every policy's search asks for the same mixes). Thread-safe.
class DemandDraws {
 public:
  /// `draw(seed, factor)` must be thread-safe and deterministic.
  explicit DemandDraws(std::function<Timeline(uint64_t seed, double factor)> draw)
      : draw_(std::move(draw)) {}
  DemandDraws(const DemandDraws&) = delete;
  DemandDraws& operator=(const DemandDraws&) = delete;
  const Timeline& Get(uint64_t seed, double factor) const;
  /// The GPU-hours per class that `compute()` (deterministic) gives for the mix `counts` on
  /// draw (seed, factor): computed at the first call for that key, then kept.
  std::vector<double> Served(const std::vector<int>& counts, uint64_t seed, double factor,
                             const std::function<std::vector<double>()>& compute) const;

 private:
  std::function<Timeline(uint64_t, double)> draw_;
  mutable std::mutex mu_;
  mutable std::map<std::pair<uint64_t, double>, std::unique_ptr<Timeline>>
      cache_;  // GUARDED_BY(mu_)
  mutable std::map<std::tuple<std::vector<int>, uint64_t, double>, std::vector<double>>
      served_;  // GUARDED_BY(mu_)
};

/// What to plan.
struct PlanSpec {
  NodeCatalog catalog;
  std::vector<ClassSlo> slos;
  std::vector<ReplayPolicy> policies;
  std::vector<uint64_t> seeds;        ///< the plan is chosen on these
  std::vector<uint64_t> check_seeds;  ///< and checked on these (held out)
  ReplayOptions replay;               ///< classes (SLO bounds set), horizon; seed is per run
  std::vector<double> sensitivity = {1.1, 1.25};  ///< demand factors of the sensitivity rows
  int64_t quota_gpus = 0;                         ///< the static-quota baseline (0: none)
  double target_util = 0.8;                       ///< the "p95 / target utilization" baseline
  /// The served floor: a class with pods and no SLO in `slos` must be served at least this
  /// share of the GPU-hours `floor_policy` serves it on the same mix and seed, else the mix
  /// misses, so that no mix meets the SLOs by starving a class without one (0: no floor).
  /// Not checked on `floor_policy`'s own replays.
  double served_floor = 0.9;
  std::optional<ReplayPolicy> floor_policy;  ///< k8s-default; none: no floor
  double lower_bound_gpus = 0;               ///< mixes with fewer GPUs are closed without a replay
  double first_guess_gpus = 0;               ///< Erlang C: the GPUs probed first

  /// The index of QoS class `name` in replay.qos.classes; -1 when there is none.
  int ClassIndex(const std::string& name) const;
};

/// One class's figures on one mix: the worst over the seeds replayed.
struct ClassOutcome {
  std::string name;
  double p50_s = 0, p95_s = 0, p99_s = 0;
  double slo_pct = 100;  ///< the least over seeds of the share within the class's wait SLO
  double gpu_hours = 0;  ///< the least over seeds
};

/// A mix replayed with one policy on some seeds.
struct Evaluation {
  std::vector<int> counts;
  int64_t gpus = 0;
  double cost = 0;
  bool meets = false;
  bool replayed = true;  ///< false: closed without a replay (baselines are always replayed)
  int seeds_run = 0;
  /// The first SLO missed: "LS p99 wait 30 s > 1 s (seed 2)", or the served floor: "BE
  /// GPU-hours 4.0 < 90 % of the 233.0 k8s-default serves (seed 1)".
  std::string missed;
  std::vector<ClassOutcome> classes;
  double alloc_pct = 0;      ///< mean over seeds of the time-average GPU allocation
  double stranded_gpus = 0;  ///< mean over seeds and samples: idle GPUs stranded (FGD's F)
  double headroom_p50 = 0, headroom_p95 = 0, headroom_max = 0;  ///< GPUs, over samples
  int preemptions = 0;                                          ///< the most over seeds
};

/// One unit of the search: a policy and, with two or more node types, the first type's count.
struct SearchUnit {
  int policy = 0;
  int first_count = -1;  ///< -1: every count of every type
};
std::vector<SearchUnit> Units(const PlanSpec& spec);

struct UnitResult {
  int index = 0;
  std::vector<Evaluation> evaluated;  ///< in the order evaluated
  int best = -1;                      ///< into evaluated; -1: no mix of the unit meets
};
UnitResult RunUnit(const PlanSpec& spec, const DemandDraws& demand, int index);

/// Runs the units `indices` on `threads` threads; `progress(done, total)` after each (from a
/// worker thread, one call at a time). Results in the order of `indices`.
std::vector<UnitResult> RunUnits(const PlanSpec& spec, const DemandDraws& demand,
                                 const std::vector<int>& indices, int threads,
                                 const std::function<void(int, int)>& progress);

/// Replays `counts` with policy `policy` on `seeds` at demand `factor` (every seed; no early
/// stop when `all_seeds`).
Evaluation Evaluate(const PlanSpec& spec, const DemandDraws& demand, int policy,
                    const std::vector<int>& counts, const std::vector<uint64_t>& seeds,
                    double factor, bool all_seeds);

/// A row of the plan's table.
struct PlanRow {
  std::string kind;    ///< "plan", "held-out", "sensitivity", "baseline"
  std::string label;   ///< e.g. "tessera", "+10 % demand", "quota 320 GPUs"
  std::string policy;  ///< the policy replayed
  bool chosen = false;
  /// The mix replayed and its figures. Empty only in the "plan" row of a policy for which no
  /// mix of the catalog meets every SLO: `no_plan` then says so, with the first SLO the
  /// largest mix replayed missed.
  std::optional<Evaluation> eval;
  std::string no_plan;  ///< "no mix up to the catalog's maximum meets every SLO: at 1*g1 …"
};

struct PlanResult {
  std::vector<UnitResult> units;  ///< every unit, by index
  std::vector<PlanRow> rows;
  int chosen_policy = -1;
  std::vector<int> chosen_counts;
  std::string headroom_yaml;  ///< a tessera.yaml `headroom:` snippet for the chosen plan
  /// Per policy, the GPUs of its cheapest plan (-1: none).
  std::vector<int64_t> policy_gpus;
  /// The forecast of the demand the plan is sized for (the first seed's draw, growth
  /// applied): per class concurrent GPUs, rates, durations, backtest (plan/forecast.h). The
  /// "p95 / utilization" baseline is sized from it. `forecast_error` says why there is none
  /// (a history shorter than two buckets); that baseline is then left out.
  DemandForecast forecast;
  std::string forecast_error;
};

/// The plan from every unit's result (in any order): each policy's cheapest mix, the chosen
/// one (the cheapest; ties: the policy listed first), replays of it on the held-out seeds and
/// at the sensitivity factors, and the baselines under the chosen policy. Error when no policy
/// has a mix that meets every SLO: "class LS: no mix up to the catalog's maximum meets 'LS: p99
/// wait <= 1s': the best p99 reached is 30 s, by tessera on 40*a100x8".
Result<PlanResult> FinishPlan(const PlanSpec& spec, const DemandDraws& demand,
                              std::vector<UnitResult> units, int threads);

/// The counts of a baseline that needs `gpus` GPUs: from every type at its least count, nodes
/// of the cheapest type per GPU are added (then the next type, up to each type's maximum).
std::vector<int> MixForGpus(const NodeCatalog& catalog, int64_t gpus);
/// Cluster Autoscaler's estimate: the pods running at the demand's peak, largest GPU request
/// first, each on the first open node where it fits, else on a new node of the cheapest type
/// per GPU that can host it (what CA's binpacking estimator and `price` expander do).
std::vector<int> FirstFitDecreasing(const NodeCatalog& catalog, const Timeline& timeline);

}  // namespace tessera
