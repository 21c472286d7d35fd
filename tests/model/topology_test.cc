#include "model/topology.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "frag/target_workload.h"
#include "model/cluster.h"
#include "model/fit.h"
#include "model/fit_summary.h"
#include "policy/policy.h"
#include "sched/scheduler.h"
#include "util/rng.h"

namespace tessera {
namespace {

// Hand-made topologies of 8-GPU nodes. Link scores on HAMi's scale: 100 per NVLink link,
// 10-60 for PCIe paths.
GpuTopology Make(const std::array<int, 8>& nvlink, const std::array<int, 8>& numa, int same_link,
                 int same_numa, int cross) {
  GpuTopology t;
  t.gpu_count = 8;
  for (int i = 0; i < 8; ++i) {
    t.nvlink[i] = static_cast<uint8_t>(nvlink[i]);
    t.numa[i] = static_cast<uint8_t>(numa[i]);
  }
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) {
      if (i == j) continue;
      t.link[i][j] = static_cast<uint16_t>(nvlink[i] == nvlink[j] ? same_link
                                           : numa[i] == numa[j]   ? same_numa
                                                                  : cross);
    }
  }
  return t;
}
// Two 4-GPU NVLink islands, one per NUMA node.
GpuTopology TwoByFour() {
  return Make({0, 0, 0, 0, 1, 1, 1, 1}, {0, 0, 0, 0, 1, 1, 1, 1}, 200, 40, 20);
}
// Four NVLink pairs, two per NUMA node.
GpuTopology FourByTwo() {
  return Make({0, 0, 1, 1, 2, 2, 3, 3}, {0, 0, 0, 0, 1, 1, 1, 1}, 100, 40, 20);
}
// One 8-way NVSwitch domain over two NUMA nodes.
GpuTopology NvSwitch() {
  return Make({0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 1, 1, 1, 1}, 300, 300, 300);
}
// No NVLink (each GPU its own domain), two NUMA nodes over PCIe.
GpuTopology PcieTwoNuma(KubeletTopologyPolicy kubelet = KubeletTopologyPolicy::kNone) {
  GpuTopology t = Make({0, 1, 2, 3, 4, 5, 6, 7}, {0, 0, 0, 0, 1, 1, 1, 1}, 0, 40, 10);
  t.kubelet = kubelet;
  return t;
}

GpuSet Set(std::initializer_list<int> gpus) {
  GpuSet s = 0;
  for (int g : gpus) s |= GpuSet{1} << g;
  return s;
}

NodeSpec Node(const std::string& name, std::shared_ptr<const GpuTopology> topo) {
  NodeSpec n{name, 96000, 1 << 20, 8, "A100", 0};
  n.topology = std::move(topo);
  return n;
}

PodRequest Whole(int gpus, TopologyIntent intent = TopologyIntent::kNone,
                 TopologyScope scope = TopologyScope::kNvlink) {
  PodRequest r;
  r.cpu_milli = 1000;
  r.memory_mib = 1024;
  r.gpu_count = gpus;
  r.gpu_milli = kMilliPerGpu;
  r.topology = {intent, scope};
  return r;
}

PodRequest Share(int32_t milli) {
  PodRequest r;
  r.cpu_milli = 1000;
  r.gpu_count = 1;
  r.gpu_milli = milli;
  return r;
}

// An 8-GPU node state with the GPUs `used` taken whole (and `partly` at 500 milli free).
NodeState State(GpuSet used, GpuSet partly = 0) {
  NodeState s;
  s.cpu_left = 96000;
  s.memory_left = 1 << 20;
  for (int i = 0; i < 8; ++i) {
    s.gpu_free[i] = ((used >> i) & 1) ? 0 : ((partly >> i) & 1) ? 500 : kMilliPerGpu;
  }
  return s;
}

constexpr auto kNv = TopologyScope::kNvlink;
constexpr auto kNuma = TopologyScope::kNuma;
constexpr auto kReq = TopologyIntent::kRequired;
constexpr auto kPref = TopologyIntent::kPreferred;

