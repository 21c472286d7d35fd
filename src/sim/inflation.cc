#include "sim/inflation.h"

#include <algorithm>
#include <memory>

#include "model/cluster.h"
#include "policy/policy.h"
#include "sched/engine.h"
#include "sched/scheduler.h"
#include "util/rng.h"

namespace tessera {
namespace {

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
    // Remove the k-th remaining pod, k uniform, until the rest fits the target. A Fenwick tree
    // over "still present" finds the k-th in O(log n) (erasing from the vector, as the
    // definition reads, is O(n) per pod: minutes for a list of millions); same draws, same
    // result.
    const size_t n = seq.size();
    std::vector<int> tree(n + 1, 0);  // 1-based; tree[i] counts present pods in its range
    for (size_t i = 1; i <= n; ++i) {
      tree[i] += 1;
      const size_t parent = i + (i & (~i + 1));
      if (parent <= n) tree[parent] += tree[i];
    }
    size_t top = 1;
    while (top * 2 <= n) top *= 2;
    std::vector<bool> removed(n, false);
    size_t left = n;
    while (total > target && left > 0) {
      size_t k = rng.Below(left);  // 0-based rank among the present pods
      size_t pos = 0;              // the largest prefix with at most k present pods
      for (size_t step = top; step > 0; step /= 2) {
        if (pos + step <= n && static_cast<size_t>(tree[pos + step]) <= k) {
          pos += step;
          k -= static_cast<size_t>(tree[pos]);
        }
      }
      removed[pos] = true;  // pos is the 0-based index of the pod
      for (size_t i = pos + 1; i <= n; i += i & (~i + 1)) --tree[i];
      --left;
      total -= static_cast<double>(pods[seq[pos].first].TotalGpuMilli());
    }
    std::vector<std::pair<int, int>> kept;
    kept.reserve(left);
    for (size_t i = 0; i < n; ++i) {
      if (!removed[i]) kept.push_back(seq[i]);
    }
    return kept;
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
  const std::unique_ptr<Engine> engine = Engine::Borrow(nodes, policy, &workload, seed);
  Cluster& cluster = engine->cluster();
  Scheduler& scheduler = engine->scheduler();

  std::vector<PodRequest> requests;
  requests.reserve(pods.size());
  for (const PodSpec& p : pods) requests.push_back(cluster.MakeRequest(p));

  RunResult run;
  run.policy = std::string(policy.name());
  run.seed = seed;
  run.capacity_milli = cluster.total_gpu_milli();
  const double capacity = static_cast<double>(run.capacity_milli);

  // GPU memory (has_gpu_memory): the usable free MiB per node and in all.
  for (const PodRequest& r : requests) run.has_gpu_memory |= r.gpu_memory_mib > 0;
  for (const NodeSpec& n : nodes) run.capacity_mem_mib += int64_t{n.gpu_count} * n.gpu_memory_mib;
  run.has_gpu_memory = run.has_gpu_memory && run.capacity_mem_mib > 0;
  const double capacity_mem = static_cast<double>(run.capacity_mem_mib);
  auto usable_mem = [&](int n) {
    int64_t sum = 0;
    const NodeState& st = cluster.state(n);
    if (nodes[n].gpu_memory_mib <= 0) return sum;
    for (int i = 0; i < nodes[n].gpu_count; ++i) {
      if (st.gpu_free[i] > 0) sum += std::max<int32_t>(0, st.gpu_mem_free[i]);
    }
    return sum;
  };
  std::vector<int64_t> node_mem;
  int64_t free_mem = 0;
  if (run.has_gpu_memory) {
    node_mem.resize(nodes.size());
    for (int n = 0; n < cluster.size(); ++n) {
      node_mem[n] = usable_mem(n);
      free_mem += node_mem[n];
    }
  }
  // GPUs stranded in one dimension, per node and in all.
  std::vector<TargetWorkload::GpuStranding> node_strand;
  TargetWorkload::GpuStranding strand;
  auto stranding = [&](int n) {
    if (nodes[n].gpu_memory_mib <= 0) return TargetWorkload::GpuStranding{};
    const NodeState& st = cluster.state(n);
    return workload.NodeGpuStranding(cluster.model_id(n), st.gpu_free.data(),
                                     st.gpu_mem_free.data(), nodes[n].gpu_count);
  };
  auto add_strand = [&](const TargetWorkload::GpuStranding& g, int sign) {
    strand.compute_no_memory += sign * g.compute_no_memory;
    strand.memory_no_compute += sign * g.memory_no_compute;
  };
  if (run.has_gpu_memory) {
    node_strand.resize(nodes.size());
    for (int n = 0; n < cluster.size(); ++n) {
      node_strand[n] = stranding(n);
      add_strand(node_strand[n], 1);
    }
  }
  int64_t before_free_mem = free_mem;
  int before_failed = 0;
  TargetWorkload::GpuStranding before_strand = strand;

