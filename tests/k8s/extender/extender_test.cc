#include "k8s/extender/extender.h"

#include <gtest/gtest.h>

#include <atomic>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "k8s/extender/extender_protocol.h"
#include "policy/policy.h"
#include "sched/scheduler.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;

// A node as `kubectl get nodes -o json` prints it (the fields Tessera reads).
Json NodeObject(const std::string& name, const std::string& cpu, const std::string& memory,
                int gpus, const std::string& model) {
  Json labels = {{"kubernetes.io/hostname", name}};
  Json allocatable = {{"cpu", cpu}, {"memory", memory}, {"pods", "110"}};
  if (gpus > 0) {
    labels["tessera.io/gpu-model"] = model;
    labels["tessera.io/gpu-memory"] = "24576";
    allocatable["tessera.io/gpu"] = std::to_string(gpus);
  }
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"uid", "uid-" + name}, {"labels", labels}}},
          {"spec", Json::object()},
          {"status", {{"allocatable", allocatable}, {"capacity", allocatable}}}};
}

// The 3-node cluster: n1 8 CPU / 2 A10, n2 4 CPU / 4 A10, n3 16 CPU / 1 T4.
std::string ThreeNodes() {
  Json list = {{"apiVersion", "v1"},
               {"kind", "List"},
               {"metadata", {{"resourceVersion", ""}}},
               {"items",
                {NodeObject("n1", "8", "32Gi", 2, "A10"), NodeObject("n2", "4", "16Gi", 4, "A10"),
                 NodeObject("n3", "16", "64Gi", 1, "T4")}}};
  return list.dump(4);
}

struct PodShape {
  std::string cpu = "500m";
  std::string memory = "1Gi";
  int gpus = 1;
  int milli = 1000;     // per GPU
  std::string model;    // annotation tessera.io/gpu-model
  std::string node;     // spec.nodeName
  std::string indices;  // annotation tessera.io/gpu-indices
};

Json PodObject(const std::string& uid, const std::string& name, const PodShape& s) {
  Json limits = {{"cpu", s.cpu}, {"memory", s.memory}};
  if (s.gpus > 0) {
    limits["tessera.io/gpu"] = std::to_string(s.gpus);
    limits["tessera.io/gpu-milli"] = std::to_string(s.milli);
  }
  Json annotations = Json::object();
  if (!s.model.empty()) annotations["tessera.io/gpu-model"] = s.model;
  if (!s.indices.empty()) annotations["tessera.io/gpu-indices"] = s.indices;
  Json spec = {
      {"containers", {{{"name", "main"}, {"image", "x"}, {"resources", {{"limits", limits}}}}}}};
  if (!s.node.empty()) spec["nodeName"] = s.node;
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", name}, {"namespace", "ml"}, {"uid", uid}, {"annotations", annotations}}},
          {"spec", spec},
          {"status", {{"phase", s.node.empty() ? "Pending" : "Running"}}}};
}

ExtenderArgs Args(const std::string& uid, const PodShape& shape,
                  const std::vector<std::string>& names) {
  Json body = {
      {"Pod", PodObject(uid, "pod-" + uid, shape)}, {"Nodes", nullptr}, {"NodeNames", names}};
  Result<ExtenderArgs> args = DecodeExtenderArgs(body.dump());
  EXPECT_TRUE(args.ok()) << args.error().message;
  return std::move(*args);
}

ExtenderBindingArgs BindArgs(const std::string& uid, const std::string& node) {
  return ExtenderBindingArgs{"pod-" + uid, "ml", uid, node};
}

std::unique_ptr<Extender> MakeExtender(const std::string& pods = "",
                                       const std::string& policy = "fgd") {
  ExtenderOptions options;
  options.policy = policy;
  Result<std::unique_ptr<Extender>> e = Extender::FromJson(ThreeNodes(), pods, options);
  EXPECT_TRUE(e.ok()) << e.error().message;
  return e.ok() ? std::move(*e) : nullptr;
}

const std::vector<std::string> kAll = {"n1", "n2", "n3", "ghost"};

