#include "k8s/extender/preemptor.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <unordered_map>
#include <utility>

#include "k8s/extender/extender_internal.h"
#include "model/fit.h"

namespace tessera::k8s {
namespace {

/// Victim sets a search may check in all (spread over the candidate nodes), and at least per
/// node.
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

ProposedVictims Preemptor::Proposed(const ExtenderPreemptionArgs& args, double now) {
  ProposedVictims proposed;
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
  return proposed;
}

std::vector<NodeVictims> Preemptor::Victims(const ClusterModel& model,
                                            const std::string& preemptor_uid, int32_t priority,
                                            const PodRequest& request, ProposedVictims& proposed,
                                            bool skip_nominated, double now) const {
  const Cluster& cluster = model.cluster();
  const PodStates& pods = model.pods();
  std::vector<int32_t> allowed;
  for (const PodDisruptionBudget& pdb : pdbs_) allowed.push_back(pdb.disruptions_allowed);
  // The modelled pods on each candidate node, in one pass over the assignments.
  std::unordered_map<int, PreemptionNode> nodes;
  for (const auto& [name, unused] : proposed) {
    const int node = model.names().Find(name);
    if (node < 0 || (model.flags(node) & (kCordoned | kBlocked)) != 0) continue;
    if (skip_nominated) {
      // One preemption per node at a time (as the replay): a node where another pod's
      // preemption is under way is left to it.
      const std::set<std::string>* nominated = pods.NominatedTo(name);
      if (nominated != nullptr && (nominated->size() > 1 || nominated->count(preemptor_uid) == 0)) {
        continue;
      }
    }
    PreemptionNode& pn = nodes[node];
    pn.gpu_count = cluster.spec(node).gpu_count;
    pn.model_id = cluster.model_id(node);
    pn.state = cluster.state(node);
    pn.topology = cluster.topology(node);
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
  const auto candidate = [&](const std::string& uid, const ClusterModel::Assignment& a) {
    VictimCandidate c;
    c.id = uid;
    const PodRecord* r = pods.Find(uid);
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
  const auto preemptible = [&](const std::string& uid) {
    const PodRecord* r = pods.Find(uid);
    if (r == nullptr) return true;
    if (r->meta.deleting || evicting_.count(uid) != 0) return false;
    const int cls = ClassOfRecord(classes_, *r);
    return cls < 0 || classes_.classes[static_cast<size_t>(cls)].preemptible;
  };
  for (const auto& [uid, a] : model.assignments()) {
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
    const int node = model.names().Find(name);
    if (node < 0) continue;
    auto pn = nodes.find(node);
    if (pn == nodes.end()) continue;
    std::vector<VictimCandidate> required;
    for (auto& [c, meta] : sent) {
      auto a = model.assignments().find(c.id);
      if (a != model.assignments().end() && a->second.node == node) {
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
    answers.push_back(NodeVictims{node, model.engine().rank(node), std::move(*chosen)});
  }
  return answers;
}

std::optional<Eviction> Preemptor::AtFilter(ClusterModel& model, const Pod& pod,
                                            const PodRequest& request,
                                            const std::vector<int>& nodes, double now) {
  const std::string uid = PodUid(pod);
  const PodStates& pods = model.pods();
  const PodRecord* self = pods.Find(uid);
  if (self == nullptr || self->phase != PodPhase::kSeen || pod.preempt_never) return {};
  // kube-scheduler's PodEligibleToPreemptOthers: a pod nominated to a node where pods of lower
  // priority are still terminating by preemption waits for them rather than preempt again.
  if (const std::string& nominated = self->meta.nominated_node; !nominated.empty()) {
    for (const std::string& other : pods.OnNode(nominated)) {
      const PodRecord* r = pods.Find(other);
      if (r == nullptr || r->meta.priority >= pod.priority) continue;
      if ((r->meta.deleting && r->meta.victim) || evicting_.count(other) != 0) return {};
    }
  }
  ProposedVictims proposed;
  for (int node : nodes) proposed[model.cluster().spec(node).name];
  std::vector<NodeVictims> answers =
      Victims(model, uid, pod.priority, request, proposed, true, now);
  const int chosen = ChoosePreemptionNode(answers);
  if (chosen < 0) return {};
  const NodeVictims& a = answers[static_cast<size_t>(chosen)];
  Eviction e;
  e.preemptor = PodRef{pod.namespace_name, pod.name, uid};
  e.node = model.cluster().spec(a.node).name;
  for (const std::string& v : a.victims.ids) {
    const PodRecord* r = pods.Find(v);
    if (r == nullptr) continue;
    e.victims.push_back(PodRef{r->meta.namespace_name, r->meta.name, v});
    evicting_.insert(v);
  }
  if (e.victims.empty()) return {};
  // Held from now on (FitsBesideNominated), before the API shows the nomination.
  model.Nominate(uid, e.node);
  own_nominations_[uid] = e.node;
  return e;
}

bool Preemptor::FitsBesideNominated(const ClusterModel& model, int node, const std::string& name,
                                    const std::string& uid, int32_t priority,
                                    const PodRequest& request) const {
  const PodStates& pods = model.pods();
  const std::set<std::string>* nominated = pods.NominatedTo(name);
  if (nominated == nullptr) return true;
  std::vector<const PodRecord*> holders;
  for (const std::string& other : *nominated) {
    if (other == uid) continue;
    const PodRecord* r = pods.Find(other);
    if (r != nullptr && r->opaque.empty() && r->meta.priority >= priority) holders.push_back(r);
  }
  if (holders.empty()) return true;
  std::stable_sort(holders.begin(), holders.end(), [](const PodRecord* a, const PodRecord* b) {
    return a->meta.priority > b->meta.priority;
  });
  const Cluster& cluster = model.cluster();
  const NodeSpec& spec = cluster.spec(node);
  const int model_id = cluster.model_id(node);
  const GpuTopology* topology = cluster.topology(node);
  NodeState state = cluster.state(node);
  // Pods of the node on their way out by preemption (marked, or being deleted), by priority.
  std::vector<int32_t> leaving;
  for (const std::string& other : pods.OnNode(name)) {
    const PodRecord* r = pods.Find(other);
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
    const PodRequest held = cluster.MakeRequest(r->spec);
    if (CheckFit(spec.gpu_count, model_id, state, held, topology) != FitReason::kFits) continue;
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
  return CheckFit(spec.gpu_count, model_id, state, request, topology) == FitReason::kFits;
}

void Preemptor::KeepOwnNomination(const std::string& uid, PodRecord* record) {
  auto it = own_nominations_.find(uid);
  if (it == own_nominations_.end()) return;
  if (record->meta.nominated_node.empty()) {
    record->meta.nominated_node = it->second;
  } else {
    own_nominations_.erase(it);
  }
}

void Preemptor::NotNominated(const Eviction& e) {
  own_nominations_.erase(e.preemptor.uid);
  for (const PodRef& v : e.victims) evicting_.erase(v.uid);
}

}  // namespace tessera::k8s