TEST(TopologyDomains, MinDomains) {
  const GpuTopology a = TwoByFour(), b = FourByTwo(), s = NvSwitch(), p = PcieTwoNuma();
  EXPECT_EQ(MinDomains(a, kNv, 8, 1), 1);
  EXPECT_EQ(MinDomains(a, kNv, 8, 4), 1);
  EXPECT_EQ(MinDomains(a, kNv, 8, 5), 2);
  EXPECT_EQ(MinDomains(a, kNv, 8, 8), 2);
  EXPECT_EQ(MinDomains(a, kNv, 8, 9), -1);
  EXPECT_EQ(MinDomains(b, kNv, 8, 2), 1);
  EXPECT_EQ(MinDomains(b, kNv, 8, 3), 2);
  EXPECT_EQ(MinDomains(b, kNv, 8, 4), 2);
  EXPECT_EQ(MinDomains(b, kNuma, 8, 4), 1);
  EXPECT_EQ(MinDomains(s, kNv, 8, 8), 1);
  EXPECT_EQ(MinDomains(p, kNv, 8, 3), 3);
  EXPECT_EQ(MinDomains(p, kNuma, 8, 4), 1);
  EXPECT_EQ(DomainCount(a, kNv, 8), 2);
  EXPECT_EQ(DomainCount(b, kNv, 8), 4);
  EXPECT_EQ(DomainCount(s, kNv, 8), 1);
}

TEST(TopologyDomains, Aligned) {
  const GpuTopology a = TwoByFour(), b = FourByTwo(), s = NvSwitch(), p = PcieTwoNuma();
  EXPECT_TRUE(Aligned(a, kNv, 8, Set({0, 1, 2, 3})));
  EXPECT_FALSE(Aligned(a, kNv, 8, Set({0, 1, 2, 4})));
  EXPECT_FALSE(Aligned(a, kNv, 8, Set({0, 4})));
  EXPECT_TRUE(Aligned(a, kNv, 8, Set({3})));  // one GPU: always
  EXPECT_TRUE(Aligned(a, kNv, 8, 0xff));
  EXPECT_TRUE(Aligned(b, kNv, 8, Set({0, 1, 2, 3})));   // two pairs: the fewest for 4
  EXPECT_FALSE(Aligned(b, kNv, 8, Set({0, 1, 2, 4})));  // three pairs
  EXPECT_FALSE(Aligned(b, kNv, 8, Set({1, 2})));
  EXPECT_TRUE(Aligned(s, kNv, 8, Set({0, 5, 6})));
  EXPECT_FALSE(Aligned(s, kNuma, 8, Set({0, 5})));
  EXPECT_TRUE(Aligned(p, kNv, 8, Set({0, 5, 6})));  // no NVLink: every set
  EXPECT_TRUE(Aligned(p, kNuma, 8, Set({4, 5, 6, 7})));
  EXPECT_FALSE(Aligned(p, kNuma, 8, Set({0, 4})));
}

TEST(TopologyFilter, RequiredFitsOnlyInsideOneDomain) {
  const GpuTopology a = TwoByFour();
  const NodeState s = State(Set({0, 1, 4}));  // domain 0-3: 2 free, 4-7: 3 free
  EXPECT_EQ(CheckFit(8, 0, s, Whole(4, kReq), &a), FitReason::kTopology);
  EXPECT_EQ(CheckFit(8, 0, s, Whole(4, kPref), &a), FitReason::kFits);
  EXPECT_EQ(CheckFit(8, 0, s, Whole(4), &a), FitReason::kFits);
  EXPECT_EQ(CheckFit(8, 0, s, Whole(3, kReq), &a), FitReason::kFits);
  EXPECT_EQ(CheckFit(8, 0, s, Whole(4, kReq), nullptr), FitReason::kFits);
  EXPECT_EQ(CheckFit(8, 0, s, Whole(6, kReq), &a), FitReason::kGpu);  // earlier filters first
  EXPECT_EQ(TopologyShortfall(a, 8, s, Whole(4, kReq)),
            "topology: needs 4 GPUs in one NVLink domain, the most free in one is 3 (domains "
            "0-3: 2 free, 4-7: 3 free)");
  // 8 GPUs need both islands: an idle node fits.
  EXPECT_EQ(CheckFit(8, 0, State(0), Whole(8, kReq), &a), FitReason::kFits);
  EXPECT_EQ(FitReasonName(FitReason::kTopology), "topology");
}