TEST(ExtenderFilter, SortsEveryCandidateWithReasons) {
  auto ext = MakeExtender();
  ASSERT_NE(ext, nullptr);
  PodShape two_gpus;
  two_gpus.gpus = 2;
  ExtenderFilterResult r = ext->Filter(Args("u1", two_gpus, kAll));
  EXPECT_EQ(r.node_names, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_TRUE(r.failed_nodes.empty());
  EXPECT_EQ(r.failed_and_unresolvable_nodes,
            (std::map<std::string, std::string>{
                {"ghost", "unknown node"},
                {"n3", "gpu-count: node has fewer GPUs than the pod requests"}}));
  EXPECT_EQ(r.error, "");
  EXPECT_FALSE(r.nodes_json.has_value());
}

TEST(ExtenderFilter, ModelConstraintIsUnresolvable) {
  auto ext = MakeExtender();
  ASSERT_NE(ext, nullptr);
  PodShape t4;
  t4.model = "T4";
  ExtenderFilterResult r = ext->Filter(Args("u1", t4, {"n1", "n2", "n3"}));
  EXPECT_EQ(r.node_names, (std::vector<std::string>{"n3"}));
  EXPECT_TRUE(r.failed_nodes.empty());
  ASSERT_EQ(r.failed_and_unresolvable_nodes.size(), 2u);
  // The reason names the node's model and the pod's list.
  EXPECT_EQ(r.failed_and_unresolvable_nodes.at("n1"),
            "gpu-model: GPU model not allowed by the pod: node has A10, pod allows T4");
  EXPECT_EQ(r.failed_and_unresolvable_nodes.at("n2"),
            "gpu-model: GPU model not allowed by the pod: node has A10, pod allows T4");
  // The JSON answer of the server's path says the same.
  const Json json = Json::parse(ext->FilterJson(Args("u1", t4, {"n1", "n2", "n3"})));
  EXPECT_EQ(json["FailedAndUnresolvableNodes"]["n1"],
            "gpu-model: GPU model not allowed by the pod: node has A10, pod allows T4");
  EXPECT_EQ(r.error, "");
}

TEST(ExtenderFilter, NothingFitsGivesEmptyArrayAndEveryReason) {
  auto ext = MakeExtender();
  ASSERT_NE(ext, nullptr);
  PodShape big;
  big.cpu = "20";
  ExtenderFilterResult r = ext->Filter(Args("u1", big, {"n1", "n2", "n3"}));
  EXPECT_TRUE(r.node_names.empty());
  EXPECT_TRUE(r.failed_and_unresolvable_nodes.empty());
  EXPECT_EQ(r.failed_nodes,
            (std::map<std::string, std::string>{{"n1", "cpu: not enough CPU left"},
                                                {"n2", "cpu: not enough CPU left"},
                                                {"n3", "cpu: not enough CPU left"}}));
  const std::string wire = EncodeExtenderFilterResult(r);
  EXPECT_NE(wire.find("\"NodeNames\":[]"), std::string::npos) << wire;
  EXPECT_EQ(wire.rfind("{\"Nodes\":null,", 0), 0u) << wire;
}

TEST(ExtenderFilter, CpuOnlyPodFitsEveryNode) {
  auto ext = MakeExtender();
  ASSERT_NE(ext, nullptr);
  PodShape cpu_only;
  cpu_only.gpus = 0;
  ExtenderFilterResult r = ext->Filter(Args("u1", cpu_only, {"n1", "n2", "n3"}));
  EXPECT_EQ(r.node_names, (std::vector<std::string>{"n1", "n2", "n3"}));
  EXPECT_TRUE(r.failed_nodes.empty());
  EXPECT_TRUE(r.failed_and_unresolvable_nodes.empty());
  EXPECT_EQ(r.error, "");
}

TEST(ExtenderFilter, UnsupportedPodGetsAnError) {
  auto ext = MakeExtender();
  ASSERT_NE(ext, nullptr);
  PodShape bad;
  bad.milli = 2000;  // beyond a whole GPU
  ExtenderFilterResult r = ext->Filter(Args("u1", bad, {"n1"}));
  EXPECT_TRUE(r.node_names.empty());
  EXPECT_NE(r.error.find("gpu-milli"), std::string::npos) << r.error;
}

TEST(ExtenderFilter, FullNodesReturnTheirJson) {
  auto ext = MakeExtender();
  ASSERT_NE(ext, nullptr);
  PodShape t4;
  t4.model = "T4";
  Json nodes = Json::parse(ThreeNodes());
  Json body = {{"Pod", PodObject("u1", "p", t4)}, {"Nodes", nodes}, {"NodeNames", nullptr}};
  Result<ExtenderArgs> args = DecodeExtenderArgs(body.dump());
  ASSERT_TRUE(args.ok()) << args.error().message;
  ExtenderFilterResult r = ext->Filter(*args);
  EXPECT_EQ(r.node_names, (std::vector<std::string>{"n3"}));
  ASSERT_TRUE(r.nodes_json.has_value());
  ASSERT_EQ(r.nodes_json->size(), 1u);
  EXPECT_EQ(Json::parse((*r.nodes_json)[0])["metadata"]["name"], "n3");
}

TEST(ExtenderPrioritize, ScoresEveryCandidateWithinZeroToTen) {
  auto ext = MakeExtender();
  ASSERT_NE(ext, nullptr);
  PodShape share;
  share.milli = 500;
  HostPriorityList list = ext->Prioritize(Args("u1", share, kAll));
  ASSERT_EQ(list.size(), kAll.size());
  int tens = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    EXPECT_EQ(list[i].host, kAll[i]);
    EXPECT_GE(list[i].score, 0);
    EXPECT_LE(list[i].score, 10);
    tens += list[i].score == 10;
  }
  EXPECT_GE(tens, 1);           // min–max: the best feasible node gets 10
  EXPECT_EQ(list[3].score, 0);  // ghost
}

