#include "trace/scenario.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace tessera {
namespace {

constexpr char kSmall[] = R"(name: small
description: two pools and three classes
pods: 10
seed: 7
nodes:
  - name: gpu
    model: V100M16
    gpus: 4
    cpu_milli: 32000
    memory_mib: 131072
    count: 3
  - name: cpu
    cpu_milli: 16000
    memory_mib: 65536
    count: 2
  - {name: g3, model: G3, gpus: 8, gpu_memory_mib: 40960, cpu_milli: 128000, memory_mib: 786432, count: 1}
classes:
  - name: batch
    cpu_milli: 1000
    share: 1
  - name: share
    cpu_milli: 4000
    memory_mib: 16384
    gpu_count: 1
    gpu_milli: 250
    gpu_memory_mib: 4096
    models: [V100M16, V100M32]
    qos: LS
    share: 1
  - {name: train, cpu_milli: 64000, gpu_count: 4, share: 1}
)";

// The message of a parse that must fail.
std::string ErrorOf(const std::string& yaml) {
  Result<Scenario> s = ParseScenario(yaml, "s.yaml");
  EXPECT_FALSE(s.ok()) << "expected an error";
  return s.ok() ? std::string() : s.error().message;
}

// kSmall with `from` (which must occur) replaced by `to`.
std::string Edited(const std::string& from, const std::string& to) {
  std::string yaml = kSmall;
  const size_t at = yaml.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) yaml.replace(at, from.size(), to);
  return yaml;
}

TEST(ScenarioTest, ParsesExactValues) {
  Result<Scenario> s = ParseScenario(kSmall, "s.yaml");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->name, "small");
  EXPECT_EQ(s->description, "two pools and three classes");
  EXPECT_EQ(s->pods, 10);
  EXPECT_EQ(s->seed, 7u);
  ASSERT_EQ(s->nodes.size(), 3u);
  const NodePool& gpu = s->nodes[0];
  EXPECT_EQ(gpu.name, "gpu");
  EXPECT_EQ(gpu.model, "V100M16");
  EXPECT_EQ(gpu.gpus, 4);
  EXPECT_EQ(gpu.gpu_memory_mib, 16384);  // from the model
  EXPECT_EQ(gpu.cpu_milli, 32000);
  EXPECT_EQ(gpu.memory_mib, 131072);
  EXPECT_EQ(gpu.count, 3);
  const NodePool& cpu = s->nodes[1];
  EXPECT_EQ(cpu.model, "");
  EXPECT_EQ(cpu.gpus, 0);
  EXPECT_EQ(cpu.gpu_memory_mib, 0);
  EXPECT_EQ(cpu.count, 2);
  EXPECT_EQ(s->nodes[2].gpu_memory_mib, 40960);  // given explicitly
  ASSERT_EQ(s->classes.size(), 3u);
  const PodClass& batch = s->classes[0];
  EXPECT_EQ(batch.name, "batch");
  EXPECT_EQ(batch.cpu_milli, 1000);
  EXPECT_EQ(batch.memory_mib, 0);
  EXPECT_EQ(batch.gpu_count, 0);
  EXPECT_EQ(batch.gpu_milli, 0);
  EXPECT_EQ(batch.gpu_spec, "");
  EXPECT_EQ(batch.qos, "BE");
  EXPECT_EQ(batch.share, 1.0);
  const PodClass& share = s->classes[1];
  EXPECT_EQ(share.memory_mib, 16384);
  EXPECT_EQ(share.gpu_count, 1);
  EXPECT_EQ(share.gpu_milli, 250);
  EXPECT_EQ(share.gpu_memory_mib, 4096);
  EXPECT_EQ(share.gpu_spec, "V100M16|V100M32");
  EXPECT_EQ(share.qos, "LS");
  const PodClass& train = s->classes[2];
  EXPECT_EQ(train.gpu_count, 4);
  EXPECT_EQ(train.gpu_milli, 1000);  // default for GPU classes
}

TEST(ScenarioTest, DefaultSeedIsOne) {
  Result<Scenario> s = ParseScenario(Edited("seed: 7\n", ""), "s.yaml");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->seed, 1u);
}

