// GPU topology from a node's annotations (HAMi's hami.io/node-nvidia-score in the format its
// device plugin writes, Tessera's tessera.io/gpu-topology), malformed annotations ignored and
// counted, the pod intent annotation tessera.io/topology, and the kubelet policy per node pool;
// in file mode (Extender::FromJson) and API mode (the fake API server).

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "k8s/api/objects.h"
#include "k8s/extender/extender.h"
#include "k8s/extender/extender_protocol.h"
#include "k8s/hami/score.h"
#include "k8s/live.h"
#include "k8s/testdata.h"
#include "k8s/translate/node_topology.h"
#include "k8s/translate/translate.h"
#include "model/topology_text.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;
using testing::FakeApiServer;
using testing::Live;
using testing::WaitFor;

// The fixture: an 8-GPU A100 node as HAMi registers it, two 4-GPU NVLink islands (score 1200 =
// 12 NVLink links) on two NUMA nodes, 10 across the sockets.
Json HamiScoreNode() { return Json::parse(ReadTestdata("node_hami_score.json")); }

std::string Uuid(int i) {
  std::string n = std::to_string(i);
  return "GPU-7a1c0e52-0000-4000-8000-" + std::string(12 - n.size(), '0') + n;
}

struct Decoded {
  NodeSpec spec;
  std::string topology_error;
};

Decoded Decode(const Json& node) {
  Result<Node> n = DecodeNode(node, "Node");
  EXPECT_TRUE(n.ok()) << n.error().message;
  Decoded d;
  Result<NodeSpec> spec = NodeToSpec(*n, &d.topology_error);
  EXPECT_TRUE(spec.ok()) << spec.error().message;
  if (spec.ok()) d.spec = *spec;
  return d;
}

TEST(HamiScore, ParsesHamisDevicePairScores) {
  const Json node = HamiScoreNode();
  const std::string value = node["metadata"]["annotations"]["hami.io/node-nvidia-score"];
  Result<std::vector<HamiPairScore>> s = ParseHamiNodeScore(value, "score");
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s->size(), 8u);
  EXPECT_EQ((*s)[0].uuid, Uuid(0));
  ASSERT_EQ((*s)[0].scores.size(), 7u);
  EXPECT_EQ((*s)[0].scores[0], std::make_pair(Uuid(1), int64_t{1200}));

  EXPECT_EQ(ParseHamiNodeScore(R"([{"uuid":"a","score":{"b":20000}}])", "s").error().message,
            "s[0].score[\"b\"]: 20000 out of range [0, 10000]");
  EXPECT_EQ(ParseHamiNodeScore(R"([{"uuid":"a"},{"uuid":"a"}])", "s").error().message,
            "s[1].uuid: GPU \"a\" listed twice");
  EXPECT_EQ(ParseHamiNodeScore(R"({"uuid":"a"})", "s").error().message,
            "s: expected array, got object");
}

TEST(NodeTopologyFromAnnotations, HamiScoreGivesIslandsAndNuma) {
  const Decoded d = Decode(HamiScoreNode());
  EXPECT_EQ(d.topology_error, "");
  ASSERT_EQ(d.spec.gpu_count, 8);
  ASSERT_NE(d.spec.topology, nullptr);
  const GpuTopology& t = *d.spec.topology;
  EXPECT_EQ(t.gpu_count, 8);
  EXPECT_EQ(FormatGpuGroups(t, TopologyScope::kNvlink), "0-3/4-7");
  EXPECT_EQ(FormatGpuGroups(t, TopologyScope::kNuma), "0-3/4-7");
  EXPECT_EQ(t.link[0][1], 1200);
  EXPECT_EQ(t.link[3][2], 1200);
  EXPECT_EQ(t.link[0][4], 10);
  EXPECT_EQ(t.link[0][0], 0);
  EXPECT_EQ(t.kubelet, KubeletTopologyPolicy::kNone);
}

