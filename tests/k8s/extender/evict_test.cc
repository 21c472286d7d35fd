// Preemption carried out by the extender itself (PreemptionMode::kEvict), judged by the fake API
// server's objects and requests: what kube-scheduler's own preemption would write — the
// preemptor's nominatedNodeName, the victims' DisruptionTarget condition, their deletion with
// the UID precondition, a Preempted event each — and the room held for the nominee against
// pods of lower priority. tests/cluster/preemption_test.sh shows the same through a real
// kube-scheduler, whose DefaultPreemption cannot reach the preempt verb for GPU resources it
// ignores.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "k8s/extender/extender.h"
#include "k8s/extender/extender_protocol.h"
#include "k8s/fake_apiserver.h"
#include "k8s/kube_scheduler.h"
#include "k8s/live.h"

namespace tessera::k8s {
namespace {

using testing::FakeApiServer;
using testing::Json;
using testing::NodeObject;
using testing::PodObject;
using testing::Serve;
using testing::Shape;
using testing::WaitFor;

Json WithPriority(Json pod, int priority) {
  pod["spec"]["priority"] = priority;
  return pod;
}

/// n1 holds four one-GPU pods of priority 0, n2 four of priority 500.
void FillTwoNodes(FakeApiServer& fake) {
  fake.AddNode(NodeObject("n1", 4));
  fake.AddNode(NodeObject("n2", 4));
  for (int g = 0; g < 4; ++g) {
    fake.AddPod(WithPriority(
        PodObject("low-" + std::to_string(g), Shape(1, 1000, "n1", std::to_string(g))), 0));
    fake.AddPod(WithPriority(
        PodObject("mid-" + std::to_string(g), Shape(1, 1000, "n2", std::to_string(g))), 500));
  }
}

ExtenderFilterResult FilterPod(Serve& serve, const Json& pod) {
  bool ok = false;
  const Json args = {{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", {"n1", "n2"}}};
  const std::string body = serve.kube->Post("/filter", args.dump(), &ok);
  EXPECT_TRUE(ok) << body;
  Result<ExtenderFilterResult> r = DecodeExtenderFilterResult(body);
  EXPECT_TRUE(r.ok()) << body;
  return r.ok() ? *r : ExtenderFilterResult{};
}

int Count(const std::vector<std::string>& requests, const std::string& prefix) {
  return static_cast<int>(std::count_if(requests.begin(), requests.end(),
                                        [&](const auto& r) { return r.rfind(prefix, 0) == 0; }));
}

ExtenderOptions Evicting() {
  ExtenderOptions eo;
  eo.preemption = PreemptionMode::kEvict;
  return eo;
}

TEST(EvictAtFilter, EvictsTheVictimsNominatesThePreemptorAndHoldsItsRoom) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  FillTwoNodes(fake);
  Serve serve(fake, "fgd", 42, Evicting());
  ASSERT_TRUE(serve.ready);
  ASSERT_TRUE(WaitFor([&] { return serve.extender->bound_pods() == 8; }));

  // Two GPUs at priority 1000: nothing fits, so the extender preempts — on n1, whose victims
  // have the lowest priority (kube-scheduler's pickOneNodeForPreemption).
  const Json hi = WithPriority(PodObject("hi", Shape(2)), 1000);
  fake.AddPod(hi);
  const Json hi_object = fake.GetPod("ml", "hi");
  EXPECT_TRUE(FilterPod(serve, hi_object).node_names.empty());
  ASSERT_TRUE(WaitFor(
      [&] { return fake.GetPod("ml", "hi")["status"].value("nominatedNodeName", "") == "n1"; }));
  ASSERT_TRUE(WaitFor([&] { return fake.RecordedEvents().size() == 2; }));
  std::vector<std::string> deleted;
  for (int g = 0; g < 4; ++g) {
    if (fake.GetPod("ml", "low-" + std::to_string(g)).is_null())
      deleted.push_back(std::to_string(g));
    EXPECT_FALSE(fake.GetPod("ml", "mid-" + std::to_string(g)).is_null());
  }
  EXPECT_EQ(deleted.size(), 2u);
  const std::vector<std::string> requests = fake.requests();
  EXPECT_EQ(Count(requests, "DELETE /api/v1/namespaces/ml/pods/low-"), 2);
  // Each victim is marked before it is deleted, as kube-scheduler marks it.
  for (const std::string& g : deleted) {
    const auto mark = std::find(requests.begin(), requests.end(),
                                "PATCH /api/v1/namespaces/ml/pods/low-" + g + "/status");
    const auto del =
        std::find(requests.begin(), requests.end(), "DELETE /api/v1/namespaces/ml/pods/low-" + g);
    EXPECT_LT(mark, del) << g;
  }
  for (const Json& e : fake.RecordedEvents()) {
    EXPECT_EQ(e["reason"], "Preempted");
    EXPECT_EQ(e["related"]["name"], "hi");
    EXPECT_EQ(e["regarding"]["name"].get<std::string>().rfind("low-", 0), 0u);
    EXPECT_NE(e["note"].get<std::string>().find("on node n1"), std::string::npos);
  }

  // The victims are gone: their two GPUs on n1 are held for hi against a pod of lower priority.
  ASSERT_TRUE(WaitFor([&] { return serve.extender->bound_pods() == 6; }));
  ASSERT_TRUE(WaitFor([&] {
    const Json state = serve.kube->State();
    for (const Json& p : state["pending"]) {
      if (p["pod"] == "ml/hi") return true;
    }
    return false;
  }));
  const Json lower = WithPriority(PodObject("later", Shape(1)), 500);
  fake.AddPod(lower);
  const ExtenderFilterResult refused = FilterPod(serve, fake.GetPod("ml", "later"));
  EXPECT_TRUE(refused.node_names.empty());
  ASSERT_EQ(refused.failed_nodes.count("n1"), 1u);
  EXPECT_EQ(refused.failed_nodes.at("n1").rfind("nominated:", 0), 0u)
      << refused.failed_nodes.at("n1");

  // hi itself fits there now, and binds; nothing more was evicted.
  const ExtenderFilterResult passed = FilterPod(serve, fake.GetPod("ml", "hi"));
  EXPECT_EQ(passed.node_names, std::vector<std::string>{"n1"});
  bool ok = false;
  const std::string bind = serve.kube->Post(
      "/bind", EncodeExtenderBindingArgs({"hi", "ml", hi_object["metadata"]["uid"], "n1"}), &ok);
  ASSERT_TRUE(ok) << bind;
  EXPECT_EQ(DecodeExtenderBindingResult(bind)->error, "");
  EXPECT_EQ(fake.GetPod("ml", "hi")["spec"]["nodeName"], "n1");
  EXPECT_EQ(Count(fake.requests(), "DELETE "), 2);
}

// While the victims terminate, kube-scheduler asks about the preemptor again with its own copy
// of the pod, which may predate the nomination (its cache lags the watch): the extender
// neither forgets the nomination nor preempts a second time.
TEST(EvictAtFilter, PreemptsOnceWhileTheVictimsTerminate) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.GracefulDeletes(true);
  FillTwoNodes(fake);
  Serve serve(fake, "fgd", 42, Evicting());
  ASSERT_TRUE(serve.ready);
  ASSERT_TRUE(WaitFor([&] { return serve.extender->bound_pods() == 8; }));
  fake.AddPod(WithPriority(PodObject("hi", Shape(2)), 1000));
  const Json before = fake.GetPod("ml", "hi");
  EXPECT_TRUE(FilterPod(serve, before).node_names.empty());
  ASSERT_TRUE(WaitFor([&] { return Count(fake.requests(), "DELETE ") == 2; }));
  ASSERT_TRUE(WaitFor(
      [&] { return fake.GetPod("ml", "hi")["status"].value("nominatedNodeName", "") == "n1"; }));
  // kube-scheduler's next tries of the pod, with the object as it was before the nomination.
  const auto nominated_in_state = [&] {
    const Json state = serve.kube->State();  // a range over a temporary's member would dangle
    for (const Json& p : state["pending"]) {
      if (p["pod"] == "ml/hi") return p["nominated_node"];
    }
    return Json();
  };
  ASSERT_TRUE(WaitFor([&] { return nominated_in_state() == "n1"; }));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(FilterPod(serve, before).node_names.empty());
  EXPECT_EQ(nominated_in_state(), "n1");
  EXPECT_EQ(Count(fake.requests(), "DELETE "), 2);
  // The victims go; the pod fits where it was nominated.
  for (int g = 0; g < 4; ++g) {
    const Json low = fake.GetPod("ml", "low-" + std::to_string(g));
    if (!low.is_null() && low["metadata"].contains("deletionTimestamp")) {
      fake.DeletePod("ml", "low-" + std::to_string(g));
    }
  }
  ASSERT_TRUE(WaitFor([&] { return serve.extender->bound_pods() == 6; }));
  EXPECT_EQ(FilterPod(serve, fake.GetPod("ml", "hi")).node_names, std::vector<std::string>{"n1"});
  EXPECT_EQ(Count(fake.requests(), "DELETE "), 2);
}

TEST(EvictAtFilter, APodThatNeverPreemptsAndTheVerbModeEvictNothing) {
  for (const bool never : {true, false}) {
    SCOPED_TRACE(never ? "preemptionPolicy: Never" : "PreemptionMode::kVerb");
    FakeApiServer fake;
    ASSERT_TRUE(fake.Start());
    FillTwoNodes(fake);
    Serve serve(fake, "fgd", 42, never ? Evicting() : ExtenderOptions{});
    ASSERT_TRUE(serve.ready);
    ASSERT_TRUE(WaitFor([&] { return serve.extender->bound_pods() == 8; }));
    Json hi = WithPriority(PodObject("hi", Shape(2)), 1000);
    if (never) hi["spec"]["preemptionPolicy"] = "Never";
    fake.AddPod(hi);
    EXPECT_TRUE(FilterPod(serve, fake.GetPod("ml", "hi")).node_names.empty());
    EXPECT_TRUE(FilterPod(serve, fake.GetPod("ml", "hi")).node_names.empty());
    EXPECT_EQ(Count(fake.requests(), "DELETE "), 0);
    EXPECT_EQ(Count(fake.requests(), "PATCH "), 0);
    EXPECT_TRUE(fake.RecordedEvents().empty());
  }
}

TEST(EvictAtFilter, ALowerPriorityPodPreemptsNothingOfEqualOrHigherPriority) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  FillTwoNodes(fake);
  Serve serve(fake, "fgd", 42, Evicting());
  ASSERT_TRUE(serve.ready);
  ASSERT_TRUE(WaitFor([&] { return serve.extender->bound_pods() == 8; }));
  fake.AddPod(WithPriority(PodObject("zero", Shape(1)), 0));
  EXPECT_TRUE(FilterPod(serve, fake.GetPod("ml", "zero")).node_names.empty());
  EXPECT_EQ(Count(fake.requests(), "DELETE "), 0);
  EXPECT_EQ(fake.GetPod("ml", "zero")["status"].value("nominatedNodeName", ""), "");
}

}  // namespace
}  // namespace tessera::k8s
