// The API cache and bind through the API, end to end over real HTTP against the in-process
// fake API server (tests/k8s/fake_apiserver.h).

#include "k8s/api/cluster_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "k8s/api/kube_api.h"
#include "k8s/extender/extender.h"
#include "k8s/extender/extender_protocol.h"
#include "k8s/fake_apiserver.h"
#include "k8s/live.h"
#include "k8s/serve/http_server.h"
#include "k8s/testdata.h"
#include "util/clock.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;
using testing::FakeApiServer;
using testing::Live;
using testing::NodeObject;
using testing::PodObject;
using testing::PodShape;
using testing::Shape;
using testing::WaitFor;

TEST(ClusterCache, InitialSyncLoadsNodesAndBoundPods) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(NodeObject("n1", 4));
  fake.AddNode(NodeObject("n2", 2));
  fake.AddPod(PodObject("annotated", Shape(2, 1000, "n1", "2-3")));
  fake.AddPod(PodObject("generic", Shape(1, 500, "n2")));
  fake.AddPod(PodObject("pending", Shape(1)));
  fake.AddPod(PodObject("done", Shape(1, 1000, "n2", "", "Succeeded")));
  Live live(fake);
  EXPECT_FALSE(live.extender->ready());
  ASSERT_TRUE(live.Sync());
  EXPECT_TRUE(live.cache->synced());
  const Json state = live.State();
  ASSERT_EQ(state["nodes"].size(), 2u);
  EXPECT_EQ(state["nodes"][0]["name"], "n1");
  EXPECT_EQ(state["gpu_capacity_milli"], 6000);
  EXPECT_EQ(state["gpu_allocated_milli"], 2500);
  ASSERT_EQ(state["assignments"].size(), 2u);
  EXPECT_EQ(live.Assignment("ml/annotated")["gpus"], Json({2, 3}));
  EXPECT_EQ(live.Assignment("ml/generic")["gpus"], Json::array({0}));
  EXPECT_EQ(live.Assignment("ml/generic")["gpu_milli"], 500);
  EXPECT_EQ(state["nodes"][1]["gpu_free_milli"], Json({500, 1000}));
  EXPECT_EQ(live.cache->stats("nodes").lists, 1);
  EXPECT_EQ(live.cache->stats("pods").lists, 1);
}

TEST(ClusterCache, ReadyzWaitsForTheInitialLists) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(NodeObject("n1", 1));
  Live live(fake);
  HttpServerOptions so;
  so.port = 0;
  HttpServer server(live.extender.get(), so);
  ASSERT_TRUE(server.Start().ok());
  KubeApiConfig c;
  c.server = "http://127.0.0.1:" + std::to_string(server.port());
  // Plain GETs through the same client code: /readyz is not a list, only its status matters.
  auto probe = [&] {
    ListPage page;
    return (*HttpKubeApi::Create(c))->List("/readyz", ListOptions{0, "", ""}, &page).http_status;
  };
  EXPECT_EQ(probe(), 503);
  ASSERT_TRUE(live.Sync());
  EXPECT_EQ(probe(), 200);
  server.Stop();
}

TEST(ClusterCache, WatchEventsReachTheModel) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(NodeObject("n1", 4));
  Live live(fake);
  ASSERT_TRUE(live.Sync());
  // A pod bound by someone else.
  fake.AddPod(PodObject("a", Shape(2, 1000, "n1", "0-1")));
  ASSERT_TRUE(WaitFor([&] { return live.extender->gpu_allocated_milli() == 2000; }));
  // It ends: released.
  fake.ModifyPod(PodObject("a", Shape(2, 1000, "n1", "0-1", "Failed")));
  ASSERT_TRUE(WaitFor([&] { return live.extender->gpu_allocated_milli() == 0; }));
  // Another is deleted: released.
  fake.AddPod(PodObject("b", Shape(1, 1000, "n1")));
  ASSERT_TRUE(WaitFor([&] { return live.extender->gpu_allocated_milli() == 1000; }));
  fake.DeletePod("ml", "b");
  ASSERT_TRUE(WaitFor([&] { return live.extender->gpu_allocated_milli() == 0; }));
  // A node joins, then leaves.
  fake.AddNode(NodeObject("n2", 8));
  ASSERT_TRUE(WaitFor([&] { return live.extender->gpu_capacity_milli() == 12000; }));
  fake.DeleteNode("n1");
  ASSERT_TRUE(WaitFor([&] { return live.extender->gpu_capacity_milli() == 8000; }));
  EXPECT_EQ(live.State()["nodes"][0]["name"], "n2");
  EXPECT_EQ(live.cache->stats("pods").lists, 1);  // no relist needed for any of it
}

