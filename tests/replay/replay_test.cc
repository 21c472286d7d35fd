// The replay engine on small hand-made traces: queue order, victims, grace periods,
// reservations, and that every pod is accounted for.

#include "replay/replay.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "policy/policy.h"
#include "replay/timeline.h"
#include "util/rng.h"

namespace tessera {
namespace {

NodeSpec Node(const std::string& name, int gpus) {
  NodeSpec n;
  n.name = name;
  n.cpu_milli = 64000;
  n.memory_mib = 262144;
  n.gpu_count = gpus;
  n.gpu_model = "T4";
  return n;
}

TimedPod Pod(const std::string& name, const std::string& qos, double arrival, double duration,
             int gpus = 1, int milli = 1000) {
  TimedPod p;
  p.spec.name = name;
  p.spec.cpu_milli = 1000;
  p.spec.memory_mib = 1024;
  p.spec.gpu_count = gpus;
  p.spec.gpu_milli = milli;
  p.spec.qos = qos;
  p.arrival_s = arrival;
  p.duration_s = duration;
  return p;
}

class ReplayTest : public ::testing::Test {
 protected:
  ReplayResult Run(const std::vector<NodeSpec>& nodes, std::vector<TimedPod> pods,
                   ReplayOptions o = {}) {
    timeline_.pods = std::move(pods);
    o.record_events = true;
    o.samples = 10;
    return RunReplay(nodes, timeline_, *policy_, nullptr, o);
  }
  // Start time of pod `i`'s first start, or -1.
  static double StartOf(const ReplayResult& r, int i) {
    for (const ReplayEvent& e : r.events) {
      if (e.kind == ReplayEvent::Kind::kStart && e.pod == i) return e.t_s;
    }
    return -1;
  }
  // The node of pod i's first start (-1: it never started).
  static int NodeOf(const ReplayResult& r, int i) {
    for (const ReplayEvent& e : r.events) {
      if (e.kind == ReplayEvent::Kind::kStart && e.pod == i) return e.node;
    }
    return -1;
  }
  Timeline timeline_;
  std::unique_ptr<Policy> policy_ = MakePolicy("k8s-default", PolicyContext{});
};

TEST_F(ReplayTest, HigherClassGoesFirstThenArrivalOrder) {
  ReplayOptions o;
  o.preemption = false;
  o.horizon_s = 100;
  // One GPU. p0 runs 0..10; p1 (BE) and p2 (BE) wait; p3 (LS) arrives last but starts first.
  const ReplayResult r = Run({Node("n0", 1)},
                             {Pod("p0", "BE", 0, 10), Pod("p1", "BE", 1, 10),
                              Pod("p2", "BE", 2, 10), Pod("p3", "LS", 3, 10)},
                             o);
  EXPECT_DOUBLE_EQ(StartOf(r, 0), 0);
  EXPECT_DOUBLE_EQ(StartOf(r, 3), 10);  // LS first when the GPU frees
  EXPECT_DOUBLE_EQ(StartOf(r, 1), 20);  // then BE in arrival order
  EXPECT_DOUBLE_EQ(StartOf(r, 2), 30);
  EXPECT_DOUBLE_EQ(r.pods[3].wait_s, 7);
  EXPECT_EQ(r.preemptions, 0);
}

TEST_F(ReplayTest, PodsThatDoNotFitDoNotBlockSmallerOnes) {
  ReplayOptions o;
  o.preemption = false;
  o.horizon_s = 100;
  // Two GPUs, one busy: the 2-GPU LS pod waits, the 1-GPU BE pod behind it starts at once.
  const ReplayResult r =
      Run({Node("n0", 2)},
          {Pod("busy", "BE", 0, 50), Pod("big", "LS", 1, 10, 2), Pod("small", "BE", 2, 10)}, o);
  EXPECT_DOUBLE_EQ(StartOf(r, 2), 2);
  EXPECT_DOUBLE_EQ(StartOf(r, 1), 50);  // both GPUs free only when both others are gone
}

TEST_F(ReplayTest, SeriesCountsPreemptorsWaitingOutTheGracePeriod) {
  ReplayOptions o;
  o.horizon_s = 100;  // samples every 10 s
  // One GPU held by BE; LS arrives at 5, preempts, and waits until 35 (grace 30 s): it has left
  // the queue but is still waiting, which the queue depth must show.
  const ReplayResult r = Run({Node("n0", 1)}, {Pod("be", "BE", 0, 500), Pod("ls", "LS", 5, 10)}, o);
  ASSERT_EQ(r.series.size(), 11u);
  const TimePoint& at20 = r.series[2];
  EXPECT_DOUBLE_EQ(at20.t_s, 20);
  EXPECT_EQ(at20.pending[0], 0);            // LS not in the queue
  EXPECT_EQ(at20.preempting[0], 1);         // but preempting
  EXPECT_EQ(r.series[4].preempting[0], 0);  // started at 35
  EXPECT_EQ(r.series[4].pending[3], 1);     // the victim is back in the queue
  EXPECT_DOUBLE_EQ(StartOf(r, 1), 35);
}

TEST_F(ReplayTest, PreemptsTheLowestFewestVictimsAndWaitsTheGracePeriod) {
  ReplayOptions o;
  o.horizon_s = 1000;
  // n0: a Burstable and a BE pod on its two GPUs; n1: two BE half-GPU pods on its one GPU.
  // An LS pod needing one GPU: n0 evicting the BE pod (1 victim, lowest priority) beats n1
  // (2 victims) and beats evicting the Burstable pod.
  std::vector<NodeSpec> nodes = {Node("n0", 2), Node("n1", 1)};
  const ReplayResult r = Run(nodes,
                             {Pod("burst", "Burstable", 0, 500), Pod("be", "BE", 0, 500),
                              Pod("half-a", "BE", 0, 500, 1, 500),
                              Pod("half-b", "BE", 0, 500, 1, 500), Pod("ls", "LS", 10, 100)},
                             o);
  // Each pod of t=0 started at 0 on the node we expect.
  std::vector<int> victims;
  for (const ReplayEvent& e : r.events) {
    if (e.kind == ReplayEvent::Kind::kPreempt) {
      victims.push_back(e.pod);
      EXPECT_EQ(e.by, 4);
    }
  }
  ASSERT_EQ(victims.size(), 1u);
  EXPECT_EQ(timeline_.pods[victims[0]].spec.name, "be");
  EXPECT_DOUBLE_EQ(StartOf(r, 4), 10 + 30);  // Kubernetes' default grace period
  EXPECT_DOUBLE_EQ(r.pods[4].wait_s, 30);
  EXPECT_EQ(r.pods[victims[0]].times_preempted, 1);
  EXPECT_EQ(r.classes[3].preempted, 1);   // BE
  EXPECT_EQ(r.classes[0].preemptors, 1);  // LS
  // The victim went back to the queue and restarted from scratch when the LS pod ended.
  double restart = -1;
  for (const ReplayEvent& e : r.events) {
    if (e.kind == ReplayEvent::Kind::kStart && e.pod == victims[0] && e.t_s > 0) restart = e.t_s;
  }
  EXPECT_DOUBLE_EQ(restart, 140);
  EXPECT_EQ(r.pods[victims[0]].status, PodOutcome::Status::kFinished);
}

TEST_F(ReplayTest, GracePeriodComesFromTheVictimsClass) {
  ReplayOptions o;
  o.horizon_s = 1000;
  o.qos.classes[3].grace_s = 5;  // BE
  const ReplayResult r = Run({Node("n0", 1)}, {Pod("be", "BE", 0, 500), Pod("ls", "LS", 2, 10)}, o);
  EXPECT_DOUBLE_EQ(StartOf(r, 1), 7);
  // The victim restarts after the LS pod is done (12) and runs its full duration again.
  double restart = -1;
  for (const ReplayEvent& e : r.events) {
    if (e.kind == ReplayEvent::Kind::kStart && e.pod == 0 && e.t_s > 0) restart = e.t_s;
  }
  EXPECT_DOUBLE_EQ(restart, 17);
  // Finish events name the node the pod ran on.
  for (const ReplayEvent& e : r.events) {
    if (e.kind == ReplayEvent::Kind::kFinish) {
      EXPECT_EQ(e.node, 0);
    }
  }
  EXPECT_NEAR(r.classes[3].lost_gpu_hours, 7.0 / 3600, 1e-12);
}

TEST_F(ReplayTest, PreemptionDelayLetsCapacityFreeFirst) {
  ReplayOptions o;
  o.horizon_s = 1000;
  o.preempt_delay_s = 5;
  // n0's BE pod ends at 13, within the LS pod's 5 s of patience (arrival 10): no preemption.
  // Later, n0 busy until 500: the second LS pod preempts at 100 + 5 and starts at 135.
  const ReplayResult r = Run({Node("n0", 1)},
                             {Pod("be0", "BE", 0, 13), Pod("ls0", "LS", 10, 50),
                              Pod("be1", "BE", 61, 500), Pod("ls1", "LS", 100, 10)},
                             o);
  EXPECT_DOUBLE_EQ(StartOf(r, 1), 13);
  EXPECT_DOUBLE_EQ(StartOf(r, 3), 135);
  EXPECT_EQ(r.preemptions, 1);
}

TEST_F(ReplayTest, PassTriesPodsOfDifferentShapesInQueueOrder) {
  ReplayOptions o;
  o.preemption = false;
  o.horizon_s = 1000;
  // One GPU, busy until 10. Two shapes (CPU 1000 and 2000) of BE and one of LS queue up
  // interleaved: each departure starts the next pod in queue order, LS first, then BE by time
  // queued whatever its shape (a pass merges the shapes' queues).
  std::vector<TimedPod> pods = {Pod("busy", "BE", 0, 10)};
  for (int i = 0; i < 6; ++i) {
    pods.push_back(Pod("be" + std::to_string(i), "BE", 1 + i, 10));
    pods.back().spec.cpu_milli = i % 2 ? 2000 : 1000;
  }
  pods.push_back(Pod("ls", "LS", 8, 10));
  const ReplayResult r = Run({Node("n0", 1)}, pods, o);
  EXPECT_DOUBLE_EQ(StartOf(r, 7), 10);
  for (int i = 1; i <= 6; ++i) EXPECT_DOUBLE_EQ(StartOf(r, i), 10 + 10 * i) << "be" << i - 1;
}

TEST_F(ReplayTest, FailedPreemptionWaitsForANewVictimEvenAfterASameClassStartInAPass) {
  ReplayOptions o;
  o.horizon_s = 1500;
  // n0 (two A10 GPUs): a Guaranteed pod (not preemptible) until 100 and a BE pod until 1000;
  // n1 (one T4): a Guaranteed pod until 10. Burstable pods needing both A10 GPUs arrive at 1,
  // 3 and 101 (big0..2); a one-T4 Burstable pod at 2 (small). At 10 the T4 frees: small starts,
  // a new possible victim, so in the same pass big1 tries to preempt again and fails (its
  // Burstable peer is no victim). A failed preemption is retried only after a new possible
  // victim starts (docs/REPLAY.md), and none does: once the Guaranteed pod has left (100),
  // evicting the BE pod would make room, yet no big pod does, not even big2 arriving at 101.
  NodeSpec a10 = Node("n0", 2);
  a10.gpu_model = "A10";
  auto pinned = [](TimedPod p, const char* model) {
    p.spec.gpu_spec = model;
    return p;
  };
  const ReplayResult r = Run({a10, Node("n1", 1)},
                             {pinned(Pod("guaranteed0", "Guaranteed", 0, 100), "A10"),
                              pinned(Pod("be", "BE", 0, 1000), "A10"),
                              pinned(Pod("guaranteed1", "Guaranteed", 0, 10), "T4"),
                              pinned(Pod("big0", "Burstable", 1, 100, 2), "A10"),
                              pinned(Pod("small", "Burstable", 2, 5000), "T4"),
                              pinned(Pod("big1", "Burstable", 3, 100, 2), "A10"),
                              pinned(Pod("big2", "Burstable", 101, 100, 2), "A10")},
                             o);
  EXPECT_DOUBLE_EQ(StartOf(r, 4), 10);
  EXPECT_EQ(r.preemptions, 0);
  EXPECT_DOUBLE_EQ(StartOf(r, 3), 1000);  // when the BE pod ends
  EXPECT_DOUBLE_EQ(StartOf(r, 5), 1100);
  EXPECT_DOUBLE_EQ(StartOf(r, 6), 1200);
}

TEST_F(ReplayTest, NoPreemptionOfEqualOrHigherClassesOrNonPreemptibleOnes) {
  ReplayOptions o;
  o.horizon_s = 1000;
  // LS is not preemptible and an LS pod may not preempt another LS pod.
  const ReplayResult r =
      Run({Node("n0", 1)}, {Pod("ls0", "LS", 0, 100), Pod("ls1", "LS", 1, 10)}, o);
  EXPECT_EQ(r.preemptions, 0);
  EXPECT_DOUBLE_EQ(StartOf(r, 1), 100);
}

TEST_F(ReplayTest, StaticHeadroomKeepsIdleGpusForLs) {
  ReplayOptions o;
  o.horizon_s = 100;
  o.headroom.mode = HeadroomOptions::Mode::kStatic;
  o.headroom.gpus = 2;
  o.headroom.min_priority = 1000;
  // Four GPUs, four BE pods: only two start; the LS pods use the two kept GPUs at once.
  std::vector<TimedPod> pods;
  for (int i = 0; i < 4; ++i) pods.push_back(Pod("be" + std::to_string(i), "BE", 0, 50));
  pods.push_back(Pod("ls0", "LS", 1, 10));
  pods.push_back(Pod("ls1", "LS", 2, 10));
  const ReplayResult r = Run({Node("n0", 2), Node("n1", 2)}, pods, o);
  EXPECT_DOUBLE_EQ(StartOf(r, 0), 0);
  EXPECT_DOUBLE_EQ(StartOf(r, 1), 0);
  EXPECT_DOUBLE_EQ(StartOf(r, 2), 50);  // waited for the BE pods, not for the headroom
  EXPECT_DOUBLE_EQ(StartOf(r, 4), 1);
  EXPECT_DOUBLE_EQ(StartOf(r, 5), 2);
  EXPECT_EQ(r.preemptions, 0);
  // While the LS pods run (1..12) the BE pods stay out even of the GPUs the LS pods left.
  EXPECT_GE(StartOf(r, 2), 12);
}

TEST_F(ReplayTest, HeadroomDoesNotHoldBackNonPreemptibleClasses) {
  // Two GPUs, headroom 2: a BE pod waits, a Guaranteed pod (not preemptible) starts — unless
  // hold_non_preemptible, when it waits for the horizon too.
  ReplayOptions o;
  o.horizon_s = 100;
  o.preemption = false;
  o.headroom.mode = HeadroomOptions::Mode::kStatic;
  o.headroom.gpus = 2;
  const std::vector<TimedPod> pods = {Pod("be", "BE", 0, 50), Pod("g", "Guaranteed", 1, 50)};
  ReplayResult r = Run({Node("n0", 2)}, pods, o);
  EXPECT_DOUBLE_EQ(StartOf(r, 0), -1);
  EXPECT_DOUBLE_EQ(StartOf(r, 1), 1);
  o.headroom.hold_non_preemptible = true;
  o.headroom.yield_after = -1;  // HeadroomYieldsToAPodAtRiskOfItsSlo
  r = Run({Node("n0", 2)}, pods, o);
  EXPECT_DOUBLE_EQ(StartOf(r, 1), -1);
}

TEST_F(ReplayTest, HeadroomYieldsToAPodAtRiskOfItsSlo) {
  // Eight GPUs, static headroom 5, no preemption: three BE pods take three GPUs at once, then
  // five Burstable pods (SLO 60 s) arrive at t=10. Held, they wait until they have waited a
  // quarter of their SLO (t=25); at risk, they may take the idle GPUs down to ceil(0.2 · 5) =
  // 1: four start, the fifth waits (it would take the last idle GPU).
  ReplayOptions o;
  o.horizon_s = 100;
  o.preemption = false;
  o.headroom.mode = HeadroomOptions::Mode::kStatic;
  o.headroom.gpus = 5;
  std::vector<TimedPod> pods;
  for (int i = 0; i < 3; ++i) pods.push_back(Pod("be" + std::to_string(i), "BE", 0, 500));
  for (int i = 0; i < 5; ++i) pods.push_back(Pod("b" + std::to_string(i), "Burstable", 10, 500));
  ReplayResult r = Run({Node("n0", 8)}, pods, o);
  EXPECT_DOUBLE_EQ(StartOf(r, 2), 0);
  int started = 0;
  for (int i = 3; i < 8; ++i) {
    if (StartOf(r, i) >= 0) {
      EXPECT_DOUBLE_EQ(StartOf(r, i), 25) << i;
      ++started;
    }
  }
  EXPECT_EQ(started, 4);
  // Without the yield they wait for the horizon.
  o.headroom.yield_after = -1;
  r = Run({Node("n0", 8)}, pods, o);
  for (int i = 3; i < 8; ++i) EXPECT_DOUBLE_EQ(StartOf(r, i), -1) << i;
}

TEST_F(ReplayTest, HeadroomAllowsSharingPodsOnUsedGpus) {
  ReplayOptions o;
  o.horizon_s = 40;
  o.preemption = false;
  o.headroom.mode = HeadroomOptions::Mode::kStatic;
  o.headroom.gpus = 1;
  // Two GPUs; a BE half-GPU pod takes one GPU (1 idle left = headroom); a second half-GPU
  // BE pod may share that GPU, a third (1 GPU) may not take the idle one.
  const ReplayResult r =
      Run({Node("n0", 2)},
          {Pod("a", "BE", 0, 50, 1, 500), Pod("b", "BE", 1, 50, 1, 500), Pod("c", "BE", 2, 50)}, o);
  EXPECT_DOUBLE_EQ(StartOf(r, 1), 1);
  EXPECT_DOUBLE_EQ(StartOf(r, 2), -1);
  EXPECT_EQ(r.pods[2].status, PodOutcome::Status::kPending);
}

TEST_F(ReplayTest, HeadroomSteersSharingPodsToUsedGpus) {
  ReplayOptions o;
  o.horizon_s = 40;
  o.preemption = false;
  o.headroom.mode = HeadroomOptions::Mode::kStatic;
  o.headroom.gpus = 3;
  // n0 has a half-used GPU and an idle one, n1 two idle GPUs: k8s-default would spread the
  // second half-GPU pod to n1 and take an idle GPU (3 -> 2 < 3); the headroom sends it to the
  // used GPU of n0 instead.
  std::vector<NodeSpec> nodes = {Node("n0", 2), Node("n1", 2)};
  o.headroom.gpus = 0;
  const ReplayResult alone =
      Run(nodes, {Pod("a", "BE", 0, 50, 1, 500), Pod("b", "BE", 1, 50, 1, 500)}, o);
  int b_node_without = -1;
  for (const ReplayEvent& e : alone.events) {
    if (e.kind == ReplayEvent::Kind::kStart && e.pod == 1) b_node_without = e.node;
  }
  o.headroom.gpus = 3;
  const ReplayResult r =
      Run(nodes, {Pod("a", "BE", 0, 50, 1, 500), Pod("b", "BE", 1, 50, 1, 500)}, o);
  int a_node = -1, b_node = -1;
  for (const ReplayEvent& e : r.events) {
    if (e.kind == ReplayEvent::Kind::kStart && e.pod == 0) a_node = e.node;
    if (e.kind == ReplayEvent::Kind::kStart && e.pod == 1) b_node = e.node;
  }
  ASSERT_GE(a_node, 0);
  EXPECT_NE(b_node_without, a_node);  // spreading alone picks the other node
  EXPECT_EQ(b_node, a_node);          // the headroom packs it onto the used GPU
  EXPECT_DOUBLE_EQ(StartOf(r, 1), 1);
}

// A floor per GPU model besides the cluster-wide H: BE pods whose best node is an A10 one
// would take the A10 GPUs kept for LS, so they go to the V100 node; once that is full they
// wait although the cluster keeps H; LS pods use the A10 GPUs at once.
TEST_F(ReplayTest, ModelHeadroomKeepsA10GpusForLsAndSendsBeElsewhere) {
  ReplayOptions o;
  o.horizon_s = 200;
  o.preemption = false;
  o.headroom.mode = HeadroomOptions::Mode::kStatic;
  o.headroom.gpus = 1;
  o.headroom.min_priority = 1000;
  NodeSpec a10 = Node("a0", 2);
  a10.gpu_model = "A10";
  NodeSpec v100 = Node("v0", 2);
  v100.gpu_model = "V100M16";
  const std::vector<NodeSpec> nodes = {a10, v100};
  const std::vector<TimedPod> pods = {Pod("be0", "BE", 0, 50), Pod("be1", "BE", 1, 50),
                                      Pod("be2", "BE", 2, 50), Pod("ls0", "LS", 3, 100),
                                      Pod("ls1", "LS", 4, 100)};
  // Without the floor the cluster-wide H alone lets be0..be2 start on 3 of the 4 GPUs.
  const ReplayResult plain = Run(nodes, pods, o);
  EXPECT_DOUBLE_EQ(StartOf(plain, 2), 2);
  EXPECT_TRUE(NodeOf(plain, 0) == 0 || NodeOf(plain, 1) == 0 || NodeOf(plain, 2) == 0);

  o.headroom.model_gpus = {{"A10", 2}};
  const ReplayResult r = Run(nodes, pods, o);
  EXPECT_EQ(NodeOf(r, 0), 1);  // v0: a0 would leave 1 idle A10 GPU of the 2 kept
  EXPECT_EQ(NodeOf(r, 1), 1);
  EXPECT_DOUBLE_EQ(StartOf(r, 0), 0);
  EXPECT_DOUBLE_EQ(StartOf(r, 1), 1);
  EXPECT_DOUBLE_EQ(StartOf(r, 3), 3);  // LS on the kept A10 GPUs at once
  EXPECT_DOUBLE_EQ(StartOf(r, 4), 4);
  EXPECT_EQ(NodeOf(r, 3), 0);
  EXPECT_EQ(NodeOf(r, 4), 0);
  // be2 found v0 full and a0 refused for the A10 floor (2 idle of 2 kept) though the cluster
  // had 2 idle GPUs against H = 1; it waited for v0 to take it and leave H idle (be0 ends at
  // 50 and be1 at 51, while LS holds a0).
  EXPECT_DOUBLE_EQ(StartOf(r, 2), 51);
  EXPECT_EQ(NodeOf(r, 2), 1);
  EXPECT_EQ(r.preemptions, 0);
}

TEST_F(ReplayTest, ForecastHeadroomFollowsLsDemand) {
  ReplayOptions o;
  o.horizon_s = 1000;
  o.preemption = false;
  o.headroom.mode = HeadroomOptions::Mode::kForecast;
  o.headroom.bucket_s = 100;
  o.headroom.window_s = 300;
  o.headroom.quantile = 1.0;
  // LS demand: 2 GPUs in bucket [0,100). From t=100 the forecast keeps 2 idle GPUs, so of the
  // BE pods arriving at 150 on the 8 GPUs (2 used by LS until 120) only 6 start.
  std::vector<TimedPod> pods = {Pod("ls0", "LS", 0, 20), Pod("ls1", "LS", 0, 20)};
  for (int i = 0; i < 8; ++i) pods.push_back(Pod("be" + std::to_string(i), "BE", 150, 500));
  const ReplayResult r = Run({Node("n0", 8)}, pods, o);
  int started = 0;
  for (int i = 2; i < 10; ++i) started += StartOf(r, i) == 150;
  EXPECT_EQ(started, 6);
  // After the window (t >= 400) the forecast drops to 0 and the last two start.
  EXPECT_DOUBLE_EQ(StartOf(r, 8), 400);
}

TEST_F(ReplayTest, BacklogHeadroomDrainsAtTheObservedReleaseRate) {
  // Three 1-GPU LS pods at 20, 40, 60 (running past the horizon), then 8 BE probes at 70 on
  // one 8-GPU node. kBacklog, window 100 s, factor 1.
  ReplayOptions o;
  o.horizon_s = 300;
  o.preemption = false;
  o.headroom.mode = HeadroomOptions::Mode::kBacklog;
  o.headroom.window_s = 100;
  o.headroom.bucket_s = 10;
  o.headroom.factor = 1;
  std::vector<TimedPod> ls = {Pod("ls0", "LS", 20, 1000), Pod("ls1", "LS", 40, 1000),
                              Pod("ls2", "LS", 60, 1000)};
  auto probes_started_at = [&](const ReplayResult& r, size_t first, double t) {
    int n = 0;
    for (size_t i = first; i < first + 8; ++i) n += StartOf(r, static_cast<int>(i)) == t;
    return n;
  };
  // Nothing departs: the backlog keeps all 3 GPUs of LS demand, H = 3, so 2 probes start
  // at 70 (5 idle); the peak (t = 60) leaves the window at the tick of 170 and 3 more start.
  std::vector<TimedPod> pods = ls;
  for (int i = 0; i < 8; ++i) pods.push_back(Pod("be" + std::to_string(i), "BE", 70, 1000));
  ReplayResult r = Run({Node("n0", 8)}, pods, o);
  EXPECT_EQ(probes_started_at(r, 3, 70), 2);
  EXPECT_EQ(probes_started_at(r, 3, 170), 3);
  EXPECT_EQ(r.series.back().headroom_gpus, 0);
  // 8 short BE pods free 8 GPUs at t = 10: r = 8 GPUs / 100 s drains each LS GPU within
  // 12.5 s, so the 20 s apart LS arrivals never pile up: H = 1 and 4 probes start at 70.
  pods.clear();
  for (int i = 0; i < 8; ++i) pods.push_back(Pod("short" + std::to_string(i), "BE", 0, 10));
  pods.insert(pods.end(), ls.begin(), ls.end());
  for (int i = 0; i < 8; ++i) pods.push_back(Pod("be" + std::to_string(i), "BE", 70, 1000));
  r = Run({Node("n0", 8)}, pods, o);
  EXPECT_EQ(probes_started_at(r, 11, 70), 4);
}

TEST_F(ReplayTest, EveryPodIsAccountedFor) {
  // A random trace on a small cluster, with pods that fit nowhere: at the horizon each pod
  // is finished, running, pending or rejected with a reason, and the class counts add up.
  Rng rng(7);
  std::vector<TimedPod> pods;
  const char* qos[] = {"LS", "BE", "Burstable", "Guaranteed", ""};
  for (int i = 0; i < 400; ++i) {
    const int kind = static_cast<int>(rng.Below(4));
    const int gpus = kind == 3 ? 4 : 1;
    const int milli = kind == 0 ? 300 : 1000;
    TimedPod p = Pod("p" + std::to_string(i), qos[rng.Below(5)],
                     static_cast<double>(rng.Below(2000)), static_cast<double>(rng.Below(600)),
                     i % 50 == 0 ? 16 : gpus, i % 50 == 0 ? 1000 : milli);
    pods.push_back(p);
  }
  std::stable_sort(pods.begin(), pods.end(),
                   [](const TimedPod& a, const TimedPod& b) { return a.arrival_s < b.arrival_s; });
  ReplayOptions o;
  o.horizon_s = 1500;
  o.headroom.mode = HeadroomOptions::Mode::kForecast;
  const ReplayResult r = Run({Node("n0", 4), Node("n1", 2), Node("n2", 8)}, pods, o);
  int by_status[5] = {};
  for (size_t i = 0; i < r.pods.size(); ++i) {
    const PodOutcome& p = r.pods[i];
    by_status[static_cast<int>(p.status)]++;
    if (p.status == PodOutcome::Status::kRejected) {
      EXPECT_NE(p.reason.find("fits no node"), std::string::npos);
      EXPECT_EQ(timeline_.pods[i].spec.gpu_count, 16);
    }
    if (timeline_.pods[i].arrival_s <= o.horizon_s) {
      EXPECT_NE(p.status, PodOutcome::Status::kNotArrived) << i;
    }
    if (p.status == PodOutcome::Status::kFinished || p.status == PodOutcome::Status::kRunning) {
      EXPECT_GE(p.wait_s, 0);
    }
  }
  int arrived = 0, finished = 0, running = 0, pending = 0, rejected = 0;
  for (const ClassStats& c : r.classes) {
    arrived += c.arrived;
    finished += c.finished;
    running += c.running;
    pending += c.pending;
    rejected += c.rejected;
    EXPECT_LE(c.wait_p50_s, c.wait_p95_s);
    EXPECT_LE(c.wait_p95_s, c.wait_p99_s);
    EXPECT_LE(c.wait_p99_s, c.wait_max_s);
  }
  EXPECT_EQ(arrived, finished + running + pending + rejected);
  EXPECT_EQ(by_status[static_cast<int>(PodOutcome::Status::kFinished)], finished);
  EXPECT_EQ(by_status[static_cast<int>(PodOutcome::Status::kRunning)], running);
  EXPECT_EQ(by_status[static_cast<int>(PodOutcome::Status::kPending)], pending);
  EXPECT_EQ(by_status[static_cast<int>(PodOutcome::Status::kRejected)], rejected);
  EXPECT_EQ(arrived + by_status[static_cast<int>(PodOutcome::Status::kNotArrived)],
            static_cast<int>(pods.size()));
  EXPECT_GT(rejected, 0);
  EXPECT_GT(finished, 0);
  EXPECT_GT(r.preemptions, 0);
  // The time series: samples over [0, horizon], allocation never above capacity.
  ASSERT_EQ(r.series.size(), 11u);
  EXPECT_DOUBLE_EQ(r.series.back().t_s, 1500);
  for (const TimePoint& t : r.series) EXPECT_LE(t.allocated_milli, r.capacity_milli);
}

TEST_F(ReplayTest, UnknownQosFallsBackToBestEffort) {
  ReplayOptions o;
  o.horizon_s = 100;
  const ReplayResult r = Run({Node("n0", 1)}, {Pod("x", "Weird", 0, 10)}, o);
  EXPECT_EQ(r.pods[0].qos_class, 3);
  EXPECT_EQ(r.classes[3].arrived, 1);
}

TEST_F(ReplayTest, DeterministicForItsInputs) {
  std::vector<TimedPod> pods;
  Rng rng(3);
  for (int i = 0; i < 200; ++i) {
    pods.push_back(Pod("p" + std::to_string(i), i % 3 ? "BE" : "LS", i * 2.0,
                       static_cast<double>(rng.Below(300))));
  }
  const ReplayResult a = Run({Node("n0", 2), Node("n1", 4)}, pods);
  const ReplayResult b = Run({Node("n0", 2), Node("n1", 4)}, pods);
  ASSERT_EQ(a.events.size(), b.events.size());
  for (size_t i = 0; i < a.events.size(); ++i) {
    EXPECT_EQ(a.events[i].pod, b.events[i].pod);
    EXPECT_EQ(a.events[i].node, b.events[i].node);
  }
}

}  // namespace
}  // namespace tessera
