// GPU topology as the simulators read it: the builder's rules, the compact text of the
// node-list CSV, the pod intent, the kubelet policy names, the scenario YAML `topology:` of
// node pools and classes, and the CSV columns gpu_topology / topology.

#include "model/topology_text.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "trace/csv_reader.h"
#include "trace/scenario.h"

namespace tessera {
namespace {

template <typename T>
std::string ErrorOf(const Result<T>& r) {
  return r.ok() ? std::string("ok") : r.error().message;
}

TEST(TopologyText, BuildsTwoIslandsOnTwoSockets) {
  TopologyGroups g;
  g.nvlink = {{4, 5, 6, 7}, {0, 1, 2, 3}};
  g.numa = {{0, 1, 2, 3}, {4, 5, 6, 7}};
  g.numa_cpu_milli = {48000, 40000};
  Result<GpuTopology> t = BuildTopology(8, g);
  ASSERT_TRUE(t.ok()) << t.error().message;
  // Dense ids in order of the lowest GPU: GPUs 0-3 are domain 0 although listed second.
  EXPECT_EQ(t->nvlink[0], 0);
  EXPECT_EQ(t->nvlink[7], 1);
  EXPECT_EQ(t->numa_cpu_milli[0], 48000);
  EXPECT_EQ(t->numa_cpu_milli[1], 40000);
  EXPECT_EQ(t->link[0][3], kDerivedNvlinkScore);
  EXPECT_EQ(t->link[0][4], kDerivedCrossNumaScore);
  EXPECT_EQ(t->link[2][2], 0);
  EXPECT_EQ(FormatGpuGroups(*t, TopologyScope::kNvlink), "0-3/4-7");

  // PCIe only, two sockets: no NVLink pairs; same socket 20, across 10.
  TopologyGroups pcie;
  pcie.numa = {{0, 1}, {2, 3}};
  t = BuildTopology(4, pcie);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(FormatGpuGroups(*t, TopologyScope::kNvlink), "0/1/2/3");
  EXPECT_EQ(t->link[0][1], kDerivedSameNumaScore);
  EXPECT_EQ(t->link[1][2], kDerivedCrossNumaScore);
}

TEST(TopologyText, BuildErrors) {
  const auto error = [](int gpus, TopologyGroups g) { return ErrorOf(BuildTopology(gpus, g)); };
  TopologyGroups g;
  g.nvlink = {{0, 1}, {1, 2}};
  EXPECT_EQ(error(4, g), "nvlink[1][0]: GPU 1 is already in nvlink[0]");
  g.nvlink = {{0, 1}, {2}};
  EXPECT_EQ(error(4, g), "nvlink: GPU 3 is in no domain");
  g.nvlink = {{0, 1, 2, 3, 4}};
  EXPECT_EQ(error(4, g), "nvlink[0][4]: GPU 4 is out of range 0..3");
  g.nvlink = {};
  g.numa = {{0}, {1}, {}, {2, 3}};
  EXPECT_EQ(error(4, g), "numa[2]: empty domain");
  g.numa = {{0, 1}, {2, 3}};
  g.numa_cpu_milli = {1000};
  EXPECT_EQ(error(4, g), "numaCpu: 1 values for 2 NUMA nodes");
  g = {};
  g.links = {{0, 5}, {6, 0}};
  EXPECT_EQ(error(2, g), "links[0][1]: 5 differs from links[1][0] 6 (the matrix is symmetric)");
  g.links = {{0, 20000}, {20000, 0}};
  EXPECT_EQ(error(2, g), "links[0][1]: 20000 is out of range 0..10000");
  EXPECT_EQ(error(0, {}), "a topology needs a node with GPUs");
  EXPECT_EQ(error(17, {}), "17 GPUs, more than 16");
}

TEST(TopologyText, CompactForms) {
  Result<TopologyGroups> g = ParseCompactTopology("nvlink=0-3/4-7; numa=0-1,4-5/2-3,6-7");
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->nvlink, (std::vector<std::vector<int>>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(g->numa, (std::vector<std::vector<int>>{{0, 1, 4, 5}, {2, 3, 6, 7}}));
  g = ParseCompactTopology("nvlink=0-7;kubelet=single-numa-node");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->kubelet, KubeletTopologyPolicy::kSingleNumaNode);
  EXPECT_EQ(ErrorOf(ParseCompactTopology("nvlink=0-3/4-7;socket=0-7")),
            "unknown key \"socket\" (known: nvlink, numa, kubelet)");
  EXPECT_EQ(ErrorOf(ParseCompactTopology("nvlink=0-3;nvlink=4-7")), "key \"nvlink\" given twice");
  EXPECT_EQ(ErrorOf(ParseCompactTopology("nvlink=3-0")), "nvlink: bad GPU range \"3-0\"");
  EXPECT_EQ(ErrorOf(ParseCompactTopology("nvlink=0-3//4-7")),
            "nvlink: empty GPU group in \"0-3//4-7\"");
  EXPECT_EQ(ErrorOf(ParseCompactTopology("nvlink")), "\"nvlink\" is not key=value");
  EXPECT_EQ(ErrorOf(ParseCompactTopology("numa=0-99")), "numa: GPU index 99 is beyond 15");
}

TEST(TopologyText, IntentAndKubeletNames) {
  EXPECT_EQ(ParseTopologyRequest("required").value(),
            (TopologyRequest{TopologyIntent::kRequired, TopologyScope::kNvlink}));
  EXPECT_EQ(ParseTopologyRequest("preferred:numa").value(),
            (TopologyRequest{TopologyIntent::kPreferred, TopologyScope::kNuma}));
  EXPECT_EQ(ParseTopologyRequest("").value(), TopologyRequest{});
  EXPECT_EQ(ParseTopologyRequest("none").value(), TopologyRequest{});
  EXPECT_EQ(ErrorOf(ParseTopologyRequest("Required")),
            "\"Required\" is not required|preferred[:nvlink|:numa] (or none)");
  for (KubeletTopologyPolicy p :
       {KubeletTopologyPolicy::kNone, KubeletTopologyPolicy::kBestEffort,
        KubeletTopologyPolicy::kRestricted, KubeletTopologyPolicy::kSingleNumaNode}) {
    EXPECT_EQ(ParseKubeletPolicy(KubeletPolicyName(p)).value(), p);
  }
  EXPECT_FALSE(ParseKubeletPolicy("single-numa").ok());
}

TEST(TopologyText, InternSharesEqualTopologies) {
  std::vector<TopologyPtr> pool;
  TopologyGroups g;
  g.nvlink = {{0, 1}, {2, 3}};
  const GpuTopology a = BuildTopology(4, g).value();
  g.nvlink = {{0, 1, 2, 3}};
  const GpuTopology b = BuildTopology(4, g).value();
  const TopologyPtr first = InternTopology(&pool, a);
  EXPECT_EQ(InternTopology(&pool, a), first);
  EXPECT_NE(InternTopology(&pool, b), first);
  EXPECT_EQ(pool.size(), 2u);
  const TopologyPtr restricted = WithKubeletPolicy(first, KubeletTopologyPolicy::kRestricted);
  EXPECT_EQ(restricted->kubelet, KubeletTopologyPolicy::kRestricted);
  EXPECT_EQ(first->kubelet, KubeletTopologyPolicy::kNone);
}

// ------------------------------------------------------------------ scenario YAML

constexpr const char* kScenario = R"(name: topo
pods: 10
nodes:
  - name: a100
    model: A100
    gpus: 8
    cpu_milli: 96000
    memory_mib: 1000000
    count: 3
    topology:
      nvlink: [[0, 1, 2, 3], [4, 5, 6, 7]]
      numa: [[0, 1, 2, 3], [4, 5, 6, 7]]
      numa_cpu_milli: [48000, 48000]
      kubelet_policy: restricted
  - name: t4
    model: T4
    gpus: 4
    cpu_milli: 32000
    memory_mib: 100000
    count: 2
    topology: "numa=0-1/2-3"
  - name: cpu
    cpu_milli: 32000
    memory_mib: 100000
    count: 1
classes:
  - {name: train, cpu_milli: 8000, gpu_count: 4, share: 1, topology: "required"}
  - {name: serve, cpu_milli: 1000, gpu_count: 2, share: 1, topology: "preferred:numa"}
  - {name: share, cpu_milli: 1000, gpu_count: 1, gpu_milli: 500, share: 1}
)";

TEST(ScenarioTopology, NodePoolsAndClasses) {
  Result<Scenario> s = ParseScenario(kScenario, "topo.yaml");
  ASSERT_TRUE(s.ok()) << s.error().message;
  const std::vector<NodeSpec> nodes = ScenarioNodes(*s);
  ASSERT_EQ(nodes.size(), 6u);
  ASSERT_NE(nodes[0].topology, nullptr);
  EXPECT_EQ(nodes[0].topology, nodes[2].topology);  // nodes built alike share one
  EXPECT_EQ(FormatGpuGroups(*nodes[0].topology, TopologyScope::kNvlink), "0-3/4-7");
  EXPECT_EQ(nodes[0].topology->kubelet, KubeletTopologyPolicy::kRestricted);
  EXPECT_EQ(nodes[0].topology->numa_cpu_milli[1], 48000);
  ASSERT_NE(nodes[3].topology, nullptr);
  EXPECT_EQ(FormatGpuGroups(*nodes[3].topology, TopologyScope::kNuma), "0-1/2-3");
  EXPECT_EQ(FormatGpuGroups(*nodes[3].topology, TopologyScope::kNvlink), "0/1/2/3");
  EXPECT_EQ(nodes[5].topology, nullptr);
  int required = 0, preferred = 0, none = 0;
  for (const PodSpec& p : ScenarioPods(*s)) {
    if (p.name.starts_with("train")) {
      EXPECT_EQ(p.topology, (TopologyRequest{TopologyIntent::kRequired, TopologyScope::kNvlink}));
      ++required;
    } else if (p.name.starts_with("serve")) {
      EXPECT_EQ(p.topology, (TopologyRequest{TopologyIntent::kPreferred, TopologyScope::kNuma}));
      ++preferred;
    } else {
      EXPECT_EQ(p.topology, TopologyRequest{});
      ++none;
    }
  }
  EXPECT_GT(required, 0);
  EXPECT_GT(preferred, 0);
  EXPECT_GT(none, 0);
}

TEST(ScenarioTopology, ErrorsNameFileLineAndField) {
  const auto error = [](const std::string& from, const std::string& to) {
    std::string text = kScenario;
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    return ErrorOf(ParseScenario(text, "topo.yaml"));
  };
  EXPECT_EQ(error("nvlink: [[0, 1, 2, 3], [4, 5, 6, 7]]", "nvlink: [[0, 1, 2, 3], [4, 5, 6, 9]]"),
            "topo.yaml:11: field 'nodes[0].topology.nvlink[1][3]': GPU 9 is out of range 0..7");
  EXPECT_EQ(error("nvlink: [[0, 1, 2, 3], [4, 5, 6, 7]]", "nvlink: [[0, 1, 2, 3], [4, 5, 6]]"),
            "topo.yaml:11: field 'nodes[0].topology.nvlink': GPU 7 is in no domain");
  EXPECT_EQ(error("kubelet_policy: restricted", "kubelet_policy: strict"),
            "topo.yaml:14: field 'nodes[0].topology.kubelet_policy': unknown kubelet topology "
            "policy \"strict\" (known: none, best-effort, restricted, single-numa-node)");
  EXPECT_EQ(error("kubelet_policy: restricted", "kubelet: restricted"),
            "topo.yaml:14: field 'nodes[0].topology.kubelet': unknown key (expected one of: "
            "nvlink numa numa_cpu_milli links kubelet_policy)");
  EXPECT_EQ(error("numa_cpu_milli: [48000, 48000]", "numa_cpu_milli: [48000]"),
            "topo.yaml:13: field 'nodes[0].topology.numa_cpu_milli': 1 values for 2 NUMA nodes");
  EXPECT_EQ(error("\"numa=0-1/2-3\"", "\"numa=0-1/2-5\""),
            "topo.yaml:21: field 'nodes[1].topology': numa[1][2]: GPU 4 is out of range 0..3");
  EXPECT_EQ(error("topology: \"required\"", "topology: \"always\""),
            "topo.yaml:27: field 'classes[0].topology': \"always\" is not "
            "required|preferred[:nvlink|:numa] (or none)");
  EXPECT_EQ(error("    count: 1\n", "    count: 1\n    topology: \"nvlink=0-1\"\n"),
            "topo.yaml:26: field 'nodes[2].topology': set, but the pool has no GPUs (gpus is 0)");
}

// ------------------------------------------------------------------ CSV columns

TEST(CsvTopology, NodeColumnGpuTopology) {
  const std::string text =
      "sn,cpu_milli,memory_mib,gpu,model,gpu_topology\n"
      "n1,96000,100000,8,V100M32,nvlink=0-3/4-7;numa=0-3/4-7\n"
      "n2,96000,100000,8,V100M32,nvlink=0-3/4-7;numa=0-3/4-7\n"
      "n3,96000,100000,8,V100M32,\n"
      "n4,96000,100000,2,T4,\"numa=0/1;kubelet=restricted\"\n";
  Result<std::vector<NodeSpec>> nodes = ReadNodeCsv(text, "nodes.csv");
  ASSERT_TRUE(nodes.ok()) << nodes.error().message;
  ASSERT_NE((*nodes)[0].topology, nullptr);
  EXPECT_EQ((*nodes)[0].topology, (*nodes)[1].topology);
  EXPECT_EQ(FormatGpuGroups(*(*nodes)[0].topology, TopologyScope::kNvlink), "0-3/4-7");
  EXPECT_EQ((*nodes)[2].topology, nullptr);
  ASSERT_NE((*nodes)[3].topology, nullptr);
  EXPECT_EQ((*nodes)[3].topology->kubelet, KubeletTopologyPolicy::kRestricted);

  EXPECT_EQ(ErrorOf(ReadNodeCsv("sn,cpu_milli,memory_mib,gpu,model,gpu_topology\n"
                                "n1,1,1,4,T4,nvlink=0-3\n"
                                "n2,1,1,4,T4,nvlink=0-2\n",
                                "nodes.csv")),
            "nodes.csv:3: field 'gpu_topology': nvlink: GPU 3 is in no domain");
  EXPECT_EQ(ErrorOf(ReadNodeCsv("sn,cpu_milli,memory_mib,gpu,model,gpu_topology\n"
                                "n1,1,1,0,,nvlink=0-3\n",
                                "nodes.csv")),
            "nodes.csv:2: field 'gpu_topology': set, but the node has no GPUs");
  EXPECT_EQ(ErrorOf(ReadNodeCsv("sn,cpu_milli,memory_mib,gpu,model,gpu_topology\n"
                                "n1,1,1,4,T4,islands=2\n",
                                "nodes.csv")),
            "nodes.csv:2: field 'gpu_topology': unknown key \"islands\" (known: nvlink, numa, "
            "kubelet)");
}

TEST(CsvTopology, PodColumnTopology) {
  const std::string header = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,topology\n";
  Result<std::vector<PodSpec>> pods = ReadPodCsv(
      header + "a,1,1,4,1000,required\nb,1,1,2,1000,preferred:numa\nc,1,1,1,500,\n", "pods.csv");
  ASSERT_TRUE(pods.ok()) << pods.error().message;
  EXPECT_EQ((*pods)[0].topology.intent, TopologyIntent::kRequired);
  EXPECT_EQ((*pods)[1].topology.scope, TopologyScope::kNuma);
  EXPECT_EQ((*pods)[2].topology, TopologyRequest{});
  EXPECT_EQ(ErrorOf(ReadPodCsv(header + "a,1,1,4,1000,required:rack\n", "pods.csv")),
            "pods.csv:2: field 'topology': \"required:rack\": unknown scope \"rack\" (known: "
            "nvlink, numa)");
}

}  // namespace
}  // namespace tessera
