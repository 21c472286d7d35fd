#pragma once

// Sizing by simulation: the least number of nodes of one type for which a class's wait meets
// its SLO when the demand is replayed (RunReplayPolicy) on every draw. The planner's search;
// each candidate count is judged by replays, not by a formula (Erlang C, plan/erlang.h, gives
// the first guess and checks the method). Pure: no I/O, no clock. Not thread-safe.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/node.h"
#include "replay/replay.h"
#include "replay/timeline.h"
#include "util/result.h"

namespace tessera {

/// How many nodes of `node` a demand needs so that class `qos_class`'s wait quantile is at
/// most `slo_wait_s` in replay, on every draw of the demand.
struct SizingQuestion {
  NodeSpec node;  ///< the node type; the cluster is `count` copies named <name>-0000, ...
  int min_count = 1;
  int max_count = 1;
  std::string policy = "k8s-default";  ///< a replay policy (ReplayPolicyByName)
  std::string qos_class;               ///< the class judged (a name in replay.qos)
  double quantile = 99;                ///< of its waits: 50, 95 or 99
  double slo_wait_s = 1;
  std::vector<uint64_t> seeds;  ///< the demand's draws (the argument of the demand function)
  ReplayOptions replay;         ///< classes, horizon, ...; samples are not needed
};

/// One candidate count and the worst wait quantile of the class over the draws.
struct SizingPoint {
  int count = 0;
  double worst_wait_s = 0;
};

struct SizingAnswer {
  int count = -1;                  ///< the least count that met the SLO
  std::vector<SizingPoint> tried;  ///< in the order tried
};

/// Binary search over [min_count, max_count] (the wait is taken to fall as nodes are added),
/// replaying `demand(seed)` for each seed at each count tried. Errors: an unknown policy or
/// class, a quantile other than 50/95/99, an empty range or no seeds, and an SLO that even
/// max_count misses ("class LS: p99 wait 12.5 s at 40 nodes (the most allowed), SLO 1 s").
Result<SizingAnswer> SizeByReplay(const SizingQuestion& question,
                                  const std::function<Timeline(uint64_t seed)>& demand);

}  // namespace tessera