TEST(NodeTopologyFromAnnotations, HamiScoreSymmetryUnhealthyAndPartialScores) {
  // Four GPUs, GPU 2 unhealthy: its entry and the scores towards it are skipped. GPU 0 says 100
  // towards GPU 1, GPU 1 says 40 back: the smaller counts, so they are not one NVLink domain.
  // GPU 3 omits GPU 0; GPU 0's 300 towards it is taken.
  Json reg = Json::array();
  for (int i = 0; i < 4; ++i) {
    reg.push_back({{"id", Uuid(i)},
                   {"index", i},
                   {"count", 10},
                   {"devmem", 16384},
                   {"devcore", 100},
                   {"type", "NVIDIA-Tesla V100-SXM2-16GB"},
                   {"numa", i / 2},
                   {"health", i != 2}});
  }
  const Json score = Json::array({
      {{"uuid", Uuid(0)}, {"score", {{Uuid(1), 100}, {Uuid(2), 100}, {Uuid(3), 300}}}},
      {{"uuid", Uuid(1)}, {"score", {{Uuid(0), 40}, {Uuid(2), 100}, {Uuid(3), 20}}}},
      {{"uuid", Uuid(2)}, {"score", {{Uuid(0), 100}}}},
      {{"uuid", Uuid(3)}, {"score", {{Uuid(1), 20}, {Uuid(2), 100}}}},
  });
  Json node = HamiScoreNode();
  node["metadata"]["annotations"]["hami.io/node-nvidia-register"] = reg.dump();
  node["metadata"]["annotations"]["hami.io/node-nvidia-score"] = score.dump();
  const Decoded d = Decode(node);
  EXPECT_EQ(d.topology_error, "");
  ASSERT_EQ(d.spec.gpu_count, 3);
  ASSERT_NE(d.spec.topology, nullptr);
  const GpuTopology& t = *d.spec.topology;
  // GPU indices 0, 1, 2 are the healthy devices 0, 1, 3.
  EXPECT_EQ(t.link[0][1], 40);
  EXPECT_EQ(t.link[1][0], 40);
  EXPECT_EQ(t.link[0][2], 300);
  EXPECT_EQ(t.link[2][0], 300);
  EXPECT_EQ(t.link[1][2], 20);
  EXPECT_EQ(FormatGpuGroups(t, TopologyScope::kNvlink), "0,2/1");
  EXPECT_EQ(FormatGpuGroups(t, TopologyScope::kNuma), "0-1/2");
}

TEST(NodeTopologyFromAnnotations, OursWinsOverHamis) {
  Json node = HamiScoreNode();
  node["metadata"]["annotations"]["tessera.io/gpu-topology"] =
      R"({"nvlink":[[0,1],[2,3],[4,5],[6,7]],"numa":[[4,5,6,7],[0,1,2,3]],"numaCpu":["48",40]})";
  const Decoded d = Decode(node);
  EXPECT_EQ(d.topology_error, "");
  ASSERT_NE(d.spec.topology, nullptr);
  const GpuTopology& t = *d.spec.topology;
  EXPECT_EQ(FormatGpuGroups(t, TopologyScope::kNvlink), "0-1/2-3/4-5/6-7");
  // NUMA ids are dense in order of the lowest GPU: GPUs 0-3 are NUMA 0 (listed second).
  EXPECT_EQ(t.numa[0], 0);
  EXPECT_EQ(t.numa[4], 1);
  EXPECT_EQ(t.numa_cpu_milli[0], 40000);
  EXPECT_EQ(t.numa_cpu_milli[1], 48000);
  // Derived links on HAMi's scale: NVLink 100, same NUMA 20, across sockets 10.
  EXPECT_EQ(t.link[0][1], 100);
  EXPECT_EQ(t.link[0][2], 20);
  EXPECT_EQ(t.link[0][4], 10);
}

