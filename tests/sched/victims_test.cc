#include "sched/victims.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/cluster.h"

namespace tessera {
namespace {

// One node of 4 A10 GPUs, 32 CPUs, 64 GiB, filled pod by pod through a real Cluster so that
// the state the search starts from is the engine's own.
class Node4 {
 public:
  Node4() : cluster_({NodeSpec{"n", 32000, 65536, 4, "A10", 24576}}) {}

  // A pod of `milli` per GPU on the GPUs `gpus` (bit i = GPU i; 0 = CPU-only).
  // `budgets`: the disruption budgets (indices) that cover it.
  void Add(const std::string& uid, int32_t priority, int32_t milli, GpuSet gpus,
           int64_t cpu_milli = 1000, std::vector<int> budgets = {}, int64_t start_s = 0) {
    VictimCandidate c;
    c.id = uid;
    c.priority = priority;
    c.start_s = start_s;
    c.budgets = std::move(budgets);
    c.modelled = true;
    c.request.cpu_milli = cpu_milli;
    c.request.memory_mib = 1024;
    if (gpus != 0) {
      c.request.gpu_count = std::popcount(gpus);
      c.request.gpu_milli = milli;
    }
    c.gpus = gpus;
    cluster_.Allocate(0, c.request, gpus);
    pods_.push_back(std::move(c));
  }
  PreemptionNode node() const {
    return PreemptionNode{4, cluster_.model_id(0), cluster_.state(0), pods_};
  }
  const VictimCandidate& pod(const std::string& uid) const {
    for (const VictimCandidate& p : pods_) {
      if (p.id == uid) return p;
    }
    ADD_FAILURE() << "no pod " << uid;
    return pods_.front();
  }

 private:
  Cluster cluster_;
  std::vector<VictimCandidate> pods_;
};

constexpr GpuSet G(int i) { return GpuSet{1} << i; }

PodRequest Gpus(int count, int32_t milli, int64_t cpu_milli = 1000) {
  PodRequest r;
  r.cpu_milli = cpu_milli;
  r.memory_mib = 1024;
  r.gpu_count = count;
  r.gpu_milli = milli;
  return r;
}

// Budget 0 covers the pods of app "x", budget 1 those of app "y".
const std::vector<int> kAppX = {0};
const std::vector<int> kAppY = {1};

std::optional<VictimSet> Select(const Node4& n, const PodRequest& pod, int32_t priority,
                                const std::vector<int32_t>& allowed = {},
                                const std::vector<VictimCandidate>& required = {},
                                int64_t max_subsets = 20000) {
  return SelectVictims(n.node(), required, pod, priority, allowed, PreemptionOptions{max_subsets});
}

using Uids = std::vector<std::string>;

TEST(SelectVictims, FitsAlreadyNeedsNoVictim) {
  Node4 n;
  n.Add("a", 1, 1000, G(0));
  std::optional<VictimSet> v = Select(n, Gpus(1, 1000), 10);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->ids, Uids{});
  EXPECT_EQ(v->num_pdb_violations, 0);
}

TEST(SelectVictims, LowestPriorityFirst) {
  Node4 n;
  n.Add("b", 5, 1000, G(0));
  n.Add("a", 1, 1000, G(1));
  n.Add("d", 2, 1000, G(2));
  n.Add("c", 3, 1000, G(3));
  std::optional<VictimSet> v = Select(n, Gpus(1, 1000), 10);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->ids, Uids{"a"});
}

TEST(SelectVictims, FewestPodsBeforeLowerPriorities) {
  Node4 n;
  n.Add("a1", 1, 500, G(0));
  n.Add("a2", 1, 500, G(0));
  n.Add("b", 2, 1000, G(1));
  n.Add("h2", 20, 1000, G(2));
  n.Add("h3", 20, 1000, G(3));
  EXPECT_EQ(Select(n, Gpus(1, 1000), 10)->ids, Uids{"b"});
  // With no search budget the greedy reprieve (kube-scheduler's) is the answer: it puts the
  // most important pod back first and ends with two victims.
  EXPECT_EQ(Select(n, Gpus(1, 1000), 10, {}, {}, /*max_subsets=*/0)->ids, (Uids{"a1", "a2"}));
}