TEST(ExtenderPrioritize, EqualScoresAllGetTen) {
  auto ext = MakeExtender();
  ASSERT_NE(ext, nullptr);
  PodShape cpu_only;
  cpu_only.gpus = 0;
  HostPriorityList list = ext->Prioritize(Args("u1", cpu_only, {"n1"}));
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0], (HostPriority{"n1", 10}));
}

TEST(ExtenderPrioritize, InfeasibleCandidateScoresZero) {
  auto ext = MakeExtender();
  ASSERT_NE(ext, nullptr);
  PodShape t4;
  t4.model = "T4";
  HostPriorityList list = ext->Prioritize(Args("u1", t4, {"n1", "n3"}));
  EXPECT_EQ(list, (HostPriorityList{{"n1", 0}, {"n3", 10}}));
}

TEST(ExtenderBind, AllocatesOnceAndIsIdempotentPerUid) {
  auto ext = MakeExtender();
  ASSERT_NE(ext, nullptr);
  PodShape two_gpus;
  two_gpus.gpus = 2;
  ext->Filter(Args("u1", two_gpus, kAll));
  EXPECT_EQ(ext->Bind(BindArgs("u1", "n2")).error, "");
  EXPECT_EQ(ext->gpu_allocated_milli(), 2000);
  EXPECT_EQ(ext->Bind(BindArgs("u1", "n2")).error, "");  // a retry
  EXPECT_EQ(ext->gpu_allocated_milli(), 2000);
  EXPECT_EQ(ext->bound_pods(), 1);
  const std::string other = ext->Bind(BindArgs("u1", "n1")).error;
  EXPECT_NE(other.find("already bound to node n2"), std::string::npos) << other;
  EXPECT_EQ(ext->gpu_allocated_milli(), 2000);

  Json state = Json::parse(ext->StateJson());
  ASSERT_EQ(state["assignments"].size(), 1u);
  EXPECT_EQ(state["assignments"][0]["uid"], "u1");
  EXPECT_EQ(state["assignments"][0]["pod"], "ml/pod-u1");
  EXPECT_EQ(state["assignments"][0]["node"], "n2");
  EXPECT_EQ(state["assignments"][0]["gpus"], Json::array({0, 1}));
  EXPECT_EQ(state["nodes"][1]["gpu_free_milli"], Json::array({0, 0, 1000, 1000}));
  EXPECT_EQ(state["gpu_capacity_milli"], 7000);
  EXPECT_EQ(state["gpu_allocated_milli"], 2000);
}

