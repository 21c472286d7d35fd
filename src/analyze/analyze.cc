#include "analyze/analyze.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>
#include <utility>

#include "k8s/extender/extender_protocol.h"
#include "model/fit.h"

namespace tessera::analyze {
namespace {

int IdleOf(const Cluster& c, int node) { return IdleGpus(c.state(node), c.spec(node).gpu_count); }

/// GPUs of `node` on which `pod`'s share fits now.
int GpusWithRoom(const Cluster& c, int node, const PodRequest& pod) {
  int n = 0;
  for (int g = 0; g < c.spec(node).gpu_count; ++g) n += GpuHasRoom(c.state(node), g, pod) ? 1 : 0;
  return n;
}

/// Whether a node offers every device-plugin family the pod asks for (the kubelet drops
/// extended resources a node does not advertise).
bool FamiliesOk(const ModelPod& p, const ModelNode& n) {
  return (p.families & n.families) == p.families;
}

/// Statically possible: the node may ever host the pod (model, GPU count, families, usable).
bool StaticOk(const Model& m, const ModelPod& p, int node) {
  const Cluster& c = m.cluster;
  if (!m.nodes[node].usable || !FamiliesOk(p, m.nodes[node])) return false;
  const FitReason r = c.Check(node, p.target_request);
  return r != FitReason::kGpuModel && r != FitReason::kGpuCount;
}

/// Pods with equal keys are alike for every filter: the request with its model constraint and
/// the device-plugin families.
using ShapeKey = std::tuple<int64_t, int64_t, int32_t, int32_t, int64_t, ModelMask, uint8_t>;
ShapeKey KeyOf(const ModelPod& p) {
  const PodRequest& r = p.target_request;
  return {r.cpu_milli,      r.memory_mib, r.gpu_count, r.gpu_milli,
          r.gpu_memory_mib, r.models,     p.families};
}

std::vector<int> GpuList(GpuSet set) {
  std::vector<int> out;
  for (int g = 0; g < kMaxGpusPerNode; ++g) {
    if (set & (GpuSet{1} << g)) out.push_back(g);
  }
  return out;
}

/// What a pod lacks on a node: GPUs with room, CPU, memory; ordered for "closest".
struct Shortfall {
  int gpus = 0;
  int64_t cpu = 0;
  int64_t memory = 0;
  bool Fits() const { return gpus == 0 && cpu == 0 && memory == 0; }
  bool operator<(const Shortfall& o) const {
    if (gpus != o.gpus) return gpus < o.gpus;
    return cpu / 1000 + memory / 1024 < o.cpu / 1000 + o.memory / 1024;
  }
};

Shortfall ShortfallOf(const Cluster& c, int node, const PodRequest& pod) {
  Shortfall s;
  const NodeState& st = c.state(node);
  s.cpu = std::max<int64_t>(0, pod.cpu_milli - st.cpu_left);
  s.memory = std::max<int64_t>(0, pod.memory_mib - st.memory_left);
  if (!pod.IsCpuOnly()) s.gpus = std::max(0, pod.gpu_count - GpusWithRoom(c, node, pod));
  return s;
}

/// The working state of the plan: a copy of the cluster with pods moved in it.
class Planner {
 public:
  Planner(const Model& m, const PlanOptions& o)
      : m_(m), o_(o), c_(m.cluster), moved_(m.pods.size(), 0), pods_on_(m.cluster.size()) {
    node_of_.resize(m.pods.size(), -1);
    gpus_of_.resize(m.pods.size(), 0);
    for (size_t i = 0; i < m.pods.size(); ++i) {
      if (!m.pods[i].placed) continue;
      node_of_[i] = m.pods[i].node;
      gpus_of_[i] = m.pods[i].gpus;
      pods_on_[m.pods[i].node].push_back(static_cast<int>(i));
    }
    frag_.resize(c_.size());
    for (int n = 0; n < c_.size(); ++n) {
      frag_[n] = m.workload.NodeFragmentation(c_, n);
      idle_ += IdleOf(c_, n);
    }
    protected_.assign(c_.size(), 0);
    drained_.assign(c_.size(), 0);
    for (const ModelPdb& b : m.pdbs) pdb_left_.push_back(b.allowed);
    for (size_t i = 0; i < m.pods.size(); ++i) {
      const ModelPod& p = m.pods[i];
      if (p.pending && p.gpu) pending_.push_back(static_cast<int>(i));
    }
    std::stable_sort(pending_.begin(), pending_.end(), [&](int a, int b) {
      const ModelPod& x = m.pods[a];
      const ModelPod& y = m.pods[b];
      if (x.priority != y.priority) return x.priority > y.priority;
      return x.request.TotalGpuMilli() > y.request.TotalGpuMilli();
    });
  }

  Plan Run();
  const Cluster& cluster() const { return c_; }
  const std::vector<char>& touched() const { return touched_; }