TEST(NodeTopologyFromAnnotations, OursWithALinkMatrix) {
  Json node = HamiScoreNode();
  node["metadata"]["annotations"].erase("hami.io/node-nvidia-score");
  Json links = Json::array();
  for (int a = 0; a < 8; ++a) {
    Json row = Json::array();
    for (int b = 0; b < 8; ++b) row.push_back(a == b ? 0 : 600);
    links.push_back(row);
  }
  node["metadata"]["annotations"]["tessera.io/gpu-topology"] =
      Json{{"nvlink", {{0, 1, 2, 3, 4, 5, 6, 7}}}, {"links", links}}.dump();
  const Decoded d = Decode(node);
  EXPECT_EQ(d.topology_error, "");
  ASSERT_NE(d.spec.topology, nullptr);
  EXPECT_EQ(FormatGpuGroups(*d.spec.topology, TopologyScope::kNvlink), "0-7");
  EXPECT_EQ(FormatGpuGroups(*d.spec.topology, TopologyScope::kNuma), "0-7");
  EXPECT_EQ(d.spec.topology->link[3][6], 600);
}

TEST(NodeTopologyFromAnnotations, NoScoreAnnotationNoTopology) {
  Json node = HamiScoreNode();
  node["metadata"]["annotations"].erase("hami.io/node-nvidia-score");
  const Decoded d = Decode(node);
  EXPECT_EQ(d.topology_error, "");
  EXPECT_EQ(d.spec.gpu_count, 8);
  EXPECT_EQ(d.spec.topology, nullptr);
}

// Each malformed annotation: the node still decodes (same capacity), without a topology, and
// the error names the node's field.
TEST(NodeTopologyFromAnnotations, MalformedAnnotationsAreErrorsNamingTheField) {
  const std::string ours = "Node.metadata.annotations[\"tessera.io/gpu-topology\"]";
  const std::string hami = "Node.metadata.annotations[\"hami.io/node-nvidia-score\"]";
  const std::string k = "tessera.io/gpu-topology";
  const std::string h = "hami.io/node-nvidia-score";
  struct Case {
    std::string key, value, error;
  };
  const std::vector<Case> cases = {
      {k, "{", ours + ": malformed JSON at byte 1"},
      {k, "[]", ours + ": expected object, got array"},
      {k, R"({"nvlinks":[[0]]})",
       ours + ".nvlinks: unknown field (known: nvlink, numa, numaCpu, links)"},
      {k, R"({"nvlink":[[0,1,2,3],[4,5,6,9]]})",
       ours + ".nvlink[1][3]: GPU 9 is out of range 0..7"},
      {k, R"({"nvlink":[[0,1,2,3],[4,5,6,3]]})",
       ours + ".nvlink[1][3]: GPU 3 is already in nvlink[0]"},
      {k, R"({"nvlink":[[0,1,2,3],[4,5,6]]})", ours + ".nvlink: GPU 7 is in no domain"},
      {k, R"({"nvlink":[[0,1,2,3,4,5,6,7],[]]})", ours + ".nvlink[1]: empty domain"},
      {k, R"({"nvlink":[[0,"1"]]})", ours + ".nvlink[0][1]: expected integer, got string"},
      {k, R"({"nvlink":[[0,1,2,3,4,5,6,99]]})", ours + ".nvlink[0][7]: 99 out of range [0, 15]"},
      {k, R"({"numa":[[0,1,2,3],[4,5,6,7]],"numaCpu":["48"]})",
       ours + ".numaCpu: 1 values for 2 NUMA nodes"},
      {k, R"({"numaCpu":["lots"]})", ours + ".numaCpu[0]: "},
      {k, R"({"links":[[0,1],[1,0]]})", ours + ".links: 2 rows for 8 GPUs"},
      {h, "[", hami + ": malformed JSON at byte 1"},
      {h, R"([{"uuid":"GPU-nobody","score":{}}])",
       hami + "[0].uuid: GPU \"GPU-nobody\" is not in Node.metadata.annotations[\"hami.io/"
              "node-nvidia-register\"]"},
      {h, "[{\"uuid\":\"" + Uuid(0) + "\",\"score\":{\"" + Uuid(1) + "\":-5}}]",
       hami + "[0].score[\"" + Uuid(1) + "\"]: -5 out of range [0, 10000]"},
      {h, "[{\"uuid\":\"" + Uuid(0) + "\",\"score\":{\"" + Uuid(1) + "\":100}}]",
       hami + ": GPU 1 (\"" + Uuid(1) + "\") has no entry"},
  };
  for (const Case& c : cases) {
    Json node = HamiScoreNode();
    node["metadata"]["annotations"][c.key] = c.value;
    const Decoded d = Decode(node);
    EXPECT_EQ(d.spec.gpu_count, 8) << c.value;
    EXPECT_EQ(d.spec.topology, nullptr) << c.value;
    EXPECT_EQ(d.topology_error.substr(0, c.error.size()), c.error) << c.value;
  }
}

