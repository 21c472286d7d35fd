// The headroom's floors per GPU model (sched/headroom.h): resolved against a cluster's models
// and capped at each model's GPUs, checked besides the cluster-wide H by HeldMayUse and
// PlaceHeld (what the pod would break is told); and the values of the replay's
// --headroom-model (replay/replay_policy.h). H cannot run away: the backlog never exceeds what
// protected pods hold, and every adaptive mode comes back to its floor once protected demand
// stops; a pod at risk of missing its class's SLO is judged by the smaller at-risk target. And
// the cycle's headroom rules over them (sched/cycle.h, CycleHeadroom).

#include "sched/headroom.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "model/cluster.h"
#include "replay/replay_policy.h"
#include "sched/cycle.h"
#include "util/clock.h"

namespace tessera {
namespace {

NodeSpec Node(const std::string& name, const std::string& model, int gpus) {
  NodeSpec n;
  n.name = name;
  n.cpu_milli = 64000;
  n.memory_mib = 262144;
  n.gpu_count = gpus;
  n.gpu_model = model;
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

int ModelId(const Cluster& cluster, const std::string& model) {
  for (size_t m = 0; m < cluster.models().size(); ++m) {
    if (cluster.models()[m] == model) return static_cast<int>(m);
  }
  return -1;
}

HeadroomOptions Static(int64_t gpus, std::vector<std::pair<std::string, int64_t>> models) {
  HeadroomOptions h;
  h.mode = HeadroomOptions::Mode::kStatic;
  h.gpus = gpus;
  h.model_gpus = std::move(models);
  return h;
}

// Two A10 nodes and one V100M16 node of four GPUs each.
Cluster ThreeNodes() {
  return Cluster({Node("a1", "A10", 4), Node("a2", "A10", 4), Node("v1", "V100M16", 4)});
}

TEST(ModelHeadroom, FloorsResolveToTheClusterModelsCappedAtTheirGpus) {
  const Cluster cluster = ThreeNodes();
  const VirtualClock clock;
  Headroom h(Static(2, {{"A10", 5}, {"V100M16", 100}, {"H100", 3}}), &clock);
  EXPECT_EQ(h.model_target(0), 0);  // nothing resolved before SetCluster
  h.SetCluster(cluster);
  EXPECT_EQ(h.target(), 2);
  EXPECT_EQ(h.model_target(ModelId(cluster, "A10")), 5);
  EXPECT_EQ(h.model_target(ModelId(cluster, "V100M16")), 4);  // capped: the model has 4 GPUs
  EXPECT_EQ(h.model_target(-1), 0);
  EXPECT_TRUE(h.keeps_some());

  // A floor only for a model the cluster lacks keeps nothing.
  Headroom absent(Static(0, {{"H100", 3}}), &clock);
  absent.SetCluster(cluster);
  EXPECT_FALSE(absent.keeps_some());
  for (int m = 0; m < 2; ++m) EXPECT_EQ(absent.model_target(m), 0);

  // Mode none keeps nothing, floors included.
  HeadroomOptions none = Static(2, {{"A10", 4}});
  none.mode = HeadroomOptions::Mode::kNone;
  Headroom off(none, &clock);
  off.SetCluster(cluster);
  EXPECT_EQ(off.model_target(ModelId(cluster, "A10")), 0);
  EXPECT_FALSE(off.keeps_some());

  // The floors hold in the sized modes too, beside their H.
  HeadroomOptions backlog = Static(0, {{"A10", 4}});
  backlog.mode = HeadroomOptions::Mode::kBacklog;
  Headroom sized(backlog, &clock);
  sized.SetCluster(cluster);
  EXPECT_EQ(sized.target(), 0);
  EXPECT_EQ(sized.model_target(ModelId(cluster, "A10")), 4);
  EXPECT_TRUE(sized.keeps_some());
}

TEST(ModelHeadroom, CountsIdleGpusPerModel) {
  Cluster cluster = ThreeNodes();
  cluster.Allocate(0, Request(cluster, 4), 0b1111);     // a1 full
  cluster.Allocate(2, Request(cluster, 1, 300), 0b10);  // a share on v1's GPU 1
  std::vector<int64_t> by_model;
  EXPECT_EQ(CountIdleGpus(cluster, &by_model), 7);
  ASSERT_EQ(by_model.size(), 2u);
  EXPECT_EQ(by_model[static_cast<size_t>(ModelId(cluster, "A10"))], 4);
  EXPECT_EQ(by_model[static_cast<size_t>(ModelId(cluster, "V100M16"))], 3);
}

TEST(ModelHeadroom, HeldPodRefusedWhereItTakesTheA10FloorAdmittedOnV100) {
  Cluster cluster = ThreeNodes();
  cluster.Allocate(0, Request(cluster, 4), 0b1111);  // a1 full: 4 A10 idle, 8 in all
  const VirtualClock clock;
  Headroom h(Static(2, {{"A10", 4}}), &clock);
  h.SetCluster(cluster);
  std::vector<int64_t> by_model;
  const int64_t idle = CountIdleGpus(cluster, &by_model);
  const int a10 = ModelId(cluster, "A10");
  const int v100 = ModelId(cluster, "V100M16");
  const HeadroomIdle on_a2 = HeadroomIdleOf(h, cluster, 1, idle, by_model);
  const HeadroomIdle on_v1 = HeadroomIdleOf(h, cluster, 2, idle, by_model);
  EXPECT_EQ(on_a2.cluster, 8);
  EXPECT_EQ(on_a2.model, a10);
  EXPECT_EQ(on_a2.model_idle, 4);
  EXPECT_EQ(on_v1.model, v100);
  EXPECT_EQ(on_v1.model_idle, 4);
  const PodRequest one = Request(cluster, 1);

  // The cluster keeps H (8 - 1 >= 2), the A10s would not keep their 4.
  Headroom::Shortfall why = Headroom::Shortfall::kNone;
  EXPECT_FALSE(HeldMayUse(h, on_a2, cluster.state(1), 4, one, &why));
  EXPECT_EQ(why, Headroom::Shortfall::kModel);
  EXPECT_TRUE(HeldMayUse(h, on_v1, cluster.state(2), 4, one, &why));
  EXPECT_EQ(why, Headroom::Shortfall::kNone);
  GpuSet gpus = 0b1;
  EXPECT_FALSE(PlaceHeld(h, on_a2, cluster.state(1), 4, one, &gpus, &why));
  EXPECT_EQ(why, Headroom::Shortfall::kModel);
  gpus = 0b1;
  EXPECT_TRUE(PlaceHeld(h, on_v1, cluster.state(2), 4, one, &gpus, &why));
  EXPECT_EQ(gpus, GpuSet{0b1});

  // H is checked first: with H = 8 the V100 node refuses too, for the cluster.
  Headroom big(Static(8, {{"A10", 4}}), &clock);
  big.SetCluster(cluster);
  EXPECT_FALSE(HeldMayUse(big, on_v1, cluster.state(2), 4, one, &why));
  EXPECT_EQ(why, Headroom::Shortfall::kCluster);
  EXPECT_FALSE(HeldMayUse(big, on_a2, cluster.state(1), 4, one, &why));
  EXPECT_EQ(why, Headroom::Shortfall::kCluster);

  // Without floors the A10 node takes it (the cluster-wide rule alone).
  Headroom plain(Static(2, {}), &clock);
  plain.SetCluster(cluster);
  EXPECT_TRUE(HeldMayUse(plain, on_a2, cluster.state(1), 4, one, &why));
}

TEST(ModelHeadroom, HeldShareGoesOnAUsedA10GpuInsteadOfTheFloor) {
  Cluster cluster = ThreeNodes();
  cluster.Allocate(0, Request(cluster, 4), 0b1111);       // a1 full
  cluster.Allocate(1, Request(cluster, 1, 500), 0b0100);  // a2's GPU 2 half used: 3 A10 idle
  const VirtualClock clock;
  Headroom h(Static(0, {{"A10", 3}}), &clock);
  h.SetCluster(cluster);
  std::vector<int64_t> by_model;
  const int64_t idle = CountIdleGpus(cluster, &by_model);
  const HeadroomIdle on_a2 = HeadroomIdleOf(h, cluster, 1, idle, by_model);
  EXPECT_EQ(on_a2.model_idle, 3);
  const PodRequest share = Request(cluster, 1, 250);
  Headroom::Shortfall why = Headroom::Shortfall::kCluster;
  EXPECT_TRUE(HeldMayUse(h, on_a2, cluster.state(1), 4, share, &why));  // the used GPU has room
  EXPECT_EQ(why, Headroom::Shortfall::kNone);
  GpuSet gpus = 0b0001;  // the policy chose an idle GPU: it would take the floor
  EXPECT_TRUE(PlaceHeld(h, on_a2, cluster.state(1), 4, share, &gpus, &why));
  EXPECT_EQ(gpus, GpuSet{0b0100});
  // A whole GPU has no used GPU to go on.
  gpus = 0b0001;
  EXPECT_FALSE(PlaceHeld(h, on_a2, cluster.state(1), 4, Request(cluster, 1), &gpus, &why));
  EXPECT_EQ(why, Headroom::Shortfall::kModel);
}

// LS limited to V100 nodes: once a bucket boundary has seen only such protected pods, H counts
// idle V100 GPUs alone, and a held pod on an A10 node (no protected pod could use it) is not
// held there. A window after the last such pod every model counts again.
TEST(ModelHeadroom, KeepsOnlyIdleGpusOfModelsProtectedPodsMayUse) {
  Cluster cluster = ThreeNodes();
  VirtualClock clock;
  HeadroomOptions o = Static(4, {});
  o.window_s = 600;
  o.bucket_s = 60;
  Headroom h(o, &clock);
  h.SetCluster(cluster);
  const int a10 = ModelId(cluster, "A10");
  const int v100 = ModelId(cluster, "V100M16");
  cluster.Allocate(2, Request(cluster, 1), 0b1);  // an LS pod on v1: 3 V100 idle, 11 in all
  h.NoteDemand(1000, 1000, ModelMask{1} << v100);
  h.NoteDemand(0, 1000);  // a held class's pod says nothing of the protected models
  std::vector<int64_t> by_model;
  const int64_t idle = CountIdleGpus(cluster, &by_model);
  const PodRequest one = Request(cluster, 1);
  // Until the next bucket boundary every model still counts: a held pod may take 11 - 4.
  EXPECT_TRUE(h.Protects(a10));
  HeadroomIdle on_a1 = HeadroomIdleOf(h, cluster, 0, idle, by_model);
  EXPECT_TRUE(on_a1.counts);
  EXPECT_EQ(on_a1.cluster, 11);
  // At the boundary the A10s stop counting (a shrink for the held pods).
  clock.AdvanceTo(60);
  bool shrank = false;
  EXPECT_TRUE(h.Update(&shrank));
  EXPECT_TRUE(shrank);
  EXPECT_GE(h.NextTick(), 0);
  EXPECT_FALSE(h.Protects(a10));
  EXPECT_TRUE(h.Protects(v100));
  on_a1 = HeadroomIdleOf(h, cluster, 0, idle, by_model);
  EXPECT_FALSE(on_a1.counts);
  EXPECT_EQ(on_a1.cluster, 3);  // the idle V100s
  const HeadroomIdle on_v1 = HeadroomIdleOf(h, cluster, 2, idle, by_model);
  EXPECT_TRUE(on_v1.counts);
  EXPECT_EQ(on_v1.cluster, 3);
  Headroom::Shortfall why = Headroom::Shortfall::kCluster;
  EXPECT_TRUE(HeldMayUse(h, on_a1, cluster.state(0), 4, Request(cluster, 4), &why));
  EXPECT_EQ(why, Headroom::Shortfall::kNone);
  EXPECT_FALSE(HeldMayUse(h, on_v1, cluster.state(2), 4, one, &why));  // 3 - 1 < 4
  EXPECT_EQ(why, Headroom::Shortfall::kCluster);
  // A new cluster model (serve rebuilds it when nodes change) keeps the set by model name,
  // whatever the new ids; a model new to the cluster counts until the next boundary.
  const Cluster reordered({Node("v1", "V100M16", 4), Node("a1", "A10", 4), Node("t1", "T4", 2)});
  h.SetCluster(reordered);
  EXPECT_TRUE(h.Protects(ModelId(reordered, "V100M16")));
  EXPECT_FALSE(h.Protects(ModelId(reordered, "A10")));
  EXPECT_TRUE(h.Protects(ModelId(reordered, "T4")));
  clock.AdvanceTo(120);
  EXPECT_TRUE(h.Update(&shrank));
  EXPECT_FALSE(h.Protects(ModelId(reordered, "T4")));
  EXPECT_TRUE(h.Protects(ModelId(reordered, "V100M16")));
  h.SetCluster(cluster);
  EXPECT_TRUE(h.Protects(v100));
  EXPECT_FALSE(h.Protects(a10));
  // A protected pod that may use any model brings the A10s back at once.
  clock.AdvanceTo(130);
  h.NoteDemand(1000, 0);
  EXPECT_TRUE(h.Protects(a10));
  // A window after the last protected pod, every model counts.
  clock.AdvanceTo(800);
  EXPECT_TRUE(h.Update(&shrank));
  EXPECT_TRUE(h.Protects(a10));
  EXPECT_TRUE(h.Protects(v100));
  EXPECT_TRUE(HeadroomIdleOf(h, cluster, 0, idle, by_model).counts);
  EXPECT_EQ(HeadroomIdleOf(h, cluster, 0, idle, by_model).cluster, 11);
}

TEST(ModelHeadroom, ReplayFlagValuesParsed) {
  Result<std::vector<std::pair<std::string, int64_t>>> ok =
      ParseHeadroomModels({"A10=4", "V100M16=0", "NVIDIA-A100-SXM4-80GB=12"});
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  const std::vector<std::pair<std::string, int64_t>> want = {
      {"A10", 4}, {"V100M16", 0}, {"NVIDIA-A100-SXM4-80GB", 12}};
  EXPECT_EQ(*ok, want);
  EXPECT_TRUE(ParseHeadroomModels({}).value().empty());
  const auto error = [](const std::string& value) {
    Result<std::vector<std::pair<std::string, int64_t>>> r = ParseHeadroomModels({value});
    return r.ok() ? std::string("ok") : r.error().message;
  };
  EXPECT_EQ(error("A10"), "--headroom-model: expected MODEL=GPUS (e.g. A10=4), got 'A10'");
  EXPECT_EQ(error("=4"), "--headroom-model: expected MODEL=GPUS (e.g. A10=4), got '=4'");
  EXPECT_EQ(error("A10="), "--headroom-model: expected MODEL=GPUS (e.g. A10=4), got 'A10='");
  EXPECT_EQ(error("A10=-1"),
            "--headroom-model A10=-1: GPUS must be an integer 0..10000000, got '-1'");
  EXPECT_EQ(error("A10=2.5"),
            "--headroom-model A10=2.5: GPUS must be an integer 0..10000000, got '2.5'");
  EXPECT_EQ(error("A10=10000001"),
            "--headroom-model A10=10000001: GPUS must be an integer 0..10000000, got "
            "'10000001'");
  Result<std::vector<std::pair<std::string, int64_t>>> twice =
      ParseHeadroomModels({"A10=4", "A10=2"});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().message, "--headroom-model: GPU model 'A10' given twice");
}

// Protected pods alone come and go (one GPU every 10 s, each for 60 s, on a 1,000-GPU
// cluster): the classes held back never depart, so the drain is exactly the feed. The backlog
// stays within the GPUs protected pods hold (6 at a time), instead of growing over the first
// window while the drain rate fills in (to about 180 GPUs before that bound).
TEST(BacklogHeadroom, NeverMoreThanProtectedPodsHoldWhenOnlyTheyDepart) {
  HeadroomOptions h;
  h.mode = HeadroomOptions::Mode::kBacklog;
  h.window_s = 3600;
  h.bucket_s = 60;
  h.factor = 1;
  VirtualClock clock;
  Headroom headroom(h, &clock);
  std::vector<NodeSpec> nodes(125, Node("n", "A10", 8));
  headroom.SetCluster(Cluster(nodes));
  int64_t most = 0;
  for (int i = 0; i < 3 * 360; ++i) {  // three hours
    clock.AdvanceTo(10.0 * i);
    bool shrank = false;
    headroom.Update(&shrank);
    if (i >= 6) headroom.NoteRelease(1, 1000);  // the pod that started a minute ago
    headroom.NoteDemand(1000, 1000);
    most = std::max(most, headroom.target());
  }
  EXPECT_LE(most, 7);
  EXPECT_GE(most, 1);
}

// Every adaptive mode comes back to its floor once protected demand stops: an hour of
// protected pods, then none (their departures refill the headroom); after the window (and a
// bucket) H is the floor again.
TEST(BacklogHeadroom, EveryAdaptiveModeShrinksBackWhenProtectedDemandStops) {
  for (const HeadroomOptions::Mode mode :
       {HeadroomOptions::Mode::kForecast, HeadroomOptions::Mode::kBacklog}) {
    HeadroomOptions h;
    h.mode = mode;
    h.window_s = 1800;
    h.bucket_s = 60;
    h.gpus = 2;  // the floor
    VirtualClock clock;
    Headroom headroom(h, &clock);
    headroom.SetCluster(Cluster(std::vector<NodeSpec>(16, Node("n", "A10", 8))));
    int64_t busy = 0;
    for (int i = 0; i < 360; ++i) {  // an hour: four GPUs a minute, each pod for 5 minutes
      clock.AdvanceTo(10.0 * i);
      bool shrank = false;
      headroom.Update(&shrank);
      if (i >= 30) headroom.NoteRelease(1, 1000);
      headroom.NoteDemand(1000, 1000);
      busy = std::max(busy, headroom.target());
    }
    EXPECT_GT(busy, h.gpus) << static_cast<int>(mode);
    for (int i = 0; i < 30; ++i) {  // the last five minutes' pods leave
      clock.AdvanceTo(3600 + 10.0 * i);
      headroom.NoteRelease(1, 1000);
    }
    clock.AdvanceTo(3600 + h.window_s + 2 * h.bucket_s);
    bool shrank = false;
    headroom.Update(&shrank);
    EXPECT_TRUE(shrank) << static_cast<int>(mode);
    EXPECT_EQ(headroom.target(), h.gpus) << static_cast<int>(mode);
  }
}

// A held pod of a class with an SLO that has waited a quarter of it (the default yield_after)
// is at risk: it is judged by ceil(yield_keep · H) = ceil(0.2 · 5) = 1 idle GPU, not by H.
TEST(HeadroomYield, PodAtRiskMayTakeTheMarginButNotWhatIsKept) {
  ManualClock clock;
  Headroom headroom(Static(5, {}), &clock);
  EXPECT_EQ(headroom.at_risk_target(), 1);
  EXPECT_FALSE(headroom.AtRisk(60, 14.9));
  EXPECT_TRUE(headroom.AtRisk(60, 15));
  EXPECT_FALSE(headroom.AtRisk(-1, 1e9));  // no SLO, never at risk
  HeadroomIdle idle{5, -1, 5};
  EXPECT_EQ(headroom.Short(idle, 1), Headroom::Shortfall::kCluster);
  idle.at_risk = true;
  EXPECT_EQ(headroom.Short(idle, 4), Headroom::Shortfall::kNone);
  EXPECT_EQ(headroom.Short(idle, 5), Headroom::Shortfall::kCluster);
  HeadroomOptions never = Static(5, {});
  never.yield_after = -1;
  EXPECT_FALSE(Headroom(never, &clock).AtRisk(60, 1e9));
}

// The cycle's headroom rules (sched/cycle.h), which the replay and serve both call: which
// classes the headroom holds (by priority below the protected one, in every front door — a class
// without use_headroom at or above that priority is not held), when a held pod is at risk of its
// SLO, whether it preempts instead of waiting, and where and on which GPUs a held pod may go.

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
  Cluster cluster({Node("n1", "A10", 4), Node("n2", "A10", 4)});
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
