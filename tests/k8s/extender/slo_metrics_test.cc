// The SLO side of `tessera serve`: a pod's class (label, else spec.priority), the GPU queue
// (pending GPU pods for this scheduler, per class) as the watch and filter fill it, the wait
// histogram and SLO counters at bind, and the collect-time gauges (fragmentation, stranded GPU,
// allocation per model) — through the fake API server, with a clock moved by hand.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "k8s/api/objects.h"
#include "k8s/extender/pending_queue.h"
#include "k8s/fake_apiserver.h"
#include "k8s/live.h"
#include "sched/classes.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;
using testing::FakeApiServer;
using testing::Live;
using testing::NodeObject;
using testing::PodObject;
using testing::Shape;
using testing::WaitFor;

constexpr double kStart = 1.7e9;                            // Live's ManualClock
constexpr const char* kStartText = "2023-11-14T22:13:20Z";  // the same instant

/// A pod of `scheduler` created at kStart, with an optional class label and priority.
Json SloPod(const std::string& name, int gpus, const std::string& label = "",
            std::optional<int> priority = std::nullopt,
            const std::string& scheduler = "tessera-scheduler") {
  Json p = PodObject(name, Shape(gpus));
  p["spec"]["schedulerName"] = scheduler;
  if (priority) p["spec"]["priority"] = *priority;
  if (!label.empty()) p["metadata"]["labels"] = {{"tessera.io/class", label}};
  p["metadata"]["creationTimestamp"] = kStartText;
  return p;
}

/// The value of the sample `series` (name{labels} exactly as exposed) in /metrics text, or -1.
double Sample(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return -1;
}

TEST(Classes, LabelThenPriorityBandThenLowest) {
  const QosClasses q = DefaultQosClasses();  // LS 1000, Guaranteed 900, Burstable 500, BE 0
  EXPECT_EQ(q.Classify("LS", -100), 0);
  EXPECT_EQ(q.Classify("", 1000), 0);
  EXPECT_EQ(q.Classify("", 2000000000), 0);
  EXPECT_EQ(q.Classify("", 999), 1);
  EXPECT_EQ(q.Classify("", 900), 1);
  EXPECT_EQ(q.Classify("", 600), 2);
  EXPECT_EQ(q.Classify("", 499), 3);
  EXPECT_EQ(q.Classify("", -5), 3);       // below every band: the lowest class
  EXPECT_EQ(q.Classify("Gold", 950), 1);  // a label that names no class is ignored
  Pod pod;
  pod.priority = 0;
  pod.annotations["tessera.io/class"] = "Guaranteed";
  EXPECT_EQ(ClassOfPod(q, pod), 1);  // the annotation when there is no label
  pod.labels["tessera.io/class"] = "Burstable";
  EXPECT_EQ(ClassOfPod(q, pod), 2);  // the label first
}

TEST(Classes, Rfc3339) {
  EXPECT_EQ(Rfc3339Seconds(kStartText), kStart);
  EXPECT_EQ(Rfc3339Seconds("1970-01-01T00:00:00Z"), 0.0);
  EXPECT_EQ(Rfc3339Seconds("2023-11-14T23:13:20+01:00"), kStart);
  EXPECT_DOUBLE_EQ(*Rfc3339Seconds("2023-11-14T22:13:20.25Z"), kStart + 0.25);
  EXPECT_FALSE(Rfc3339Seconds("2023-02-30T00:00:00Z"));
  EXPECT_FALSE(Rfc3339Seconds("2023-11-14 22:13:20"));
  EXPECT_FALSE(Rfc3339Seconds(""));
}