TEST(ExtenderBind, ErrorsChangeNothing) {
  auto ext = MakeExtender();
  ASSERT_NE(ext, nullptr);
  EXPECT_NE(ext->Bind(BindArgs("never-seen", "n1")).error.find("no filter"), std::string::npos);
  PodShape three;
  three.gpus = 3;
  ext->Filter(Args("u3", three, kAll));
  // Filter passed no node for it: refused (the second wall), as is an unknown node.
  EXPECT_EQ(ext->Bind(BindArgs("u3", "n1")).error,
            "refused: this extender's filter did not pass node \"n1\" for pod ml/pod-u3 (UID u3) "
            "in the last 600 s");
  EXPECT_NE(ext->Bind(BindArgs("u3", "ghost")).error.find("unknown node"), std::string::npos);
  EXPECT_EQ(ext->gpu_allocated_milli(), 0);
  EXPECT_EQ(ext->bound_pods(), 0);

  // Fill n3 (one GPU), then a second pod no longer fits there.
  PodShape one;
  ext->Filter(Args("a", one, {"n3"}));
  ext->Filter(Args("b", one, {"n3"}));
  EXPECT_EQ(ext->Bind(BindArgs("a", "n3")).error, "");
  EXPECT_EQ(ext->Bind(BindArgs("b", "n3")).error, "does not fit: gpu: not enough GPU left");
  EXPECT_EQ(ext->gpu_allocated_milli(), 1000);
  // Unbind gives it back; then b fits.
  EXPECT_TRUE(ext->Unbind("a"));
  EXPECT_FALSE(ext->Unbind("a"));
  EXPECT_EQ(ext->gpu_allocated_milli(), 0);
  EXPECT_EQ(ext->Bind(BindArgs("b", "n3")).error, "");
  EXPECT_EQ(ext->gpu_allocated_milli(), 1000);
}

TEST(ExtenderBind, SharingPodsPackOnOneGpu) {
  auto ext = MakeExtender();
  ASSERT_NE(ext, nullptr);
  PodShape share;
  share.milli = 500;
  for (const std::string uid : {"s1", "s2"}) {
    ext->Filter(Args(uid, share, {"n1"}));
    EXPECT_EQ(ext->Bind(BindArgs(uid, "n1")).error, "");
  }
  Json state = Json::parse(ext->StateJson());
  // Two halves: either both on one GPU or one per GPU, never more than 1000 on a GPU.
  int64_t free = 0;
  for (const Json& f : state["nodes"][0]["gpu_free_milli"]) {
    EXPECT_GE(f.get<int>(), 0);
    free += f.get<int>();
  }
  EXPECT_EQ(free, 1000);
}

TEST(ExtenderBind, NoOverAllocationUnderConcurrency) {
  auto ext = MakeExtender();
  ASSERT_NE(ext, nullptr);
  // Half-GPU pods with little CPU: the cluster (7 GPUs) holds exactly 14.
  PodShape share;
  share.milli = 500;
  share.cpu = "100m";
  share.memory = "64Mi";
  const std::vector<std::string> nodes = {"n1", "n2", "n3"};
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const std::string uid = "t" + std::to_string(t) + "-" + std::to_string(i);
        ext->Filter(Args(uid, share, nodes));
        if (ext->Bind(BindArgs(uid, nodes[(i + t) % 3])).error.empty()) ++ok;
        EXPECT_LE(ext->gpu_allocated_milli(), ext->gpu_capacity_milli());
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(ok.load(), 14);
  EXPECT_EQ(ext->bound_pods(), 14);
  EXPECT_EQ(ext->gpu_allocated_milli(), 7000);
  EXPECT_EQ(ext->gpu_capacity_milli(), 7000);
}

