#include "sched/victims.h"

#include <algorithm>
#include <bit>
#include <compare>
#include <limits>
#include <set>
#include <tuple>
#include <utility>

namespace tessera {
namespace {

/// Gives back, on a copy of the node state, what `pod` holds.
void ReleaseOn(NodeState& s, const VictimCandidate& pod) {
  if (!pod.modelled) return;
  s.cpu_left += pod.request.cpu_milli;
  s.memory_left += pod.request.memory_mib;
  if (pod.request.IsCpuOnly()) return;
  for (GpuSet g = pod.gpus; g != 0; g &= g - 1) {
    const int i = std::countr_zero(g);
    s.gpu_free[i] += pod.request.gpu_milli;
    if (pod.request.gpu_memory_mib > 0) {
      s.gpu_mem_free[i] += static_cast<int32_t>(pod.request.gpu_memory_mib);
    }
  }
}

/// Takes back what ReleaseOn gave (values may go negative; CheckFit then rejects).
void TakeOn(NodeState& s, const VictimCandidate& pod) {
  if (!pod.modelled) return;
  s.cpu_left -= pod.request.cpu_milli;
  s.memory_left -= pod.request.memory_mib;
  if (pod.request.IsCpuOnly()) return;
  for (GpuSet g = pod.gpus; g != 0; g &= g - 1) {
    const int i = std::countr_zero(g);
    s.gpu_free[i] -= pod.request.gpu_milli;
    if (pod.request.gpu_memory_mib > 0) {
      s.gpu_mem_free[i] -= static_cast<int32_t>(pod.request.gpu_memory_mib);
    }
  }
}

/// A pod with what the violation count needs: the budgets covering it and its place in the
/// counting order (most important first: priority highest first, then earliest start, then
/// UID).
struct Item {
  const VictimCandidate* pod = nullptr;
  std::vector<int> covers;  // indices into the budgets
  int rank = 0;
};

std::vector<Item> MakeItems(const std::vector<const VictimCandidate*>& pods, size_t budgets) {
  std::vector<Item> items(pods.size());
  std::vector<int> order(pods.size());
  for (size_t i = 0; i < pods.size(); ++i) {
    items[i].pod = pods[i];
    order[i] = static_cast<int>(i);
    for (int b : pods[i]->budgets) {
      if (b >= 0 && static_cast<size_t>(b) < budgets) items[i].covers.push_back(b);
    }
  }
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    if (pods[a]->priority != pods[b]->priority) return pods[a]->priority > pods[b]->priority;
    if (pods[a]->start_s != pods[b]->start_s) return pods[a]->start_s < pods[b]->start_s;
    return pods[a]->id < pods[b]->id;
  });
  for (size_t r = 0; r < order.size(); ++r) items[order[r]].rank = static_cast<int>(r);
  return items;
}

/// Violations of the victims `chosen` (pointers into one MakeItems vector), counted in rank
/// order from the budgets' `allowed` counts.
int64_t Violations(std::vector<const Item*> chosen, std::vector<int32_t> allowed) {
  std::sort(chosen.begin(), chosen.end(),
            [](const Item* a, const Item* b) { return a->rank < b->rank; });
  int64_t violations = 0;
  for (const Item* item : chosen) {
    bool violated = false;
    for (int b : item->covers) {
      if (--allowed[b] < 0) violated = true;
    }
    if (violated) ++violations;
  }
  return violations;
}

/// What a victim set costs; smaller is better (the order of SelectVictims' contract).
struct Cost {
  int64_t violations = 0;
  size_t count = 0;
  int32_t max_priority = std::numeric_limits<int32_t>::min();
  int64_t sum_priority = 0;
  std::vector<int> indices;  // ascending indices into the eligible pods (the tie-break)

  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads the defaulted comparison
  auto operator<=>(const Cost&) const = default;
};

}  // namespace

void AddVictim(VictimSet* set, std::string id, int32_t priority, int64_t start_s) {
  set->ids.push_back(std::move(id));
  if (priority > set->max_priority) {
    set->max_priority = priority;
    set->earliest_start_s = start_s;
  } else if (priority == set->max_priority) {
    set->earliest_start_s = std::min(set->earliest_start_s, start_s);
  }
  set->sum_priority += priority;
}

int64_t CountPdbViolations(const std::vector<const VictimCandidate*>& victims,
                           const std::vector<int32_t>& allowed) {
  const std::vector<Item> items = MakeItems(victims, allowed.size());
  std::vector<const Item*> all;
  all.reserve(items.size());
  for (const Item& i : items) all.push_back(&i);
  return Violations(all, allowed);
}