TEST(ClusterCache, DisruptionBudgetsFromTheWatchCountInPreempt) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(NodeObject("n1", 2));
  for (int i = 0; i < 2; ++i) {
    Json pod = PodObject("x" + std::to_string(i), Shape(1, 1000, "n1", std::to_string(i)));
    pod["spec"]["priority"] = 1;
    pod["metadata"]["labels"] = {{"app", "x"}};
    fake.AddPod(pod);
  }
  const Json pdb = {{"apiVersion", "policy/v1"},
                    {"kind", "PodDisruptionBudget"},
                    {"metadata", {{"name", "x"}, {"namespace", "ml"}}},
                    {"spec", {{"selector", {{"matchLabels", {{"app", "x"}}}}}}},
                    {"status", {{"disruptionsAllowed", 0}}}};
  fake.PutDisruptionBudget(pdb);
  Live live(fake, "fgd", /*budgets=*/true);
  ASSERT_TRUE(live.Sync());
  Json preemptor = PodObject("urgent", Shape(1));
  preemptor["spec"]["priority"] = 100;
  const Json body = {
      {"Pod", preemptor},
      {"NodeNameToVictims", nullptr},
      {"NodeNameToMetaVictims", {{"n1", {{"Pods", nullptr}, {"NumPDBViolations", 0}}}}}};
  const auto violations = [&] {
    Result<ExtenderPreemptionArgs> args = DecodeExtenderPreemptionArgs(body.dump());
    EXPECT_TRUE(args.ok());
    const ExtenderPreemptionResult r = live.extender->Preempt(*args);
    auto it = r.node_name_to_meta_victims.find("n1");
    return it == r.node_name_to_meta_victims.end() ? -1 : it->second.num_pdb_violations;
  };
  // The budget came with the initial list (readiness does not wait for it; poll).
  ASSERT_TRUE(WaitFor([&] { return violations() == 1; }));
  // The budget allows one disruption: no violation.
  Json relaxed = pdb;
  relaxed["status"]["disruptionsAllowed"] = 1;
  fake.PutDisruptionBudget(relaxed);
  ASSERT_TRUE(WaitFor([&] { return violations() == 0; }));
  // Spent again, then deleted: the watch carries both.
  fake.PutDisruptionBudget(pdb);
  ASSERT_TRUE(WaitFor([&] { return violations() == 1; }));
  fake.DeleteDisruptionBudget("ml", "x");
  ASSERT_TRUE(WaitFor([&] { return violations() == 0; }));
  EXPECT_EQ(live.cache->stats("poddisruptionbudgets").lists, 1);
  // Without the option there is no third reflector.
  Live plain(fake);
  ASSERT_TRUE(plain.Sync());
  EXPECT_EQ(plain.cache->stats("poddisruptionbudgets").lists, 0);
}

// An account that may not list PodDisruptionBudgets: serve goes on without them (in sync, the
// model built), says why once (the warning analyze gives too, BudgetsUnavailable), and reads
// them once the permission is granted.
TEST(ClusterCache, ForbiddenBudgetsAreAWarningAndTheCacheGoesOn) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(NodeObject("n1", 2));
  fake.Forbid("poddisruptionbudgets");
  Live live(fake, "fgd", /*budgets=*/true);
  ASSERT_TRUE(live.Sync());
  ASSERT_TRUE(WaitFor([&] { return live.Retries("poddisruptionbudgets").size() >= 3; }));
  int warnings = 0;
  {
    std::lock_guard<std::mutex> lock(live.log_mutex);
    for (const std::string& l : live.logs) {
      warnings +=
          l.find(
              "warn PodDisruptionBudgets not read: the API server refused to list "
              "them (GET ") == 0 &&
          l.find("HTTP 403: \"poddisruptionbudgets.policy is forbidden") != std::string::npos;
    }
  }
  EXPECT_EQ(warnings, 1) << "once per reason, not per retry";
  EXPECT_EQ(live.cache->stats("poddisruptionbudgets").lists, 0);
  fake.Allow("poddisruptionbudgets");
  ASSERT_TRUE(WaitFor([&] { return live.cache->stats("poddisruptionbudgets").lists == 1; }));
}