TEST(SelectVictims, FreesOneGpuNotScatteredShares) {
  Node4 n;
  n.Add("a", 1, 500, G(0));
  n.Add("h0", 20, 500, G(0));
  n.Add("b", 1, 500, G(1));
  n.Add("h1", 20, 500, G(1));
  n.Add("h2", 20, 1000, G(2));
  n.Add("h3", 20, 1000, G(3));
  // 1000 milli would be free in total after evicting a and b, but on two GPUs.
  EXPECT_FALSE(Select(n, Gpus(1, 1000), 10).has_value());
  EXPECT_EQ(Select(n, Gpus(1, 500), 10)->ids, Uids{"a"});
}

TEST(SelectVictims, MultiGpuPreemptorTakesTheOnePodHoldingTwoGpus) {
  Node4 n;
  n.Add("a", 1, 1000, G(0));
  n.Add("m", 2, 1000, G(1) | G(2));
  n.Add("c", 3, 1000, G(3));
  EXPECT_EQ(Select(n, Gpus(2, 1000), 10)->ids, Uids{"m"});
  EXPECT_EQ(Select(n, Gpus(4, 1000), 10)->ids, (Uids{"a", "m", "c"}));
}

TEST(SelectVictims, NeverEqualOrHigherPriority) {
  Node4 n;
  n.Add("eq", 10, 1000, G(0));
  n.Add("hi", 11, 1000, G(1));
  n.Add("lo", 9, 1000, G(2));
  n.Add("eq2", 10, 1000, G(3));
  EXPECT_EQ(Select(n, Gpus(1, 1000), 10)->ids, Uids{"lo"});
  EXPECT_FALSE(Select(n, Gpus(2, 1000), 10).has_value());
  EXPECT_FALSE(Select(n, Gpus(1, 1000), 9).has_value());
}

TEST(SelectVictims, CpuShortageEvictsACpuOnlyPod) {
  Node4 n;
  n.Add("cpu-lo", 1, 0, 0, /*cpu_milli=*/30000);
  n.Add("g", 1, 1000, G(0), 1000);
  // 1 CPU left; the preemptor needs 4 CPUs and a GPU share (GPUs 1-3 are free).
  EXPECT_EQ(Select(n, Gpus(1, 500, 4000), 10)->ids, Uids{"cpu-lo"});
}

TEST(SelectVictims, WrongModelOrTooFewGpusHasNoAnswer) {
  Node4 n;
  n.Add("a", 1, 1000, G(0));
  PodRequest t4 = Gpus(1, 1000);
  t4.models = 0;  // allows no model of this node
  EXPECT_FALSE(Select(n, t4, 10).has_value());
  EXPECT_FALSE(Select(n, Gpus(8, 1000), 10).has_value());
}

TEST(SelectVictims, PrefersSetsWithoutBudgetViolations) {
  Node4 n;
  n.Add("a", 1, 1000, G(0), 1000, kAppX);
  n.Add("b", 2, 1000, G(1), 1000, kAppY);
  n.Add("h2", 20, 1000, G(2));
  n.Add("h3", 20, 1000, G(3));
  // No budget left for x: b (higher priority, but unprotected) goes instead of a.
  std::optional<VictimSet> v = Select(n, Gpus(1, 1000), 10, {0, 1000});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->ids, Uids{"b"});
  EXPECT_EQ(v->num_pdb_violations, 0);
  // Both protected: the lowest priority goes, and the violation is counted.
  v = Select(n, Gpus(1, 1000), 10, {0, 0});
  EXPECT_EQ(v->ids, Uids{"a"});
  EXPECT_EQ(v->num_pdb_violations, 1);
  // A budget with room: no violation.
  v = Select(n, Gpus(1, 1000), 10, {1, 1000});
  EXPECT_EQ(v->ids, Uids{"a"});
  EXPECT_EQ(v->num_pdb_violations, 0);
  // Two GPUs: both go; the budget of one covers one of them.
  v = Select(n, Gpus(2, 1000), 10, {0, 1});
  EXPECT_EQ(v->ids, (Uids{"a", "b"}));
  EXPECT_EQ(v->num_pdb_violations, 1);
}