TEST(TopologyFilter, FourByTwoNeedsTheFewestPairs) {
  const GpuTopology b = FourByTwo();
  // One free GPU in three pairs, 6-7 whole: 3 GPUs fit in two pairs (6, 7 and one more).
  EXPECT_EQ(CheckFit(8, 0, State(Set({0, 2, 4})), Whole(2, kReq), &b), FitReason::kFits);
  EXPECT_EQ(CheckFit(8, 0, State(Set({0, 2, 4})), Whole(3, kReq), &b), FitReason::kFits);
  const NodeState s = State(Set({0, 2, 4, 6}));  // one free GPU in each pair
  EXPECT_EQ(CheckFit(8, 0, s, Whole(2, kReq), &b), FitReason::kTopology);
  EXPECT_EQ(CheckFit(8, 0, s, Whole(3, kReq), &b), FitReason::kTopology);
  EXPECT_EQ(CheckFit(8, 0, s, Whole(2, kReq, kNuma), &b), FitReason::kFits);  // 1 and 3
  EXPECT_EQ(CheckFit(8, 0, s, Whole(4, kReq, kNuma), &b), FitReason::kTopology);
  EXPECT_EQ(TopologyShortfall(b, 8, s, Whole(3, kReq)),
            "topology: needs 3 GPUs in 2 NVLink domains, the most free in 2 is 2 (domains 0-1: "
            "1 free, 2-3: 1 free, 4-5: 1 free, 6-7: 1 free)");
  EXPECT_NE(TopologyShortfall(b, 8, s, Whole(4, kReq, kNuma)).find("one NUMA node"),
            std::string::npos);
}

TEST(TopologyFilter, NvSwitchAndPcieNuma) {
  const GpuTopology s = NvSwitch();
  const NodeState two_each = State(Set({0, 1, 4, 5}));
  EXPECT_EQ(CheckFit(8, 0, two_each, Whole(4, kReq), &s), FitReason::kFits);  // one domain
  EXPECT_EQ(CheckFit(8, 0, two_each, Whole(4, kReq, kNuma), &s), FitReason::kTopology);
  EXPECT_EQ(CheckFit(8, 0, two_each, Whole(2, kReq, kNuma), &s), FitReason::kFits);
  // The kubelet's restricted policy makes every multi-GPU pod required at NUMA scope.
  const GpuTopology r = PcieTwoNuma(KubeletTopologyPolicy::kRestricted);
  const NodeState one_each = State(Set({0, 4}));
  EXPECT_EQ(CheckFit(8, 0, one_each, Whole(4), &r), FitReason::kTopology);
  EXPECT_EQ(CheckFit(8, 0, one_each, Whole(3), &r), FitReason::kFits);
  EXPECT_EQ(CheckFit(8, 0, one_each, Whole(1), &r), FitReason::kFits);
  EXPECT_EQ(CheckFit(8, 0, State(0), Whole(8), &r), FitReason::kFits);
  const GpuTopology p = PcieTwoNuma();  // no kubelet policy: nothing required
  EXPECT_EQ(CheckFit(8, 0, one_each, Whole(4), &p), FitReason::kFits);
  // single-numa-node: a pod larger than one NUMA node never fits.
  const GpuTopology single = PcieTwoNuma(KubeletTopologyPolicy::kSingleNumaNode);
  EXPECT_EQ(CheckFit(8, 0, State(0), Whole(8), &single), FitReason::kTopology);
  EXPECT_EQ(CheckFit(8, 0, State(0), Whole(5), &single), FitReason::kTopology);
  EXPECT_EQ(CheckFit(8, 0, State(0), Whole(4), &single), FitReason::kFits);
}

TEST(TopologyChoice, KeepsWholeDomainsFree) {
  const GpuTopology a = TwoByFour();
  EXPECT_EQ(DefaultGpuChoice(8, State(0), Whole(4), &a), Set({0, 1, 2, 3}));
  EXPECT_EQ(DefaultGpuChoice(8, State(Set({0})), Whole(4), &a), Set({4, 5, 6, 7}));
  // Without topology: the lowest free GPUs, as ever.
  EXPECT_EQ(DefaultGpuChoice(8, State(Set({0})), Whole(4)), Set({1, 2, 3, 4}));
  // Best fit: the domain with the fewest free GPUs that holds the pod.
  EXPECT_EQ(DefaultGpuChoice(8, State(Set({4})), Whole(2), &a), Set({5, 6}));
  EXPECT_EQ(DefaultGpuChoice(8, State(Set({4})), Whole(3), &a), Set({5, 6, 7}));
  // One GPU into the fullest domain.
  EXPECT_EQ(DefaultGpuChoice(8, State(Set({4})), Whole(1), &a), Set({5}));
  EXPECT_EQ(DefaultGpuChoice(8, State(Set({4})), Whole(1)), Set({0}));
  // No aligned set: the pod still gets GPUs (not required).
  EXPECT_EQ(DefaultGpuChoice(8, State(Set({0, 1, 4, 5})), Whole(4), &a), Set({2, 3, 6, 7}));
  // 4×2: a pair; one GPU into the broken pair.
  const GpuTopology b = FourByTwo();
  EXPECT_EQ(DefaultGpuChoice(8, State(Set({0})), Whole(2), &b), Set({2, 3}));
  EXPECT_EQ(DefaultGpuChoice(8, State(Set({0})), Whole(1), &b), Set({1}));
  EXPECT_EQ(DefaultGpuChoice(8, State(Set({1, 2})), Whole(1), &b), Set({0}));
}

