// `tessera serve` never gives one GPU to two pods: each way it once could, driven through the
// fake API server (tests/k8s/fake_apiserver.h) and judged by the API's objects where a bind is
// involved (ApiOverAllocation), plus the filter reasons and metrics that make it visible.

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "k8s/api/log.h"
#include "k8s/extender/extender.h"
#include "k8s/extender/extender_protocol.h"
#include "k8s/fake_apiserver.h"
#include "k8s/live.h"
#include "k8s/serve/http_server.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;
using testing::ApiOverAllocation;
using testing::FakeApiServer;
using testing::Live;
using testing::NodeObject;
using testing::PodObject;
using testing::Shape;
using testing::WaitFor;

/// A pod bound to `node` by someone else, with `limits` as its only container's limits.
Json OthersPod(const std::string& name, const std::string& node, const Json& limits,
               const Json& annotations = Json::object()) {
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name}, {"namespace", "ml"}, {"uid", "uid-" + name}, {"annotations", annotations}}},
      {"spec",
       {{"nodeName", node},
        {"containers", {{{"name", "main"}, {"image", "x"}, {"resources", {{"limits", limits}}}}}}}},
      {"status", {{"phase", "Running"}}}};
}

/// A pending pod asking for `limits`.
Json PendingPod(const std::string& name, const Json& limits) {
  Json pod = OthersPod(name, "", limits);
  pod["spec"].erase("nodeName");
  pod["status"]["phase"] = "Pending";
  return pod;
}