TEST(NodeTopologyFromAnnotations, AsymmetricOrAbsurdLinkMatrix) {
  Json node = HamiScoreNode();
  Json links = Json::array();
  for (int a = 0; a < 8; ++a) {
    Json row = Json::array();
    for (int b = 0; b < 8; ++b) row.push_back(a == b ? 0 : 20);
    links.push_back(row);
  }
  links[2][5] = 30;
  node["metadata"]["annotations"]["tessera.io/gpu-topology"] = Json{{"links", links}}.dump();
  Decoded d = Decode(node);
  EXPECT_EQ(d.spec.topology, nullptr);
  EXPECT_EQ(d.topology_error,
            "Node.metadata.annotations[\"tessera.io/gpu-topology\"].links[2][5]: 30 differs from "
            "links[5][2] 20 (the matrix is symmetric)");
  links[2][5] = 20;
  links[1][1] = 7;
  node["metadata"]["annotations"]["tessera.io/gpu-topology"] = Json{{"links", links}}.dump();
  d = Decode(node);
  EXPECT_EQ(d.topology_error,
            "Node.metadata.annotations[\"tessera.io/gpu-topology\"].links[1][1]: the diagonal "
            "must be 0");
  links[1][1] = 0;
  links[0][1] = links[1][0] = 70000;
  node["metadata"]["annotations"]["tessera.io/gpu-topology"] = Json{{"links", links}}.dump();
  d = Decode(node);
  EXPECT_EQ(d.topology_error,
            "Node.metadata.annotations[\"tessera.io/gpu-topology\"].links[0][1]: 70000 out of "
            "range [0, 10000]");
}

// ------------------------------------------------------------------ pods

Json TopologyPod(const std::string& name, const std::string& topology) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", name},
            {"namespace", "ml"},
            {"uid", "uid-" + name},
            {"annotations", {{"tessera.io/topology", topology}}}}},
          {"spec",
           {{"schedulerName", "tessera-scheduler"},
            {"containers",
             {{{"name", "main"},
               {"image", "pytorch"},
               {"resources",
                {{"limits", {{"nvidia.com/gpu", "4"}, {"cpu", "8"}, {"memory", "32Gi"}}}}}}}}}},
          {"status", {{"phase", "Pending"}}}};
}

TEST(PodTopologyAnnotation, IntentAndScope) {
  const auto spec_of = [](const std::string& v) {
    Result<Pod> p = DecodePod(TopologyPod("p", v), "Pod");
    EXPECT_TRUE(p.ok());
    return PodToSpec(*p);
  };
  Result<PodSpec> s = spec_of("required");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->topology.intent, TopologyIntent::kRequired);
  EXPECT_EQ(s->topology.scope, TopologyScope::kNvlink);
  s = spec_of("preferred:numa");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->topology.intent, TopologyIntent::kPreferred);
  EXPECT_EQ(s->topology.scope, TopologyScope::kNuma);
  s = spec_of("required:nvlink");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->topology, (TopologyRequest{TopologyIntent::kRequired, TopologyScope::kNvlink}));
  s = spec_of("required:socket");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "Pod.metadata.annotations[\"tessera.io/topology\"]: \"required:socket\": unknown "
            "scope \"socket\" (known: nvlink, numa)");
  s = spec_of("always");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "Pod.metadata.annotations[\"tessera.io/topology\"]: \"always\" is not "
            "required|preferred[:nvlink|:numa] (or none)");
}

