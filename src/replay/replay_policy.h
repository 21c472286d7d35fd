#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "replay/replay.h"
#include "util/result.h"

namespace tessera {

/// A policy of the replay: a placement policy (policy/registry) plus how the queue may
/// preempt and what headroom it keeps.
struct ReplayPolicy {
  std::string name;       ///< as the user typed it
  std::string placement;  ///< a name MakePolicy knows
  bool preemption = true;
  double preempt_delay_s = 0;
  HeadroomOptions headroom;
  /// The SLO-aware policy (TesseraReplayPolicy): the one the command line's headroom,
  /// preemption-delay and placement settings (--headroom-*, --preempt-delay,
  /// --tessera-placement) configure; the others are Kubernetes' behaviour as it is.
  bool slo_aware = false;
};

/// The tessera replay policy's defaults (docs/REPLAY.md): the `tessera` placement policy
/// (FGD with CPU-stranding tie-breaks), headroom for the classes with priority >= 1000 (LS)
/// sized online from the replay so far (kBacklog: 2.5 times the highest backlog, over the last
/// 1.5 hours, of LS GPU demand drained at the observed rate of GPUs freed by departures), and
/// preemption only when the headroom is exhausted. No per-workload setting.
ReplayPolicy TesseraReplayPolicy();

/// `tessera` → TesseraReplayPolicy(); any placement name P → P with priority + preemption,
/// no headroom (Kubernetes' behaviour with P's scoring); "P/nopreempt" → P without
/// preemption. Errors name the unknown policy and list the known ones.
Result<ReplayPolicy> ReplayPolicyByName(const std::string& name);

/// Points the headroom of each policy that keeps one at the classes that may use it: from
/// HeadroomProtectedPriority(classes), the rule `tessera serve` applies to its config. What
/// `tessera replay` and `tessera plan` do to the policies they run once the classes are known.
void ProtectHeadroomClasses(const QosClasses& classes, std::vector<ReplayPolicy>* policies);

/// The values of `--headroom-model MODEL=GPUS` (repeatable) as HeadroomOptions::model_gpus, in
/// order: MODEL a GPU model name (non-empty, given once), GPUS an unsigned integer 0..1e7.
/// Errors quote the value: "--headroom-model: expected MODEL=GPUS (e.g. A10=4), got 'A10'".
Result<std::vector<std::pair<std::string, int64_t>>> ParseHeadroomModels(
    const std::vector<std::string>& values);

}  // namespace tessera

namespace tessera {

/// Runs `policy` on `timeline` over `nodes`: builds its placement policy with the target
/// workload of the timeline's pods (resolved against `nodes`), which also gives the
/// fragmentation of the time series. `base` supplies classes, horizon, samples and seed;
/// preemption and headroom come from `policy`. Result::policy is policy.name.
/// Precondition: policy.placement is a registered policy name.
ReplayResult RunReplayPolicy(const std::vector<NodeSpec>& nodes, const Timeline& timeline,
                             const ReplayPolicy& policy, ReplayOptions base);

}  // namespace tessera