TEST(ScenarioTest, NodesArePoolByPool) {
  Result<Scenario> s = ParseScenario(kSmall, "s.yaml");
  ASSERT_TRUE(s.ok()) << s.error().message;
  const std::vector<NodeSpec> nodes = ScenarioNodes(*s);
  ASSERT_EQ(nodes.size(), 6u);
  EXPECT_EQ(nodes[0].name, "gpu-0000");
  EXPECT_EQ(nodes[2].name, "gpu-0002");
  EXPECT_EQ(nodes[2].gpu_count, 4);
  EXPECT_EQ(nodes[2].gpu_model, "V100M16");
  EXPECT_EQ(nodes[2].gpu_memory_mib, 16384);
  EXPECT_EQ(nodes[2].cpu_milli, 32000);
  EXPECT_EQ(nodes[2].memory_mib, 131072);
  EXPECT_EQ(nodes[3].name, "cpu-0000");
  EXPECT_EQ(nodes[4].name, "cpu-0001");
  EXPECT_EQ(nodes[4].gpu_count, 0);
  EXPECT_EQ(nodes[4].gpu_model, "");
  EXPECT_EQ(nodes[5].name, "g3-0000");
  EXPECT_EQ(nodes[5].gpu_memory_mib, 40960);
}

TEST(ScenarioTest, PodsByLargestRemainder) {
  Result<Scenario> s = ParseScenario(kSmall, "s.yaml");
  ASSERT_TRUE(s.ok()) << s.error().message;
  const std::vector<PodSpec> pods = ScenarioPods(*s);
  ASSERT_EQ(pods.size(), 10u);
  // 10 pods over three equal shares: 3.33 each, the one left over goes to the first class.
  std::map<std::string, std::vector<std::string>> by_class;
  for (const PodSpec& p : pods) by_class[p.name.substr(0, p.name.find('-'))].push_back(p.name);
  EXPECT_EQ(by_class["batch"].size(), 4u);
  EXPECT_EQ(by_class["share"].size(), 3u);
  EXPECT_EQ(by_class["train"].size(), 3u);
  std::vector<std::string> share_names = by_class["share"];
  std::sort(share_names.begin(), share_names.end());
  EXPECT_EQ(share_names, (std::vector<std::string>{"share-00000", "share-00001", "share-00002"}));
  for (const PodSpec& p : pods) {
    if (p.name != "share-00001") continue;
    EXPECT_EQ(p.cpu_milli, 4000);
    EXPECT_EQ(p.memory_mib, 16384);
    EXPECT_EQ(p.gpu_count, 1);
    EXPECT_EQ(p.gpu_milli, 250);
    EXPECT_EQ(p.gpu_memory_mib, 4096);
    EXPECT_EQ(p.gpu_spec, "V100M16|V100M32");
    EXPECT_EQ(p.qos, "LS");
    EXPECT_EQ(p.creation_time, -1);
  }
}

TEST(ScenarioTest, SharesAreRenormalised) {
  Scenario s;
  s.pods = 7;
  s.classes.resize(2);
  s.classes[0].name = "a";
  s.classes[0].share = 30;
  s.classes[1].name = "b";
  s.classes[1].share = 40;
  const std::vector<PodSpec> pods = ScenarioPods(s);
  ASSERT_EQ(pods.size(), 7u);
  // 3 and 4 exactly.
  EXPECT_EQ(std::count_if(pods.begin(), pods.end(),
                          [](const PodSpec& p) { return p.name.starts_with("a-"); }),
            3);
}

TEST(ScenarioTest, ShuffleDependsOnSeedOnly) {
  Result<Scenario> s = ParseScenario(kSmall, "s.yaml");
  ASSERT_TRUE(s.ok()) << s.error().message;
  s->pods = 1000;
  std::vector<std::string> first, second, other;
  for (const PodSpec& p : ScenarioPods(*s)) first.push_back(p.name);
  for (const PodSpec& p : ScenarioPods(*s)) second.push_back(p.name);
  s->seed = 8;
  for (const PodSpec& p : ScenarioPods(*s)) other.push_back(p.name);
  EXPECT_EQ(first, second);
  EXPECT_NE(first, other);
  std::vector<std::string> sorted = first;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NE(first, sorted);  // actually shuffled
  std::sort(other.begin(), other.end());
  EXPECT_EQ(sorted, other);  // same pods
}

// --- Errors: each names the file, the line and the field. ---

TEST(ScenarioTest, ErrorBadIndentation) {
  const std::string yaml =
      "name: x\n"
      "pods: 1\n"
      "nodes:\n"
      "  - name: a\n"
      "     cpu_milli: 1\n";
  const std::string e = ErrorOf(yaml);
  EXPECT_TRUE(e.starts_with("s.yaml:5: yaml syntax error: ")) << e;
}