TEST(ClusterCache, DroppedWatchResumesWithoutLoss) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(NodeObject("n1", 4));
  Live live(fake);
  ASSERT_TRUE(live.Sync());
  ASSERT_TRUE(WaitFor([&] { return fake.open_watches() == 2; }));
  fake.HoldWatches(true);
  fake.AddPod(PodObject("a", Shape(1, 1000, "n1", "3")));  // not sent yet
  fake.DropWatches();
  fake.HoldWatches(false);
  ASSERT_TRUE(WaitFor([&] { return live.extender->gpu_allocated_milli() == 1000; }));
  EXPECT_EQ(live.Assignment("ml/a")["gpus"], Json({3}));
  EXPECT_EQ(live.extender->bound_pods(), 1);
  EXPECT_EQ(live.cache->stats("pods").lists, 1);  // resumed from the resourceVersion
  EXPECT_GE(live.cache->stats("pods").watches, 2);
}

class GoneTest : public ::testing::TestWithParam<bool> {};

TEST_P(GoneTest, RelistReconcilesWhatWasMissed) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.SetGoneAsEvent(GetParam());
  fake.AddNode(NodeObject("n1", 4));
  fake.AddPod(PodObject("a", Shape(2, 1000, "n1", "0-1")));
  fake.AddPod(PodObject("b", Shape(1, 1000, "n1", "2")));
  Live live(fake);
  ASSERT_TRUE(live.Sync());
  ASSERT_EQ(live.extender->gpu_allocated_milli(), 3000);
  ASSERT_TRUE(WaitFor([&] { return fake.open_watches() == 2; }));
  // While the cache is cut off, "a" is deleted and the history compacted.
  fake.HoldWatches(true);
  fake.DeletePod("ml", "a");
  fake.AddPod(PodObject("c", Shape(1, 1000, "n1", "3")));
  fake.Compact();
  fake.DropWatches();
  fake.HoldWatches(false);
  ASSERT_TRUE(WaitFor([&] { return live.cache->stats("pods").lists == 2; }));
  ASSERT_TRUE(WaitFor([&] { return live.extender->gpu_allocated_milli() == 2000; }));
  EXPECT_TRUE(live.Assignment("ml/a").is_null());
  EXPECT_EQ(live.Assignment("ml/b")["gpus"], Json({2}));
  EXPECT_EQ(live.Assignment("ml/c")["gpus"], Json({3}));
}

INSTANTIATE_TEST_SUITE_P(HttpStatusOrErrorEvent, GoneTest, ::testing::Values(false, true));

TEST(ClusterCache, ErrorsBackOffExponentiallyUpToTheCap) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(NodeObject("n1", 1));
  fake.FailNext("GET", "/api/v1/nodes", 5, 500);
  Live live(fake);
  ASSERT_TRUE(live.Sync());
  EXPECT_EQ(live.sleeper.sleeps(), (std::vector<double>{0.5, 1, 2, 3, 3}));
  EXPECT_EQ(live.cache->stats("nodes").errors, 5);
  EXPECT_EQ(live.Retries("pods"), std::vector<double>{});
  // After a good list the back-off starts afresh: a cut watch, then a failed one.
  ASSERT_TRUE(WaitFor([&] { return fake.open_watches() == 2; }));
  fake.FailNext("GET", "/api/v1/nodes", 1, 500);
  fake.DropWatches();
  ASSERT_TRUE(WaitFor([&] { return live.Retries("nodes").size() >= 7; }));
  EXPECT_EQ(live.Retries("nodes"), (std::vector<double>{0.5, 1, 2, 3, 3, 0.5, 1}));
  ASSERT_TRUE(WaitFor([&] { return !live.Retries("pods").empty(); }));
  EXPECT_EQ(live.Retries("pods"), std::vector<double>{0.5});
  bool logged = false;
  {
    std::lock_guard<std::mutex> lock(live.log_mutex);
    for (const std::string& l : live.logs) {
      logged |= l.find("error list failed") == 0 && l.find("HTTP 500") != std::string::npos;
    }
  }
  EXPECT_TRUE(logged);
}