TEST(ExtenderLoad, BoundPodsTakeTheirAnnotatedGpus) {
  PodShape a;
  a.gpus = 2;
  a.node = "n2";
  a.indices = "1-2";
  PodShape b;
  b.milli = 300;
  b.node = "n1";
  PodShape pending;
  Json pods = {
      {"apiVersion", "v1"},
      {"kind", "List"},
      {"items", {PodObject("pa", "a", a), PodObject("pb", "b", b), PodObject("pc", "c", pending)}}};
  auto ext = MakeExtender(pods.dump());
  ASSERT_NE(ext, nullptr);
  EXPECT_EQ(ext->bound_pods(), 2);
  EXPECT_EQ(ext->gpu_allocated_milli(), 2300);
  Json state = Json::parse(ext->StateJson());
  EXPECT_EQ(state["nodes"][1]["gpu_free_milli"], Json::array({1000, 0, 0, 1000}));
  EXPECT_EQ(state["nodes"][0]["gpu_free_milli"], Json::array({700, 1000}));
  // A loaded pod can be bound again only to its node (idempotent).
  EXPECT_EQ(ext->Bind(BindArgs("pa", "n2")).error, "");
  EXPECT_NE(ext->Bind(BindArgs("pa", "n1")).error, "");
  EXPECT_TRUE(ext->Unbind("pa"));
  EXPECT_EQ(ext->gpu_allocated_milli(), 300);
}

TEST(ExtenderLoad, PodsNotAppliedAsGivenAreWarningsThatNameTheItem) {
  ExtenderOptions options;
  PodShape a;
  a.gpus = 2;
  a.node = "n2";
  a.indices = "3-4";  // out of range: which GPUs it holds is unknown, its node takes no more
  Json pods = {{"items", {PodObject("pa", "a", a)}}};
  auto r = Extender::FromJson(ThreeNodes(), pods.dump(), options);
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::vector<std::string> w = (*r)->warnings();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("pods: items[0] (ml/a)"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("out of range"), std::string::npos) << w[0];
  EXPECT_NE(Json::parse((*r)->StateJson())["nodes"][1]["blocked"], "");

  a.indices = "";
  a.node = "elsewhere";
  pods = {{"items", {PodObject("pa", "a", a)}}};
  r = Extender::FromJson(ThreeNodes(), pods.dump(), options);
  ASSERT_TRUE(r.ok()) << r.error().message;
  w = (*r)->warnings();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("unknown node \"elsewhere\""), std::string::npos) << w[0];
}

TEST(ExtenderLoad, BadInputNamesTheItem) {
  ExtenderOptions options;
  Result<std::unique_ptr<Extender>> r = Extender::FromJson("[]", "", options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "nodes: no nodes");

  r = Extender::FromJson("{\"items\": [", "", options);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("nodes: malformed JSON"), std::string::npos)
      << r.error().message;

  options.policy = "nope";
  r = Extender::FromJson(ThreeNodes(), "", options);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("unknown policy"), std::string::npos);
}

TEST(ExtenderLoad, EveryPolicyServes) {
  for (const std::string& policy : PolicyNames()) {
    auto ext = MakeExtender("", policy);
    ASSERT_NE(ext, nullptr) << policy;
    PodShape share;
    share.milli = 500;
    HostPriorityList list = ext->Prioritize(Args("u", share, {"n1", "n2", "n3"}));
    ASSERT_EQ(list.size(), 3u) << policy;
    ext->Filter(Args("u", share, {"n1"}));
    EXPECT_EQ(ext->Bind(BindArgs("u", "n1")).error, "") << policy;
    EXPECT_EQ(ext->gpu_allocated_milli(), 500) << policy;
  }
}