/// The extender's filter of `pod` over `nodes`, as kube-scheduler sends it.
ExtenderFilterResult FilterOf(Extender& ext, const Json& pod,
                              const std::vector<std::string>& nodes) {
  Json body = {{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", nodes}};
  Result<ExtenderArgs> args = DecodeExtenderArgs(body.dump());
  EXPECT_TRUE(args.ok()) << (args.ok() ? "" : args.error().message);
  return ext.Filter(*args);
}

ExtenderBindingResult BindOf(Extender& ext, const Json& pod, const std::string& node) {
  const Json& m = pod["metadata"];
  return ext.Bind({m["name"].get<std::string>(), m["namespace"].get<std::string>(),
                   m["uid"].get<std::string>(), node});
}

int Bindings(const FakeApiServer& fake) {
  int n = 0;
  for (const std::string& r : fake.requests()) n += r.find("/binding") != std::string::npos;
  return n;
}

// 1. A bound pod whose request Tessera cannot decode still occupies its GPUs (fail closed),
// in API mode and in file mode alike.
struct Undecodable {
  std::string what;
  std::string resource;  // what the node offers
  Json limits;           // the bound pod's
  Json whole_gpu;        // a pending whole-GPU pod of the same family
};

class FailClosed : public ::testing::TestWithParam<Undecodable> {};

TEST_P(FailClosed, ABoundPodThatDoesNotDecodeStillTakesItsGpu) {
  const Undecodable& u = GetParam();
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(NodeObject("n1", 1, "16", u.resource));
  fake.AddPod(OthersPod("odd", "n1", u.limits));
  fake.AddPod(PendingPod("whole", u.whole_gpu));
  Live live(fake);
  ASSERT_TRUE(live.Sync());
  const ExtenderFilterResult f = FilterOf(*live.extender, fake.GetPod("ml", "whole"), {"n1"});
  EXPECT_TRUE(f.node_names.empty()) << u.what;
  EXPECT_EQ(live.extender->gpu_allocated_milli(), 1000) << u.what;
  EXPECT_EQ(BindOf(*live.extender, fake.GetPod("ml", "whole"), "n1").error.find("refused"), 0u);
  EXPECT_EQ(Bindings(fake), 0);
  // /state says why the pod is counted as it is; the metric counts it.
  const Json state = live.State();
  ASSERT_EQ(state["unaccounted"].size(), 1u) << state.dump();
  EXPECT_EQ(state["unaccounted"][0]["pod"], "ml/odd");
  EXPECT_NE(state["unaccounted"][0]["why"].get<std::string>().find("estimated as whole GPUs"),
            std::string::npos);
  EXPECT_NE(live.extender->MetricsText().find("tessera_pods_fail_closed 1\n"), std::string::npos);

  // File mode, on the same objects, agrees.
  const Json nodes = {{"items", fake.Objects("nodes")}};
  const Json pods = {{"items", fake.Objects("pods")}};
  auto file = Extender::FromJson(nodes.dump(), pods.dump(), {});
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_EQ((*file)->gpu_allocated_milli(), 1000);
  EXPECT_TRUE(FilterOf(**file, fake.GetPod("ml", "whole"), {"n1"}).node_names.empty());
  ASSERT_EQ((*file)->warnings().size(), 1u);
  EXPECT_NE((*file)->warnings()[0].find("pods: items[0] (ml/odd) on node n1: estimated"),
            std::string::npos)
      << (*file)->warnings()[0];
}

INSTANTIATE_TEST_SUITE_P(
    Requests, FailClosed,
    ::testing::Values(
        Undecodable{"HAMi's gpumem-percentage beyond 100", "nvidia.com/gpu",
                    Json{{"nvidia.com/gpu", "1"}, {"nvidia.com/gpumem-percentage", "150"}},
                    Json{{"nvidia.com/gpu", "1"}}},
        Undecodable{"tessera.io/gpu-memory as a fraction of a MiB", "tessera.io/gpu",
                    Json{{"tessera.io/gpu", "1"}, {"tessera.io/gpu-memory", "7208.5"}},
                    Json{{"tessera.io/gpu", "1"}}}));

TEST(FailClosed, AnUnreadablePodBlocksItsNode) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(NodeObject("n1", 2));
  fake.AddNode(NodeObject("n2", 2));
  fake.AddPod(OthersPod("garbled", "n1", Json{{"cpu", "12Zi"}, {"tessera.io/gpu", "1"}}));
  fake.AddPod(PendingPod("p", Json{{"tessera.io/gpu", "1"}}));
  Live live(fake);
  ASSERT_TRUE(live.Sync());
  const ExtenderFilterResult f = FilterOf(*live.extender, fake.GetPod("ml", "p"), {"n1", "n2"});
  EXPECT_EQ(f.node_names, std::vector<std::string>{"n2"});
  ASSERT_EQ(f.failed_and_unresolvable_nodes.count("n1"), 1u);
  EXPECT_EQ(f.failed_and_unresolvable_nodes.at("n1").rfind("blocked: ", 0), 0u);
  const Json state = live.State();
  EXPECT_NE(state["nodes"][0]["blocked"].get<std::string>().find("ml/garbled could not be read"),
            std::string::npos)
      << state.dump();
  EXPECT_NE(live.extender->MetricsText().find("tessera_nodes_blocked 1\n"), std::string::npos);
  // The pod goes: the node is free again.
  fake.DeletePod("ml", "garbled");
  ASSERT_TRUE(WaitFor([&] {
    return FilterOf(*live.extender, fake.GetPod("ml", "p"), {"n1"}).node_names.size() == 1;
  }));
}

// 2. Nothing is answered before the initial sync, nor while a watch is known broken.
TEST(SyncGate, VerbsRefuseUntilTheInitialListsAreApplied) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(NodeObject("n1", 1));
  fake.AddPod(PodObject("a", Shape(1)));
  fake.AddPod(PodObject("b", Shape(1, 1000, "n1", "0")));  // bound, but not listed yet
  fake.HoldLists(true);                                    // a slow first list
  Live live(fake);
  HttpServerOptions so;
  so.port = 0;
  HttpServer server(live.extender.get(), so);
  ASSERT_TRUE(server.Start().ok());
  live.cache->Start();
  ASSERT_TRUE(WaitFor([&] {
    for (const std::string& r : fake.requests()) {
      if (r.rfind("GET /api/v1/pods?limit", 0) == 0) return true;
    }
    return false;
  }));
  const Json pod = fake.GetPod("ml", "a");
  const ExtenderFilterResult f = FilterOf(*live.extender, pod, {"n1"});
  EXPECT_TRUE(f.node_names.empty());
  ASSERT_EQ(f.failed_and_unresolvable_nodes.count("n1"), 1u);
  EXPECT_EQ(f.failed_and_unresolvable_nodes.at("n1").rfind("not-synced: ", 0), 0u);
  const std::string bind = BindOf(*live.extender, pod, "n1").error;
  EXPECT_NE(bind.find("not in sync with the Kubernetes API: initial list"), std::string::npos)
      << bind;
  EXPECT_EQ(Bindings(fake), 0);
  httplib::Client c("127.0.0.1", server.port());
  auto ready = c.Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 503);
  EXPECT_NE(live.extender->MetricsText().find("tessera_synced 0\n"), std::string::npos);

  fake.HoldLists(false);
  ASSERT_TRUE(WaitFor([&] { return live.extender->ready(); }));
  // The list had b on the GPU: a, filtered again, finds no room; nothing was ever bound.
  EXPECT_TRUE(FilterOf(*live.extender, pod, {"n1"}).node_names.empty());
  EXPECT_EQ(live.extender->gpu_allocated_milli(), 1000);
  EXPECT_EQ(Bindings(fake), 0);
  EXPECT_EQ(ApiOverAllocation(fake), "");
  server.Stop();
}