// A HAMi node as kubectl prints it: GPUs 0 and 1 are the two healthy devices.
Json HamiNode() { return Json::parse(ReadTestdata("node_hami.json")); }

TEST(ClusterCacheBind, AnnotatesInTheBindingWithHamisExactFormat) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(HamiNode());
  // HAMi's resources; kubectl-printed pod with a sidecar and an init container.
  Json pod = Json::parse(ReadTestdata("pod_hami.json"));
  fake.AddPod(pod);
  Live live(fake);
  ASSERT_TRUE(live.Sync());
  pod = fake.GetPod("default", "hami-share");
  ASSERT_EQ(live.FilterAndBind(pod, "gpu-node-1"), "");

  // One write: the Binding carries the annotations (no patch before it), after a read of the
  // node's pods.
  const std::vector<std::string> requests = fake.requests();
  const std::string path = "/api/v1/namespaces/default/pods/hami-share";
  auto read = std::find(requests.begin(), requests.end(),
                        "GET /api/v1/pods?limit=0&fieldSelector=spec.nodeName=gpu-node-1");
  auto bind = std::find(requests.begin(), requests.end(), "POST " + path + "/binding");
  ASSERT_NE(read, requests.end());
  ASSERT_NE(bind, requests.end());
  EXPECT_LT(read, bind);
  for (const std::string& r : requests) EXPECT_NE(r.rfind("PATCH", 0), 0u) << r;

  const Json bound = fake.GetPod("default", "hami-share");
  EXPECT_EQ(bound["spec"]["nodeName"], "gpu-node-1");
  const Json& ann = bound["metadata"]["annotations"];
  EXPECT_EQ(ann["tessera.io/gpu-indices"], "0");
  // Init containers first (the sidecar, then "warmup"), then the app container.
  EXPECT_EQ(ann["hami.io/vgpu-devices-to-allocate"],
            ";;GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec,NVIDIA,3000,30:;");
  EXPECT_EQ(ann["hami.io/vgpu-devices-allocated"], ann["hami.io/vgpu-devices-to-allocate"]);
  EXPECT_EQ(ann["hami.io/vgpu-node"], "gpu-node-1");
  EXPECT_EQ(ann["hami.io/vgpu-time"], "1700000000");
  EXPECT_EQ(ann["hami.io/bind-time"], "1700000000");
  EXPECT_EQ(ann["hami.io/bind-phase"], "allocating");
  EXPECT_EQ(ann["tessera.io/class"], "BE");  // the pod's own annotation is kept

  // The watch confirms the assumption: counted once.
  ASSERT_TRUE(WaitFor([&] { return live.extender->assumed_pods() == 0; }));
  EXPECT_EQ(live.extender->gpu_allocated_milli(), 300);
  EXPECT_EQ(live.extender->bound_pods(), 1);
}

TEST(ClusterCacheBind, WholeGpuPodsGetOneEntryPerDevice) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(HamiNode());
  // HAMi's node serves nvidia.com/gpu: the pod asks in that family.
  Json pod = PodObject("two", Shape(2));
  Json& limits = pod["spec"]["containers"][0]["resources"]["limits"];
  limits.erase("tessera.io/gpu");
  limits.erase("tessera.io/gpu-milli");
  limits["nvidia.com/gpu"] = "2";
  fake.AddPod(pod);
  Live live(fake);
  ASSERT_TRUE(live.Sync());
  ASSERT_EQ(live.FilterAndBind(fake.GetPod("ml", "two"), "gpu-node-1"), "");
  const Json ann = fake.GetPod("ml", "two")["metadata"]["annotations"];
  EXPECT_EQ(ann["tessera.io/gpu-indices"], "0-1");
  EXPECT_EQ(ann["hami.io/vgpu-devices-to-allocate"],
            "GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec,NVIDIA,32768,100:"
            "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448,NVIDIA,32768,100:;");
}