TEST(SloMetrics, QueueDepthWaitHistogramAndAttainment) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(NodeObject("n1", 4));
  fake.AddNode(NodeObject("n2", 4));
  fake.AddPod(SloPod("ls-a", 1, "LS"));
  fake.AddPod(SloPod("ls-b", 1, "LS"));
  fake.AddPod(SloPod("bu", 1, "", 600));
  fake.AddPod(SloPod("be", 2, "", 0));
  fake.AddPod(SloPod("elsewhere", 1, "LS", std::nullopt, "default-scheduler"));  // not ours
  fake.AddPod(SloPod("cpu", 0, "LS"));                                           // no GPU
  Json deleting = SloPod("leaving", 1, "LS");
  deleting["metadata"]["deletionTimestamp"] = kStartText;  // kube-scheduler skips it
  fake.AddPod(deleting);
  Live live(fake);
  ASSERT_TRUE(live.Sync());
  ASSERT_TRUE(WaitFor([&] { return live.extender->pending_gpu_pods()[3] == 1; }));
  EXPECT_EQ(live.extender->pending_gpu_pods(), (std::vector<int>{2, 0, 1, 1}));

  // A pod of another scheduler that filter is asked about is ours after all.
  live.clock.Advance(5);
  Json elsewhere = fake.GetPod("ml", "elsewhere");
  EXPECT_EQ(live.FilterAndBind(elsewhere, "n2"), "");
  // ... and its wait (5 s) counts, though the watch did not queue it.
  std::string text = live.extender->MetricsText();
  EXPECT_EQ(Sample(text, "tessera_scheduling_wait_seconds_count{class=\"LS\"}"), 1);

  // ls-a bound by this extender 5 s after its creation: beyond LS's 1 s SLO.
  EXPECT_EQ(live.FilterAndBind(fake.GetPod("ml", "ls-a"), "n1"), "");
  EXPECT_EQ(live.extender->pending_gpu_pods(), (std::vector<int>{1, 0, 1, 1}));
  // bu bound 65 s after creation: beyond Burstable's 60 s.
  live.clock.Advance(60);
  EXPECT_EQ(live.FilterAndBind(fake.GetPod("ml", "bu"), "n1"), "");
  // be bound by someone else: the wait ends when the watch shows it bound (70 s).
  live.clock.Advance(5);
  Json be = fake.GetPod("ml", "be");
  be["spec"]["nodeName"] = "n2";
  be["status"]["phase"] = "Running";
  fake.ModifyPod(be);
  ASSERT_TRUE(WaitFor([&] { return live.extender->pending_gpu_pods()[3] == 0; }));
  // The watch then shows our binds too: nothing is counted twice.
  ASSERT_TRUE(WaitFor([&] { return live.extender->assumed_pods() == 0; }));

  text = live.extender->MetricsText();
  EXPECT_EQ(Sample(text, "tessera_scheduling_wait_seconds_count{class=\"LS\"}"), 2) << text;
  EXPECT_EQ(Sample(text, "tessera_scheduling_wait_seconds_sum{class=\"LS\"}"), 10);
  EXPECT_EQ(Sample(text, "tessera_scheduling_wait_seconds_bucket{class=\"LS\",le=\"2.5\"}"), 0);
  EXPECT_EQ(Sample(text, "tessera_scheduling_wait_seconds_bucket{class=\"LS\",le=\"5\"}"), 2);
  EXPECT_EQ(Sample(text, "tessera_scheduling_wait_seconds_count{class=\"Burstable\"}"), 1);
  EXPECT_EQ(Sample(text, "tessera_scheduling_wait_seconds_sum{class=\"Burstable\"}"), 65);
  EXPECT_EQ(Sample(text, "tessera_scheduling_wait_seconds_bucket{class=\"Burstable\",le=\"60\"}"),
            0);
  EXPECT_EQ(Sample(text, "tessera_scheduling_wait_seconds_count{class=\"BE\"}"), 1);
  EXPECT_EQ(Sample(text, "tessera_scheduling_wait_seconds_sum{class=\"BE\"}"), 70);
  EXPECT_EQ(Sample(text, "tessera_scheduling_wait_seconds_bucket{class=\"BE\",le=\"1800\"}"), 1);
  EXPECT_EQ(Sample(text, "tessera_slo_pods_total{class=\"LS\",result=\"beyond\"}"), 2);
  EXPECT_EQ(Sample(text, "tessera_slo_pods_total{class=\"LS\",result=\"within\"}"), 0);
  EXPECT_EQ(Sample(text, "tessera_slo_pods_total{class=\"Burstable\",result=\"beyond\"}"), 1);
  EXPECT_EQ(Sample(text, "tessera_slo_pods_total{class=\"BE\",result=\"within\"}"), -1);  // no SLO
  EXPECT_EQ(Sample(text, "tessera_pending_gpu_pods{class=\"LS\"}"), 1);
  EXPECT_EQ(Sample(text, "tessera_pending_gpu_pods{class=\"BE\"}"), 0);
  EXPECT_EQ(Sample(text, "tessera_class_slo_seconds{class=\"Guaranteed\"}"), 10);
  // 5 GPUs of 8 allocated, all A10.
  EXPECT_EQ(Sample(text, "tessera_gpu_model_allocated_milli{model=\"A10\"}"), 5000);
  EXPECT_EQ(Sample(text, "tessera_gpu_model_capacity_milli{model=\"A10\"}"), 8000);
  EXPECT_EQ(Sample(text, "tessera_gpu_idle_milli"), 3000);
  // M (the bound pods: whole GPUs, 1 and 2 at a time) can use every idle whole GPU: nothing
  // stranded; F(M) counts the idle GPUs of nodes that cannot host a 2-GPU pod.
  EXPECT_EQ(Sample(text, "tessera_gpu_stranded_milli"), 0);
  EXPECT_GE(Sample(text, "tessera_gpu_fragmentation_milli"), 0);
  EXPECT_LE(Sample(text, "tessera_gpu_fragmentation_ratio"), 1);

  // /state: the classes with their pending counts, and the queue with each pod's wait.
  const Json state = live.State();
  ASSERT_EQ(state["classes"].size(), 4u);
  EXPECT_EQ(state["classes"][0]["name"], "LS");
  EXPECT_EQ(state["classes"][0]["slo_wait_seconds"], 1.0);
  EXPECT_EQ(state["classes"][0]["use_headroom"], true);
  EXPECT_EQ(state["classes"][0]["pending"], 1);
  EXPECT_TRUE(state["classes"][3]["slo_wait_seconds"].is_null());
  ASSERT_EQ(state["pending"].size(), 1u);
  EXPECT_EQ(state["pending"][0]["pod"], "ml/ls-b");
  EXPECT_EQ(state["pending"][0]["class"], "LS");
  EXPECT_EQ(state["pending"][0]["waiting_seconds"], 70.0);

  // Deleted while pending: it leaves the queue, no wait is recorded.
  fake.DeletePod("ml", "ls-b");
  ASSERT_TRUE(WaitFor([&] { return live.extender->pending_gpu_pods()[0] == 0; }));
  text = live.extender->MetricsText();
  EXPECT_EQ(Sample(text, "tessera_scheduling_wait_seconds_count{class=\"LS\"}"), 2);
}

