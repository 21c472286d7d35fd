// Extender::Preempt on a model loaded from kubectl-shaped JSON: the victims come from the
// pods the model holds, with the priority and labels recorded when they were loaded or bound.

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "k8s/api/disruption_budget.h"
#include "k8s/extender/extender.h"
#include "k8s/extender/extender_protocol.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;

Json NodeObject(const std::string& name, int gpus, const std::string& model) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", name},
            {"labels", {{"tessera.io/gpu-model", model}, {"tessera.io/gpu-memory", "24576"}}}}},
          {"status",
           {{"allocatable",
             {{"cpu", "16"}, {"memory", "64Gi"}, {"tessera.io/gpu", std::to_string(gpus)}}}}}};
}

// n1: 2 A10, n2: 4 A10, n3: 1 T4, n4: 2 A10 (cordoned).
std::string Nodes() {
  Json cordoned = NodeObject("n4", 2, "A10");
  cordoned["spec"] = {{"unschedulable", true}};
  Json list = {{"kind", "List"},
               {"items",
                {NodeObject("n1", 2, "A10"), NodeObject("n2", 4, "A10"), NodeObject("n3", 1, "T4"),
                 cordoned}}};
  return list.dump();
}

struct Shape {
  int32_t priority = 0;
  int gpus = 1;
  int milli = 1000;
  std::string node;     // bound when set
  std::string indices;  // tessera.io/gpu-indices
  std::string app;      // label app
  std::string model;    // tessera.io/gpu-model

  Shape& Gpus(int n) {
    gpus = n;
    return *this;
  }
  Shape& On(std::string n, std::string i) {
    node = std::move(n);
    indices = std::move(i);
    return *this;
  }
  Shape& App(std::string a) {
    app = std::move(a);
    return *this;
  }
  Shape& Model(std::string m) {
    model = std::move(m);
    return *this;
  }
};
Shape Prio(int32_t priority) {
  Shape s;
  s.priority = priority;
  return s;
}

Json PodObject(const std::string& uid, const Shape& s) {
  Json limits = {{"cpu", "1"},
                 {"memory", "1Gi"},
                 {"tessera.io/gpu", std::to_string(s.gpus)},
                 {"tessera.io/gpu-milli", std::to_string(s.milli)}};
  Json annotations = Json::object();
  if (!s.indices.empty()) annotations["tessera.io/gpu-indices"] = s.indices;
  if (!s.model.empty()) annotations["tessera.io/gpu-model"] = s.model;
  Json labels = Json::object();
  if (!s.app.empty()) labels["app"] = s.app;
  Json spec = {{"priority", s.priority},
               {"containers", {{{"name", "c"}, {"resources", {{"limits", limits}}}}}}};
  if (!s.node.empty()) spec["nodeName"] = s.node;
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", uid},
            {"namespace", "ml"},
            {"uid", uid},
            {"labels", labels},
            {"annotations", annotations}}},
          {"spec", spec},
          {"status", {{"phase", s.node.empty() ? "Pending" : "Running"}}}};
}

// Loaded as running: n1 holds low (priority 1, app=x) on GPU 0 and high (priority 100) on
// GPU 1; n2 holds p5 (priority 5) on GPUs 0-1 and p3 (priority 3) on GPU 2.
std::unique_ptr<Extender> MakeExtender() {
  Json pods = {
      {"kind", "List"},
      {"items",
       {PodObject("low", Prio(1).On("n1", "0").App("x")),
        PodObject("high", Prio(100).On("n1", "1")),
        PodObject("p5", Prio(5).Gpus(2).On("n2", "0-1")), PodObject("p3", Prio(3).On("n2", "2"))}}};
  Result<std::unique_ptr<Extender>> e = Extender::FromJson(Nodes(), pods.dump(), {});
  EXPECT_TRUE(e.ok()) << e.error().message;
  return e.ok() ? std::move(*e) : nullptr;
}

ExtenderPreemptionArgs PreemptArgs(const Shape& preemptor, const Json& meta_victims) {
  Json body = {{"Pod", PodObject("preemptor", preemptor)},
               {"NodeNameToVictims", nullptr},
               {"NodeNameToMetaVictims", meta_victims}};
  Result<ExtenderPreemptionArgs> args = DecodeExtenderPreemptionArgs(body.dump());
  EXPECT_TRUE(args.ok()) << args.error().message;
  return std::move(*args);
}