TEST(PodTopologyAnnotation, FilterAnswersABadValueAsAMalformedPod) {
  const Json nodes = {{"items", {HamiScoreNode()}}};
  auto ext = Extender::FromJson(nodes.dump(), R"({"items":[]})", {});
  ASSERT_TRUE(ext.ok()) << ext.error().message;
  Json body = {
      {"Pod", TopologyPod("bad", "mandatory")}, {"Nodes", nullptr}, {"NodeNames", {"a100-hami-8"}}};
  Result<ExtenderArgs> args = DecodeExtenderArgs(body.dump());
  ASSERT_TRUE(args.ok()) << args.error().message;
  const ExtenderFilterResult f = (*ext)->Filter(*args);
  EXPECT_TRUE(f.node_names.empty());
  EXPECT_NE(f.error.find("annotations[\"tessera.io/topology\"]: \"mandatory\" is not"),
            std::string::npos)
      << f.error;
  EXPECT_NE((*ext)->MetricsText().find("tessera_filter_rejections_total{reason=\"bad-pod\"} 1"),
            std::string::npos);
}

// A required pod is refused where no NVLink domain holds it, with the domain shortfall as the
// reason, in both answer writers (Filter and the JSON one kube-scheduler reads); a pod with no
// intent still passes the node.
TEST(PodTopologyAnnotation, FilterNamesTheDomainShortfall) {
  Json bound = TopologyPod("bound", "preferred");
  bound["metadata"]["annotations"] = {{"tessera.io/gpu-indices", "0,4"}};
  bound["spec"]["nodeName"] = "a100-hami-8";
  bound["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "2";
  bound["status"]["phase"] = "Running";
  const Json nodes = {{"items", {HamiScoreNode()}}};
  const Json pods = {{"items", {bound}}};
  auto ext = Extender::FromJson(nodes.dump(), pods.dump(), {});
  ASSERT_TRUE(ext.ok()) << ext.error().message;
  const std::string expected =
      "topology: needs 4 GPUs in one NVLink domain, the most free in one is 3 (domains 0-3: 3 "
      "free, 4-7: 3 free)";
  const Json body = {
      {"Pod", TopologyPod("p", "required")}, {"Nodes", nullptr}, {"NodeNames", {"a100-hami-8"}}};
  Result<ExtenderArgs> args = DecodeExtenderArgs(body.dump());
  ASSERT_TRUE(args.ok()) << args.error().message;
  const ExtenderFilterResult f = (*ext)->Filter(*args);
  EXPECT_TRUE(f.error.empty()) << f.error;
  EXPECT_TRUE(f.node_names.empty());
  const auto all = [&](const ExtenderFilterResult& r) {
    Json m = Json::object();
    for (const auto& [n, why] : r.failed_nodes) m[n] = why;
    for (const auto& [n, why] : r.failed_and_unresolvable_nodes) m[n] = why;
    return m;
  };
  EXPECT_EQ(all(f).value("a100-hami-8", ""), expected) << all(f).dump();
  EXPECT_EQ(f.failed_nodes.count("a100-hami-8"), 1u);  // preemption may free a domain
  const Json answer = Json::parse((*ext)->FilterJson(*args));
  EXPECT_EQ(answer["FailedNodes"].value("a100-hami-8", ""), expected) << answer.dump();
  EXPECT_NE((*ext)->MetricsText().find("tessera_filter_rejections_total{reason=\"topology\"} 2"),
            std::string::npos);
  // Without an intent the six free GPUs take the pod.
  Json blind = TopologyPod("q", "required");
  blind["metadata"]["annotations"] = Json::object();
  const Json body2 = {{"Pod", blind}, {"Nodes", nullptr}, {"NodeNames", {"a100-hami-8"}}};
  Result<ExtenderArgs> args2 = DecodeExtenderArgs(body2.dump());
  ASSERT_TRUE(args2.ok()) << args2.error().message;
  EXPECT_EQ((*ext)->Filter(*args2).node_names, std::vector<std::string>{"a100-hami-8"});
}

// ------------------------------------------------------------------ the extender

double CounterValue(const std::string& metrics, const std::string& name) {
  const size_t at = metrics.find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::stod(metrics.substr(at + name.size() + 2));
}

TEST(ExtenderTopology, FileModeMalformedNodeIsCountedAndKeepsItsCapacity) {
  Json good = HamiScoreNode();
  Json twin = HamiScoreNode();
  twin["metadata"]["name"] = "a100-hami-twin";
  twin["metadata"]["uid"] = "uid-twin";
  Json bad = HamiScoreNode();
  bad["metadata"]["name"] = "a100-bad";
  bad["metadata"]["uid"] = "uid-bad";
  bad["metadata"]["annotations"]["tessera.io/gpu-topology"] = R"({"nvlink":[[0,1,2,3]]})";
  const Json nodes = {{"items", {good, bad, twin}}};
  auto ext = Extender::FromJson(nodes.dump(), R"({"items":[]})", {});
  ASSERT_TRUE(ext.ok()) << ext.error().message;
  const TopologyPtr t = (*ext)->node_topology("a100-hami-8");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(FormatGpuGroups(*t, TopologyScope::kNvlink), "0-3/4-7");
  // Nodes built alike share one topology object.
  EXPECT_EQ((*ext)->node_topology("a100-hami-twin"), t);
  EXPECT_EQ((*ext)->node_topology("a100-bad"), nullptr);
  EXPECT_EQ((*ext)->gpu_capacity_milli(), 3 * 8 * 1000);
  const Json state = Json::parse((*ext)->StateJson());
  EXPECT_EQ(state["nodes"][0]["topology"], "nvlink=0-3/4-7;numa=0-3/4-7;kubelet=none");
  EXPECT_TRUE(state["nodes"][1]["topology"].is_null()) << state["nodes"][1].dump();
  const std::string metrics = (*ext)->MetricsText();
  EXPECT_NE(metrics.find("# HELP tessera_topology_annotation_errors_total Malformed GPU topology"),
            std::string::npos);
  EXPECT_EQ(CounterValue(metrics, "tessera_topology_annotation_errors_total"), 1) << metrics;
}

TEST(ExtenderTopology, ApiModeReadsCountsOnceAndRecovers) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(HamiScoreNode());
  Live live(fake);
  ASSERT_TRUE(live.Sync());
  const auto nvlink = [&]() {
    const TopologyPtr t = live.extender->node_topology("a100-hami-8");
    return t == nullptr ? std::string("none") : FormatGpuGroups(*t, TopologyScope::kNvlink);
  };
  const auto errors = [&]() {
    return CounterValue(live.extender->MetricsText(), "tessera_topology_annotation_errors_total");
  };
  EXPECT_EQ(nvlink(), "0-3/4-7");
  EXPECT_EQ(errors(), 0);

  // Ours arrives and wins.
  Json node = HamiScoreNode();
  node["metadata"]["annotations"]["tessera.io/gpu-topology"] = R"({"nvlink":[[0,1,2,3,4,5,6,7]]})";
  fake.ModifyNode(node);
  ASSERT_TRUE(WaitFor([&] { return nvlink() == "0-7"; })) << nvlink();

  // A malformed one: no topology, one error, the node's GPUs still there.
  node["metadata"]["annotations"]["tessera.io/gpu-topology"] = R"({"nvlink":[[0,1,2,3,4,5,6,8]]})";
  fake.ModifyNode(node);
  ASSERT_TRUE(WaitFor([&] { return nvlink() == "none"; })) << nvlink();
  EXPECT_EQ(errors(), 1);
  EXPECT_EQ(live.extender->gpu_capacity_milli(), 8000);
  // A heartbeat with the same annotation is not counted again.
  node["metadata"]["labels"] = {{"heartbeat", "1"}};
  fake.ModifyNode(node);
  node["metadata"]["labels"] = {{"heartbeat", "2"}};
  fake.ModifyNode(node);
  ASSERT_TRUE(WaitFor([&] {
    for (const Json& n : fake.Objects("nodes")) {
      if (n["metadata"]["labels"].value("heartbeat", "") != "2") return false;
    }
    return true;
  }));
  // The extender applies events in order; a fixed annotation after the heartbeats shows it saw
  // them all.
  node["metadata"]["annotations"].erase("tessera.io/gpu-topology");
  fake.ModifyNode(node);
  ASSERT_TRUE(WaitFor([&] { return nvlink() == "0-3/4-7"; })) << nvlink();
  EXPECT_EQ(errors(), 1);
}