TEST(SyncGate, VerbsRefuseWhileTheWatchIsBroken) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(NodeObject("n1", 2));
  fake.AddPod(PodObject("a", Shape(1)));
  Live live(fake);
  ASSERT_TRUE(live.Sync());
  ASSERT_TRUE(WaitFor([&] { return fake.open_watches() == 2; }));
  // Every watch and list of pods fails from now on.
  fake.FailNext("GET", "/api/v1/pods", 1000000, 500);
  fake.DropWatches();
  // The watch of nodes was dropped too, and comes back at once: until it has, the reason may
  // name it first.
  ASSERT_TRUE(WaitFor([&] {
    return !live.extender->ready() && live.extender->not_ready_reason().find(
                                          "watch of pods broken since") != std::string::npos;
  })) << live.extender->not_ready_reason();
  const Json pod = fake.GetPod("ml", "a");
  const ExtenderFilterResult f = FilterOf(*live.extender, pod, {"n1"});
  EXPECT_TRUE(f.node_names.empty());
  EXPECT_EQ(BindOf(*live.extender, pod, "n1").error.find("bind ml/a: not in sync"), 0u);
  EXPECT_EQ(Bindings(fake), 0);
  // The API comes back: the watch resumes, the verbs answer again.
  fake.ClearFailures();
  ASSERT_TRUE(WaitFor([&] { return live.extender->ready(); }));
  EXPECT_EQ(live.FilterAndBind(pod, "n1"), "");
  EXPECT_EQ(Bindings(fake), 1);
}

// 4. Facts before guesses: the model does not depend on the order the pods came in.
TEST(FactsFirst, AGuessNeverEvictsAnAnnotatedPod) {
  std::vector<std::string> states;
  for (const bool guess_first : {true, false}) {
    FakeApiServer fake;
    ASSERT_TRUE(fake.Start());
    fake.AddNode(NodeObject("n1", 2));
    // "a-guess" sorts before "b-fact" by UID too: neither order nor UIDs may decide.
    const Json guess = OthersPod("a-guess", "n1", Json{{"tessera.io/gpu", "1"}});
    const Json fact = OthersPod("b-fact", "n1", Json{{"tessera.io/gpu", "1"}},
                                Json{{"tessera.io/gpu-indices", "0"}});
    Live live(fake);
    ASSERT_TRUE(live.Sync());
    fake.AddPod(guess_first ? guess : fact);
    ASSERT_TRUE(WaitFor([&] { return live.extender->bound_pods() == 1; }));
    fake.AddPod(guess_first ? fact : guess);
    ASSERT_TRUE(WaitFor([&] { return live.extender->bound_pods() == 2; }));
    const Json state = live.State();
    EXPECT_EQ(state["unaccounted"].size(), 0u) << state.dump();
    EXPECT_EQ(state["nodes"][0]["blocked"], "");
    EXPECT_EQ(live.Assignment("ml/b-fact")["gpus"], Json::array({0}));
    EXPECT_EQ(live.Assignment("ml/b-fact")["gpus_from"], "annotation");
    EXPECT_EQ(live.Assignment("ml/a-guess")["gpus"], Json::array({1}));
    EXPECT_EQ(live.Assignment("ml/a-guess")["gpus_from"], "guess");
    // Both GPUs are taken: a third pod finds no room.
    fake.AddPod(PodObject("c", Shape(1)));
    EXPECT_TRUE(FilterOf(*live.extender, fake.GetPod("ml", "c"), {"n1"}).node_names.empty());
    states.push_back(state["assignments"].dump());
  }
  EXPECT_EQ(states[0], states[1]);
}