TEST(TopologyChoice, SharesGoToTheFullestDomain) {
  const GpuTopology a = TwoByFour();
  // GPU 4 taken: a share goes into 4-7, keeping 0-3 whole (without topology: GPU 0).
  EXPECT_EQ(DefaultGpuChoice(8, State(Set({4})), Share(300), &a), Set({5}));
  EXPECT_EQ(DefaultGpuChoice(8, State(Set({4})), Share(300)), Set({0}));
  // A partly used GPU with room takes it before any idle GPU.
  EXPECT_EQ(DefaultGpuChoice(8, State(Set({4}), Set({2})), Share(300), &a), Set({2}));
  EXPECT_EQ(DefaultGpuChoice(8, State(Set({4}), Set({2, 6})), Share(300), &a), Set({6}));
}

TEST(TopologyChoice, BestPairwiseLinks) {
  // One NVSwitch domain whose pairwise scores vary (as HAMi's score annotation can say):
  // 4-7 link best among themselves.
  GpuTopology t = NvSwitch();
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) {
      if (i != j) t.link[i][j] = (i >= 4 && j >= 4) ? 300 : ((i ^ j) == 1 ? 200 : 50);
    }
  }
  EXPECT_EQ(DefaultGpuChoice(8, State(0), Whole(4), &t), Set({4, 5, 6, 7}));
  EXPECT_EQ(DefaultGpuChoice(8, State(Set({4, 5, 6})), Whole(2), &t), Set({0, 1}));
  EXPECT_EQ(DefaultGpuChoice(8, State(0), Whole(4)), Set({0, 1, 2, 3}));
  // Required NUMA scope on the NVSwitch node: inside one NUMA node.
  const GpuTopology s = NvSwitch();
  EXPECT_EQ(DefaultGpuChoice(8, State(Set({0, 1})), Whole(3, kReq, kNuma), &s), Set({4, 5, 6}));
  // kubelet restricted, PCIe only: the NUMA node with the fewest free GPUs that holds it.
  const GpuTopology r = PcieTwoNuma(KubeletTopologyPolicy::kRestricted);
  EXPECT_EQ(DefaultGpuChoice(8, State(Set({4})), Whole(2), &r), Set({5, 6}));
  EXPECT_EQ(DefaultGpuChoice(8, State(0), Whole(8), &r), GpuSet{0xff});
}