TEST(ExtenderTopology, KubeletPolicyPerNodePool) {
  Json a = HamiScoreNode();
  a["metadata"]["labels"] = {{"pool", "train"}};
  Json b = HamiScoreNode();
  b["metadata"]["name"] = "no-topology";
  b["metadata"]["uid"] = "uid-b";
  b["metadata"]["labels"] = {{"pool", "train"}};
  b["metadata"]["annotations"].erase("hami.io/node-nvidia-score");
  Json c = HamiScoreNode();
  c["metadata"]["name"] = "other-pool";
  c["metadata"]["uid"] = "uid-c";
  c["metadata"]["labels"] = {{"pool", "serve"}};
  ExtenderOptions options;
  options.topology_pools = {{{{"pool", "train"}}, KubeletTopologyPolicy::kRestricted},
                            {{}, KubeletTopologyPolicy::kBestEffort}};
  const Json nodes = {{"items", {a, b, c}}};
  auto ext = Extender::FromJson(nodes.dump(), R"({"items":[]})", options);
  ASSERT_TRUE(ext.ok()) << ext.error().message;
  ASSERT_NE((*ext)->node_topology("a100-hami-8"), nullptr);
  EXPECT_EQ((*ext)->node_topology("a100-hami-8")->kubelet, KubeletTopologyPolicy::kRestricted);
  EXPECT_EQ((*ext)->node_topology("no-topology"), nullptr);  // logged: cannot be honoured
  ASSERT_NE((*ext)->node_topology("other-pool"), nullptr);
  EXPECT_EQ((*ext)->node_topology("other-pool")->kubelet, KubeletTopologyPolicy::kBestEffort);
  EXPECT_EQ(CounterValue((*ext)->MetricsText(), "tessera_topology_annotation_errors_total"), 0);
}

