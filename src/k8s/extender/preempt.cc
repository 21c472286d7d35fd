// The Extender's preempt: kube-scheduler's candidate nodes, the pods of the model on each, and
// the shared victim search (sched/victims.h) among the pods of preemptible classes; the
// PodDisruptionBudgets of the cluster become the budget indices the search counts. See
// extender.h.

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>
#include <utility>

#include "k8s/extender/extender.h"
#include "k8s/extender/extender_internal.h"
#include "k8s/extender/metrics.h"
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
  const std::string preemptor_uid = PodUid(args.pod);
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

  std::lock_guard<std::mutex> lock(mutex_);
  EnsureModel();
  if (!GateLocked().empty()) return result;  // nothing is offered out of sync
  const PodRequest request = cluster_->MakeRequest(*spec);
  std::vector<int32_t> allowed;
  for (const PodDisruptionBudget& pdb : pdbs_) allowed.push_back(pdb.disruptions_allowed);
  // The modelled pods on each candidate node, in one pass over the assignments.
  std::unordered_map<int, PreemptionNode> nodes;
  for (const auto& [name, unused] : proposed) {
    const int node = node_names_.Find(name);
    if (node < 0 || (node_flags_[node] & (kCordoned | kBlocked)) != 0) continue;
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
  const auto candidate = [&](const std::string& uid, const Assignment& a) {
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
  // in the replay: it stays, and what it holds stays taken.
  const auto preemptible = [&](const std::string& uid) {
    const PodRecord* r = pods_.Find(uid);
    if (r == nullptr) return true;
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
        SelectVictims(pn->second, required, request, args.pod.priority, allowed, search);
    // kube-scheduler fails the whole preemption on a node without victims ("expected at least
    // one victim pod on node"): a node where the pod fits already is not offered.
    if (!chosen || chosen->ids.empty()) continue;
    metrics_->preempt_nodes->Increment();
    metrics_->preempt_victims->Increment(static_cast<double>(chosen->ids.size()));
    result.node_name_to_meta_victims[name] =
        MetaVictims{std::move(chosen->ids), chosen->num_pdb_violations};
  }
  return result;
}

void Extender::SetDisruptionBudgets(std::vector<PodDisruptionBudget> pdbs) {
  std::lock_guard<std::mutex> lock(mutex_);
  pdbs_ = std::move(pdbs);
}

}  // namespace tessera::k8s