TEST(TopologyMeasure, BrokenIslandIsFragmentForAFourGpuClass) {
  TargetClass four;
  four.cpu_milli = 1000;
  four.gpu_milli = kMilliPerGpu;
  four.gpu_count = 4;
  four.probability = 1.0;
  TargetWorkload w = TargetWorkload::FromClasses({four});
  const GpuTopology a = TwoByFour();
  const NodeState s = State(Set({0}));  // 0-3 broken: 3 free GPUs there
  // Without topology every free GPU can host the class; with it, the broken island cannot.
  EXPECT_EQ(w.NodeFragmentation(0, s.cpu_left, s.gpu_free.data(), 8), 0);
  EXPECT_EQ(w.NodeFragmentation(0, s.cpu_left, s.gpu_free.data(), 8, nullptr, &a), 3000);
  const NodeState both = State(Set({0, 4}));  // no island whole: all free GPU is fragment
  EXPECT_EQ(w.NodeFragmentation(0, both.cpu_left, both.gpu_free.data(), 8, nullptr, &a), 6000);
  EXPECT_EQ(w.NodeFragmentation(0, both.cpu_left, both.gpu_free.data(), 8), 0);
  // 8-way NVSwitch: one domain, as without topology.
  const GpuTopology sw = NvSwitch();
  EXPECT_EQ(w.NodeFragmentation(0, both.cpu_left, both.gpu_free.data(), 8, nullptr, &sw), 0);
  // 4×2 with one pair broken: two whole pairs hold a 4-GPU pod; the odd GPU is fragment.
  const GpuTopology b = FourByTwo();
  EXPECT_EQ(w.NodeFragmentation(0, s.cpu_left, s.gpu_free.data(), 8, nullptr, &b), 1000);
  // Through a Cluster: its node's topology is used.
  Cluster c({Node("n", std::make_shared<GpuTopology>(a))});
  c.Allocate(0, Whole(1), Set({0}));
  w.Resolve(c);
  EXPECT_EQ(w.NodeFragmentation(c, 0), 3000);
  // Usable GPUs by aligned sets.
  EXPECT_EQ(AlignedUsable(a, 8, 0xfe, 4), Set({4, 5, 6, 7}));
  EXPECT_EQ(AlignedUsable(a, 8, 0xfe, 2), GpuSet{0xfe});
  EXPECT_EQ(AlignedUsable(b, 8, 0xfe, 3), GpuSet{0xfe});  // e.g. 1, 2, 3: two pairs
  EXPECT_EQ(AlignedUsable(b, 8, 0xaa, 2), 0u);            // one free GPU per pair
  EXPECT_EQ(AlignedUsable(b, 8, 0xaa, 3), 0u);
  EXPECT_EQ(AlignedUsable(PcieTwoNuma(), 8, 0x11, 2), GpuSet{0x11});  // no NVLink: any pair
  EXPECT_EQ(AlignedUsable(PcieTwoNuma(KubeletTopologyPolicy::kRestricted), 8, 0x11, 2), 0u);
}

TEST(TopologyGrouping, EqualTopologiesShareATypeOthersNever) {
  // Two nodes with equal topologies from different shared_ptrs, one 4×2, one without.
  std::vector<NodeSpec> nodes = {Node("a", std::make_shared<GpuTopology>(TwoByFour())),
                                 Node("b", std::make_shared<GpuTopology>(TwoByFour())),
                                 Node("c", std::make_shared<GpuTopology>(FourByTwo())),
                                 Node("d", nullptr)};
  Cluster c(nodes);
  EXPECT_EQ(c.topology_id(0), c.topology_id(1));
  EXPECT_EQ(c.topology(0), c.topology(1));  // interned
  EXPECT_NE(c.topology_id(0), c.topology_id(2));
  EXPECT_EQ(c.topology_id(3), 0);
  EXPECT_EQ(c.topologies().size(), 2u);
  TargetWorkload w = TargetWorkload::FromClasses({});
  PolicyContext ctx;
  ctx.workload = &w;
  std::unique_ptr<Policy> p = MakePolicy("bestfit", ctx);
  Scheduler s(&c, p.get(), {0, 1, 2, 3}, 1);
  EXPECT_EQ(s.group_of(0), s.group_of(1));
  EXPECT_NE(s.group_of(0), s.group_of(2));
  EXPECT_NE(s.group_of(0), s.group_of(3));
  EXPECT_NE(s.group_of(2), s.group_of(3));
  EXPECT_EQ(s.distinct_states(), 3);
  // Topology-free clusters keep no per-node topology ids.
  Cluster plain({Node("x", nullptr), Node("y", nullptr)});
  EXPECT_TRUE(plain.topologies().empty());
  EXPECT_EQ(plain.topology_id(1), 0);
}

TEST(TopologyFitQuery, InexactOnlyWhereTopologyCanRefuse) {
  const GpuTopology a = TwoByFour();
  const NodeState s = State(Set({0, 1, 4}));
  const FitSummary plain = FitSummary::Of(8, 0, s);
  const FitSummary topo = FitSummary::Of(8, 0, s, TopologyBits(&a, 8));
  const FitQuery required(Whole(4, kReq));
  const FitQuery none(Whole(4));
  EXPECT_TRUE(required.exact());
  EXPECT_TRUE(required.ExactOn(plain));
  EXPECT_FALSE(required.ExactOn(topo));  // MayFit true, CheckFit says kTopology
  EXPECT_TRUE(required.MayFit(topo));
  EXPECT_TRUE(none.ExactOn(topo));  // no kubelet policy: the pod cannot be refused
  EXPECT_TRUE(FitQuery(Share(300)).ExactOn(topo));
  const GpuTopology r = PcieTwoNuma(KubeletTopologyPolicy::kRestricted);
  EXPECT_FALSE(none.ExactOn(FitSummary::Of(8, 0, s, TopologyBits(&r, 8))));
  EXPECT_EQ(TopologyBits(nullptr, 8), 0);
  const GpuTopology sw = NvSwitch();
  EXPECT_EQ(TopologyBits(&sw, 8), kTopoNumaSplit);
}