// Under a single-numa-node kubelet a 6-GPU pod never fits a node of two 4-GPU NUMA nodes:
// unresolvable (no preemption can help); a 4-GPU pod that finds no NUMA node with 4 free
// (3 and 3 here) is refused as resolvable (preempting pods may free one).
TEST(ExtenderTopology, SingleNumaNodeRefusalIsUnresolvableOnlyWhenNothingCouldHelp) {
  Json bound = TopologyPod("bound", "preferred");
  bound["metadata"]["annotations"] = {{"tessera.io/gpu-indices", "0,4"}};
  bound["spec"]["nodeName"] = "a100-hami-8";
  bound["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "2";
  bound["status"]["phase"] = "Running";
  ExtenderOptions options;
  options.topology_pools = {{{}, KubeletTopologyPolicy::kSingleNumaNode}};
  const Json nodes = {{"items", {HamiScoreNode()}}};
  const Json pods = {{"items", {bound}}};
  auto ext = Extender::FromJson(nodes.dump(), pods.dump(), options);
  ASSERT_TRUE(ext.ok()) << ext.error().message;
  const auto filter = [&](const std::string& gpus) {
    Json pod = TopologyPod("p" + gpus, "required:numa");
    pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = gpus;
    const Json body = {{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", {"a100-hami-8"}}};
    Result<ExtenderArgs> args = DecodeExtenderArgs(body.dump());
    EXPECT_TRUE(args.ok()) << args.error().message;
    return Json::parse((*ext)->FilterJson(*args));
  };
  const Json eight = filter("6");
  EXPECT_TRUE(eight["FailedNodes"].empty()) << eight.dump();
  EXPECT_EQ(eight["FailedAndUnresolvableNodes"].value("a100-hami-8", "").rfind("topology:", 0), 0u)
      << eight.dump();
  const Json four = filter("4");
  EXPECT_TRUE(four["FailedAndUnresolvableNodes"].empty()) << four.dump();
  EXPECT_EQ(four["FailedNodes"].value("a100-hami-8", "").rfind("topology:", 0), 0u) << four.dump();
}

}  // namespace
}  // namespace tessera::k8s
