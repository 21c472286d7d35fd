#include "model/topology.h"

#include <algorithm>
#include <bit>
#include <functional>

#include "model/fit.h"

// The set searches below enumerate the k-subsets of a node's GPUs with room (at most
// C(16, 8) = 12870 sets, a few dozen on the usual 8-GPU nodes); a node state is searched once
// per pod shape (the scheduler caches the verdict and the choice per group of equal nodes).

namespace tessera {
namespace {

const uint8_t* Ids(const GpuTopology& topo, TopologyScope scope) {
  return scope == TopologyScope::kNvlink ? topo.nvlink.data() : topo.numa.data();
}

TopologyScope Other(TopologyScope scope) {
  return scope == TopologyScope::kNvlink ? TopologyScope::kNuma : TopologyScope::kNvlink;
}

// The number of distinct domains of `scope` that `gpus` touches.
int Touched(const GpuTopology& topo, TopologyScope scope, GpuSet gpus) {
  const uint8_t* ids = Ids(topo, scope);
  uint32_t seen = 0;
  for (GpuSet g = gpus; g != 0; g &= g - 1) seen |= uint32_t{1} << (ids[std::countr_zero(g)] & 31);
  return std::popcount(seen);
}

// The GPUs with room for the pod.
GpuSet Room(int gpu_count, const NodeState& state, const PodRequest& pod) {
  GpuSet room = 0;
  for (int i = 0; i < gpu_count; ++i) {
    if (GpuHasRoom(state, i, pod)) room |= GpuSet{1} << i;
  }
  return room;
}

// The bits of `mask` picked by the low bits of `pick` (pdep).
GpuSet Deposit(uint32_t pick, GpuSet mask) {
  GpuSet out = 0;
  for (GpuSet m = mask; m != 0 && pick != 0; m &= m - 1, pick >>= 1) {
    if (pick & 1) out |= m & (~m + 1);
  }
  return out;
}

// Calls visit(set) for each k-subset of `mask` (in increasing order of the pick, Gosper's
// hack) until it returns false.
void ForEachSubset(GpuSet mask, int k, const std::function<bool(GpuSet)>& visit) {
  const int m = std::popcount(mask);
  if (k <= 0 || k > m) return;
  uint32_t pick = (uint32_t{1} << k) - 1;
  const uint32_t end = uint32_t{1} << m;
  while (pick < end) {
    if (!visit(Deposit(pick, mask))) return;
    const uint32_t c = pick & (~pick + 1);
    const uint32_t r = pick + c;
    pick = (((r ^ pick) >> 2) / c) | r;
  }
}

const char* ScopeName(TopologyScope scope, bool plural) {
  if (scope == TopologyScope::kNvlink) return plural ? "NVLink domains" : "NVLink domain";
  return plural ? "NUMA nodes" : "NUMA node";
}

}  // namespace

int DomainCount(const GpuTopology& topo, TopologyScope scope, int gpu_count) {
  const uint8_t* ids = Ids(topo, scope);
  int count = 0;
  for (int i = 0; i < gpu_count; ++i) count = std::max(count, ids[i] + 1);
  return count;
}

int Domains(const GpuTopology& topo, TopologyScope scope, int gpu_count,
            std::array<GpuSet, kMaxGpusPerNode>* out) {
  out->fill(0);
  const uint8_t* ids = Ids(topo, scope);
  int count = 0;
  for (int i = 0; i < gpu_count; ++i) {
    const int d = std::min<int>(ids[i], kMaxGpusPerNode - 1);
    (*out)[d] |= GpuSet{1} << i;
    count = std::max(count, d + 1);
  }
  return count;
}

int MinDomains(const GpuTopology& topo, TopologyScope scope, int gpu_count, int k) {
  if (k <= 0) return 0;
  if (k > gpu_count) return -1;
  std::array<GpuSet, kMaxGpusPerNode> domains;
  const int count = Domains(topo, scope, gpu_count, &domains);
  std::array<int, kMaxGpusPerNode> sizes{};
  for (int d = 0; d < count; ++d) sizes[d] = std::popcount(domains[d]);
  std::sort(sizes.begin(), sizes.begin() + count, std::greater<>());
  int sum = 0;
  for (int d = 0; d < count; ++d) {
    sum += sizes[d];
    if (sum >= k) return d + 1;
  }
  return -1;
}

bool Aligned(const GpuTopology& topo, TopologyScope scope, int gpu_count, GpuSet gpus) {
  const int size = std::popcount(gpus);
  if (size <= 1) return true;
  const int min = MinDomains(topo, scope, gpu_count, size);
  return min > 0 && Touched(topo, scope, gpus) <= min;
}

TopologyNeed EffectiveNeed(const GpuTopology& topo, const PodRequest& pod) {
  TopologyNeed need;
  const TopologyRequest& r = pod.topology;
  need.primary = r.intent != TopologyIntent::kNone ? r.scope
                 : KubeletAligns(topo)             ? TopologyScope::kNuma
                                                   : TopologyScope::kNvlink;
  if (pod.IsCpuOnly() || pod.gpu_count < 2) return need;
  (r.scope == TopologyScope::kNvlink ? need.nvlink : need.numa) = r.intent;
  if (KubeletAligns(topo)) {
    need.numa = TopologyIntent::kRequired;
    need.single_numa = topo.kubelet == KubeletTopologyPolicy::kSingleNumaNode;
  }
  return need;
}

bool MeetsRequired(const GpuTopology& topo, int gpu_count, const TopologyNeed& need, GpuSet gpus) {
  if (std::popcount(gpus) <= 1) return true;
  if (need.nvlink == TopologyIntent::kRequired &&
      !Aligned(topo, TopologyScope::kNvlink, gpu_count, gpus)) {
    return false;
  }
  if (need.numa == TopologyIntent::kRequired) {
    if (need.single_numa) return Touched(topo, TopologyScope::kNuma, gpus) == 1;
    return Aligned(topo, TopologyScope::kNuma, gpu_count, gpus);
  }
  return true;
}

uint8_t TopologyBits(const GpuTopology* topo, int gpu_count) {
  if (topo == nullptr || gpu_count < 2) return 0;
  uint8_t bits = 0;
  const int nvlink = DomainCount(*topo, TopologyScope::kNvlink, gpu_count);
  const int numa = DomainCount(*topo, TopologyScope::kNuma, gpu_count);
  // With one domain, or one per GPU, every set is aligned.
  if (nvlink >= 2 && nvlink < gpu_count) bits |= kTopoNvlinkSplit;
  if (numa >= 2 && numa < gpu_count) bits |= kTopoNumaSplit;
  if (numa >= 2 && KubeletAligns(*topo)) bits |= kTopoKubelet;
  return bits;
}

uint8_t TopologyQueryBits(const PodRequest& pod) {
  if (pod.IsCpuOnly() || pod.gpu_count < 2) return 0;
  uint8_t bits = kTopoKubelet;
  if (pod.topology.intent == TopologyIntent::kRequired) {
    bits |= pod.topology.scope == TopologyScope::kNvlink ? kTopoNvlinkSplit : kTopoNumaSplit;
  }
  return bits;
}

bool TopologyFits(const GpuTopology& topo, int gpu_count, const NodeState& state,
                  const PodRequest& pod) {
  const TopologyNeed need = EffectiveNeed(topo, pod);
  if (!need.required()) return true;
  bool found = false;
  ForEachSubset(Room(gpu_count, state, pod), pod.gpu_count, [&](GpuSet s) {
    found = MeetsRequired(topo, gpu_count, need, s);
    return !found;
  });
  return found;
}

GpuSet TopologyGpuChoice(const GpuTopology& topo, int gpu_count, const NodeState& state,
                         const PodRequest& pod) {
  if (pod.IsCpuOnly()) return 0;
  const TopologyNeed need = EffectiveNeed(topo, pod);
  const TopologyScope primary = need.primary;
  const TopologyScope other = Other(primary);
  std::array<GpuSet, kMaxGpusPerNode> domains;
  const int count = Domains(topo, primary, gpu_count, &domains);
  GpuSet idle = 0;
  for (int i = 0; i < gpu_count; ++i) {
    if (state.gpu_free[i] == kMilliPerGpu) idle |= GpuSet{1} << i;
  }
  const int k = pod.IsSharing() ? 1 : pod.gpu_count;
  // The key of a set: larger is better, compared in order; ties to the lower indices.
  using Key = std::array<int64_t, 6>;
  Key best_key{};
  GpuSet best = 0;
  ForEachSubset(Room(gpu_count, state, pod), k, [&](GpuSet s) {
    if (!MeetsRequired(topo, gpu_count, need, s)) return true;
    int whole_after = 0;
    int touched_idle = 0;
    for (int d = 0; d < count; ++d) {
      if ((domains[d] & s) != 0) {
        touched_idle += std::popcount(domains[d] & idle);
      } else if (domains[d] != 0 && (domains[d] & idle) == domains[d]) {
        ++whole_after;
      }
    }
    int64_t fifth = 0;
    if (pod.IsSharing()) {
      fifth = -state.gpu_free[std::countr_zero(s)];
    } else {
      for (GpuSet a = s; a != 0; a &= a - 1) {
        const int i = std::countr_zero(a);
        for (GpuSet b = a & (a - 1); b != 0; b &= b - 1) fifth += topo.link[i][std::countr_zero(b)];
      }
    }
    const Key key{Aligned(topo, primary, gpu_count, s),
                  Aligned(topo, other, gpu_count, s),
                  -std::popcount(s & idle),
                  whole_after,
                  -touched_idle,
                  fifth};
    // Subsets come in increasing order of their pick, not of their lowest index: an equal key
    // wins if its lowest differing GPU is lower.
    const GpuSet diff = s ^ best;
    if (best == 0 || key > best_key || (key == best_key && (s & diff & (~diff + 1)) != 0)) {
      best_key = key;
      best = s;
    }
    return true;
  });
  return best;
}

GpuSet AlignedUsable(const GpuTopology& topo, int gpu_count, GpuSet room, int k) {
  if (std::popcount(room) < k) return 0;
  if (k <= 1) return room;
  const TopologyScope scope = MeasureScope(topo);
  const bool single = topo.kubelet == KubeletTopologyPolicy::kSingleNumaNode;
  const int m = single ? 1 : MinDomains(topo, scope, gpu_count, k);
  if (m < 0) return 0;
  std::array<GpuSet, kMaxGpusPerNode> domains;
  const int count = Domains(topo, scope, gpu_count, &domains);
  std::array<int, kMaxGpusPerNode> free{};
  for (int d = 0; d < count; ++d) free[d] = std::popcount(domains[d] & room);
  // A GPU of domain d is in an aligned k-set (at most m domains) if and only if d's free GPUs
  // and those of the m − 1 freest other domains add up to k.
  std::array<int, kMaxGpusPerNode> sorted = free;
  std::sort(sorted.begin(), sorted.begin() + count, std::greater<>());
  GpuSet usable = 0;
  for (int d = 0; d < count; ++d) {
    if (free[d] == 0) continue;
    int sum = free[d];
    int taken = 0;
    bool skipped = false;  // d's own value, once, among the sorted
    for (int j = 0; j < count && taken < m - 1; ++j) {
      if (!skipped && sorted[j] == free[d]) {
        skipped = true;
        continue;
      }
      sum += sorted[j];
      ++taken;
    }
    if (sum >= k) usable |= domains[d] & room;
  }
  return usable;
}

std::string GpuRanges(GpuSet gpus) {
  std::string out;
  for (int i = 0; i < 32;) {
    if (((gpus >> i) & 1) == 0) {
      ++i;
      continue;
    }
    int j = i;
    while (j + 1 < 32 && ((gpus >> (j + 1)) & 1) != 0) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(i);
    if (j > i) out += "-" + std::to_string(j);
    i = j + 1;
  }
  return out;
}

std::string TopologyShortfall(const GpuTopology& topo, int gpu_count, const NodeState& state,
                              const PodRequest& pod) {
  const TopologyNeed need = EffectiveNeed(topo, pod);
  const int k = pod.gpu_count;
  const GpuSet room = Room(gpu_count, state, pod);
  // The scope that fails on its own (NVLink first), else both together.
  TopologyScope scope = TopologyScope::kNvlink;
  bool alone = false;
  for (TopologyScope sc : {TopologyScope::kNvlink, TopologyScope::kNuma}) {
    TopologyNeed one;
    (sc == TopologyScope::kNvlink ? one.nvlink : one.numa) =
        sc == TopologyScope::kNvlink ? need.nvlink : need.numa;
    one.single_numa = sc == TopologyScope::kNuma && need.single_numa;
    if (!one.required()) continue;
    bool found = false;
    ForEachSubset(room, k, [&](GpuSet s) {
      found = MeetsRequired(topo, gpu_count, one, s);
      return !found;
    });
    if (!found) {
      scope = sc;
      alone = true;
      break;
    }
  }
  const std::string gpus = std::to_string(k) + (k == 1 ? " GPU" : " GPUs");
  if (!alone) {
    return "topology: needs " + gpus +
           " in the fewest NVLink domains and the fewest NUMA nodes at once, and no set of "
           "free GPUs is both";
  }
  std::array<GpuSet, kMaxGpusPerNode> domains;
  const int count = Domains(topo, scope, gpu_count, &domains);
  const bool single = scope == TopologyScope::kNuma && need.single_numa;
  const int min = single ? 1 : MinDomains(topo, scope, gpu_count, k);
  std::array<int, kMaxGpusPerNode> free{};
  std::string list;
  for (int d = 0; d < count; ++d) {
    if (domains[d] == 0) continue;
    free[d] = std::popcount(domains[d] & room);
    if (!list.empty()) list += ", ";
    list += GpuRanges(domains[d]) + ": " + std::to_string(free[d]) + " free";
  }
  std::sort(free.begin(), free.begin() + count, std::greater<>());
  int most = 0;
  for (int d = 0; d < std::min(std::max(min, 1), count); ++d) most += free[d];
  std::string out = "topology: needs " + gpus + " in ";
  if (min <= 1) {
    out += std::string("one ") + ScopeName(scope, false) + ", the most free in one is ";
  } else {
    out += std::to_string(min) + " " + ScopeName(scope, true) + ", the most free in " +
           std::to_string(min) + " is ";
  }
  out += std::to_string(most);
  if (single) out += " (kubelet single-numa-node)";
  out += std::string(" (") + (scope == TopologyScope::kNvlink ? "domains " : "NUMA nodes ") + list +
         ")";
  return out;
}

}  // namespace tessera
