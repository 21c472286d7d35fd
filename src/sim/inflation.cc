#include "sim/inflation.h"

#include <algorithm>
#include <memory>

#include "model/cluster.h"
#include "policy/policy.h"
#include "sched/scheduler.h"
#include "util/rng.h"

namespace tessera {
namespace {

// Independent random streams of one seed.
constexpr uint64_t kNodeOrderStream = 0x6e6f64652d6f7264ULL;
constexpr uint64_t kSchedulerStream = 0x73636865642d726eULL;

std::string FailureReason(const Decision& d) {
  std::string out;
  for (int r = 1; r < kNumFitReasons; ++r) {
    if (d.rejected[r] == 0) continue;
    if (!out.empty()) out += ' ';
    out += FitReasonName(static_cast<FitReason>(r));
    out += ':';
    out += std::to_string(d.rejected[r]);
  }
  return out.empty() ? "no-nodes" : out;
}

}  // namespace

std::vector<std::pair<int, int>> InflatedSequence(const std::vector<PodSpec>& pods,
                                                  int64_t capacity_milli, uint64_t seed,
                                                  double max_arrival_pct) {
  Rng rng(seed);
  std::vector<std::pair<int, int>> seq;
  seq.reserve(pods.size() * 2);
  for (int i = 0; i < static_cast<int>(pods.size()); ++i) seq.emplace_back(i, 0);
  rng.Shuffle(seq);
  if (pods.empty()) return seq;
  const double target = max_arrival_pct / 100.0 * static_cast<double>(capacity_milli);
  double total = 0;
  for (const PodSpec& p : pods) total += static_cast<double>(p.TotalGpuMilli());
  if (total > target) {
    while (total > target && !seq.empty()) {
      const size_t k = rng.Below(seq.size());
      total -= static_cast<double>(pods[seq[k].first].TotalGpuMilli());
      seq.erase(seq.begin() + static_cast<std::ptrdiff_t>(k));
    }
    return seq;
  }
  std::vector<int> clones(pods.size(), 0);
  for (;;) {
    const int i = static_cast<int>(rng.Below(pods.size()));
    const double add = static_cast<double>(pods[i].TotalGpuMilli());
    if (total + add > target) break;  // stop at the first clone that would overshoot
    total += add;
    seq.emplace_back(i, ++clones[i]);
  }
  return seq;
}

Result<RunResult> RunInflation(const std::vector<NodeSpec>& nodes, const std::vector<PodSpec>& pods,
                               const TargetWorkload& workload, const std::string& policy_name,
                               uint64_t seed, const InflationOptions& options) {
  PolicyContext context;
  context.workload = &workload;
  std::unique_ptr<Policy> policy = MakePolicy(policy_name, context);
  if (!policy) return Error{"unknown policy '" + policy_name + "'"};
  return RunInflation(nodes, pods, workload, *policy, seed, options);
}

RunResult RunInflation(const std::vector<NodeSpec>& nodes, const std::vector<PodSpec>& pods,
                       const TargetWorkload& workload, const Policy& policy, uint64_t seed,
                       const InflationOptions& options) {
  Cluster cluster(nodes);
  std::vector<int> order(nodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  Rng order_rng(seed ^ kNodeOrderStream);
  order_rng.Shuffle(order);
  Scheduler scheduler(&cluster, &policy, order, seed ^ kSchedulerStream);

  std::vector<PodRequest> requests;
  requests.reserve(pods.size());
  for (const PodSpec& p : pods) requests.push_back(cluster.MakeRequest(p));

  RunResult run;
  run.policy = std::string(policy.name());
  run.seed = seed;
  run.capacity_milli = cluster.total_gpu_milli();
  const double capacity = static_cast<double>(run.capacity_milli);

  std::vector<double> node_frag(nodes.size());
  double frag = 0;
  for (int n = 0; n < cluster.size(); ++n) {
    node_frag[n] = workload.NodeFragmentation(cluster, n);
    frag += node_frag[n];
  }

  const int max_level = static_cast<int>(options.max_arrival_pct);
  int next_level = 0;
  int64_t arrived = 0;
  auto record = [&](bool force) {
    while (next_level <= max_level &&
           (force || static_cast<double>(arrived) * 100.0 >= next_level * capacity)) {
      CurvePoint p;
      p.arrival_pct = next_level;
      p.arrived_pct = capacity > 0 ? 100.0 * static_cast<double>(arrived) / capacity : 0;
      p.allocated_milli = cluster.allocated_gpu_milli();
      p.unallocated_pct =
          capacity > 0 ? 100.0 - 100.0 * static_cast<double>(p.allocated_milli) / capacity : 0;
      p.frag_milli = frag;
      const double idle = capacity - static_cast<double>(p.allocated_milli);
      p.frag_ratio = idle > 0 ? frag / idle : 0;
      run.curve.push_back(p);
      ++next_level;
    }
  };
  record(false);

  const std::vector<std::pair<int, int>> seq =
      InflatedSequence(pods, run.capacity_milli, seed, options.max_arrival_pct);
  if (options.record_placements) run.placements.reserve(seq.size());
  for (size_t s = 0; s < seq.size(); ++s) {
    const auto [pod, clone] = seq[s];
    const PodRequest& req = requests[pod];
    arrived += req.TotalGpuMilli();
    const Decision d = scheduler.Decide(req);
    PlacementRecord rec;
    rec.seq = static_cast<int>(s);
    rec.pod = pod;
    rec.clone = clone;
    if (d.ok()) {
      scheduler.Bind(d.node, req, d.gpus);
      frag -= node_frag[d.node];
      node_frag[d.node] = workload.NodeFragmentation(cluster, d.node);
      frag += node_frag[d.node];
      rec.node = d.node;
      rec.gpus = d.gpus;
    } else {
      ++run.failed;
      if (options.record_placements) rec.reason = FailureReason(d);
    }
    if (options.record_placements) run.placements.push_back(std::move(rec));
    run.max_distinct_states = std::max(run.max_distinct_states, scheduler.distinct_states());
    record(false);
  }
  run.submitted = static_cast<int>(seq.size());
  record(true);  // levels the sequence never reached keep the final state
  return run;
}

}  // namespace tessera