// A node that shrinks under its pods is blocked, not silently emptied.
TEST(FailClosed, ANodeThatShrinksUnderItsPodsIsBlocked) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(NodeObject("n1", 4));
  fake.AddPod(PodObject("on3", Shape(1, 1000, "n1", "3")));
  Live live(fake);
  ASSERT_TRUE(live.Sync());
  EXPECT_EQ(live.extender->gpu_allocated_milli(), 1000);
  fake.ModifyNode(NodeObject("n1", 2));  // GPUs 2 and 3 gone (a failed device, say)
  ASSERT_TRUE(WaitFor([&] { return live.State()["nodes"][0]["blocked"] != ""; }));
  const Json state = live.State();
  EXPECT_NE(state["nodes"][0]["blocked"].get<std::string>().find(
                "ml/on3 has a GPU annotation that cannot be used here"),
            std::string::npos)
      << state.dump();
  fake.AddPod(PodObject("p", Shape(1)));
  const ExtenderFilterResult f = FilterOf(*live.extender, fake.GetPod("ml", "p"), {"n1"});
  EXPECT_TRUE(f.node_names.empty());
  EXPECT_EQ(f.failed_and_unresolvable_nodes.at("n1").rfind("blocked: ", 0), 0u);
}

// Pods land only where a device plugin serves them.
TEST(DevicePlugin, FilterMatchesTheResourceFamily) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(NodeObject("hami", 2, "16", "nvidia.com/gpu"));
  fake.AddNode(NodeObject("ours", 2, "16", "tessera.io/gpu"));
  fake.AddPod(PendingPod("t", Json{{"tessera.io/gpu", "1"}}));
  fake.AddPod(PendingPod("n", Json{{"nvidia.com/gpu", "1"}}));
  Live live(fake);
  ASSERT_TRUE(live.Sync());
  ExtenderFilterResult f = FilterOf(*live.extender, fake.GetPod("ml", "t"), {"hami", "ours"});
  EXPECT_EQ(f.node_names, std::vector<std::string>{"ours"});
  EXPECT_EQ(f.failed_and_unresolvable_nodes.at("hami"),
            "device-plugin: node does not offer tessera.io/gpu, which the pod requests");
  f = FilterOf(*live.extender, fake.GetPod("ml", "n"), {"hami", "ours"});
  EXPECT_EQ(f.node_names, std::vector<std::string>{"hami"});
  EXPECT_EQ(f.failed_and_unresolvable_nodes.at("ours"),
            "device-plugin: node does not offer nvidia.com/gpu, which the pod requests");
  // And bind refuses what filter did not pass.
  EXPECT_EQ(BindOf(*live.extender, fake.GetPod("ml", "t"), "hami").error.rfind("refused", 0), 0u);
  EXPECT_EQ(Bindings(fake), 0);
}