TEST(ScenarioTest, ErrorUnclosedFlow) {
  const std::string e = ErrorOf("name: x\npods: 1\nnodes: [{name: a\nclasses: []\n");
  EXPECT_TRUE(e.starts_with("s.yaml:")) << e;
  EXPECT_NE(e.find("yaml syntax error"), std::string::npos) << e;
}

TEST(ScenarioTest, ErrorUnknownKey) {
  EXPECT_EQ(ErrorOf(Edited("seed: 7", "sede: 7")).substr(0, 40),
            "s.yaml:4: field 'sede': unknown key (exp");
  const std::string e = ErrorOf(Edited("    count: 2\n", "    count: 2\n    gpu: 1\n"));
  EXPECT_TRUE(e.starts_with("s.yaml:16: field 'nodes[1].gpu': unknown key (expected one of: name"))
      << e;
  EXPECT_TRUE(ErrorOf(Edited("qos: LS", "qos: LS\n    priority: 3"))
                  .starts_with("s.yaml:29: field 'classes[1].priority': unknown key"));
}

TEST(ScenarioTest, ErrorDuplicateKey) {
  EXPECT_EQ(ErrorOf(Edited("    count: 2\n", "    count: 2\n    count: 3\n")),
            "s.yaml:16: field 'nodes[1].count': duplicate key");
}

TEST(ScenarioTest, ErrorNegativeCpu) {
  EXPECT_EQ(ErrorOf(Edited("cpu_milli: 1000", "cpu_milli: -1000")),
            "s.yaml:19: field 'classes[0].cpu_milli': must not be negative, got -1000");
  EXPECT_EQ(ErrorOf(Edited("cpu_milli: 16000", "cpu_milli: -16000")),
            "s.yaml:13: field 'nodes[1].cpu_milli': must be positive, got -16000");
}

TEST(ScenarioTest, ErrorStringWhereNumberExpected) {
  EXPECT_EQ(ErrorOf(Edited("gpus: 4", "gpus: four")),
            "s.yaml:8: field 'nodes[0].gpus': not an integer: 'four'");
  EXPECT_EQ(ErrorOf(Edited("pods: 10", "pods: [10]")),
            "s.yaml:3: field 'pods': expected an integer, got a list");
  EXPECT_EQ(ErrorOf(Edited("share: 1\n  - name: share", "share: lots\n  - name: share")),
            "s.yaml:20: field 'classes[0].share': not a number: 'lots'");
  EXPECT_EQ(ErrorOf(Edited("seed: 7", "seed: 1.5")),
            "s.yaml:4: field 'seed': not an integer: '1.5'");
}

TEST(ScenarioTest, ErrorMissingNodes) {
  const std::string yaml = "name: x\npods: 5\nclasses:\n  - {name: a, cpu_milli: 1, share: 1}\n";
  EXPECT_EQ(ErrorOf(yaml), "s.yaml:1: field 'nodes': missing (required)");
  EXPECT_EQ(ErrorOf("name: x\npods: 5\nnodes: []\nclasses: [{name: a, cpu_milli: 1, share: 1}]\n"),
            "s.yaml:3: field 'nodes': must not be empty");
  EXPECT_EQ(ErrorOf("name: x\npods: 5\nnodes: {}\n"),
            "s.yaml:3: field 'nodes': expected a list, got a mapping");
}

TEST(ScenarioTest, ErrorMissingRequiredFields) {
  EXPECT_EQ(ErrorOf(Edited("name: small\n", "")), "s.yaml:1: field 'name': missing (required)");
  EXPECT_EQ(ErrorOf(Edited("pods: 10\n", "")), "s.yaml:1: field 'pods': missing (required)");
  EXPECT_EQ(ErrorOf(Edited("    memory_mib: 65536\n", "")),
            "s.yaml:12: field 'nodes[1].memory_mib': missing (required)");
  EXPECT_EQ(ErrorOf(Edited("    model: V100M16\n", "")),
            "s.yaml:6: field 'nodes[0].model': missing (required for a pool with 4 GPUs)");
  EXPECT_EQ(ErrorOf(Edited("share: 1\n  - name: share", "\n  - name: share")),
            "s.yaml:18: field 'classes[0].share': missing (required)");
  EXPECT_EQ(ErrorOf(Edited("  - name: batch\n", "  - name:\n")),
            "s.yaml:18: field 'classes[0].name': has no value");
  EXPECT_EQ(ErrorOf("name: x\npods: 1\nnodes: [{name: a, cpu_milli: 1, memory_mib: 1, count: 1}]\n"
                    "classes: \"\"\n"),
            "s.yaml:4: field 'classes': expected a list, got ''");
}