  std::vector<double> node_frag(nodes.size());
  double frag = 0;
  for (int n = 0; n < cluster.size(); ++n) {
    node_frag[n] = workload.NodeFragmentation(cluster, n);
    frag += node_frag[n];
  }

  const int max_level = static_cast<int>(options.max_arrival_pct);
  int next_level = 0;
  // The state after the pods submitted so far, and before the last of them.
  int64_t arrived = 0;
  int64_t before_arrived = 0;
  int64_t before_allocated = 0;
  double before_frag = frag;
  auto point = [&](double level, double arrived_milli, double allocated, double f, double mem = 0,
                   int failed = 0, TargetWorkload::GpuStranding st = {}) {
    CurvePoint p;
    p.arrival_pct = level;
    p.arrived_pct = capacity > 0 ? 100.0 * arrived_milli / capacity : 0;
    p.allocated_milli = allocated;
    p.unallocated_pct = capacity > 0 ? 100.0 - 100.0 * allocated / capacity : 0;
    p.frag_milli = f;
    const double idle = capacity - allocated;
    p.frag_ratio = idle > 0 ? f / idle : 0;
    if (run.has_gpu_memory) {
      p.unallocated_mem_mib = mem;
      p.unallocated_mem_pct = 100.0 * mem / capacity_mem;
      p.failed = failed;
      p.gpus_compute_no_memory = st.compute_no_memory;
      p.gpus_memory_no_compute = st.memory_no_compute;
    }
    run.curve.push_back(p);
  };
  // Every level reached by `arrived`, each at exactly its arrived workload.
  auto record = [&] {
    const double allocated = static_cast<double>(cluster.allocated_gpu_milli());
    while (next_level <= max_level &&
           static_cast<double>(arrived) * 100.0 >= next_level * capacity) {
      const double target = next_level * capacity / 100.0;  // milli arrived at the level
      const double step = static_cast<double>(arrived - before_arrived);
      double t = 1;  // the share of the crossing pod that has arrived at the level
      if (step > 0) t = std::clamp((target - static_cast<double>(before_arrived)) / step, 0.0, 1.0);
      const double b = static_cast<double>(before_allocated);
      const double bm = static_cast<double>(before_free_mem);
      point(next_level, static_cast<double>(before_arrived) + t * step, b + t * (allocated - b),
            before_frag + t * (frag - before_frag), bm + t * (static_cast<double>(free_mem) - bm),
            t >= 1 ? run.failed : before_failed, t >= 1 ? strand : before_strand);
      ++next_level;
    }
  };
  record();

  const std::vector<std::pair<int, int>> seq =
      InflatedSequence(pods, run.capacity_milli, seed, options.max_arrival_pct);
  if (options.record_placements) run.placements.reserve(seq.size());
  const int64_t total = static_cast<int64_t>(seq.size());
  const int64_t every = std::max<int64_t>(1, options.progress_every);
  for (size_t s = 0; s < seq.size(); ++s) {
    const auto [pod, clone] = seq[s];
    const PodRequest& req = requests[pod];
    before_arrived = arrived;
    before_allocated = cluster.allocated_gpu_milli();
    before_frag = frag;
    before_free_mem = free_mem;
    before_failed = run.failed;
    before_strand = strand;
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
      if (run.has_gpu_memory) {
        free_mem -= node_mem[d.node];
        node_mem[d.node] = usable_mem(d.node);
        free_mem += node_mem[d.node];
        add_strand(node_strand[d.node], -1);
        node_strand[d.node] = stranding(d.node);
        add_strand(node_strand[d.node], 1);
      }
      rec.node = d.node;
      rec.gpus = d.gpus;
    } else {
      ++run.failed;
      if (options.record_placements) rec.reason = FailureReason(d);
    }
    if (options.record_placements) run.placements.push_back(std::move(rec));
    run.max_distinct_states = std::max(run.max_distinct_states, scheduler.distinct_states());
    record();
    if (options.progress && (static_cast<int64_t>(s) + 1) % every == 0) {
      options.progress(static_cast<int64_t>(s) + 1, total);
    }
  }
  run.submitted = static_cast<int>(seq.size());
  // Levels the sequence never reached keep the final state.
  const double allocated = static_cast<double>(cluster.allocated_gpu_milli());
  for (; next_level <= max_level; ++next_level) {
    point(next_level, static_cast<double>(arrived), allocated, frag, static_cast<double>(free_mem),
          run.failed, strand);
  }
  return run;
}

}  // namespace tessera