// Reasons that cannot be resolved by preemption say so.
TEST(FilterReasons, GpuMemoryBeyondEveryGpuAndNodesWithoutGpusAreUnresolvable) {
  const Json nodes = {{"items",
                       {NodeObject("a10", 2),
                        {{"metadata", {{"name", "cpu-only"}}},
                         {"status", {{"allocatable", {{"cpu", "16"}, {"memory", "64Gi"}}}}}}}}};
  auto ext = Extender::FromJson(nodes.dump(), "", {});
  ASSERT_TRUE(ext.ok()) << ext.error().message;
  const ExtenderFilterResult f = FilterOf(
      **ext, PendingPod("big", Json{{"tessera.io/gpu", "1"}, {"tessera.io/gpu-memory", "30000"}}),
      {"a10", "cpu-only"});
  EXPECT_TRUE(f.failed_nodes.empty());
  EXPECT_EQ(f.failed_and_unresolvable_nodes.at("a10"),
            "gpu-memory: every GPU of the node has less memory than the pod requests per GPU");
  EXPECT_EQ(f.failed_and_unresolvable_nodes.at("cpu-only"), "gpu-model: node has no GPUs");
}

// PodDisruptionBudgets: policy/v1beta1 where v1 is not served; one warning where neither is.
TEST(DisruptionBudgets, FallBackToV1beta1ThenGiveUpWithOneWarning) {
  for (const bool beta_served : {true, false}) {
    FakeApiServer fake;
    ASSERT_TRUE(fake.Start());
    fake.AddNode(NodeObject("n1", 1));
    fake.FailNext("GET", "/apis/policy/v1/", 1000000, 404);
    if (!beta_served) fake.FailNext("GET", "/apis/policy/v1beta1/", 1000000, 404);
    fake.PutDisruptionBudget({{"metadata", {{"name", "keep"}, {"namespace", "ml"}}},
                              {"spec", {{"maxUnavailable", 0}, {"selector", Json::object()}}},
                              {"status", {{"disruptionsAllowed", 0}}}});
    Live live(fake, "fgd", /*budgets=*/true);
    ASSERT_TRUE(live.Sync());
    ASSERT_TRUE(WaitFor([&] {
      return live.cache->stats("poddisruptionbudgets").lists == (beta_served ? 1 : 0) &&
             (!beta_served || fake.open_watches() == 3);
    }));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    int policy_requests = 0;
    for (const std::string& r : fake.requests())
      policy_requests += r.find("/apis/policy/") != std::string::npos;
    int warnings = 0;
    {
      std::lock_guard<std::mutex> lock(live.log_mutex);
      for (const std::string& l : live.logs) warnings += l.rfind("warn not served", 0) == 0;
    }
    if (beta_served) {
      EXPECT_EQ(warnings, 1);         // v1 not served; trying v1beta1
      EXPECT_EQ(policy_requests, 3);  // v1 list, v1beta1 list, v1beta1 watch
    } else {
      EXPECT_EQ(warnings, 2);         // v1, then neither: going on without budgets
      EXPECT_EQ(policy_requests, 2);  // and no stream of 404s
    }
  }
}

// What the extender's health is judged by, in /metrics.
TEST(Observability, MetricsCoverSyncEventsRelistsErrorsAssumptionsAndBinds) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(NodeObject("n1", 2));
  fake.AddNode(NodeObject("n2", 2));
  fake.AddPod(PodObject("a", Shape(1)));
  fake.AddPod(OthersPod("odd", "n2", Json{{"cpu", "12Zi"}}));  // does not decode: n2 blocked
  Live live(fake);
  ASSERT_TRUE(live.Sync());
  ASSERT_EQ(live.FilterAndBind(fake.GetPod("ml", "a"), "n1"), "");
  const std::string m = live.extender->MetricsText();
  for (const char* line : {"tessera_synced 1\n", "tessera_cache_lists_total{resource=\"pods\"} 1\n",
                           "tessera_cache_watch_errors_total{resource=\"pods\"} 0\n",
                           "tessera_cache_objects_not_applied_total{resource=\"pods\"} 1\n",
                           "tessera_cache_last_event_timestamp_seconds{resource=\"pods\"} 17",
                           "tessera_binds_total{result=\"ok\"} 1\n", "tessera_nodes_blocked 1\n",
                           "tessera_request_duration_seconds_bucket{verb=\"bind\",le=\"10\"}"}) {
    EXPECT_NE(m.find(line), std::string::npos) << line << "\n" << m;
  }
  EXPECT_NE(m.find("tessera_assumed_pods "), std::string::npos);
  // /state marks each assignment assumed or confirmed.
  ASSERT_TRUE(WaitFor([&] { return live.Assignment("ml/a")["state"] == "confirmed"; }));
}

