// hami-topology: HAMi's scheduler with node-scheduler-policy binpack and gpu-scheduler-policy
// topology-aware (its pkg/device/nvidia/device.go, Fit with the topology path; the pairwise
// scores of the `hami.io/node-nvidia-score` annotation, here NodeSpec::topology->link). The
// comparison policy of docs/TOPOLOGY.md; not in `--policy all`.
//
// Node choice: HAMi's binpack node score, as hami-binpack (src/policy/hami.cc).
// GPU choice: the candidates are the node's GPUs with room for the pod, in the order HAMi's
// Fit meets them under topology-aware: HAMi sorts a node's GPUs with its spread rule for every
// GPU policy but binpack (by NUMA node, then by GPU score) and Fit walks that list from its
// end, so the highest NUMA node first and, inside one, the lowest GPU score (hami.cc's spread
// order; the lower index among equals, where Go's unstable sort leaves the order open). With
// exactly as many candidates as the pod asks for, it takes them all. With more:
//  - a multi-GPU pod takes the combination of candidates with the highest sum of pairwise
//    link scores (HAMi's computeBestCombination); among equal sums the first combination in
//    the candidate order (HAMi replaces its best only on a strictly higher sum);
//  - a single GPU or a share takes the candidate with the lowest sum of link scores to the
//    other candidates, the "worst single card" (HAMi's computeWorstSingleCard), so that the
//    well-linked GPUs stay free; the first in the candidate order among equals.
// So among GPUs that are linked alike (a PCIe node, or the GPUs of one island), a share goes
// to the least used one: the spread order decides. Without a topology (or one for another GPU
// count) it is hami-binpack, GPU choice included. Where HAMi would return no combination at
// all (every sum 0: HAMi starts from a best sum of 0 and needs a strictly higher one), this
// takes the first combination in the candidate order.
// The policy knows no `required`: it may split a pod across domains when no domain has room;
// the engine decides where a `required` pod may go.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>

#include "policy/builtin.h"
#include "policy/hami.h"

namespace tessera {
namespace {

// Sum of the pairwise link scores of the first `k` entries of `pick`.
int64_t PairSum(const GpuTopology& t, const std::array<int, kMaxGpusPerNode>& pick, int k) {
  int64_t sum = 0;
  for (int a = 0; a < k; ++a) {
    for (int b = a + 1; b < k; ++b) sum += t.link[pick[a]][pick[b]];
  }
  return sum;
}

// HAMi's best combination: the k of `cand[0..n)` with the highest pairwise sum, the first in
// the lexicographic order of positions among equals. n ≤ 16, k ≤ n: at most C(16, 8) = 12870
// combinations, each scored once per node state (the scheduler caches scores).
GpuSet BestCombination(const GpuTopology& t, const std::array<int, kMaxGpusPerNode>& cand, int n,
                       int k) {
  std::array<int, kMaxGpusPerNode> pos{};  // positions into cand, ascending
  for (int i = 0; i < k; ++i) pos[i] = i;
  std::array<int, kMaxGpusPerNode> pick{};
  int64_t best = -1;
  GpuSet best_set = 0;
  for (;;) {
    for (int i = 0; i < k; ++i) pick[i] = cand[pos[i]];
    const int64_t sum = PairSum(t, pick, k);
    if (sum > best) {
      best = sum;
      best_set = 0;
      for (int i = 0; i < k; ++i) best_set |= GpuSet{1} << pick[i];
    }
    int i = k - 1;  // the next combination of positions
    while (i >= 0 && pos[i] == n - k + i) --i;
    if (i < 0) break;
    ++pos[i];
    for (int j = i + 1; j < k; ++j) pos[j] = pos[j - 1] + 1;
  }
  return best_set;
}

// HAMi's worst single card: the candidate with the lowest sum of link scores to the others.
int WorstSingleCard(const GpuTopology& t, const std::array<int, kMaxGpusPerNode>& cand, int n) {
  int worst = cand[0];
  int64_t worst_sum = -1;
  for (int a = 0; a < n; ++a) {
    int64_t sum = 0;
    for (int b = 0; b < n; ++b) {
      if (b != a) sum += t.link[cand[a]][cand[b]];
    }
    if (worst_sum < 0 || sum < worst_sum) {
      worst_sum = sum;
      worst = cand[a];
    }
  }
  return worst;
}

class HamiTopologyPolicy final : public Policy {
 public:
  std::string_view name() const override { return "hami-topology"; }

  NodeScore Score(const NodeView& node, const PodRequest& pod) const override {
    const int64_t score = HamiNodeScore(node, /*binpack=*/true);
    if (pod.IsCpuOnly()) return {static_cast<double>(score), 0};
    const GpuTopology* t = node.spec.topology.get();
    const bool topology = t != nullptr && t->gpu_count == node.spec.gpu_count;
    std::array<int, kMaxGpusPerNode> cand{};
    const int n = HamiGpuOrder(node, pod, /*binpack=*/!topology, cand);
    const int k = pod.gpu_count;
    if (n < k) return {static_cast<double>(score), 0};  // not expected: the pod fits
    GpuSet gpus = 0;
    if (topology) {
      std::stable_sort(cand.begin(), cand.begin() + n,
                       [t](int a, int b) { return t->numa[a] > t->numa[b]; });
    }
    if (!topology || n == k) {
      for (int i = 0; i < k; ++i) gpus |= GpuSet{1} << cand[i];
    } else if (k == 1) {
      gpus = GpuSet{1} << WorstSingleCard(*t, cand, n);
    } else {
      gpus = BestCombination(*t, cand, n, k);
    }
    return {static_cast<double>(score), gpus};
  }
};

}  // namespace

std::unique_ptr<Policy> MakeHamiTopologyPolicy(const PolicyContext&) {
  return std::make_unique<HamiTopologyPolicy>();
}

}  // namespace tessera