using Victims = std::map<std::string, MetaVictims>;

TEST(ExtenderPreempt, ChoosesVictimsWhenTheSchedulerSentNone) {
  auto ext = MakeExtender();
  ASSERT_NE(ext, nullptr);
  // Fill n2's last GPU through filter + bind: priority and labels are recorded from filter.
  ExtenderArgs args;
  args.pod = *DecodePod(PodObject("p2", Prio(2).App("y")), "Pod");
  args.node_names = std::vector<std::string>{"n2"};
  ASSERT_EQ(ext->Filter(args).node_names, std::vector<std::string>{"n2"});
  ASSERT_EQ(ext->Bind({"p2", "ml", "p2", "n2"}).error, "");

  const Json empty = {{"Pods", nullptr}, {"NumPDBViolations", 0}};
  ExtenderPreemptionResult r = ext->Preempt(PreemptArgs(
      Prio(50).Model("A10"),
      {{"n1", empty}, {"n2", nullptr}, {"n3", empty}, {"n4", empty}, {"ghost", empty}}));
  // n1: only low is below 50; n2: p2 is the lowest; n3 has the wrong model, n4 is cordoned,
  // ghost is unknown.
  EXPECT_EQ(r.node_name_to_meta_victims,
            (Victims{{"n1", MetaVictims{{"low"}, 0}}, {"n2", MetaVictims{{"p2"}, 0}}}));

  // Two GPUs: on n2 the one pod holding two GPUs (p5) beats two single-GPU pods.
  r = ext->Preempt(PreemptArgs(Prio(50).Gpus(2), {{"n1", empty}, {"n2", empty}}));
  EXPECT_EQ(r.node_name_to_meta_victims, (Victims{{"n2", MetaVictims{{"p5"}, 0}}}));

  // Nothing changed: preemption only proposes.
  EXPECT_EQ(ext->bound_pods(), 5);
  EXPECT_EQ(ext->gpu_allocated_milli(), 6000);
}

// Among equal priorities the victim is the pod that started last (status.startTime, as
// kube-scheduler orders them), whatever the UIDs' order.
TEST(ExtenderPreempt, EqualPrioritiesLoseTheLatestStarter) {
  Json older = PodObject("a-old", Prio(1).On("n1", "0"));
  older["status"]["startTime"] = "2026-12-01T10:00:00Z";
  Json younger = PodObject("b-young", Prio(1).On("n1", "1"));
  younger["status"]["startTime"] = "2026-12-01T11:30:00Z";
  Json pods = {{"kind", "List"}, {"items", {younger, older}}};
  Result<std::unique_ptr<Extender>> ext = Extender::FromJson(Nodes(), pods.dump(), {});
  ASSERT_TRUE(ext.ok()) << ext.error().message;
  const Json empty = {{"Pods", nullptr}, {"NumPDBViolations", 0}};
  ExtenderPreemptionResult r = (*ext)->Preempt(PreemptArgs(Prio(50), {{"n1", empty}}));
  EXPECT_EQ(r.node_name_to_meta_victims, (Victims{{"n1", MetaVictims{{"b-young"}, 0}}}));
  // The start times swapped: the other pod goes.
  older["status"]["startTime"] = "2026-12-01T12:00:00Z";
  pods = {{"kind", "List"}, {"items", {younger, older}}};
  ext = Extender::FromJson(Nodes(), pods.dump(), {});
  ASSERT_TRUE(ext.ok());
  r = (*ext)->Preempt(PreemptArgs(Prio(50), {{"n1", empty}}));
  EXPECT_EQ(r.node_name_to_meta_victims, (Victims{{"n1", MetaVictims{{"a-old"}, 0}}}));
}

TEST(ExtenderPreempt, CountsBudgetViolationsAndAvoidsThem) {
  auto ext = MakeExtender();
  ASSERT_NE(ext, nullptr);
  Result<std::vector<PodDisruptionBudget>> pdbs = ParsePodDisruptionBudgets(R"({"items": [
      {"metadata": {"name": "x", "namespace": "ml"},
       "spec": {"selector": {"matchLabels": {"app": "x"}}},
       "status": {"disruptionsAllowed": 0}}]})");
  ASSERT_TRUE(pdbs.ok()) << pdbs.error().message;
  ext->SetDisruptionBudgets(*pdbs);
  const Json empty = {{"Pods", Json::array()}, {"NumPDBViolations", 0}};
  // n1: low is the only possible victim, and its budget is spent.
  ExtenderPreemptionResult r = ext->Preempt(PreemptArgs(Prio(50), {{"n1", empty}}));
  EXPECT_EQ(r.node_name_to_meta_victims, (Victims{{"n1", MetaVictims{{"low"}, 1}}}));
  // Priority 101 may evict high as well: one pod either way, and high violates no budget.
  r = ext->Preempt(PreemptArgs(Prio(101), {{"n1", empty}}));
  EXPECT_EQ(r.node_name_to_meta_victims, (Victims{{"n1", MetaVictims{{"high"}, 0}}}));
}