TEST(ClusterCacheBind, ApiFailureRollsBack) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(NodeObject("n1", 2));
  fake.AddPod(PodObject("a", Shape(1)));
  Live live(fake);
  ASSERT_TRUE(live.Sync());
  const Json pod = fake.GetPod("ml", "a");

  fake.FailNext("POST", "/api/v1/namespaces/ml/pods/a/binding", 1, 500);
  EXPECT_EQ(live.FilterAndBind(pod, "n1"),
            "bind ml/a to node n1: POST " + fake.url() +
                "/api/v1/namespaces/ml/pods/a/binding: HTTP 500: \"injected failure\"");
  EXPECT_EQ(live.extender->gpu_allocated_milli(), 0);
  EXPECT_EQ(live.extender->assumed_pods(), 0);
  // The failed Binding left nothing on the pod: no GPU annotation on an unbound pod.
  EXPECT_EQ(fake.GetPod("ml", "a")["metadata"]["annotations"], Json::object());

  // The node's pods cannot be read: nothing is bound. (Not a watch: the cache may reopen its
  // pod watch meanwhile on a loaded machine.)
  fake.FailNext("GET", "/api/v1/pods", 1, 500, /*watches=*/false);
  const size_t before = fake.requests().size();
  EXPECT_NE(live.FilterAndBind(pod, "n1").find("cannot read the pods of node n1"),
            std::string::npos);
  EXPECT_EQ(live.extender->gpu_allocated_milli(), 0);
  for (size_t i = before; i < fake.requests().size(); ++i) {
    EXPECT_EQ(fake.requests()[i].find("POST"), std::string::npos) << "bound without a read";
  }

  // The retry succeeds, and a second retry is idempotent (no second binding).
  EXPECT_EQ(live.FilterAndBind(pod, "n1"), "");
  EXPECT_EQ(live.FilterAndBind(pod, "n1"), "");
  int bindings = 0;
  for (const std::string& r : fake.requests()) bindings += r.find("/binding") != std::string::npos;
  EXPECT_EQ(bindings, 2);  // the failed one and the good one
  EXPECT_EQ(live.extender->gpu_allocated_milli(), 1000);
  // A node without HAMi's register: only Tessera's annotation.
  EXPECT_EQ(fake.GetPod("ml", "a")["metadata"]["annotations"],
            (Json{{"tessera.io/gpu-indices", "0"}}));
}

// An assumed pod whose Binding went through is never expired by time: while the watch is
// silent (held here), its GPU is not offered again, however long it takes.
class AssumedPods : public ::testing::TestWithParam<bool> {};

TEST_P(AssumedPods, NeverExpireWhileTheWatchIsSilent) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(NodeObject("n1", 1));
  fake.AddPod(PodObject("a", Shape(1)));
  fake.AddPod(PodObject("b", Shape(1)));
  Live live(fake, "fgd", false, /*read_node=*/GetParam());
  ASSERT_TRUE(live.Sync());
  ASSERT_TRUE(WaitFor([&] { return fake.open_watches() == 2; }));
  fake.HoldWatches(true);  // the cache will not see the binding for now
  ASSERT_EQ(live.FilterAndBind(fake.GetPod("ml", "a"), "n1"), "");
  EXPECT_EQ(live.extender->assumed_pods(), 1);
  live.clock.Advance(3600);  // an hour of silence
  EXPECT_EQ(live.extender->assumed_pods(), 1);
  EXPECT_EQ(live.extender->gpu_allocated_milli(), 1000);
  EXPECT_EQ(live.FilterAndBind(fake.GetPod("ml", "b"), "n1"),
            "filter rejected: {\"n1\":\"gpu: not enough GPU left\"}");
  // The watch catches up: confirmed, counted once.
  fake.HoldWatches(false);
  ASSERT_TRUE(WaitFor([&] { return live.extender->assumed_pods() == 0; }));
  EXPECT_EQ(live.extender->gpu_allocated_milli(), 1000);
  EXPECT_EQ(live.extender->bound_pods(), 1);
  // In the API: one pod bound, one pending.
  EXPECT_EQ(fake.GetPod("ml", "a")["spec"]["nodeName"], "n1");
  EXPECT_FALSE(fake.GetPod("ml", "b")["spec"].contains("nodeName"));
}