TEST(ScenarioTest, ErrorEmptyOrNotAMapping) {
  EXPECT_EQ(ErrorOf(""), "s.yaml:1: field 'name': missing (the file is empty)");
  EXPECT_EQ(ErrorOf("# nothing\n"), "s.yaml:1: field 'name': missing (the file is empty)");
  EXPECT_EQ(ErrorOf("- a\n- b\n"), "s.yaml:1: field '(top level)': expected a mapping, got a list");
}

TEST(ScenarioTest, ErrorRanges) {
  EXPECT_EQ(ErrorOf(Edited("pods: 10", "pods: 0")),
            "s.yaml:3: field 'pods': must be positive, got 0");
  EXPECT_EQ(ErrorOf(Edited("pods: 10", "pods: 10000001")),
            "s.yaml:3: field 'pods': must be at most 10000000, got 10000001");
  EXPECT_EQ(ErrorOf(Edited("gpus: 4", "gpus: 17")),
            "s.yaml:8: field 'nodes[0].gpus': must be at most 16, got 17");
  EXPECT_EQ(ErrorOf(Edited("count: 3", "count: 0")),
            "s.yaml:11: field 'nodes[0].count': must be positive, got 0");
  EXPECT_EQ(ErrorOf(Edited("count: 3", "count: 1000001")),
            "s.yaml:11: field 'nodes[0].count': must be at most 1000000, got 1000001");
  EXPECT_EQ(ErrorOf(Edited("gpu_milli: 250", "gpu_milli: 1001")),
            "s.yaml:25: field 'classes[1].gpu_milli': must be at most 1000, got 1001");
  EXPECT_EQ(ErrorOf(Edited("gpu_milli: 250", "gpu_milli: 0")),
            "s.yaml:25: field 'classes[1].gpu_milli': must be 1..1000, got 0");
  EXPECT_EQ(ErrorOf(Edited("gpu_count: 4,", "gpu_count: 4, gpu_milli: 500,")),
            "s.yaml:30: field 'classes[2].gpu_milli': must be 1000 for a multi-GPU class "
            "(gpu_count 4), got 500");
  EXPECT_EQ(ErrorOf(Edited("gpu_count: 4,", "gpu_count: 17,")),
            "s.yaml:30: field 'classes[2].gpu_count': must be at most 16, got 17");
  EXPECT_EQ(ErrorOf(Edited("share: 1\n  - name: share", "share: 0\n  - name: share")),
            "s.yaml:20: field 'classes[0].share': must be a positive fraction, got '0'");
  EXPECT_EQ(ErrorOf(Edited("seed: 7", "seed: -7")),
            "s.yaml:4: field 'seed': must not be negative, got -7");
  EXPECT_EQ(ErrorOf(Edited("cpu_milli: 16000", "cpu_milli: 2000000000000")),
            "s.yaml:13: field 'nodes[1].cpu_milli': must be at most 1099511627776, got "
            "2000000000000");
}

TEST(ScenarioTest, ErrorInconsistentFields) {
  EXPECT_EQ(ErrorOf(Edited("  - name: cpu\n", "  - name: cpu\n    model: T4\n")),
            "s.yaml:13: field 'nodes[1].model': set, but the pool has no GPUs (gpus is 0)");
  EXPECT_EQ(ErrorOf(Edited("cpu_milli: 1000\n", "cpu_milli: 1000\n    gpu_milli: 500\n")),
            "s.yaml:20: field 'classes[0].gpu_milli': set, but gpu_count is 0 (a CPU-only class)");
  EXPECT_EQ(ErrorOf(Edited("cpu_milli: 1000\n", "cpu_milli: 1000\n    models: [T4]\n")),
            "s.yaml:20: field 'classes[0].models': set, but gpu_count is 0 (a CPU-only class)");
  EXPECT_EQ(ErrorOf(Edited("models: [V100M16, V100M32]", "models: V100M16")),
            "s.yaml:27: field 'classes[1].models': expected a list of GPU models, got 'V100M16'");
  EXPECT_EQ(ErrorOf(Edited("models: [V100M16, V100M32]", "models: [V100M16, [x]]")),
            "s.yaml:27: field 'classes[1].models[1]': expected a GPU model name, got a list");
}

TEST(ScenarioTest, ErrorDuplicateNames) {
  EXPECT_EQ(ErrorOf(Edited("{name: g3,", "{name: gpu,")),
            "s.yaml:16: field 'nodes[2].name': duplicate pool name 'gpu' (also nodes[0])");
  EXPECT_EQ(ErrorOf(Edited("{name: train,", "{name: batch,")),
            "s.yaml:30: field 'classes[2].name': duplicate class name 'batch' (also classes[0])");
}

