// `tessera serve` places by GPU topology, as kube-scheduler drives it over HTTP (POST /filter
// with every node, /prioritize with those that passed, the best score wins, POST /bind), judged
// by what the fake API server records: the Pod object's spec.nodeName and the GPUs of its
// tessera.io/gpu-indices annotation, never the extender's own answer. The node has 8 GPUs in
// two 4-GPU NVLink islands on two NUMA nodes (tessera.io/gpu-topology); the same pods on a
// node without the annotation are placed as on any node without a topology.

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "k8s/extender/extender.h"
#include "k8s/extender/extender_internal.h"
#include "k8s/extender/extender_protocol.h"
#include "k8s/fake_apiserver.h"
#include "k8s/kube_scheduler.h"
#include "k8s/live.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;
using testing::FakeApiServer;
using testing::NodeObject;
using testing::Serve;
using testing::WaitFor;

constexpr uint64_t kSeed = 42;
constexpr GpuSet kIslandLow = 0x0f;   // GPUs 0-3
constexpr GpuSet kIslandHigh = 0xf0;  // GPUs 4-7

// An 8-GPU node; with `topology`, two NVLink islands 0-3 and 4-7, each on its own NUMA node.
Json EightGpuNode(const std::string& name, bool topology) {
  Json node = NodeObject(name, 8, "64");
  if (topology) {
    node["metadata"]["annotations"] = {
        {"tessera.io/gpu-topology",
         R"({"nvlink":[[0,1,2,3],[4,5,6,7]],"numa":[[0,1,2,3],[4,5,6,7]]})"}};
  }
  return node;
}

// A pending pod "ml/`name`" asking for `gpus` whole GPUs, with tessera.io/topology `intent`
// unless empty, and spec.priority `priority`.
Json GpuPod(const std::string& name, int gpus, const std::string& intent = "",
            int32_t priority = 0) {
  Json annotations = Json::object();
  if (!intent.empty()) annotations["tessera.io/topology"] = intent;
  Json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name}, {"namespace", "ml"}, {"uid", "uid-" + name}, {"annotations", annotations}}},
      {"spec",
       {{"schedulerName", "default-scheduler"},
        {"containers",
         {{{"name", "main"},
           {"image", "x"},
           {"resources",
            {{"limits",
              {{"cpu", "1"}, {"memory", "1Gi"}, {"tessera.io/gpu", std::to_string(gpus)}}}}}}}}}},
      {"status", {{"phase", "Pending"}}}};
  if (priority != 0) pod["spec"]["priority"] = priority;
  return pod;
}

// "0-3" style text of a GPU set, for messages.
std::string Text(GpuSet s) {
  std::string out;
  for (int i = 0; i < kMaxGpusPerNode; ++i) {
    if (((s >> i) & 1) == 0) continue;
    if (!out.empty()) out += ",";
    out += std::to_string(i);
  }
  return "{" + out + "}";
}

// kube-scheduler and the API server around one `tessera serve`.
class Cluster {
 public:
  Cluster(const std::vector<Json>& nodes, const std::string& policy) {
    EXPECT_TRUE(fake_.Start());
    for (const Json& n : nodes) {
      names_.push_back(n["metadata"]["name"].get<std::string>());
      fake_.AddNode(n);
    }
    serve_ = std::make_unique<Serve>(fake_, policy, kSeed);
  }

  bool ready() const { return serve_->ready; }
  Serve& serve() { return *serve_; }

  /// POST /filter of pod `name` (as stored) with every node.
  ExtenderFilterResult Filter(const std::string& name) {
    bool ok = false;
    const std::string body = serve_->kube->Post("/filter", Args(name, names_).dump(), &ok);
    Result<ExtenderFilterResult> f = DecodeExtenderFilterResult(body);
    EXPECT_TRUE(ok && f.ok() && f->error.empty()) << body;
    return f.ok() ? *f : ExtenderFilterResult{};
  }

  /// Creates pod `pod`, then filter → prioritize → bind as kube-scheduler does; the node it was
  /// bound to ("" when filter passed no node) and its GPUs, as the API server records them.
  struct Placed {
    std::string node;
    GpuSet gpus = 0;
  };
  Placed Schedule(const Json& pod) {
    fake_.AddPod(pod);
    const std::string name = pod["metadata"]["name"];
    const ExtenderFilterResult f = Filter(name);
    if (f.node_names.empty()) return {};
    bool ok = false;
    const std::string scores_body =
        serve_->kube->Post("/prioritize", Args(name, f.node_names).dump(), &ok);
    Result<HostPriorityList> scores = DecodeHostPriorityList(scores_body);
    EXPECT_TRUE(ok && scores.ok()) << scores_body;
    if (!scores.ok() || scores->empty()) return {};
    const HostPriority* best = &(*scores)[0];
    for (const HostPriority& h : *scores) {
      if (h.score > best->score) best = &h;  // ties: the first, in node order
    }
    const std::string bind_body = serve_->kube->Post(
        "/bind", EncodeExtenderBindingArgs({name, "ml", "uid-" + name, best->host}), &ok);
    Result<ExtenderBindingResult> bound = DecodeExtenderBindingResult(bind_body);
    EXPECT_TRUE(ok && bound.ok() && bound->error.empty()) << name << ": " << bind_body;
    return Recorded(name);
  }