TEST(ExtenderMetrics, ExposesEveryMetric) {
  auto ext = MakeExtender();
  ASSERT_NE(ext, nullptr);
  PodShape one;
  ext->Filter(Args("u1", one, kAll));
  EXPECT_EQ(ext->Bind(BindArgs("u1", "n1")).error, "");
  ext->RecordRequest("filter", 0.0003);
  ext->RecordRequest("filter", 1.0);
  const std::string text = ext->MetricsText();
  for (const char* line : {
           "tessera_requests_total{verb=\"filter\"} 2\n",
           "tessera_request_duration_seconds_bucket{verb=\"filter\",le=\"0.00025\"} 0\n",
           "tessera_request_duration_seconds_bucket{verb=\"filter\",le=\"0.0005\"} 1\n",
           "tessera_request_duration_seconds_bucket{verb=\"filter\",le=\"0.1\"} 1\n",
           "tessera_request_duration_seconds_bucket{verb=\"filter\",le=\"+Inf\"} 2\n",
           "tessera_request_duration_seconds_count{verb=\"filter\"} 2\n",
           "tessera_pods_bound_total 1\n",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
  EXPECT_NE(text.find("tessera_filter_rejections_total{reason=\"unknown-node\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("tessera_gpu_allocated_milli 1000\n"), std::string::npos);
  EXPECT_NE(text.find("tessera_gpu_capacity_milli 7000\n"), std::string::npos);
  EXPECT_NE(text.find("tessera_node_gpu_free_milli{node=\"n1\"} 1000\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE tessera_request_duration_seconds histogram\n"), std::string::npos);
}

// ExtenderOptions::workload (serve --workload) is the target workload M in place of the bound
// pods' mix: a 0.7 GPU left beside a bound 0.3 share is usable by M = the bound 0.3 shares,
// stranded for M = whole GPUs.
TEST(ExtenderMetrics, ConfiguredWorkloadIsTheTargetWorkload) {
  PodShape b;
  b.milli = 300;
  b.node = "n1";
  Json pods = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", {PodObject("pb", "b", b)}}};
  auto own = MakeExtender(pods.dump());
  ASSERT_NE(own, nullptr);
  EXPECT_NE(own->MetricsText().find("tessera_gpu_stranded_milli 0\n"), std::string::npos);

  ExtenderOptions options;
  PodSpec trainer;
  trainer.cpu_milli = 500;
  trainer.gpu_count = 1;
  trainer.gpu_milli = 1000;
  options.workload = {trainer, trainer};
  Result<std::unique_ptr<Extender>> given = Extender::FromJson(ThreeNodes(), pods.dump(), options);
  ASSERT_TRUE(given.ok()) << given.error().message;
  EXPECT_NE((*given)->MetricsText().find("tessera_gpu_stranded_milli 700\n"), std::string::npos)
      << (*given)->MetricsText();
}

// Scheduler::ScoreNodes over every node agrees with Decide: its best node (ties → first in the
// node order, here the identity) is the node Decide picks.
TEST(ExtenderScheduler, ScoreNodesAgreesWithDecide) {
  std::vector<NodeSpec> specs;
  for (int i = 0; i < 6; ++i) {
    specs.push_back(NodeSpec{"n" + std::to_string(i), 32000, 131072, 4, "A10", 24576});
  }
  Cluster cluster(specs);
  const TargetWorkload workload =
      TargetWorkload::FromClasses({TargetClass{4000, 1000, 1, "", 0.5, 1, kAnyModel},
                                   TargetClass{2000, 500, 1, "", 0.5, 1, kAnyModel}});
  for (const std::string& name : PolicyNames()) {
    if (name == "random") continue;
    Cluster c = cluster;
    TargetWorkload m = workload;
    m.Resolve(c);
    PolicyContext context;
    context.workload = &m;
    std::unique_ptr<Policy> policy = MakePolicy(name, context);
    ASSERT_NE(policy, nullptr);
    Scheduler s(&c, policy.get(), {0, 1, 2, 3, 4, 5}, 7);
    const std::vector<int> all = {0, 1, 2, 3, 4, 5};
    const int64_t shapes[][3] = {{2000, 1, 300}, {4000, 2, 1000}, {1000, 1, 700}, {8000, 1, 1000}};
    for (int round = 0; round < 12; ++round) {
      const auto& sh = shapes[round % 4];
      PodRequest pod{sh[0], 1024,     static_cast<int32_t>(sh[1]), static_cast<int32_t>(sh[2]),
                     0,     kAnyModel};
      const Decision d = s.Decide(pod);
      const auto scores = s.ScoreNodes(pod, all);
      ASSERT_TRUE(d.ok());
      int best = -1;
      int best_score = std::numeric_limits<int>::min();
      for (const auto& [node, score] : scores) {
        if (score > best_score) {
          best_score = score;
          best = node;
        }
      }
      EXPECT_EQ(best, d.node) << name << " round " << round;
      EXPECT_EQ(best_score, d.score) << name << " round " << round;
      s.Bind(d.node, pod, d.gpus);
    }
  }
}

}  // namespace
}  // namespace tessera::k8s