// JSON log lines carry a timestamp.
TEST(JsonLog, LinesCarryAnRfc3339Timestamp) {
  EXPECT_EQ(Rfc3339Millis(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(Rfc3339Millis(1764633901.123), "2025-12-02T00:05:01.123Z");
  ::testing::internal::CaptureStderr();
  LogJson("info", "hello", R"({"n":1})");
  const std::string line = ::testing::internal::GetCapturedStderr();
  const Json j = Json::parse(line);
  ASSERT_TRUE(j.contains("ts")) << line;
  EXPECT_EQ(j["ts"].get<std::string>().size(), 24u) << line;
  EXPECT_EQ(j["ts"].get<std::string>().back(), 'Z');
  EXPECT_EQ(j["level"], "info");
  EXPECT_EQ(j["msg"], "hello");
  EXPECT_EQ(j["n"], 1);
}

// The second wall: whoever reaches the port can only bind a pod to a node this extender's
// filter passed for that pod UID shortly before.
TEST(SecondWall, BindsThatFilterDidNotPassAreRefusedAndWriteNothing) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(NodeObject("n1", 2));
  fake.AddNode(NodeObject("n2", 2, "1"));  // 1 CPU: the pod's 1 CPU fits, a second does not
  fake.AddPod(PodObject("a", Shape(1)));
  fake.AddPod(PodObject("b", Shape(1)));
  Live live(fake);
  ASSERT_TRUE(live.Sync());
  const size_t before = fake.requests().size();
  // Never filtered (the watch has shown it pending, nothing more).
  std::string e = BindOf(*live.extender, fake.GetPod("ml", "a"), "n1").error;
  EXPECT_EQ(e.rfind("refused: this extender's filter did not pass node \"n1\" for pod ml/a", 0), 0u)
      << e;
  // Filtered, but only n2 passed; bound to n1.
  ASSERT_EQ(FilterOf(*live.extender, fake.GetPod("ml", "a"), {"n2"}).node_names.size(), 1u);
  e = BindOf(*live.extender, fake.GetPod("ml", "a"), "n1").error;
  EXPECT_EQ(e.rfind("refused: this extender's filter did not pass node \"n1\" for pod ml/a", 0), 0u)
      << e;
  // Filtered long ago: the pass is stale.
  ASSERT_EQ(FilterOf(*live.extender, fake.GetPod("ml", "b"), {"n1"}).node_names.size(), 1u);
  live.clock.Advance(601);
  e = BindOf(*live.extender, fake.GetPod("ml", "b"), "n1").error;
  EXPECT_EQ(e.rfind("refused: ", 0), 0u) << e;
  // Nothing was written, nothing read: the refusal comes first.
  const std::vector<std::string> requests = fake.requests();
  for (size_t i = before; i < requests.size(); ++i) {
    EXPECT_EQ(requests[i].find("/binding"), std::string::npos) << requests[i];
    EXPECT_EQ(requests[i].find("fieldSelector"), std::string::npos) << requests[i];
  }
  EXPECT_EQ(live.extender->gpu_allocated_milli(), 0);
  const std::string metrics = live.extender->MetricsText();
  EXPECT_NE(metrics.find("tessera_binds_total{result=\"refused\"} 3\n"), std::string::npos)
      << metrics;
  // The node filter passed: bound.
  ASSERT_EQ(FilterOf(*live.extender, fake.GetPod("ml", "b"), {"n1"}).node_names.size(), 1u);
  EXPECT_EQ(BindOf(*live.extender, fake.GetPod("ml", "b"), "n1").error, "");
  EXPECT_EQ(Bindings(fake), 1);
}

// A silent watch (stalled TCP, a lagging cache) while another scheduler binds: the read of the
// node before each bind sees what the watch has not delivered. Without it (the second case,
// run to show what the read is for) the same GPU goes to two pods.
class StalledWatch : public ::testing::TestWithParam<bool> {};

TEST_P(StalledWatch, TheReadBeforeBindSeesWhatTheWatchMissed) {
  const bool read_node = GetParam();
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(NodeObject("n1", 1));
  fake.AddPod(PodObject("theirs", Shape(1)));
  fake.AddPod(PodObject("ours", Shape(1)));
  Live live(fake, "fgd", false, read_node);
  ASSERT_TRUE(live.Sync());
  ASSERT_TRUE(WaitFor([&] { return fake.open_watches() == 2; }));
  fake.HoldWatches(true);
  Json theirs = fake.GetPod("ml", "theirs");
  theirs["spec"]["nodeName"] = "n1";
  theirs["metadata"]["annotations"]["tessera.io/gpu-indices"] = "0";
  fake.ModifyPod(theirs);  // bound by another scheduler; the watch is silent
  const std::string bound = live.FilterAndBind(fake.GetPod("ml", "ours"), "n1");
  if (read_node) {
    EXPECT_EQ(bound, "bind ml/ours to node n1: does not fit: gpu: not enough GPU left");
    EXPECT_EQ(ApiOverAllocation(fake), "");
  } else {
    EXPECT_EQ(bound, "");
    EXPECT_NE(ApiOverAllocation(fake), "");
  }
  fake.HoldWatches(false);
}

INSTANTIATE_TEST_SUITE_P(ReadNodeOnOff, StalledWatch, ::testing::Values(true, false));

// The races that already held: judged by the API's objects.
TEST(Races, TwoBindsForTheLastGpuHaveOneWinner) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(NodeObject("n1", 1));
  fake.AddPod(PodObject("a", Shape(1)));
  fake.AddPod(PodObject("b", Shape(1)));
  Live live(fake);
  ASSERT_TRUE(live.Sync());
  for (const char* name : {"a", "b"}) {
    ASSERT_EQ(FilterOf(*live.extender, fake.GetPod("ml", name), {"n1"}).node_names.size(), 1u);
  }
  std::atomic<int> ok{0};
  std::thread ta([&] { ok += BindOf(*live.extender, fake.GetPod("ml", "a"), "n1").error.empty(); });
  std::thread tb([&] { ok += BindOf(*live.extender, fake.GetPod("ml", "b"), "n1").error.empty(); });
  ta.join();
  tb.join();
  EXPECT_EQ(ok.load(), 1);
  EXPECT_EQ(Bindings(fake), 1);
  EXPECT_EQ(ApiOverAllocation(fake), "");
}

TEST(Races, TwelvePodsFromFourThreadsOntoEightGpus) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(NodeObject("n8", 8, "64"));
  for (int i = 0; i < 12; ++i) fake.AddPod(PodObject("p" + std::to_string(i), Shape(1)));
  Live live(fake);
  ASSERT_TRUE(live.Sync());
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < 12; i += 4) {
        ok += live.FilterAndBind(fake.GetPod("ml", "p" + std::to_string(i)), "n8").empty();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(ok.load(), 8);
  std::set<std::string> gpus;
  int bound = 0;
  for (const Json& pod : fake.Objects("pods")) {
    if (!pod["spec"].contains("nodeName")) continue;
    ++bound;
    gpus.insert(pod["metadata"]["annotations"]["tessera.io/gpu-indices"].get<std::string>());
  }
  EXPECT_EQ(bound, 8);
  EXPECT_EQ(gpus.size(), 8u);  // disjoint
  EXPECT_EQ(ApiOverAllocation(fake), "");
}

}  // namespace
}  // namespace tessera::k8s