// The scheduler on a cluster with topologies decides as a plain loop over the nodes (CheckFit
// with the topology, the policy's score, its GPUs if they meet the requirement, else the
// topology-aware generic choice), and every required pod lands inside its domains.
class TopologyEquivalence : public ::testing::TestWithParam<std::string> {};

TEST_P(TopologyEquivalence, SchedulerEqualsThePlainLoopAndHonoursRequired) {
  Rng rng(7);
  const std::vector<std::shared_ptr<const GpuTopology>> topos = {
      std::make_shared<GpuTopology>(TwoByFour()), std::make_shared<GpuTopology>(FourByTwo()),
      std::make_shared<GpuTopology>(NvSwitch()),
      std::make_shared<GpuTopology>(PcieTwoNuma(KubeletTopologyPolicy::kRestricted)), nullptr};
  std::vector<NodeSpec> nodes;
  for (int i = 0; i < 40; ++i) {
    const int t = static_cast<int>(rng.Below(topos.size()));
    // A fresh copy for some nodes: equal values from different pointers.
    auto topo = topos[t] != nullptr && rng.Below(2) == 0
                    ? std::make_shared<const GpuTopology>(*topos[t])
                    : topos[t];
    nodes.push_back(Node("n" + std::to_string(i), topo));
  }
  std::vector<PodSpec> pods;
  const int counts[] = {1, 1, 2, 2, 4, 4, 8};
  for (int i = 0; i < 300; ++i) {
    PodSpec p;
    p.name = "p" + std::to_string(i);
    p.cpu_milli = 1000 * static_cast<int64_t>(1 + rng.Below(4));
    p.memory_mib = 1024;
    if (rng.Below(4) == 0) {
      p.gpu_count = 1;
      p.gpu_milli = 250 * static_cast<int32_t>(1 + rng.Below(3));
    } else {
      p.gpu_count = counts[rng.Below(7)];
      p.gpu_milli = kMilliPerGpu;
      const int intent = static_cast<int>(rng.Below(3));
      p.topology = {static_cast<TopologyIntent>(intent),
                    rng.Below(3) == 0 ? TopologyScope::kNuma : TopologyScope::kNvlink};
    }
    pods.push_back(p);
  }
  Cluster grouped(nodes);
  Cluster plain(nodes);
  // A third of the nodes start with GPUs 0 and 5 taken: every island of 2×4 broken.
  for (int n = 0; n < static_cast<int>(nodes.size()); n += 3) {
    for (Cluster* c : {&grouped, &plain}) {
      c->Allocate(n, Whole(1), Set({0}));
      c->Allocate(n, Whole(1), Set({5}));
    }
  }
  TargetWorkload w = TargetWorkload::FromPods(pods);
  w.Resolve(grouped);
  PolicyContext ctx;
  ctx.workload = &w;
  std::unique_ptr<Policy> policy = MakePolicy(GetParam(), ctx);
  ASSERT_NE(policy, nullptr);
  std::vector<int> order(nodes.size());
  std::iota(order.begin(), order.end(), 0);
  rng.Shuffle(order);
  Scheduler s(&grouped, policy.get(), order, 9);
  int placed = 0, refused_for_topology = 0, required_placed = 0;
  for (const PodSpec& p : pods) {
    const PodRequest r = grouped.MakeRequest(p);
    const Decision got = s.Decide(r);
    // The plain loop (no context: these policies use none unless adaptive; skip those).
    const int64_t context = policy->UsesContext() || policy->mode() != ScoreMode::kInteger ? -1 : 0;
    Decision want;
    if (context == 0) {
      int best = std::numeric_limits<int>::min();
      for (int n : order) {
        const FitReason fit = plain.Check(n, r);
        if (fit != FitReason::kFits) continue;
        NodeScore ns = policy->Score(NodeView{plain.spec(n), plain.model_id(n), plain.state(n)}, r);
        const int score = static_cast<int>(ns.score);
        if (score <= best) continue;
        best = score;
        want.node = n;
        want.score = score;
        const GpuTopology* t = plain.topology(n);
        const bool ok =
            ns.gpus != 0 && (t == nullptr || MeetsRequired(*t, 8, EffectiveNeed(*t, r), ns.gpus));
        want.gpus = r.IsCpuOnly() ? 0 : ok ? ns.gpus : DefaultGpuChoice(8, plain.state(n), r, t);
      }
      ASSERT_EQ(got.node, want.node) << p.name;
      ASSERT_EQ(got.gpus, want.gpus) << p.name;
      ASSERT_EQ(got.score, want.score) << p.name;
    }
    std::array<int, kNumFitReasons> rejected{};
    for (int n = 0; n < plain.size(); ++n) ++rejected[static_cast<int>(plain.Check(n, r))];
    refused_for_topology += rejected[static_cast<int>(FitReason::kTopology)];
    if (!got.ok()) {
      rejected[0] = 0;
      ASSERT_EQ(got.rejected, rejected) << p.name;
      continue;
    }
    const GpuTopology* t = grouped.topology(got.node);
    if (t != nullptr) {
      const TopologyNeed need = EffectiveNeed(*t, r);
      ASSERT_TRUE(MeetsRequired(*t, 8, need, got.gpus)) << p.name;
      required_placed += need.required();
    }
    s.Bind(got.node, r, got.gpus);
    plain.Allocate(got.node, r, got.gpus);
    ++placed;
  }
  EXPECT_GT(placed, 50);
  EXPECT_LT(placed, 300);
  EXPECT_GT(required_placed, 10);
  EXPECT_GT(refused_for_topology, 0);
}