TEST(SelectVictims, MoreVictimsRatherThanAViolation) {
  Node4 n;
  n.Add("p", 1, 1000, G(0), 1000, kAppX);
  n.Add("s1", 2, 500, G(1));
  n.Add("s2", 2, 500, G(1));
  n.Add("h2", 20, 1000, G(2));
  n.Add("h3", 20, 1000, G(3));
  std::optional<VictimSet> v = Select(n, Gpus(1, 1000), 10, {0, 1000});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->ids, (Uids{"s1", "s2"}));
  EXPECT_EQ(v->num_pdb_violations, 0);
}

TEST(SelectVictims, SchedulerVictimsThatSufficeAreTheAnswer) {
  Node4 n;
  n.Add("a", 1, 1000, G(0));
  n.Add("b", 2, 1000, G(1));
  n.Add("h2", 20, 1000, G(2));
  n.Add("h3", 20, 1000, G(3));
  std::optional<VictimSet> v = Select(n, Gpus(1, 1000), 10, {}, {n.pod("b")});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->ids, Uids{"b"});
}

TEST(SelectVictims, SchedulerVictimsAreExtendedWhenTheyFreeTooLittle) {
  Node4 n;
  n.Add("cpu", 1, 0, 0, 2000);
  n.Add("a", 1, 1000, G(0));
  n.Add("b", 2, 1000, G(1));
  n.Add("h2", 20, 1000, G(2));
  n.Add("h3", 20, 1000, G(3));
  // The scheduler (blind to GPUs) proposed a CPU-only pod and one the model does not know.
  VictimCandidate unknown;
  unknown.id = "not-modelled";
  std::optional<VictimSet> v = Select(n, Gpus(1, 1000), 10, {}, {n.pod("cpu"), unknown});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->ids, (Uids{"cpu", "not-modelled", "a"}));
}

TEST(SelectVictims, ViolationsOfSchedulerVictimsCount) {
  Node4 n;
  n.Add("a", 1, 1000, G(0), 1000, kAppX);
  n.Add("b", 1, 1000, G(1));
  std::optional<VictimSet> v = Select(n, Gpus(3, 1000), 10, {0, 1000}, {n.pod("a")});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->ids, (Uids{"a"}));
  EXPECT_EQ(v->num_pdb_violations, 1);
}

TEST(SelectVictims, LargeNodesStayMinimalWhenTheSearchBudgetRunsOut) {
  Node4 n;
  for (int gpu = 0; gpu < 4; ++gpu) {
    for (int k = 0; k < 10; ++k) {
      n.Add("g" + std::to_string(gpu) + "-" + std::to_string(k), 1 + gpu, 100, G(gpu), 100);
    }
  }
  // One whole GPU: the ten pods of GPU 0 (lowest priority); no exhaustive search can cover
  // C(40, 10) sets, the greedy set is minimal.
  std::optional<VictimSet> v = Select(n, Gpus(1, 1000), 10, {}, {}, /*max_subsets=*/2000);
  ASSERT_TRUE(v.has_value());
  ASSERT_EQ(v->ids.size(), 10u);
  for (const std::string& uid : v->ids) EXPECT_EQ(uid.substr(0, 3), "g0-") << uid;
  // The whole node: every pod.
  v = Select(n, Gpus(4, 1000), 10, {}, {}, 2000);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->ids.size(), 40u);
  // A tenth of a GPU: one pod.
  v = Select(n, Gpus(1, 100), 10, {}, {}, 2000);
  EXPECT_EQ(v->ids, Uids{"g0-0"});
}

TEST(CountPdbViolations, BudgetTakenInPriorityOrder) {
  VictimCandidate hi;
  hi.id = "hi";
  hi.priority = 5;
  hi.budgets = kAppX;
  VictimCandidate lo = hi;
  lo.id = "lo";
  lo.priority = 1;
  VictimCandidate uncovered = hi;
  uncovered.id = "o";
  uncovered.budgets = {};
  EXPECT_EQ(CountPdbViolations({&lo, &hi}, {1}), 1);
  EXPECT_EQ(CountPdbViolations({&lo}, {1}), 0);
  EXPECT_EQ(CountPdbViolations({&uncovered, &lo}, {1}), 0);
  EXPECT_EQ(CountPdbViolations({&hi}, {0}), 1);
  EXPECT_EQ(CountPdbViolations({&hi}, {}), 0);  // no budgets: nothing to violate
}