TEST(ScenarioTest, DocumentedExampleParses) {
  const std::filesystem::path path = std::string(TESSERA_SOURCE_DIR) + "/docs/SCENARIOS.md";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path;
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const size_t begin = doc.find("```yaml\n");
  ASSERT_NE(begin, std::string::npos);
  const size_t end = doc.find("```", begin + 8);
  ASSERT_NE(end, std::string::npos);
  Result<Scenario> s = ParseScenario(doc.substr(begin + 8, end - begin - 8), "SCENARIOS.md");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(ScenarioNodes(*s).size(), 38u);
  EXPECT_EQ(ScenarioPods(*s).size(), 2000u);
}

// --- The embedded openb-like scenario. ---

TEST(ScenarioEmbeddedTest, Listed) {
  const std::vector<std::string> names = EmbeddedScenarioNames();
  ASSERT_FALSE(names.empty());
  EXPECT_NE(std::find(names.begin(), names.end(), "openb-like"), names.end());
  for (const std::string& name : names) EXPECT_FALSE(EmbeddedScenario(name).empty()) << name;
  EXPECT_TRUE(EmbeddedScenario("no-such-scenario").empty());
}

TEST(ScenarioEmbeddedTest, OpenbLikeCluster) {
  Result<Scenario> s = ParseScenario(EmbeddedScenario("openb-like"), "openb-like");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->name, "openb-like");
  EXPECT_EQ(s->pods, 8152);
  EXPECT_EQ(s->seed, 1u);
  const std::vector<NodeSpec> nodes = ScenarioNodes(*s);
  ASSERT_EQ(nodes.size(), 1213u);
  int gpus = 0;
  std::map<std::string, int> gpus_by_model;
  for (const NodeSpec& n : nodes) {
    gpus += n.gpu_count;
    gpus_by_model[n.gpu_model] += n.gpu_count;
    EXPECT_GT(n.gpu_count, 0) << n.name;
  }
  EXPECT_EQ(gpus, 6212);
  EXPECT_EQ(gpus_by_model["G2"], 549 * 8);
  EXPECT_EQ(gpus_by_model["T4"], 387 * 2 + 17 * 4);
  EXPECT_EQ(gpus_by_model["A10"], 2);
  EXPECT_EQ(nodes[0].name, "g2-8g-96c-0000");
  EXPECT_EQ(nodes[548].name, "g2-8g-96c-0548");
  EXPECT_EQ(nodes[549].name, "t4-2g-104c-0000");
  EXPECT_EQ(nodes[549].gpu_memory_mib, 15360);
}

TEST(ScenarioEmbeddedTest, OpenbLikePods) {
  Result<Scenario> s = ParseScenario(EmbeddedScenario("openb-like"), "openb-like");
  ASSERT_TRUE(s.ok()) << s.error().message;
  const std::vector<PodSpec> pods = ScenarioPods(*s);
  ASSERT_EQ(pods.size(), 8152u);
  const std::vector<PodSpec> again = ScenarioPods(*s);
  ASSERT_EQ(again.size(), pods.size());
  for (size_t i = 0; i < pods.size(); ++i) ASSERT_EQ(pods[i].name, again[i].name) << i;

  double share_sum = 0;
  for (const PodClass& c : s->classes) share_sum += c.share;
  std::map<std::string, int> count;
  int cpu_only = 0, sharing = 0, one = 0, multi = 0;
  for (const PodSpec& p : pods) {
    ++count[p.name.substr(0, p.name.rfind('-'))];
    if (p.gpu_count == 0) {
      ++cpu_only;
    } else if (p.gpu_milli < 1000) {
      ++sharing;
    } else if (p.gpu_count == 1) {
      ++one;
    } else {
      ++multi;
    }
  }
  EXPECT_EQ(count.size(), s->classes.size());
  for (const PodClass& c : s->classes) {
    const double expected = c.share / share_sum * 8152;
    EXPECT_LE(std::abs(count[c.name] - expected), 1.0) << c.name;
  }
  // The published mix: about 13 % CPU-only, 38 % sharing, 48 % one GPU, 1 % multi-GPU.
  EXPECT_NEAR(cpu_only / 8152.0, 0.13, 0.01);
  EXPECT_NEAR(sharing / 8152.0, 0.38, 0.01);
  EXPECT_NEAR(one / 8152.0, 0.48, 0.01);
  EXPECT_NEAR(multi / 8152.0, 0.01, 0.005);
}

}  // namespace
}  // namespace tessera
