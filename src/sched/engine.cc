#include "sched/engine.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "util/rng.h"

namespace tessera {
namespace {

// Independent random streams of one seed: the node order, and the scheduler's own draws.
constexpr uint64_t kNodeOrderStream = 0x6e6f64652d6f7264ULL;
constexpr uint64_t kSchedulerStream = 0x73636865642d726eULL;

}  // namespace

std::vector<int> TieOrder(size_t node_count, uint64_t seed) {
  std::vector<int> order(node_count);
  std::iota(order.begin(), order.end(), 0);
  Rng rng(seed ^ kNodeOrderStream);
  rng.Shuffle(order);
  return order;
}

uint64_t SchedulerSeed(uint64_t seed) { return seed ^ kSchedulerStream; }

bool IsPolicyName(const std::string& name) {
  const std::vector<std::string>& known = PolicyNames();
  return std::find(known.begin(), known.end(), name) != known.end();
}

std::string KnownPolicies() {
  std::string known;
  for (const std::string& n : PolicyNames()) known += (known.empty() ? "" : ", ") + n;
  return known;
}

Engine::Engine(std::vector<NodeSpec> nodes, uint64_t seed) : cluster_(std::move(nodes)) {
  order_ = TieOrder(static_cast<size_t>(cluster_.size()), seed);
  rank_.resize(order_.size());
  for (size_t r = 0; r < order_.size(); ++r) rank_[order_[r]] = static_cast<int>(r);
}

void Engine::Start(uint64_t seed) {
  scheduler_ = std::make_unique<Scheduler>(&cluster_, policy_, order_, SchedulerSeed(seed));
}

Result<std::unique_ptr<Engine>> Engine::Create(std::vector<NodeSpec> nodes,
                                               const std::vector<PodSpec>& pods,
                                               const std::string& policy, uint64_t seed) {
  std::unique_ptr<Engine> e(new Engine(std::move(nodes), seed));
  if (pods.empty()) {
    TargetClass whole_gpu;
    whole_gpu.gpu_milli = kMilliPerGpu;
    whole_gpu.gpu_count = 1;
    whole_gpu.probability = 1;
    whole_gpu.count = 1;
    e->own_workload_ = std::make_unique<TargetWorkload>(TargetWorkload::FromClasses({whole_gpu}));
  } else {
    e->own_workload_ = std::make_unique<TargetWorkload>(TargetWorkload::FromPods(pods));
  }
  e->own_workload_->Resolve(e->cluster_);
  e->workload_ = e->own_workload_.get();
  PolicyContext context;
  context.workload = e->workload_;
  e->own_policy_ = MakePolicy(policy, context);
  if (e->own_policy_ == nullptr) {
    return Error{"unknown policy \"" + policy + "\" (known: " + KnownPolicies() + ")"};
  }
  e->policy_ = e->own_policy_.get();
  e->Start(seed);
  return e;
}

std::unique_ptr<Engine> Engine::Borrow(std::vector<NodeSpec> nodes, const Policy& policy,
                                       const TargetWorkload* workload, uint64_t seed) {
  std::unique_ptr<Engine> e(new Engine(std::move(nodes), seed));
  e->workload_ = workload;
  e->policy_ = &policy;
  e->Start(seed);
  return e;
}

}  // namespace tessera