  /// What the API server records for pod `name`.
  Placed Recorded(const std::string& name) const {
    const Json stored = fake_.GetPod("ml", name);
    Placed p;
    if (!stored["spec"].contains("nodeName")) return p;
    p.node = stored["spec"]["nodeName"];
    const Json& annotations = stored["metadata"]["annotations"];
    const std::string key(kGpuIndicesAnnotation);
    EXPECT_TRUE(annotations.contains(key)) << stored.dump();
    if (!annotations.contains(key)) return p;
    Result<GpuSet> gpus = ParseGpuIndices(annotations[key].get<std::string>(), 8);
    EXPECT_TRUE(gpus.ok()) << stored.dump();
    p.gpus = gpus.ok() ? *gpus : 0;
    return p;
  }

  /// POST /preempt of pod `name` with every node and no victims proposed (the extender chooses
  /// them): the victims' UIDs by node.
  std::map<std::string, std::vector<std::string>> Preempt(const std::string& name) {
    Result<ExtenderPreemptionResult> answer =
        PreemptWithoutProposals(*serve_->kube, fake_.GetPod("ml", name), names_);
    EXPECT_TRUE(answer.ok()) << answer.error().message;
    std::map<std::string, std::vector<std::string>> out;
    if (!answer.ok()) return out;
    for (const auto& [node, victims] : answer->node_name_to_meta_victims) {
      out[node] = victims.pod_uids;
    }
    return out;
  }

  /// Deletes pod `name` from the API server and waits until the extender's watch has seen it.
  void Delete(const std::string& name) {
    fake_.DeletePod("ml", name);
    EXPECT_TRUE(WaitFor([&] { return serve_->Forgot("uid-" + name); }))
        << "the extender never saw the deletion of " << name;
  }

 private:
  Json Args(const std::string& name, const std::vector<std::string>& nodes) const {
    return {{"Pod", fake_.GetPod("ml", name)}, {"Nodes", nullptr}, {"NodeNames", nodes}};
  }

  FakeApiServer fake_;
  std::vector<std::string> names_;
  std::unique_ptr<Serve> serve_;
};

class TopologyBind : public ::testing::TestWithParam<std::string> {};