 private:
  struct Step {
    int pod;
    int from;
    GpuSet from_gpus;
    int to;
    GpuSet to_gpus;
    int gpus_freed;
    double frag_removed;
  };
  struct Action {
    enum Kind { kMakeRoom, kDrain, kShare } kind = kDrain;
    std::vector<Step> steps;
    int pending = -1;  // make-room: the pending pod, placed on `node` on `gpus` after the steps
    int node = -1;
    GpuSet gpus = 0;
    double benefit = 0;
    double cost = 0;
    std::string why;
  };

  // Moves pod `p` to `node`/`gpus`; returns the step with its effect.
  Step Apply(int p, int node, GpuSet gpus) {
    const ModelPod& pod = m_.pods[p];
    Step s{p, node_of_[p], gpus_of_[p], node, gpus, 0, 0};
    const int idle_before = idle_;
    const double frag_before = frag_[s.from] + frag_[node];
    idle_ -= IdleOf(c_, s.from) + IdleOf(c_, node);
    c_.Release(s.from, pod.request, pod.request.IsCpuOnly() ? 0 : s.from_gpus);
    c_.Allocate(node, pod.request, pod.request.IsCpuOnly() ? 0 : gpus);
    idle_ += IdleOf(c_, s.from) + IdleOf(c_, node);
    frag_[s.from] = m_.workload.NodeFragmentation(c_, s.from);
    frag_[node] = m_.workload.NodeFragmentation(c_, node);
    auto& from_list = pods_on_[s.from];
    from_list.erase(std::find(from_list.begin(), from_list.end(), p));
    pods_on_[node].push_back(p);
    node_of_[p] = node;
    gpus_of_[p] = gpus;
    s.gpus_freed = idle_ - idle_before;
    s.frag_removed = frag_before - (frag_[s.from] + frag_[node]);
    return s;
  }
  void Undo(const Step& s) {
    const ModelPod& pod = m_.pods[s.pod];
    idle_ -= IdleOf(c_, s.from) + IdleOf(c_, s.to);
    c_.Release(s.to, pod.request, pod.request.IsCpuOnly() ? 0 : s.to_gpus);
    c_.Allocate(s.from, pod.request, pod.request.IsCpuOnly() ? 0 : s.from_gpus);
    idle_ += IdleOf(c_, s.from) + IdleOf(c_, s.to);
    frag_[s.from] = m_.workload.NodeFragmentation(c_, s.from);
    frag_[s.to] = m_.workload.NodeFragmentation(c_, s.to);
    auto& to_list = pods_on_[s.to];
    to_list.erase(std::find(to_list.begin(), to_list.end(), s.pod));
    pods_on_[s.from].push_back(s.pod);
    node_of_[s.pod] = s.from;
    gpus_of_[s.pod] = s.from_gpus;
  }
  void UndoAll(const std::vector<Step>& steps) {
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) Undo(*it);
  }
  void Place(int p, int node, GpuSet gpus, int sign) {
    const ModelPod& pod = m_.pods[p];
    idle_ -= IdleOf(c_, node);
    if (sign > 0) {
      c_.Allocate(node, pod.target_request, gpus);
    } else {
      c_.Release(node, pod.target_request, gpus);
    }
    idle_ += IdleOf(c_, node);
    frag_[node] = m_.workload.NodeFragmentation(c_, node);
  }

  bool Movable(int p) const { return m_.pods[p].movable && !moved_[p]; }

