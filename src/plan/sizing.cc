#include "plan/sizing.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "replay/replay_policy.h"

namespace tessera {
namespace {

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g s", s);
  return buf;
}

double Quantile(const ClassStats& c, double q) {
  return q == 50 ? c.wait_p50_s : q == 95 ? c.wait_p95_s : c.wait_p99_s;
}

}  // namespace

Result<SizingAnswer> SizeByReplay(const SizingQuestion& question,
                                  const std::function<Timeline(uint64_t seed)>& demand) {
  const SizingQuestion& q = question;
  Result<ReplayPolicy> policy = ReplayPolicyByName(q.policy);
  if (!policy.ok()) return policy.error();
  int cls = -1;
  for (size_t c = 0; c < q.replay.qos.classes.size(); ++c) {
    if (q.replay.qos.classes[c].name == q.qos_class) cls = static_cast<int>(c);
  }
  if (cls < 0) return Error{"unknown class '" + q.qos_class + "'"};
  if (q.quantile != 50 && q.quantile != 95 && q.quantile != 99) {
    return Error{"quantile must be 50, 95 or 99"};
  }
  if (q.min_count < 1 || q.max_count < q.min_count) {
    return Error{"node count range [" + std::to_string(q.min_count) + ", " +
                 std::to_string(q.max_count) + "] is empty"};
  }
  if (q.seeds.empty()) return Error{"no seeds"};

  std::vector<Timeline> draws;
  for (uint64_t seed : q.seeds) draws.push_back(demand(seed));
  ReplayOptions options = q.replay;
  options.samples = 0;
  options.record_events = false;
  SizingAnswer answer;
  std::map<int, double> worst;  // count -> worst quantile over the draws
  const auto judge = [&](int count) {
    std::vector<NodeSpec> nodes(static_cast<size_t>(count), q.node);
    for (int i = 0; i < count; ++i) {
      char suffix[16];
      std::snprintf(suffix, sizeof suffix, "-%04d", i);
      nodes[static_cast<size_t>(i)].name = q.node.name + suffix;
    }
    double w = 0;
    for (size_t d = 0; d < draws.size(); ++d) {
      options.seed = q.seeds[d];
      const ReplayResult r = RunReplayPolicy(nodes, draws[d], *policy, options);
      w = std::max(w, Quantile(r.classes[static_cast<size_t>(cls)], q.quantile));
    }
    answer.tried.push_back({count, w});
    worst[count] = w;
    return w <= q.slo_wait_s;
  };
  if (!judge(q.max_count)) {
    return Error{"class " + q.qos_class + ": p" + std::to_string(static_cast<int>(q.quantile)) +
                 " wait " + Seconds(worst[q.max_count]) + " at " + std::to_string(q.max_count) +
                 " nodes (the most allowed), SLO " + Seconds(q.slo_wait_s)};
  }
  int lo = q.min_count, hi = q.max_count;  // hi meets the SLO
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (judge(mid)) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  answer.count = hi;
  return answer;
}

}  // namespace tessera