TEST(ExtenderPreempt, HonoursOrExtendsTheSchedulerVictims) {
  auto ext = MakeExtender();
  ASSERT_NE(ext, nullptr);
  const auto with = [](std::vector<std::string> uids) {
    Json pods = Json::array();
    for (const std::string& u : uids) pods.push_back({{"UID", u}});
    return Json{{"Pods", pods}, {"NumPDBViolations", 0}};
  };
  // p5 frees two GPUs on n2: accepted as is, although p3 has a lower priority.
  ExtenderPreemptionResult r = ext->Preempt(PreemptArgs(Prio(50), {{"n2", with({"p5"})}}));
  EXPECT_EQ(r.node_name_to_meta_victims, (Victims{{"n2", MetaVictims{{"p5"}, 0}}}));
  // A pod the model does not know frees nothing it can see: kept, and low is added.
  r = ext->Preempt(PreemptArgs(Prio(50), {{"n1", with({"cpu-pod"})}}));
  EXPECT_EQ(r.node_name_to_meta_victims, (Victims{{"n1", MetaVictims{{"cpu-pod", "low"}, 0}}}));
  // Whole pods (a scheduler that is not nodeCacheCapable) work the same way.
  Json body = {{"Pod", PodObject("preemptor", Prio(50))},
               {"NodeNameToVictims",
                {{"n2", {{"Pods", {PodObject("p3", Prio(3))}}, {"NumPDBViolations", 0}}}}},
               {"NodeNameToMetaVictims", nullptr}};
  Result<ExtenderPreemptionArgs> args = DecodeExtenderPreemptionArgs(body.dump());
  ASSERT_TRUE(args.ok()) << args.error().message;
  r = ext->Preempt(*args);
  EXPECT_EQ(r.node_name_to_meta_victims, (Victims{{"n2", MetaVictims{{"p3"}, 0}}}));
}

TEST(ExtenderPreempt, UnmodellablePodGetsNoNode) {
  auto ext = MakeExtender();
  ASSERT_NE(ext, nullptr);
  Json pod = PodObject("bad", Prio(50));
  pod["spec"]["containers"][0]["resources"]["limits"]["tessera.io/gpu-milli"] = "2000";
  Json body = {{"Pod", pod}, {"NodeNameToMetaVictims", {{"n1", nullptr}}}};
  Result<ExtenderPreemptionArgs> args = DecodeExtenderPreemptionArgs(body.dump());
  ASSERT_TRUE(args.ok()) << args.error().message;
  EXPECT_TRUE(ext->Preempt(*args).node_name_to_meta_victims.empty());
}

TEST(ExtenderPreempt, OffersOnlyNodesWithVictimsAndCountsThem) {
  auto ext = MakeExtender();
  ASSERT_NE(ext, nullptr);
  const ExtenderPreemptionResult r =
      ext->Preempt(PreemptArgs(Prio(50), {{"n1", nullptr}, {"n2", nullptr}}));
  // n1 needs low evicted; n2 has a free GPU: the pod fits there without victims, and
  // kube-scheduler fails a whole preemption on a node answered with none.
  ASSERT_EQ(r.node_name_to_meta_victims.size(), 1u);
  EXPECT_EQ(r.node_name_to_meta_victims.count("n1"), 1u);
  for (const auto& [node, victims] : r.node_name_to_meta_victims) {
    EXPECT_FALSE(victims.pod_uids.empty()) << node;
  }
  const std::string m = ext->MetricsText();
  EXPECT_NE(m.find("tessera_preemption_nodes_total 1\n"), std::string::npos) << m;
  EXPECT_NE(m.find("tessera_preemption_victims_total 1\n"), std::string::npos) << m;
}

}  // namespace
}  // namespace tessera::k8s