TEST_P(TopologyBind, IslandsKeptWholeRequiredTakesOneAndIsRefusedAcrossTwo) {
  Cluster c({EightGpuNode("n8", true)}, GetParam());
  ASSERT_TRUE(c.ready());
  // The extender holds the topology the annotation gives.
  const Json state = c.serve().kube->State();
  ASSERT_TRUE(state.is_object());
  EXPECT_EQ(state["nodes"][0]["topology"], "nvlink=0-3/4-7;numa=0-3/4-7;kubelet=none")
      << state.dump();

  // 1. A 1-GPU pod, then a 2-GPU pod (no intent): both in one island, the other left whole.
  const auto one = c.Schedule(GpuPod("one", 1));
  ASSERT_EQ(one.node, "n8");
  ASSERT_EQ(std::popcount(one.gpus), 1) << Text(one.gpus);
  const GpuSet first = (one.gpus & kIslandLow) != 0 ? kIslandLow : kIslandHigh;
  const GpuSet other = first ^ (kIslandLow | kIslandHigh);
  const auto two = c.Schedule(GpuPod("two", 2));
  ASSERT_EQ(two.node, "n8");
  EXPECT_EQ(std::popcount(two.gpus), 2) << Text(two.gpus);
  EXPECT_EQ(two.gpus & ~first, 0u)
      << "2-GPU pod on " << Text(two.gpus) << ", 1-GPU pod on " << Text(one.gpus);
  EXPECT_EQ(two.gpus & one.gpus, 0u);

  // 2. A 4-GPU `required` pod: the whole free island.
  const auto four = c.Schedule(GpuPod("four", 4, "required"));
  ASSERT_EQ(four.node, "n8");
  EXPECT_EQ(four.gpus, other) << Text(four.gpus);

  // Make the free GPUs 3 in one island and 1 in the other: the first island's last GPU goes
  // to a 1-GPU pod, the 4-GPU pod is replaced by a 3-GPU one (the only room is its island),
  // and the first island's 1- and 2-GPU pods end.
  const auto last = c.Schedule(GpuPod("last", 1));
  ASSERT_EQ(last.node, "n8");
  EXPECT_EQ(last.gpus & ~first, 0u) << Text(last.gpus);
  c.Delete("four");
  const auto three = c.Schedule(GpuPod("three", 3));
  ASSERT_EQ(three.node, "n8");
  EXPECT_EQ(three.gpus & ~other, 0u) << Text(three.gpus);
  EXPECT_EQ(std::popcount(three.gpus), 3);
  c.Delete("one");
  c.Delete("two");

  // 3. Another 4-GPU `required` pod: 4 GPUs are free, but no island holds 4. Filter refuses
  // the node, and the reason says topology.
  const auto split = c.Schedule(GpuPod("split", 4, "required"));
  EXPECT_EQ(split.node, "");
  const ExtenderFilterResult f = c.Filter("split");
  EXPECT_TRUE(f.node_names.empty());
  // FailedNodes, not FailedAndUnresolvableNodes: preemption may help (below).
  EXPECT_EQ(f.failed_nodes.count("n8"), 1u)
      << "FailedNodes " << Json(f.failed_nodes).dump() << ", FailedAndUnresolvableNodes "
      << Json(f.failed_and_unresolvable_nodes).dump();
  std::map<std::string, std::string> refused = f.failed_nodes;
  refused.insert(f.failed_and_unresolvable_nodes.begin(), f.failed_and_unresolvable_nodes.end());
  ASSERT_EQ(refused.count("n8"), 1u);
  const std::string reason = refused.at("n8");
  // The reason names the shortfall: 4 free in all, at most 3 in one island.
  EXPECT_EQ(
      reason.rfind("topology: needs 4 GPUs in one NVLink domain, the most free in one is 3 (", 0),
      0u)
      << reason;
  EXPECT_EQ(c.Recorded("split").node, "");

  // Preemption can resolve it: for a higher-priority `required` pod, filter refuses the node
  // the same way, and preempt answers with the 1-GPU pod whose end frees a whole island.
  const auto vip = c.Schedule(GpuPod("vip", 4, "required", 100));
  EXPECT_EQ(vip.node, "");
  const ExtenderFilterResult vf = c.Filter("vip");
  EXPECT_EQ(vf.failed_nodes.count("n8"), 1u) << Json(vf.failed_and_unresolvable_nodes).dump();
  const auto victims = c.Preempt("vip");
  ASSERT_EQ(victims.count("n8"), 1u) << Json(victims).dump();
  EXPECT_EQ(victims.at("n8"), std::vector<std::string>{"uid-last"}) << Json(victims).dump();

  // The same pod without the intent fits: the refusal was the topology's alone. It takes the
  // four free GPUs across the islands.
  const auto spread = c.Schedule(GpuPod("spread", 4));
  ASSERT_EQ(spread.node, "n8");
  EXPECT_EQ(spread.gpus, (kIslandLow | kIslandHigh) & ~(last.gpus | three.gpus))
      << Text(spread.gpus);
}

// 4. Without the annotation the node has no topology: `required` is no constraint there, GPUs
// are the lowest-index free ones (the generic choice), and a 4-GPU pod spans the two halves.
TEST_P(TopologyBind, WithoutTheAnnotationPlacesWithoutTopology) {
  Cluster c({EightGpuNode("plain", false)}, GetParam());
  ASSERT_TRUE(c.ready());
  const Json state = c.serve().kube->State();
  ASSERT_TRUE(state.is_object());
  EXPECT_TRUE(state["nodes"][0]["topology"].is_null()) << state.dump();

  const auto one = c.Schedule(GpuPod("one", 1));
  const auto two = c.Schedule(GpuPod("two", 2));
  const auto four = c.Schedule(GpuPod("four", 4, "required"));
  ASSERT_EQ(one.node, "plain");
  ASSERT_EQ(two.node, "plain");
  ASSERT_EQ(four.node, "plain");
  EXPECT_EQ(one.gpus, GpuSet{0x01}) << Text(one.gpus);
  EXPECT_EQ(two.gpus, GpuSet{0x06}) << Text(two.gpus);
  EXPECT_EQ(four.gpus, GpuSet{0x78}) << Text(four.gpus);  // GPUs 3-6
}

INSTANTIATE_TEST_SUITE_P(TopologyBind, TopologyBind, ::testing::Values("tessera", "fgd"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
}  // namespace tessera::k8s