// kube-scheduler's choice among the nodes answered: violations, highest victim priority, sum
// of priorities, fewest victims, then rank.
// Among pods of equal priority the later starter is evicted (kube-scheduler's MoreImportantPod:
// the earlier start is the more important), whatever the UIDs' order.
TEST(SelectVictims, EqualPrioritiesEvictTheLatestStarterFirst) {
  Node4 n;
  n.Add("a", 1, 1000, G(0), 1000, {}, /*start_s=*/100);
  n.Add("b", 1, 1000, G(1), 1000, {}, /*start_s=*/500);
  n.Add("c", 1, 1000, G(2), 1000, {}, /*start_s=*/300);
  n.Add("d", 1, 1000, G(3), 1000, {}, /*start_s=*/200);
  std::optional<VictimSet> v = Select(n, Gpus(1, 1000), 10);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->ids, Uids{"b"});
  EXPECT_EQ(v->earliest_start_s, 500);
  v = Select(n, Gpus(2, 1000), 10);
  EXPECT_EQ(v->ids, (Uids{"b", "c"}));
  EXPECT_EQ(v->earliest_start_s, 300);
  // The greedy reprieve (no search budget) puts the earliest starters back first.
  EXPECT_EQ(Select(n, Gpus(2, 1000), 10, {}, {}, /*max_subsets=*/0)->ids, (Uids{"b", "c"}));
  // Priority still comes first: a lower-priority pod that started earlier goes before.
  n.Add("low", 0, 0, 0, 1000, {}, /*start_s=*/0);
  EXPECT_EQ(Select(n, Gpus(1, 1000), 10)->ids, Uids{"b"});
}

// The earliest start counts only the victims of the highest priority, whatever the order they
// are added in.
TEST(AddVictim, EarliestStartOfTheHighestPriority) {
  VictimSet v;
  AddVictim(&v, "a", 1, 100);
  EXPECT_EQ(v.earliest_start_s, 100);
  AddVictim(&v, "b", 5, 700);  // higher: its start alone
  AddVictim(&v, "c", 5, 400);
  AddVictim(&v, "d", 1, 50);  // lower: ignored
  EXPECT_EQ(v.ids, (Uids{"a", "b", "c", "d"}));
  EXPECT_EQ(v.max_priority, 5);
  EXPECT_EQ(v.sum_priority, 12);
  EXPECT_EQ(v.earliest_start_s, 400);
}

TEST(ChoosePreemptionNode, FollowsKubeSchedulersOrder) {
  const auto answer = [](int rank, int64_t violations, int32_t max_priority, int64_t sum, int n) {
    NodeVictims a;
    a.node = rank;
    a.rank = rank;
    a.victims.num_pdb_violations = violations;
    a.victims.max_priority = max_priority;
    a.victims.sum_priority = sum;
    a.victims.ids.resize(static_cast<size_t>(n));
    return a;
  };
  EXPECT_EQ(ChoosePreemptionNode({}), -1);
  EXPECT_EQ(ChoosePreemptionNode({answer(0, 1, 0, 0, 1), answer(1, 0, 9, 9, 3)}), 1);
  EXPECT_EQ(ChoosePreemptionNode({answer(0, 0, 5, 5, 1), answer(1, 0, 3, 6, 2)}), 1);
  EXPECT_EQ(ChoosePreemptionNode({answer(0, 0, 3, 6, 2), answer(1, 0, 3, 5, 2)}), 1);
  EXPECT_EQ(ChoosePreemptionNode({answer(0, 0, 3, 6, 3), answer(1, 0, 3, 6, 2)}), 1);
  EXPECT_EQ(ChoosePreemptionNode({answer(3, 0, 3, 6, 2), answer(1, 0, 3, 6, 2)}), 1);
  // Equal so far: the node whose earliest highest-priority victim started latest (kube-
  // scheduler's fifth criterion) before the rank.
  NodeVictims old_victims = answer(0, 0, 3, 6, 2);
  NodeVictims young_victims = answer(1, 0, 3, 6, 2);
  old_victims.victims.earliest_start_s = 100;
  young_victims.victims.earliest_start_s = 900;
  EXPECT_EQ(ChoosePreemptionNode({old_victims, young_victims}), 1);
  young_victims.victims.ids.resize(3);  // more victims: the count comes first
  EXPECT_EQ(ChoosePreemptionNode({old_victims, young_victims}), 0);
}

}  // namespace
}  // namespace tessera
