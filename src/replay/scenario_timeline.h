#pragma once

#include "replay/timeline.h"
#include "trace/scenario.h"

namespace tessera {

/// The replay timeline of a scenario: for every class with an `arrival` process, Poisson
/// arrivals over [0, horizon_h) with the class's rate profile and bursts (by thinning), each
/// pod running for a draw of the class's duration distribution; classes without `arrival`
/// are left out. Pods are named "<class>-<k>"; arrival times and the horizon are divided by
/// `time_scale` (durations kept). Deterministic for scenario.seed. Precondition: the scenario
/// was validated by ParseScenario; time_scale > 0.
Timeline ScenarioTimeline(const Scenario& scenario, double time_scale);

}  // namespace tessera
