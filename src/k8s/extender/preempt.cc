// The Extender's preemption: the preempt verb (kube-scheduler's candidate nodes), the preemption
// filter carries out itself (PreemptionMode::kEvict), and the room held for nominated pods. One
// victim search for both: the pods of the model on each node, the shared search of
// sched/victims.h among the pods of preemptible classes, the PodDisruptionBudgets of the
// cluster as the budget indices it counts. See extender.h.

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <unordered_map>
#include <utility>

#include "k8s/extender/extender.h"
#include "k8s/extender/extender_internal.h"
#include "k8s/extender/metrics.h"
#include "model/fit.h"
#include "sched/victims.h"

namespace tessera::k8s {
namespace {

/// Victim sets Preempt may check in all (spread over the candidate nodes), and at least per node.
constexpr int64_t kPreemptSubsetsPerRequest = 400000;
constexpr int64_t kMinPreemptSubsetsPerNode = 2000;

/// The indices of the budgets in `pdbs` that cover the pod.
std::vector<int> BudgetsOf(const std::vector<PodDisruptionBudget>& pdbs, const PodMeta& pod) {
  std::vector<int> covers;
  for (size_t b = 0; b < pdbs.size(); ++b) {
    if (pdbs[b].Covers(pod.namespace_name, pod.name, pod.labels))
      covers.push_back(static_cast<int>(b));
  }
  return covers;
}

}  // namespace

ExtenderPreemptionResult Extender::Preempt(const ExtenderPreemptionArgs& args) {
  ExtenderPreemptionResult result;
  Result<PodSpec> spec = PodToSpec(args.pod);
  if (!spec.ok()) return result;  // a pod the engine cannot model: no node is offered
  const double now = Now();

  // Candidate nodes and the victims the scheduler proposed on each (by UID; with labels and
  // priority when it sent whole pods).
  std::map<std::string, std::vector<std::pair<VictimCandidate, PodMeta>>> proposed;
  if (args.node_name_to_meta_victims) {
    for (const auto& [node, meta] : *args.node_name_to_meta_victims) {
      auto& list = proposed[node];
      for (const std::string& uid : meta.pod_uids) {
        VictimCandidate c;
        c.id = uid;
        c.start_s = static_cast<int64_t>(std::floor(now));
        list.emplace_back(std::move(c), PodMeta{});
      }
    }
  }
  if (args.node_name_to_victims) {
    for (const auto& [node, victims] : *args.node_name_to_victims) {
      auto& list = proposed[node];
      for (const Pod& pod : victims.pods) {
        VictimCandidate c;
        c.id = PodUid(pod);
        c.priority = pod.priority;
        c.start_s =
            static_cast<int64_t>(std::floor(Rfc3339Seconds(pod.start_timestamp).value_or(now)));
        list.emplace_back(
            std::move(c),
            PodMeta{pod.namespace_name, pod.name, pod.priority, pod.labels, {}, false});
      }
    }
  }

  MutexLock lock(mutex_);
  EnsureModel();
  if (GateLocked()) return result;  // nothing is offered out of sync
  if (options_.preemption == PreemptionMode::kOff) return result;
  const PodRequest request = cluster_->MakeRequest(*spec);
  for (NodeVictims& a :
       VictimsLocked(PodUid(args.pod), args.pod.priority, request, proposed, false)) {
    metrics_->preempt_nodes->Increment();
    metrics_->preempt_victims->Increment(static_cast<double>(a.victims.ids.size()));
    result.node_name_to_meta_victims[cluster_->spec(a.node).name] =
        MetaVictims{std::move(a.victims.ids), a.victims.num_pdb_violations};
  }
  return result;
}

std::vector<NodeVictims> Extender::VictimsLocked(
    const std::string& preemptor_uid, int32_t priority, const PodRequest& request,
    std::map<std::string, std::vector<std::pair<VictimCandidate, PodMeta>>>& proposed,
    bool skip_nominated) {
  const double now = Now();
  std::vector<int32_t> allowed;
  for (const PodDisruptionBudget& pdb : pdbs_) allowed.push_back(pdb.disruptions_allowed);
  // The modelled pods on each candidate node, in one pass over the assignments.
  std::unordered_map<int, PreemptionNode> nodes;
  for (const auto& [name, unused] : proposed) {
    const int node = node_names_.Find(name);
    if (node < 0 || (node_flags_[node] & (kCordoned | kBlocked)) != 0) continue;
    if (skip_nominated) {
      // One preemption per node at a time (as the replay): a node where another pod's
      // preemption is under way is left to it.
      const std::set<std::string>* nominated = pods_.NominatedTo(name);
      if (nominated != nullptr && (nominated->size() > 1 || nominated->count(preemptor_uid) == 0)) {
        continue;
      }
    }
    PreemptionNode& pn = nodes[node];
    pn.gpu_count = cluster_->spec(node).gpu_count;
    pn.model_id = cluster_->model_id(node);
    pn.state = cluster_->state(node);
    pn.topology = cluster_->topology(node);
  }
  // A pod's start for the victim order, in whole seconds: status.startTime, else when this
  // extender bound it, else now (kube-scheduler's GetPodStartTime for a pod not started).
  const auto start_of = [&](const PodRecord* r) {
    const double t = r == nullptr           ? now
                     : r->meta.start_s >= 0 ? r->meta.start_s
                     : r->assumed_s >= 0    ? r->assumed_s
                                            : now;
    return static_cast<int64_t>(std::floor(t));
  };
  const auto candidate = [&](const std::string& uid, const Assignment& a) TESSERA_REQUIRES(mutex_) {
    VictimCandidate c;
    c.id = uid;
    const PodRecord* r = pods_.Find(uid);
    if (r != nullptr) {
      c.priority = r->meta.priority;
      c.budgets = BudgetsOf(pdbs_, r->meta);
    }
    c.start_s = start_of(r);
    c.modelled = true;
    c.request = a.request;
    c.gpus = a.gpus;
    return c;
  };
  // A pod of a class that may not be preempted (ExtenderOptions::classes) is no candidate, as
  // in the replay: it stays, and what it holds stays taken. Nor is a pod already terminating
  // (an earlier preemption's victim): it is leaving anyway.
  const auto preemptible = [&](const std::string& uid) TESSERA_REQUIRES(mutex_) {
    const PodRecord* r = pods_.Find(uid);
    if (r == nullptr) return true;
    if (r->meta.deleting || evicting_.count(uid) != 0) return false;
    const int cls = ClassOfRecord(*r);
    return cls < 0 || options_.classes.classes[static_cast<size_t>(cls)].preemptible;
  };
  for (const auto& [uid, a] : assignments_) {
    auto it = nodes.find(a.node);
    if (it != nodes.end() && uid != preemptor_uid && preemptible(uid)) {
      it->second.pods.push_back(candidate(uid, a));
    }
  }
  // The exhaustive search shares one budget per request, so that a long candidate list stays
  // well inside kube-scheduler's httpTimeout (about a microsecond per victim set checked).
  PreemptionOptions search;
  search.max_subsets = std::clamp<int64_t>(
      kPreemptSubsetsPerRequest / static_cast<int64_t>(std::max<size_t>(nodes.size(), 1)),
      kMinPreemptSubsetsPerNode, search.max_subsets);
  std::vector<NodeVictims> answers;
  for (auto& [name, sent] : proposed) {
    const int node = node_names_.Find(name);
    if (node < 0) continue;
    auto pn = nodes.find(node);
    if (pn == nodes.end()) continue;
    // A proposed victim the model holds on this node frees what the model says it holds.
    std::vector<VictimCandidate> required;
    for (auto& [c, meta] : sent) {
      auto a = assignments_.find(c.id);
      if (a != assignments_.end() && a->second.node == node) {
        required.push_back(candidate(c.id, a->second));
      } else {
        c.budgets = BudgetsOf(pdbs_, meta);
        required.push_back(std::move(c));
      }
    }
    std::optional<VictimSet> chosen =
        SelectVictims(pn->second, required, request, priority, allowed, search);
    // kube-scheduler fails the whole preemption on a node without victims ("expected at least
    // one victim pod on node"): a node where the pod fits already is not offered.
    if (!chosen || chosen->ids.empty()) continue;
    answers.push_back(NodeVictims{node, engine_->rank(node), std::move(*chosen)});
  }
  return answers;
}

void Extender::PreemptAtFilterLocked(const Pod& pod, const PodRequest& request,
                                     const std::vector<int>& nodes) {
  const std::string uid = PodUid(pod);
  const PodRecord* self = pods_.Find(uid);
  if (self == nullptr || self->phase != PodPhase::kSeen || pod.preempt_never) return;
  // kube-scheduler's PodEligibleToPreemptOthers: a pod nominated to a node where pods of lower
  // priority are still terminating by preemption waits for them rather than preempt again.
  if (const std::string& nominated = self->meta.nominated_node; !nominated.empty()) {
    for (const std::string& other : pods_.OnNode(nominated)) {
      const PodRecord* r = pods_.Find(other);
      if (r == nullptr || r->meta.priority >= pod.priority) continue;
      if ((r->meta.deleting && r->meta.victim) || evicting_.count(other) != 0) return;
    }
  }
  std::map<std::string, std::vector<std::pair<VictimCandidate, PodMeta>>> proposed;
  for (int node : nodes) proposed[cluster_->spec(node).name];
  std::vector<NodeVictims> answers = VictimsLocked(uid, pod.priority, request, proposed, true);
  const int chosen = ChoosePreemptionNode(answers);
  if (chosen < 0) return;
  const NodeVictims& a = answers[static_cast<size_t>(chosen)];
  Eviction e;
  e.preemptor = PodRef{pod.namespace_name, pod.name, uid};
  e.node = cluster_->spec(a.node).name;
  for (const std::string& v : a.victims.ids) {
    const PodRecord* r = pods_.Find(v);
    if (r == nullptr) continue;
    e.victims.push_back(PodRef{r->meta.namespace_name, r->meta.name, v});
    evicting_.insert(v);
  }
  if (e.victims.empty()) return;
  metrics_->preempt_nodes->Increment();
  metrics_->preempt_victims->Increment(static_cast<double>(e.victims.size()));
  // Held from now on (FitsBesideNominatedLocked), before the API shows the nomination.
  pods_.Nominate(uid, e.node);
  own_nominations_[uid] = e.node;
  evictor_->Enqueue(std::move(e));
}

bool Extender::FitsBesideNominatedLocked(int node, const std::string& name, const std::string& uid,
                                         int32_t priority, const PodRequest& request) const {
  const std::set<std::string>* nominated = pods_.NominatedTo(name);
  if (nominated == nullptr) return true;
  std::vector<const PodRecord*> holders;
  for (const std::string& other : *nominated) {
    if (other == uid) continue;
    const PodRecord* r = pods_.Find(other);
    if (r != nullptr && r->opaque.empty() && r->meta.priority >= priority) holders.push_back(r);
  }
  if (holders.empty()) return true;
  std::stable_sort(holders.begin(), holders.end(), [](const PodRecord* a, const PodRecord* b) {
    return a->meta.priority > b->meta.priority;
  });
  const NodeSpec& spec = cluster_->spec(node);
  const int model = cluster_->model_id(node);
  const GpuTopology* topology = cluster_->topology(node);
  NodeState state = cluster_->state(node);
  // Pods of the node on their way out by preemption (marked, or being deleted), by priority.
  std::vector<int32_t> leaving;
  for (const std::string& other : pods_.OnNode(name)) {
    const PodRecord* r = pods_.Find(other);
    if (r != nullptr && (r->meta.victim || r->meta.deleting || evicting_.count(other) != 0)) {
      leaving.push_back(r->meta.priority);
    }
  }
  for (const PodRecord* r : holders) {
    // While its victims (pods of lower priority leaving the node) still hold its room, a
    // nominee holds nothing more: the room it waits for is taken until they are gone, and the
    // rest of the node is anyone's (as in the replay, where the preemptor takes its victims'
    // GPUs when their grace period ends). Once they are gone it holds its room where it fits.
    if (std::any_of(leaving.begin(), leaving.end(),
                    [&](int32_t p) { return p < r->meta.priority; })) {
      continue;
    }
    const PodRequest held = cluster_->MakeRequest(r->spec);
    if (CheckFit(spec.gpu_count, model, state, held, topology) != FitReason::kFits) continue;
    state.cpu_left -= held.cpu_milli;
    state.memory_left -= held.memory_mib;
    if (held.IsCpuOnly()) continue;
    const GpuSet gpus = DefaultGpuChoice(spec.gpu_count, state, held, topology);
    for (GpuSet g = gpus; g != 0; g &= g - 1) {
      const int i = std::countr_zero(g);
      state.gpu_free[i] -= held.gpu_milli;
      if (held.gpu_memory_mib > 0)
        state.gpu_mem_free[i] -= static_cast<int32_t>(held.gpu_memory_mib);
    }
  }
  return CheckFit(spec.gpu_count, model, state, request, topology) == FitReason::kFits;
}

void Extender::SetDisruptionBudgets(std::vector<PodDisruptionBudget> pdbs) {
  MutexLock lock(mutex_);
  pdbs_ = std::move(pdbs);
}

}  // namespace tessera::k8s