INSTANTIATE_TEST_SUITE_P(WithAndWithoutNodeRead, AssumedPods, ::testing::Values(true, false));

TEST(ClusterCacheBind, ConcurrentBindsNeverOverAllocateAndRetriesBindOnce) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(NodeObject("n1", 2));  // room for 4 pods of 500 milli
  for (int i = 0; i < 8; ++i) fake.AddPod(PodObject("p" + std::to_string(i), Shape(1, 500)));
  Live live(fake);
  ASSERT_TRUE(live.Sync());
  std::vector<Json> pods;
  for (int i = 0; i < 8; ++i) pods.push_back(fake.GetPod("ml", "p" + std::to_string(i)));
  for (const Json& pod : pods) {  // kube-scheduler filters each pod before it binds it
    Json body = {{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", {"n1"}}};
    ASSERT_EQ(live.extender->Filter(*DecodeExtenderArgs(body.dump())).node_names.size(), 1u);
  }
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  // Each pod is bound by two threads at once (kube-scheduler retrying after a timeout).
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      const Json& pod = pods[t % 8];
      const std::string uid = pod["metadata"]["uid"];
      const std::string name = pod["metadata"]["name"];
      if (live.extender->Bind({name, "ml", uid, "n1"}).error.empty()) ++ok;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(ok.load(), 8);  // 4 pods, each answered success twice
  EXPECT_EQ(live.extender->gpu_allocated_milli(), 2000);
  int bindings = 0;
  for (const std::string& r : fake.requests()) bindings += r.find("/binding") != std::string::npos;
  EXPECT_EQ(bindings, 4);
  ASSERT_TRUE(WaitFor([&] { return live.extender->assumed_pods() == 0; }));
  EXPECT_EQ(live.extender->gpu_allocated_milli(), 2000);
  EXPECT_EQ(live.extender->bound_pods(), 4);
}

TEST(ClusterCacheBind, RestartedExtenderRebuildsTheSameState) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(NodeObject("n1", 4));
  fake.AddNode(NodeObject("n2", 8));
  fake.AddNode(NodeObject("n3", 2, "4"));
  fake.AddPod(PodObject("other", Shape(1, 300, "n3")));  // not ours
  const std::vector<std::pair<std::string, PodShape>> pods = {
      {"s1", Shape(1, 300)}, {"s2", Shape(1, 600)}, {"w2", Shape(2)},      {"w4", Shape(4)},
      {"s3", Shape(1, 200)}, {"w1", Shape(1)},      {"s4", Shape(1, 700)}, {"cpu", Shape(0)}};
  for (const auto& [name, shape] : pods) fake.AddPod(PodObject(name, shape));
  std::string state1;
  {
    Live first(fake);
    ASSERT_TRUE(first.Sync());
    for (const auto& [name, shape] : pods) {
      const Json pod = fake.GetPod("ml", name);
      Json body = {{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", {"n1", "n2", "n3"}}};
      HostPriorityList scores = first.extender->Prioritize(*DecodeExtenderArgs(body.dump()));
      std::string best = "n1";
      int64_t top = -1;
      for (const HostPriority& h : scores) {
        if (h.score > top) best = h.host, top = h.score;
      }
      ASSERT_EQ(first.FilterAndBind(pod, best), "") << name;
    }
    ASSERT_TRUE(WaitFor([&] { return first.extender->assumed_pods() == 0; }));
    state1 = first.extender->StateJson();
    EXPECT_EQ(Json::parse(state1)["assignments"].size(), pods.size() + 1);
  }
  Live second(fake);
  ASSERT_TRUE(second.Sync());
  EXPECT_EQ(second.extender->StateJson(), state1);
}

}  // namespace
}  // namespace tessera::k8s
