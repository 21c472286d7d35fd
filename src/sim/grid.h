#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/inflation.h"

namespace tessera {

/// Progress of a grid: runs finished so far, of total.
using GridProgress = std::function<void(int done, int total, const RunResult& last)>;

/// Progress inside one run: pods submitted so far of the run's sequence.
using RunProgress =
    std::function<void(const std::string& policy, uint64_t seed, int64_t submitted, int64_t total)>;

/// Runs the inflation experiment for every (policy, seed), on `threads` threads (≥ 1).
/// Results come in policy-major order, seeds ascending within a policy, whatever the
/// thread count. `progress` (optional) is called after each run, `within` (optional) every
/// options.progress_every pods of a run; both from one thread at a time.
Result<std::vector<RunResult>> RunGrid(
    const std::vector<NodeSpec>& nodes, const std::vector<PodSpec>& pods,
    const TargetWorkload& workload, const std::vector<std::string>& policies,
    const std::vector<uint64_t>& seeds, int threads, const InflationOptions& options,
    const GridProgress& progress = nullptr, const RunProgress& within = nullptr);

}  // namespace tessera