TEST(SloMetrics, ConfiguredClassesAndSchedulerNames) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(NodeObject("n1", 4));
  fake.AddPod(SloPod("a", 1, "", 100, "gpu-scheduler"));
  fake.AddPod(SloPod("b", 1, "", 5, "gpu-scheduler"));
  fake.AddPod(SloPod("c", 1, "", 100));  // tessera-scheduler is not configured here
  Live live(fake);
  // Live builds its extender with the defaults; make one with other classes over the same fake.
  KubeApiConfig c;
  c.server = fake.url();
  c.source = "test";
  std::unique_ptr<HttpKubeApi> api = std::move(HttpKubeApi::Create(c).value());
  ExtenderOptions eo;
  eo.clock = &live.clock;
  eo.classes.classes = {{"online", 100, 2, false, 30, true}, {"batch", 10, -1, true, 30, false}};
  eo.classes.fallback = 1;
  eo.scheduler_names = {"gpu-scheduler"};
  LiveOptions lo;
  lo.api = api.get();
  std::unique_ptr<Extender> ext = std::move(Extender::Create(eo, lo).value());
  ClusterCacheOptions co;
  co.sleeper = &live.sleeper;
  co.clock = &live.clock;
  co.metrics = ext->metrics_registry();
  ClusterCache cache(api.get(), ext.get(), co);
  cache.Start();
  ASSERT_TRUE(WaitFor([&] { return ext->ready(); }));
  ASSERT_TRUE(WaitFor([&] { return ext->pending_gpu_pods() == std::vector<int>{1, 1}; }));
  const std::string text = ext->MetricsText();
  EXPECT_EQ(Sample(text, "tessera_pending_gpu_pods{class=\"online\"}"), 1);
  EXPECT_EQ(Sample(text, "tessera_pending_gpu_pods{class=\"batch\"}"), 1);  // priority 5: lowest
  EXPECT_EQ(Sample(text, "tessera_class_slo_seconds{class=\"online\"}"), 2);
  EXPECT_EQ(Sample(text, "tessera_pending_gpu_pods{class=\"LS\"}"), -1);
  cache.Stop();
}

}  // namespace
}  // namespace tessera::k8s