std::optional<VictimSet> SelectVictims(const PreemptionNode& node,
                                       const std::vector<VictimCandidate>& required,
                                       const PodRequest& preemptor, int32_t priority,
                                       const std::vector<int32_t>& allowed,
                                       const PreemptionOptions& options) {
  const auto fits = [&](const NodeState& s) {
    return CheckFit(node.gpu_count, node.model_id, s, preemptor, node.topology) == FitReason::kFits;
  };

  // The required victims are gone in every answer.
  NodeState base = node.state;
  std::set<std::string> required_ids;
  for (const VictimCandidate& r : required) {
    ReleaseOn(base, r);
    required_ids.insert(r.id);
  }

  // Eligible: strictly lower priority, not required; least important first (priority, latest
  // start first, UID), so that among equal sets the first found loses the least work.
  std::vector<const VictimCandidate*> eligible;
  for (const VictimCandidate& p : node.pods) {
    if (p.priority < priority && required_ids.count(p.id) == 0) eligible.push_back(&p);
  }
  std::sort(eligible.begin(), eligible.end(),
            [](const VictimCandidate* a, const VictimCandidate* b) {
              if (a->priority != b->priority) return a->priority < b->priority;
              if (a->start_s != b->start_s) return a->start_s > b->start_s;
              return a->id < b->id;
            });
  const size_t n = eligible.size();

  // Items for the violation count: required first, then eligible (index n_req + i).
  std::vector<const VictimCandidate*> all_pods;
  all_pods.reserve(required.size() + eligible.size());
  for (const VictimCandidate& r : required) all_pods.push_back(&r);
  all_pods.insert(all_pods.end(), eligible.begin(), eligible.end());
  const std::vector<Item> items = MakeItems(all_pods, allowed.size());
  const size_t n_req = required.size();

  const auto cost_of = [&](const std::vector<int>& indices) {
    Cost c;
    std::vector<const Item*> chosen;
    for (size_t r = 0; r < n_req; ++r) chosen.push_back(&items[r]);
    for (int i : indices) {
      chosen.push_back(&items[n_req + i]);
      c.max_priority = std::max(c.max_priority, eligible[i]->priority);
      c.sum_priority += eligible[i]->priority;
    }
    c.violations = Violations(std::move(chosen), allowed);
    c.count = indices.size();
    c.indices = indices;
    return c;
  };
  const auto answer = [&](const Cost& c) {
    VictimSet v;
    for (const VictimCandidate& r : required) AddVictim(&v, r.id, r.priority, r.start_s);
    for (int i : c.indices) {
      AddVictim(&v, eligible[i]->id, eligible[i]->priority, eligible[i]->start_s);
    }
    v.num_pdb_violations = c.violations;
    return v;
  };

  if (fits(base)) return answer(cost_of({}));

  // Greedy reprieve: evict all, then put pods back while the preemptor still fits.
  NodeState state = base;
  for (const VictimCandidate* p : eligible) ReleaseOn(state, *p);
  if (!fits(state)) return std::nullopt;
  std::vector<int> by_importance(n);
  for (size_t i = 0; i < n; ++i) by_importance[i] = static_cast<int>(i);
  std::sort(by_importance.begin(), by_importance.end(),
            [&](int a, int b) { return items[n_req + a].rank < items[n_req + b].rank; });
  // Budget-protected pods (those whose eviction, in importance order after the required
  // victims, would exceed a budget) are put back first.
  std::vector<int32_t> left = allowed;
  for (size_t r = 0; r < n_req; ++r) {
    for (int b : items[r].covers) --left[b];
  }
  std::vector<int> protected_first;
  std::vector<int> others;
  for (int i : by_importance) {
    bool violates = false;
    for (int b : items[n_req + i].covers) {
      if (--left[b] < 0) violates = true;
    }
    (violates ? protected_first : others).push_back(i);
  }
  protected_first.insert(protected_first.end(), others.begin(), others.end());
  std::vector<bool> victim(n, true);
  for (int i : protected_first) {
    TakeOn(state, *eligible[i]);
    if (fits(state)) {
      victim[i] = false;
    } else {
      ReleaseOn(state, *eligible[i]);
    }
  }
  std::vector<int> greedy;
  for (size_t i = 0; i < n; ++i) {
    if (victim[i]) greedy.push_back(static_cast<int>(i));
  }
  Cost best = cost_of(greedy);

  // Exhaustive search by size, bounded by options.max_subsets.
  int64_t checked = 0;
  std::vector<int> combo;
  for (size_t k = 1; k <= n && checked < options.max_subsets; ++k) {
    if (k > best.count && best.violations == 0) break;  // nothing larger can be better
    combo.resize(k);
    for (size_t j = 0; j < k; ++j) combo[j] = static_cast<int>(j);
    while (checked < options.max_subsets) {
      ++checked;
      Cost c = cost_of(combo);
      if (c < best) {
        NodeState s = base;
        for (int i : combo) ReleaseOn(s, *eligible[i]);
        if (fits(s)) best = std::move(c);
      }
      // Next combination in lexicographic order.
      size_t j = k;
      while (j > 0 && combo[j - 1] == static_cast<int>(n - k + j - 1)) --j;
      if (j == 0) break;
      ++combo[j - 1];
      for (size_t m = j; m < k; ++m) combo[m] = combo[m - 1] + 1;
    }
  }
  return answer(best);
}

int ChoosePreemptionNode(const std::vector<NodeVictims>& answers) {
  int best = -1;
  const auto key = [](const NodeVictims& a) {
    return std::make_tuple(a.victims.num_pdb_violations, a.victims.max_priority,
                           a.victims.sum_priority, a.victims.ids.size(),
                           -a.victims.earliest_start_s, a.rank);
  };
  for (size_t i = 0; i < answers.size(); ++i) {
    if (best < 0 || key(answers[i]) < key(answers[best])) best = static_cast<int>(i);
  }
  return best;
}

}  // namespace tessera