  // The best node other than the pod's own (and `avoid`) for a moved pod: for a share, the
  // tightest partly used GPU with room, else the node with the fewest idle GPUs; for whole
  // GPUs, the node left with the fewest idle GPUs, partly used nodes before idle ones.
  // `shared_only`: only a partly used GPU with room will do. -1 if none.
  int FindTarget(int p, int avoid, bool shared_only, GpuSet* gpus) const {
    const ModelPod& pod = m_.pods[p];
    int best = -1;
    int64_t best_key = std::numeric_limits<int64_t>::max();
    for (int n = 0; n < c_.size(); ++n) {
      if (n == node_of_[p] || n == avoid || protected_[n] || drained_[n]) continue;
      if (!m_.nodes[n].usable || !FamiliesOk(pod, m_.nodes[n])) continue;
      if (c_.Check(n, pod.target_request) != FitReason::kFits) continue;
      const NodeState& st = c_.state(n);
      const int count = c_.spec(n).gpu_count;
      const int idle = IdleGpus(st, count);
      int64_t key;
      if (pod.request.IsSharing()) {
        const int g = TightestUsedGpuWithRoom(st, count, pod.request);
        if (g >= 0) {
          key = st.gpu_free[g] - pod.request.gpu_milli;
        } else {
          if (shared_only) continue;
          key = 1'000'000 + int64_t{idle} * 1000 + (idle == count ? 500 : 0);
        }
      } else {
        key = int64_t{idle - pod.request.gpu_count} * 1000 + (idle == count ? 100'000 : 0);
      }
      if (key < best_key) {
        best_key = key;
        best = n;
      }
    }
    if (best >= 0) {
      *gpus =
          DefaultGpuChoice(c_.spec(best).gpu_count, c_.state(best), pod.request, c_.topology(best));
    }
    return best;
  }

  // Whether the moves of `steps` (pods leaving their nodes) stay within every cap and budget;
  // `limit` gets the cap that stops them.
  bool WithinCaps(const std::vector<Step>& steps, std::string* limit) const {
    if (total_ + static_cast<int>(steps.size()) > o_.max_moves) {
      *limit = "total moves cap (" + std::to_string(o_.max_moves) + ")";
      return false;
    }
    std::map<int, int> node;
    std::map<std::string, int> ns;
    std::map<std::string, int> wl;
    std::map<int, int> pdb;
    for (const Step& s : steps) {
      const ModelPod& p = m_.pods[s.pod];
      if (count(per_node_, s.from) + ++node[s.from] > o_.max_moves_per_node) {
        *limit = "per-node cap on " + m_.nodes[s.from].name;
        return false;
      }
      if (count(per_ns_, p.namespace_name) + ++ns[p.namespace_name] > o_.max_moves_per_namespace) {
        *limit = "per-namespace cap on " + p.namespace_name;
        return false;
      }
      if (count(per_wl_, p.workload) + ++wl[p.workload] > o_.max_moves_per_workload) {
        *limit = "per-workload cap on " + p.workload;
        return false;
      }
      for (int b : p.pdbs) {
        if (++pdb[b] > pdb_left_[b]) {
          *limit = "PodDisruptionBudget " + m_.pdbs[b].key;
          return false;
        }
      }
    }
    return true;
  }
  // Whether moving pod `p` off `from` after `steps` stays within the caps and budgets.
  bool CapsAllow(const std::vector<Step>& steps, int p, int from) const {
    std::vector<Step> more = steps;
    more.push_back(Step{p, from, 0, -1, 0, 0, 0});
    std::string unused;
    return WithinCaps(more, &unused);
  }
  template <typename K>
  static int count(const std::map<K, int>& m, const K& k) {
    auto it = m.find(k);
    return it == m.end() ? 0 : it->second;
  }

  double CostOf(const std::vector<Step>& steps) const {
    double c = 0;
    for (const Step& s : steps) c += m_.pods[s.pod].cost;
    return c;
  }
  static double Gain(const std::vector<Step>& steps) {
    double g = 0;
    for (const Step& s : steps) g += s.gpus_freed + s.frag_removed / kMilliPerGpu;
    return g;
  }

  // The cheapest way found to make room for pending pod `q` on node `t`; false if none.
  bool TryMakeRoom(int q, int t, Action* out) {
    const ModelPod& pod = m_.pods[q];
    std::vector<int> candidates;
    for (int p : pods_on_[t]) {
      if (Movable(p)) candidates.push_back(p);
    }
    std::stable_sort(candidates.begin(), candidates.end(), [&](int a, int b) {
      if (m_.pods[a].cost != m_.pods[b].cost) return m_.pods[a].cost < m_.pods[b].cost;
      return m_.pods[a].request.TotalGpuMilli() > m_.pods[b].request.TotalGpuMilli();
    });
    std::vector<Step> steps;
    Shortfall need = ShortfallOf(c_, t, pod.target_request);
    for (int p : candidates) {
      if (need.Fits() && c_.Check(t, pod.target_request) == FitReason::kFits) break;
      if (static_cast<int>(steps.size()) >= o_.max_victims) break;
      if (!CapsAllow(steps, p, t)) continue;
      GpuSet gpus = 0;
      const int to = FindTarget(p, t, false, &gpus);
      if (to < 0) continue;
      steps.push_back(Apply(p, to, gpus));
      const Shortfall after = ShortfallOf(c_, t, pod.target_request);
      if (!(after < need) &&
          !(need.gpus == after.gpus && (after.cpu < need.cpu || after.memory < need.memory))) {
        Undo(steps.back());
        steps.pop_back();
        continue;
      }
      need = after;
    }
    const bool fits = c_.Check(t, pod.target_request) == FitReason::kFits && !steps.empty();
    if (fits) {
      out->kind = Action::kMakeRoom;
      out->steps = steps;
      out->pending = q;
      out->node = t;
      out->gpus =
          DefaultGpuChoice(c_.spec(t).gpu_count, c_.state(t), pod.target_request, c_.topology(t));
      out->cost = CostOf(steps);
      out->benefit = Gain(steps) + static_cast<double>(pod.request.TotalGpuMilli()) / kMilliPerGpu;
      out->why = "make room for " + pod.key + " on " + m_.nodes[t].name;
    }
    UndoAll(steps);
    return fits;
  }

  // Moves every GPU pod off node `s`; false if one of them is not movable or finds no room.
  bool TryDrain(int s, Action* out) {
    std::vector<int> pods;
    for (int p : pods_on_[s]) {
      if (!m_.pods[p].gpu) continue;
      if (!Movable(p)) return false;
      pods.push_back(p);
    }
    if (pods.empty()) return false;
    std::stable_sort(pods.begin(), pods.end(), [&](int a, int b) {
      return m_.pods[a].request.TotalGpuMilli() > m_.pods[b].request.TotalGpuMilli();
    });
    std::vector<Step> steps;
    bool ok = true;
    for (int p : pods) {
      if (!CapsAllow(steps, p, s)) {
        ok = false;
        break;
      }
      GpuSet gpus = 0;
      const int to = FindTarget(p, s, false, &gpus);
      if (to < 0) {
        ok = false;
        break;
      }
      steps.push_back(Apply(p, to, gpus));
    }
    int freed = 0;
    for (const Step& st : steps) freed += st.gpus_freed;
    ok = ok && freed > 0;
    if (ok) {
      out->kind = Action::kDrain;
      out->steps = steps;
      out->cost = CostOf(steps);
      out->benefit = Gain(steps);
      out->why = "empty the GPUs of " + m_.nodes[s].name;
    }
    UndoAll(steps);
    return ok && out->benefit > 0;
  }

  // Moves a share that is alone on its GPU onto a partly used GPU elsewhere.
  bool TryShare(int p, Action* out) {
    if (!CapsAllow({}, p, node_of_[p])) return false;
    GpuSet gpus = 0;
    const int to = FindTarget(p, -1, true, &gpus);
    if (to < 0) return false;
    std::vector<Step> steps = {Apply(p, to, gpus)};
    const bool ok = steps[0].gpus_freed > 0 && Gain(steps) > 0;
    if (ok) {
      out->kind = Action::kShare;
      out->steps = steps;
      out->cost = CostOf(steps);
      out->benefit = Gain(steps);
      out->why = "join a partly used GPU on " + m_.nodes[to].name;
    }
    UndoAll(steps);
    return ok;
  }

  const Model& m_;
  const PlanOptions& o_;
  Cluster c_;
  std::vector<int> node_of_;
  std::vector<GpuSet> gpus_of_;
  std::vector<char> moved_;
  std::vector<std::vector<int>> pods_on_;
  std::vector<double> frag_;
  int idle_ = 0;
  std::vector<char> protected_;  // received room for a pending pod: nothing moves in or out
  std::vector<char> drained_;    // emptied by the plan: nothing moves in
  std::vector<char> touched_;
  std::vector<int> pdb_left_;
  std::map<int, int> per_node_;
  std::map<std::string, int> per_ns_;
  std::map<std::string, int> per_wl_;
  int total_ = 0;
  std::vector<int> pending_;  // GPU pods pending, by priority then size
};

Plan Planner::Run() {
  Plan plan;
  touched_.assign(c_.size(), 0);
  std::set<std::string> limits;
  std::vector<char> done(m_.pods.size(), 0);
  // Pending pods that fit somewhere now need no move.
  for (int q : pending_) {
    for (int n = 0; n < c_.size(); ++n) {
      if (m_.nodes[n].usable && FamiliesOk(m_.pods[q], m_.nodes[n]) &&
          c_.Check(n, m_.pods[q].target_request) == FitReason::kFits) {
        done[q] = 1;
        break;
      }
    }
  }
  int action_id = 0;
  std::set<ShapeKey> given_up;  // shapes no make-room action within the caps exists for
  // A pending pod that fits after the earlier steps (an emptied node) is placed there.
  auto place_fitting = [&] {
    std::set<ShapeKey> fits_nowhere;  // in this state
    for (int q : pending_) {
      if (done[q] == 1 || fits_nowhere.count(KeyOf(m_.pods[q]))) continue;
      bool placed = false;
      for (int n = 0; n < c_.size() && !placed; ++n) {
        const ModelPod& pod = m_.pods[q];
        if (protected_[n] || !m_.nodes[n].usable || !FamiliesOk(pod, m_.nodes[n]) ||
            c_.Check(n, pod.target_request) != FitReason::kFits) {
          continue;
        }
        const GpuSet gpus =
            DefaultGpuChoice(c_.spec(n).gpu_count, c_.state(n), pod.target_request, c_.topology(n));
        Place(q, n, gpus, +1);
        done[q] = 1;
        protected_[n] = touched_[n] = 1;
        plan.placements.push_back(
            {pod.key, m_.nodes[n].name, GpuList(gpus), static_cast<int>(plan.moves.size())});
        placed = true;
      }
      if (!placed) fits_nowhere.insert(KeyOf(m_.pods[q]));
    }
  };
  while (total_ < o_.max_moves) {
    place_fitting();
    std::vector<Action> candidates;
    // Make room for the first few pending pods that fit nowhere.
    int tried = 0;
    std::set<ShapeKey> shapes_tried;  // one pod per shape a round: the others are alike
    for (int q : pending_) {
      const ShapeKey key = KeyOf(m_.pods[q]);
      if (done[q] || tried >= 4 || given_up.count(key) || !shapes_tried.insert(key).second) {
        continue;
      }
      ++tried;
      std::vector<std::pair<Shortfall, int>> nodes;
      for (int n = 0; n < c_.size(); ++n) {
        if (protected_[n] || !StaticOk(m_, m_.pods[q], n)) continue;
        nodes.emplace_back(ShortfallOf(c_, n, m_.pods[q].target_request), n);
      }
      std::stable_sort(nodes.begin(), nodes.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      if (static_cast<int>(nodes.size()) > o_.candidate_nodes) nodes.resize(o_.candidate_nodes);
      bool any = false;
      for (const auto& [shortfall, t] : nodes) {
        Action a;
        if (!TryMakeRoom(q, t, &a)) continue;
        std::string limit;
        if (!WithinCaps(a.steps, &limit)) {
          limits.insert(limit);
          continue;
        }
        any = true;
        candidates.push_back(std::move(a));
      }
      // No way within the caps now (the caps only tighten): no more make-room attempts for
      // it; it is still placed if later steps leave room for it.
      if (!any) given_up.insert(KeyOf(m_.pods[q]));
    }
    // Drain the least used nodes.
    std::vector<std::pair<int64_t, int>> used;
    for (int n = 0; n < c_.size(); ++n) {
      if (protected_[n] || drained_[n] || c_.spec(n).gpu_count == 0) continue;
      int64_t u = 0;
      for (int g = 0; g < c_.spec(n).gpu_count; ++g) u += kMilliPerGpu - c_.state(n).gpu_free[g];
      if (u > 0) used.emplace_back(u, n);
    }
    std::stable_sort(used.begin(), used.end());
    int drains = 0;
    for (const auto& [u, n] : used) {
      if (drains >= o_.candidate_nodes) break;
      Action a;
      bool all_movable = true;
      for (int p : pods_on_[n]) all_movable = all_movable && (!m_.pods[p].gpu || Movable(p));
      if (!all_movable) continue;
      ++drains;
      if (TryDrain(n, &a)) candidates.push_back(std::move(a));
    }
    // Shares alone on their GPU.
    std::vector<std::pair<int32_t, int>> shares;
    for (size_t p = 0; p < m_.pods.size(); ++p) {
      const ModelPod& pod = m_.pods[p];
      if (!Movable(static_cast<int>(p)) || !pod.request.IsSharing()) continue;
      const int n = node_of_[p];
      if (protected_[n] || gpus_of_[p] == 0) continue;
      const int g = std::countr_zero(gpus_of_[p]);
      if (c_.state(n).gpu_free[g] + pod.request.gpu_milli != kMilliPerGpu) continue;
      shares.emplace_back(pod.request.gpu_milli, static_cast<int>(p));
    }
    std::stable_sort(shares.begin(), shares.end());
    if (static_cast<int>(shares.size()) > o_.candidate_shares) shares.resize(o_.candidate_shares);
    for (const auto& [milli, p] : shares) {
      Action a;
      if (TryShare(p, &a)) candidates.push_back(std::move(a));
    }

    // The best ratio of benefit over disruption within the caps.
    int best = -1;
    double best_ratio = 0;
    for (size_t i = 0; i < candidates.size(); ++i) {
      std::string limit;
      if (!WithinCaps(candidates[i].steps, &limit)) {
        limits.insert(limit);
        continue;
      }
      const double ratio = candidates[i].benefit / std::max(1e-9, candidates[i].cost);
      if (candidates[i].benefit > 0 && (best < 0 || ratio > best_ratio + 1e-12)) {
        best = static_cast<int>(i);
        best_ratio = ratio;
      }
    }
    if (best < 0) break;
    const Action& a = candidates[best];
    ++action_id;
    for (const Step& planned : a.steps) {
      const Step s = Apply(planned.pod, planned.to, planned.to_gpus);
      const ModelPod& p = m_.pods[s.pod];
      moved_[s.pod] = 1;
      ++total_;
      ++per_node_[s.from];
      ++per_ns_[p.namespace_name];
      ++per_wl_[p.workload];
      for (int b : p.pdbs) --pdb_left_[b];
      touched_[s.from] = touched_[s.to] = 1;
      Move mv;
      mv.step = static_cast<int>(plan.moves.size()) + 1;
      mv.action = action_id;
      mv.why = a.why;
      mv.pod = p.key;
      mv.workload = p.workload;
      mv.from = m_.nodes[s.from].name;
      mv.to = m_.nodes[s.to].name;
      mv.gpus_from = GpuList(s.from_gpus);
      mv.gpus_to = GpuList(s.to_gpus);
      mv.gpu_count = p.request.gpu_count;
      mv.gpu_milli = p.request.gpu_milli;
      mv.gpus_freed = s.gpus_freed;
      mv.frag_removed_milli = s.frag_removed;
      mv.cost = p.cost;
      mv.priority = p.priority;
      mv.cls = p.cls;
      mv.restarts = p.restarts;
      plan.gpus_freed += s.gpus_freed;
      plan.frag_removed_milli += s.frag_removed;
      plan.cost += p.cost;
      plan.moves.push_back(std::move(mv));
      if (a.kind == Action::kDrain) drained_[s.from] = 1;
    }
    if (a.kind == Action::kMakeRoom) {
      Place(a.pending, a.node, a.gpus, +1);
      done[a.pending] = 1;
      protected_[a.node] = 1;
      touched_[a.node] = 1;
      plan.placements.push_back({m_.pods[a.pending].key, m_.nodes[a.node].name, GpuList(a.gpus),
                                 static_cast<int>(plan.moves.size())});
    }
  }
  place_fitting();
  plan.limits.assign(limits.begin(), limits.end());
  return plan;
}

}  // namespace

FragParts NodeFragParts(const Model& model, int node) {
  const Cluster& c = model.cluster;
  const TargetWorkload& w = model.workload;
  FragParts f;
  const NodeState& st = c.state(node);
  const int count = c.spec(node).gpu_count;
  const int model_id = c.model_id(node);
  int64_t idle = 0;
  for (int i = 0; i < count; ++i) idle += st.gpu_free[i];
  f.total = w.NodeFragmentation(c, node);
  if (idle == 0) return f;
  const double r = static_cast<double>(idle);
  f.cpu_only = w.cpu_only_probability() * r;
  for (const TargetClass& cl : w.gpu_classes()) {
    if (model_id < 0 || ((cl.models >> model_id) & 1) == 0) {
      f.model += cl.probability * r;
      continue;
    }
    if (st.cpu_left < cl.cpu_milli) {
      f.cpu += cl.probability * r;
      continue;
    }
    int fitting = 0;
    int64_t too_small = 0;
    for (int i = 0; i < count; ++i) {
      const bool room = st.gpu_free[i] >= cl.gpu_milli &&
                        (cl.gpu_memory_mib == 0 || st.gpu_mem_free[i] >= cl.gpu_memory_mib);
      if (room) {
        ++fitting;
      } else {
        too_small += st.gpu_free[i];
      }
    }
    f.gpu += cl.probability * (fitting >= cl.gpu_count ? static_cast<double>(too_small) : r);
  }
  return f;
}

Plan MakePlan(const Model& model, const PlanOptions& options) {
  Planner planner(model, options);
  return planner.Run();
}

namespace {

void AddParts(FragParts* to, const FragParts& f) {
  to->total += f.total;
  to->gpu += f.gpu;
  to->cpu += f.cpu;
  to->model += f.model;
  to->cpu_only += f.cpu_only;
}

/// The pool bound (see PoolReport).
Status PoolBound(const Model& m, const std::vector<int>& pool_nodes, int model_id, bool lp,
                 PoolReport* r) {
  const Cluster& c = m.cluster;
  std::vector<char> in_pool(c.size(), 0);
  for (int n : pool_nodes) in_pool[n] = 1;
  std::vector<GpuSet> fixed(c.size(), 0);  // GPUs held by pods that do not move
  std::vector<PodSpec> pods;
  for (const ModelPod& p : m.pods) {
    if (!p.gpu) continue;
    if (p.placed && in_pool[p.node]) {
      if (!p.movable) fixed[p.node] |= p.gpus;
      PodSpec s = p.spec;
      s.gpu_spec.clear();  // it runs here, whatever it asks for
      pods.push_back(s);
    }
  }
  const size_t bound_pods = pods.size();
  int fixed_gpus = 0;
  for (int n : pool_nodes) fixed_gpus += std::popcount(fixed[n]);
  const int used_min = std::max<int>(
      fixed_gpus, static_cast<int>((r->allocated_milli + kMilliPerGpu - 1) / kMilliPerGpu));
  r->idle_gpus_max = std::max(r->idle_gpus, r->gpus - used_min);
  r->gpus_freed_max = r->idle_gpus_max - r->idle_gpus;
  // Nodes: free the smallest removable nodes while the rest can hold the pool's GPU milli.
  std::vector<int> removable;
  for (int n : pool_nodes) {
    if (fixed[n] == 0) removable.push_back(n);
  }
  std::stable_sort(removable.begin(), removable.end(),
                   [&](int a, int b) { return c.spec(a).gpu_count < c.spec(b).gpu_count; });
  int64_t remaining = int64_t{r->gpus} * kMilliPerGpu;
  int k = 0;
  for (int n : removable) {
    const int64_t cap = int64_t{c.spec(n).gpu_count} * kMilliPerGpu;
    if (remaining - cap < r->allocated_milli) break;
    remaining -= cap;
    ++k;
  }
  r->idle_nodes_max = std::max(r->idle_nodes, k);
  if (!lp) {
    r->nodes_freed_max = r->idle_nodes_max - r->idle_nodes;
    return {};
  }
  // The LP over the pool's nodes with its bound pods and the pending pods allowed here.
  for (const ModelPod& p : m.pods) {
    if (p.pending && p.gpu && ((p.target_request.models >> model_id) & 1)) pods.push_back(p.spec);
  }
  std::vector<NodeSpec> specs;
  for (int n : pool_nodes) specs.push_back(c.spec(n));
  std::vector<int> all(pods.size());
  for (size_t i = 0; i < pods.size(); ++i) all[i] = static_cast<int>(i);
  Result<OfflineBound> b = ComputeOfflineBound(specs, pods, all);
  if (!b.ok()) return b.error();
  r->lp_max_placed_milli = b->max_placed_milli;
  r->lp_requested_milli = b->arrived_milli;
  // One node type among the removable nodes: any k of them are alike, so the LP on the pool
  // without k of them bounds whether k can be freed; binary search below the arithmetic bound.
  bool one_type = !removable.empty();
  for (int n : removable) {
    const NodeSpec& a = c.spec(n);
    const NodeSpec& z = c.spec(removable.front());
    one_type = one_type && a.cpu_milli == z.cpu_milli && a.memory_mib == z.memory_mib &&
               a.gpu_count == z.gpu_count && a.gpu_memory_mib == z.gpu_memory_mib;
  }
  if (one_type && k > r->idle_nodes) {
    std::vector<int> bound_all(bound_pods);
    for (size_t i = 0; i < bound_pods; ++i) bound_all[i] = static_cast<int>(i);
    auto feasible = [&](int drop) -> Result<bool> {
      std::set<int> dropped(removable.begin(), removable.begin() + drop);
      std::vector<NodeSpec> rest;
      for (int n : pool_nodes) {
        if (!dropped.count(n)) rest.push_back(c.spec(n));
      }
      Result<OfflineBound> lb = ComputeOfflineBound(rest, pods, bound_all);
      if (!lb.ok()) return lb.error();
      return lb->max_placed_milli + 0.5 >= static_cast<double>(r->allocated_milli);
    };
    int lo = r->idle_nodes;  // feasible (the current placement)
    int hi = k;
    Result<bool> top = feasible(hi);
    if (!top.ok()) return top.error();
    if (!*top) {
      for (int rounds = 0; hi - lo > 1 && rounds < 12; ++rounds) {
        const int mid = lo + (hi - lo) / 2;
        Result<bool> f = feasible(mid);
        if (!f.ok()) return f.error();
        (*f ? lo : hi) = mid;
      }
      r->idle_nodes_max = hi - lo > 1 ? hi : lo;
      r->nodes_lp = hi - lo <= 1;
    } else {
      r->nodes_lp = true;
    }
  }
  r->nodes_freed_max = r->idle_nodes_max - r->idle_nodes;
  return {};
}

}  // namespace

Result<Analysis> Analyze(const Model& m, const AnalyzeOptions& options) {
  const Cluster& c = m.cluster;
  Analysis a;
  a.nodes = c.size();
  a.gpus = static_cast<int>(c.total_gpus());
  a.allocated_milli = c.allocated_gpu_milli();
  a.warnings = m.warnings;
  a.budgets = static_cast<int>(m.pdbs.size());
  a.budgets_not_read = m.budgets_not_read;
  for (const ModelPod& p : m.pods) {
    if (p.placed) ++a.pods_bound;
    if (p.pending && p.gpu) ++a.pods_pending_gpu;
    if (p.placed && p.gpu) {
      if (p.movable) {
        ++a.pods_movable;
      } else {
        ++a.unmovable[p.unmovable.substr(0, p.unmovable.find(':'))];
      }
    }
  }

  // Pools.
  std::map<std::string, std::vector<int>> by_model;
  for (int n = 0; n < c.size(); ++n) {
    if (c.spec(n).gpu_count > 0) by_model[c.spec(n).gpu_model].push_back(n);
  }
  int64_t free_total = 0;
  for (const auto& [model, nodes] : by_model) {
    PoolReport r;
    r.model = model;
    r.nodes = static_cast<int>(nodes.size());
    for (int n : nodes) {
      const NodeState& st = c.state(n);
      const int count = c.spec(n).gpu_count;
      r.gpus += count;
      const int idle = IdleGpus(st, count);
      r.idle_gpus += idle;
      r.idle_nodes += idle == count ? 1 : 0;
      for (int g = 0; g < count; ++g) {
        r.free_milli += st.gpu_free[g];
        r.allocated_milli += kMilliPerGpu - st.gpu_free[g];
        if (st.gpu_free[g] < kMilliPerGpu) r.partial_free_milli += st.gpu_free[g];
      }
      r.stranded_milli += m.workload.NodeStranded(c, n);
      AddParts(&r.frag, NodeFragParts(m, n));
    }
    TESSERA_RETURN_IF_ERROR(PoolBound(m, nodes, c.model_id(nodes.front()), options.bound, &r));
    AddParts(&a.frag, r.frag);
    a.idle_gpus += r.idle_gpus;
    free_total += r.free_milli;
    a.pools.push_back(std::move(r));
  }
  a.frag_ratio = free_total > 0 ? a.frag.total / static_cast<double>(free_total) : 0;

  // The cluster-wide offline bound, as `tessera frag --offline` computes it.
  if (options.bound) {
    std::vector<NodeSpec> specs;
    for (int n = 0; n < c.size(); ++n) specs.push_back(c.spec(n));
    std::vector<PodSpec> pods;
    for (const ModelPod& p : m.pods) {
      if (!p.unmovable.starts_with("request not readable") && (p.placed || p.pending)) {
        pods.push_back(p.spec);
      }
    }
    std::vector<int> all(pods.size());
    for (size_t i = 0; i < pods.size(); ++i) all[i] = static_cast<int>(i);
    Result<OfflineBound> b = ComputeOfflineBound(specs, pods, all);
    if (!b.ok()) return b.error();
    a.bound = *b;
    a.has_bound = true;
  }

  // The plan, then the pending pods' reports (which name what the plan did for them).
  Planner planner(m, options.plan);
  a.plan = planner.Run();
  std::map<std::string, const Placement*> placed;
  for (const Placement& p : a.plan.placements) placed[p.pod] = &p;

  Cluster trial = c;
  std::vector<std::vector<const ModelPod*>> movable_on(c.size());
  for (const ModelPod& q : m.pods) {
    if (q.placed && q.movable) movable_on[q.node].push_back(&q);
  }
  k8s::ExtenderArgs args;
  args.node_names.emplace();
  for (const ModelNode& n : m.nodes) args.node_names->push_back(n.name);
  // What the filter says, which nodes come closest and whether emptying a node of its
  // movable pods would make room: the same for pods of one shape, computed once per shape.
  struct ShapeInfo {
    std::string fits_now;
    std::map<std::string, int> reasons;
    std::vector<NodeMiss> closest;
    bool possible = false;
  };
  std::map<ShapeKey, ShapeInfo> shapes;
  for (const ModelPod& p : m.pods) {
    if (!p.pending || !p.gpu) continue;
    auto [it, fresh] = shapes.try_emplace(KeyOf(p));
    ShapeInfo& info = it->second;
    if (fresh) {
      k8s::ExtenderFilterResult res;
      if (p.object) {
        args.pod = *p.object;
        res = m.extender->Filter(args);
        if (!res.error.empty()) ++info.reasons["error: " + res.error];
        for (auto* failed : {&res.failed_nodes, &res.failed_and_unresolvable_nodes}) {
          for (auto& [node, why] : *failed) ++info.reasons[why];
        }
      }
      std::vector<std::pair<Shortfall, int>> close;
      for (int n = 0; n < c.size(); ++n) {
        if (!StaticOk(m, p, n)) continue;
        const Shortfall s = ShortfallOf(c, n, p.target_request);
        if (s.Fits() && c.Check(n, p.target_request) == FitReason::kFits) {
          if (info.fits_now.empty()) info.fits_now = m.nodes[n].name;
          continue;
        }
        close.emplace_back(s, n);
      }
      std::stable_sort(close.begin(), close.end(),
                       [](const auto& x, const auto& y) { return x.first < y.first; });
      for (const auto& [s, n] : close) {
        if (static_cast<int>(info.closest.size()) >= options.closest_nodes) break;
        NodeMiss miss;
        miss.node = m.nodes[n].name;
        miss.reason = std::string(FitReasonName(c.Check(n, p.target_request)));
        for (const auto* failed : {&res.failed_nodes, &res.failed_and_unresolvable_nodes}) {
          if (auto why = failed->find(miss.node); why != failed->end()) miss.reason = why->second;
        }
        miss.gpus_missing = s.gpus;
        miss.cpu_missing_milli = s.cpu;
        miss.memory_missing_mib = s.memory;
        info.closest.push_back(std::move(miss));
      }
      for (int n = 0; n < c.size() && !info.possible && info.fits_now.empty(); ++n) {
        if (!StaticOk(m, p, n)) continue;
        const std::vector<const ModelPod*>& out = movable_on[n];
        if (out.empty()) continue;
        for (const ModelPod* q : out) trial.Release(n, q->request, q->gpu ? q->gpus : 0);
        info.possible = trial.Check(n, p.target_request) == FitReason::kFits;
        for (const ModelPod* q : out) trial.Allocate(n, q->request, q->gpu ? q->gpus : 0);
      }
    }
    PendingReport r;
    r.pod = p.key;
    r.gpu_count = p.request.gpu_count;
    r.gpu_milli = p.request.gpu_milli;
    r.priority = p.priority;
    r.cls = p.cls;
    r.fits_now = info.fits_now;
    r.reasons = info.reasons;
    r.closest = info.closest;
    // Repack: the plan placed it, or some node would hold it emptied of its movable pods.
    if (!r.fits_now.empty()) {
      r.repack = "fits";
    } else if (auto pl = placed.find(p.key); pl != placed.end()) {
      r.repack = "plan";
      r.placed_on = pl->second->node;
    } else {
      r.repack = info.possible ? "possible" : "no";
    }
    a.pending.push_back(std::move(r));
  }

  // The GPU map.
  const Cluster& after = planner.cluster();
  for (int n = 0; n < c.size(); ++n) {
    NodeMap nm;
    nm.name = m.nodes[n].name;
    nm.model = c.spec(n).gpu_model;
    nm.touched = planner.touched()[n] != 0;
    for (int g = 0; g < c.spec(n).gpu_count; ++g) {
      nm.used_before.push_back(kMilliPerGpu - c.state(n).gpu_free[g]);
      nm.used_after.push_back(kMilliPerGpu - after.state(n).gpu_free[g]);
    }
    a.node_map.push_back(std::move(nm));
  }
  return a;
}

}  // namespace tessera::analyze