INSTANTIATE_TEST_SUITE_P(Policies, TopologyEquivalence,
                         ::testing::Values("fgd", "packing", "clustering", "hami-binpack",
                                           "tessera"));

TEST(TopologyTessera, ChargesBrokenIslandsAndPrefersAligned) {
  TargetClass four;
  four.cpu_milli = 1000;
  four.gpu_milli = kMilliPerGpu;
  four.gpu_count = 4;
  four.probability = 0.5;
  four.count = 50;
  TargetClass share = four;
  share.gpu_milli = 300;
  share.gpu_count = 1;
  TargetWorkload w = TargetWorkload::FromClasses({four, share});
  auto topo = std::make_shared<const GpuTopology>(TwoByFour());
  {
    // GPU 4 taken whole: tessera puts a share into 4-7 (keeping 0-3 whole for a 4-GPU pod);
    // fgd, topology-blind as published, takes the first of the equal idle GPUs.
    Cluster c({Node("n", topo)});
    c.Allocate(0, Whole(1), Set({4}));
    w.Resolve(c);
    PolicyContext ctx;
    ctx.workload = &w;
    for (const char* name : {"tessera", "fgd"}) {
      std::unique_ptr<Policy> p = MakePolicy(name, ctx);
      const NodeScore ns = p->Score(NodeView{c.spec(0), c.model_id(0), c.state(0)}, Share(300));
      const int gpu = std::countr_zero(ns.gpus);
      if (std::string(name) == "tessera") {
        EXPECT_GE(gpu, 5) << name;
      } else {
        EXPECT_EQ(gpu, 0) << name;
      }
    }
  }
  {
    // Node 0 has no whole island (GPUs 0 and 4 taken); node 1 has 4-7 whole. A preferred
    // 4-GPU pod goes to node 1, in 4-7.
    Cluster c({Node("a", topo), Node("b", topo)});
    c.Allocate(0, Whole(2), Set({0, 4}));
    c.Allocate(1, Whole(3), Set({0, 1, 2}));
    w.Resolve(c);
    PolicyContext ctx;
    ctx.workload = &w;
    std::unique_ptr<Policy> p = MakePolicy("tessera", ctx);
    Scheduler s(&c, p.get(), {0, 1}, 1);
    const Decision d = s.Decide(Whole(4, kPref));
    EXPECT_EQ(d.node, 1);
    EXPECT_EQ(d.gpus, Set({4, 5, 6, 7}));
  }
}

}  // namespace
}  // namespace tessera
