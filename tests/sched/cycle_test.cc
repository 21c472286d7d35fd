// The cycle's headroom rules (sched/cycle.h), which the replay and serve both call: which
// classes the headroom holds (by priority below the protected one, in every front door — a class
// without use_headroom at or above that priority is not held), when a held pod is at risk of
// its SLO, whether it preempts instead of waiting, and where and on which GPUs a held pod may go.

#include "sched/cycle.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/cluster.h"
#include "util/clock.h"

namespace tessera {
namespace {

NodeSpec Node(const std::string& name, int gpus) {
  NodeSpec n;
  n.name = name;
  n.cpu_milli = 64000;
  n.memory_mib = 262144;
  n.gpu_count = gpus;
  n.gpu_model = "A10";
  return n;
}

PodRequest Request(const Cluster& cluster, int gpus, int milli = 1000) {
  PodSpec p;
  p.cpu_milli = 1000;
  p.memory_mib = 1024;
  p.gpu_count = gpus;
  p.gpu_milli = milli;
  return cluster.MakeRequest(p);
}

QosClass Class(const std::string& name, int priority, double slo_s, bool preemptible,
               bool use_headroom = false) {
  QosClass c;
  c.name = name;
  c.priority = priority;
  c.slo_wait_s = slo_s;
  c.preemptible = preemptible;
  c.use_headroom = use_headroom;
  return c;
}

// H = 6 whole GPUs, protected from priority 1000 (LS).
HeadroomOptions SixFromLs() {
  HeadroomOptions h;
  h.mode = HeadroomOptions::Mode::kStatic;
  h.gpus = 6;
  h.min_priority = 1000;
  return h;
}

TEST(CycleHeadroom, HoldsByPriorityBelowTheProtectedClassesOnly) {
  ManualClock clock;
  const Headroom headroom(SixFromLs(), &clock);
  const QosClass ls = Class("LS", 1000, 1, false, true);
  const QosClass critical = Class("Critical", 1100, -1, true);  // no use_headroom, above LS
  const QosClass guaranteed = Class("Guaranteed", 900, 10, false);
  const QosClass burstable = Class("Burstable", 500, 60, true);
  const QosClass be = Class("BE", 0, -1, true);
  EXPECT_FALSE(ClassifyForHeadroom(headroom, ls, 0).held);
  EXPECT_FALSE(ClassifyForHeadroom(headroom, critical, 0).held);
  EXPECT_FALSE(ClassifyForHeadroom(headroom, guaranteed, 0).held);  // not preemptible
  EXPECT_TRUE(ClassifyForHeadroom(headroom, burstable, 0).held);
  EXPECT_TRUE(ClassifyForHeadroom(headroom, be, 0).held);

  // At risk once it has waited yield_after (0.25) of its SLO; a pod of a class without an SLO,
  // or whose wait is unknown, never is.
  EXPECT_FALSE(ClassifyForHeadroom(headroom, burstable, 14.9).at_risk);
  EXPECT_TRUE(ClassifyForHeadroom(headroom, burstable, 15).at_risk);
  EXPECT_FALSE(ClassifyForHeadroom(headroom, burstable, std::nullopt).at_risk);
  EXPECT_FALSE(ClassifyForHeadroom(headroom, be, 1e9).at_risk);
  // Refused for the headroom, a class with an SLO preempts instead of waiting; BE waits.
  EXPECT_TRUE(ClassifyForHeadroom(headroom, burstable, 0).preempts);
  EXPECT_FALSE(ClassifyForHeadroom(headroom, be, 0).preempts);

  HeadroomOptions both = SixFromLs();
  both.hold_non_preemptible = true;
  EXPECT_TRUE(ClassifyForHeadroom(Headroom(both, &clock), guaranteed, 0).held);
  HeadroomOptions none = SixFromLs();
  none.mode = HeadroomOptions::Mode::kNone;
  EXPECT_FALSE(ClassifyForHeadroom(Headroom(none, &clock), be, 0).held);
}

TEST(CycleHeadroom, GateKeepsHUnlessThePodIsAtRiskAndMovesAShareOntoAUsedGpu) {
  ManualClock clock;
  Cluster cluster({Node("n1", 4), Node("n2", 4)});
  Headroom headroom(SixFromLs(), &clock);
  headroom.SetCluster(cluster);
  std::vector<int64_t> by_model;
  const int64_t idle = CountIdleGpus(cluster, &by_model);
  ASSERT_EQ(idle, 8);
  const QosClass burstable = Class("Burstable", 500, 60, true);
  const PodRequest four = Request(cluster, 4);

  const HeadroomGate waiting(headroom, cluster, ClassifyForHeadroom(headroom, burstable, 0), idle,
                             by_model);
  EXPECT_TRUE(waiting.checks());
  EXPECT_EQ(waiting.MayUse(0, four), Headroom::Shortfall::kCluster);  // 8 - 4 < 6
  EXPECT_EQ(waiting.MayUse(0, Request(cluster, 2)), Headroom::Shortfall::kNone);
  GpuSet gpus = 0b1111;
  EXPECT_EQ(waiting.Place(0, four, &gpus), Headroom::Shortfall::kCluster);
  EXPECT_EQ(gpus, GpuSet{0b1111});  // untouched where it may not go

  // At risk, it must leave only ceil(0.2 · 6) = 2 idle.
  const HeadroomGate at_risk(headroom, cluster, ClassifyForHeadroom(headroom, burstable, 30), idle,
                             by_model);
  EXPECT_TRUE(at_risk.IdleOf(0).at_risk);
  EXPECT_EQ(at_risk.MayUse(0, four), Headroom::Shortfall::kNone);
  EXPECT_EQ(at_risk.Place(0, four, &gpus), Headroom::Shortfall::kNone);

  // A pod the headroom does not hold is never refused.
  const HeadroomGate free_pod(headroom, cluster,
                              ClassifyForHeadroom(headroom, Class("LS", 1000, 1, false, true), 0),
                              idle, by_model);
  EXPECT_FALSE(free_pod.checks());
  EXPECT_EQ(free_pod.MayUse(0, Request(cluster, 8)), Headroom::Shortfall::kNone);

  // A held share the policy put on an idle GPU goes onto a used GPU with room instead.
  const PodRequest half = Request(cluster, 1, 500);
  cluster.Allocate(1, half, GpuSet{1} << 2);  // n2's GPU 2 half used
  std::vector<int64_t> by_model_now;
  const int64_t idle_now = CountIdleGpus(cluster, &by_model_now);
  HeadroomOptions all_idle = SixFromLs();
  all_idle.gpus = idle_now;  // every idle GPU is kept
  Headroom tight(all_idle, &clock);
  tight.SetCluster(cluster);
  const HeadroomGate share(tight, cluster, ClassifyForHeadroom(tight, burstable, 0), idle_now,
                           by_model_now);
  GpuSet share_gpus = GpuSet{1} << 0;  // an idle GPU of n2
  EXPECT_EQ(share.Place(1, half, &share_gpus), Headroom::Shortfall::kNone);
  EXPECT_EQ(share_gpus, GpuSet{1} << 2);
  GpuSet on_n1 = GpuSet{1} << 0;  // n1 has no used GPU: refused
  EXPECT_EQ(share.Place(0, half, &on_n1), Headroom::Shortfall::kCluster);
}

}  // namespace
}  // namespace tessera
