// GPU memory as users and HAMi write it: the request rules (memory-only shares, percentages,
// cores with memory, suffixed and plain quantities) and the extender filter on memory-only
// shares, in file mode (Extender::FromJson) and API mode (the fake API server).

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "k8s/api/objects.h"
#include "k8s/api/quantity.h"
#include "k8s/extender/extender.h"
#include "k8s/extender/extender_protocol.h"
#include "k8s/live.h"
#include "k8s/translate/translate.h"
#include "model/cluster.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;
using testing::FakeApiServer;
using testing::Live;

// A HAMi node as HAMi's device plugin registers it: `gpus` V100s of `memory_mib` each in the
// hami.io/node-nvidia-register annotation ("UUID,split,memMiB,cores,type,numa,healthy,index,
// mode:" per device) and nvidia.com/gpu as split-count vGPUs.
Json HamiNode(const std::string& name, int gpus, int memory_mib) {
  std::string reg;
  for (int i = 0; i < gpus; ++i) {
    reg += "GPU-" + name + "-" + std::to_string(i) + ",10," + std::to_string(memory_mib) +
           ",100,NVIDIA-Tesla V100-PCIE-16GB,0,true," + std::to_string(i) + ",hami-core:";
  }
  return {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata",
       {{"name", name},
        {"uid", "uid-" + name},
        {"annotations", {{"hami.io/node-nvidia-register", reg}}}}},
      {"spec", Json::object()},
      {"status",
       {{"allocatable",
         {{"cpu", "32"}, {"memory", "128Gi"}, {"nvidia.com/gpu", std::to_string(gpus * 10)}}}}}};
}

// A pending pod "ml/`name`" with one container limited to `limits`.
Json PodWith(const std::string& name, const Json& limits) {
  Json all = limits;
  all["cpu"] = "1";
  all["memory"] = "1Gi";
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name},
        {"namespace", "ml"},
        {"uid", "uid-" + name},
        {"annotations", Json::object()}}},
      {"spec",
       {{"schedulerName", "default-scheduler"},
        {"containers", {{{"name", "main"}, {"image", "x"}, {"resources", {{"limits", all}}}}}}}},
      {"status", {{"phase", "Pending"}}}};
}

PodSpec SpecOf(const Json& limits) {
  Result<Pod> pod = DecodePod(PodWith("p", limits), "Pod");
  EXPECT_TRUE(pod.ok()) << pod.error().message;
  Result<PodSpec> spec = PodToSpec(*pod);
  EXPECT_TRUE(spec.ok()) << spec.error().message;
  return spec.ok() ? *spec : PodSpec{};
}

std::string ErrorOf(const Json& limits) {
  Result<Pod> pod = DecodePod(PodWith("p", limits), "Pod");
  if (!pod.ok()) return pod.error().message;
  Result<PodSpec> spec = PodToSpec(*pod);
  return spec.ok() ? "" : spec.error().message;
}

// ---------------------------------------------------------------------------- quantities

TEST(GpuMemoryQuantity, SuffixMeansBytesAPlainNumberMiB) {
  EXPECT_EQ(GpuMemoryToMiB("9Gi").value(), 9216);
  EXPECT_EQ(GpuMemoryToMiB("7208Mi").value(), 7208);
  EXPECT_EQ(GpuMemoryToMiB("9G").value(), 8584);  // 9e9 bytes = 8583.06 MiB, rounded up
  EXPECT_EQ(GpuMemoryToMiB("1k").value(), 1);     // 1000 bytes, rounded up
  EXPECT_EQ(GpuMemoryToMiB("0Gi").value(), 0);
  EXPECT_EQ(GpuMemoryToMiB("9216").value(), 9216);
  EXPECT_EQ(GpuMemoryToMiB("1e3").value(), 1000);  // an exponent is a bare number
  EXPECT_EQ(GpuMemoryToMiB("1.5").error().message, "bad quantity \"1.5\" (not a whole number)");
  EXPECT_FALSE(GpuMemoryToMiB("9Gb").ok());
  EXPECT_TRUE(HasUnitSuffix("16Gi"));
  EXPECT_TRUE(HasUnitSuffix("500m"));
  EXPECT_FALSE(HasUnitSuffix("16384"));
  EXPECT_FALSE(HasUnitSuffix("2E3"));
}

// ---------------------------------------------------------------------------- request rules

TEST(GpuRequestRules, HamiMemoryOnlySharesTheGpuByMemory) {
  // HAMi's first vGPU example: one GPU, 3000 MiB, no gpucores (HAMi's defaultCores 0).
  PodSpec s = SpecOf({{"nvidia.com/gpu", 1}, {"nvidia.com/gpumem", 3000}});
  EXPECT_EQ(s.gpu_count, 1);
  EXPECT_EQ(s.gpu_milli, 1);  // reserves no compute beyond a GPU not fully taken
  EXPECT_EQ(s.gpu_memory_mib, 3000);
  EXPECT_EQ(s.gpu_memory_percent, 0);

  // Without nvidia.com/gpu HAMi's webhook adds one; gpucores: 0 is the same as absent.
  s = SpecOf({{"nvidia.com/gpumem", "6000"}, {"nvidia.com/gpucores", "0"}});
  EXPECT_EQ(s.gpu_count, 1);
  EXPECT_EQ(s.gpu_milli, 1);
  EXPECT_EQ(s.gpu_memory_mib, 6000);

  // A multi-GPU memory-only request takes its GPUs whole, with the memory recorded.
  s = SpecOf({{"nvidia.com/gpu", "2"}, {"nvidia.com/gpumem", "3000"}});
  EXPECT_EQ(s.gpu_count, 2);
  EXPECT_EQ(s.gpu_milli, 1000);
  EXPECT_EQ(s.gpu_memory_mib, 3000);

  // nvidia.com/gpu alone, or with gpucores: 0 and no memory, is the whole GPU (HAMi gives it
  // the device's whole memory).
  s = SpecOf({{"nvidia.com/gpu", "1"}, {"nvidia.com/gpucores", "0"}});
  EXPECT_EQ(s.gpu_milli, 1000);
  EXPECT_EQ(s.gpu_memory_mib, 0);
}

TEST(GpuRequestRules, HamiPercentageIsAShareOfTheGpusMemory) {
  PodSpec s = SpecOf({{"nvidia.com/gpu", "1"}, {"nvidia.com/gpumem-percentage", "50"}});
  EXPECT_EQ(s.gpu_count, 1);
  EXPECT_EQ(s.gpu_milli, 1);
  EXPECT_EQ(s.gpu_memory_mib, 0);
  EXPECT_EQ(s.gpu_memory_percent, 50);

  // gpumem wins over the percentage, as in HAMi.
  s = SpecOf({{"nvidia.com/gpumem", "2000"}, {"nvidia.com/gpumem-percentage", "50"}});
  EXPECT_EQ(s.gpu_memory_mib, 2000);
  EXPECT_EQ(s.gpu_memory_percent, 0);

  EXPECT_EQ(ErrorOf({{"nvidia.com/gpu", "1"}, {"nvidia.com/gpumem-percentage", "150"}}),
            "Pod.spec.containers[0].resources[\"nvidia.com/gpumem-percentage\"]: 150 percent "
            "is out of range 0..100");

  // The cluster turns the percentage into MiB of the GPUs the pod may use.
  Cluster cluster(
      {NodeSpec{"a", 8000, 8192, 1, "V100", 16384}, NodeSpec{"b", 8000, 8192, 1, "A100", 40960}});
  s.gpu_memory_mib = 0;
  s.gpu_memory_percent = 25;
  s.gpu_spec = "V100";
  EXPECT_EQ(cluster.MakeRequest(s).gpu_memory_mib, 4096);
  s.gpu_spec = "";  // the largest allowed GPU: never less than 25 % of any
  EXPECT_EQ(cluster.MakeRequest(s).gpu_memory_mib, 10240);
  // GPUs of unknown memory: 1 MiB, so that the pod fits none of them (as a gpumem pod).
  Cluster unknown({NodeSpec{"u", 8000, 8192, 1, "V100", 0}});
  const PodRequest r = unknown.MakeRequest(s);
  EXPECT_EQ(r.gpu_memory_mib, 1);
  EXPECT_EQ(unknown.Check(0, r), FitReason::kGpuMemory);
}

TEST(GpuRequestRules, HamiCoresWithMemory) {
  PodSpec s = SpecOf(
      {{"nvidia.com/gpu", "1"}, {"nvidia.com/gpucores", "30"}, {"nvidia.com/gpumem", "4096"}});
  EXPECT_EQ(s.gpu_milli, 300);
  EXPECT_EQ(s.gpu_memory_mib, 4096);
  s = SpecOf({{"nvidia.com/gpucores", "100"}, {"nvidia.com/gpumem-percentage", "100"}});
  EXPECT_EQ(s.gpu_milli, 1000);
  EXPECT_EQ(s.gpu_memory_percent, 100);
}

TEST(GpuRequestRules, TesseraMemorySuffixedAndPlain) {
  PodSpec s = SpecOf({{"tessera.io/gpu-milli", "400"}, {"tessera.io/gpu-memory", "9Gi"}});
  EXPECT_EQ(s.gpu_count, 1);
  EXPECT_EQ(s.gpu_milli, 400);
  EXPECT_EQ(s.gpu_memory_mib, 9216);
  s = SpecOf({{"tessera.io/gpu-milli", "400"}, {"tessera.io/gpu-memory", "7208Mi"}});
  EXPECT_EQ(s.gpu_memory_mib, 7208);
  s = SpecOf({{"tessera.io/gpu-milli", "400"}, {"tessera.io/gpu-memory", "7208"}});
  EXPECT_EQ(s.gpu_memory_mib, 7208);
  s = SpecOf({{"tessera.io/gpu-milli", "400"}, {"tessera.io/gpu-memory", 7208}});  // a number
  EXPECT_EQ(s.gpu_memory_mib, 7208);
  // tessera.io/gpu-memory without tessera.io/gpu-milli is a whole GPU with that memory.
  s = SpecOf({{"tessera.io/gpu", "1"}, {"tessera.io/gpu-memory", "16Gi"}});
  EXPECT_EQ(s.gpu_milli, 1000);
  EXPECT_EQ(s.gpu_memory_mib, 16384);
  EXPECT_EQ(ErrorOf({{"tessera.io/gpu", "1"}, {"tessera.io/gpu-memory", "7208.5"}}),
            "Pod.spec.containers[0].resources[\"tessera.io/gpu-memory\"]: bad quantity "
            "\"7208.5\" (not a whole number)");
  EXPECT_EQ(ErrorOf({{"tessera.io/gpu", "1"}, {"tessera.io/gpu-memory", "2Ei"}}),
            "Pod.spec.containers[0].resources[\"tessera.io/gpu-memory\"]: 2199023255552 MiB is "
            "out of range 0..1073741824");
}

TEST(GpuRequestRules, NodeMemoryLabelFollowsTheSameRule) {
  Json node = HamiNode("n1", 1, 16384);
  node["metadata"]["labels"] = {{"tessera.io/gpu-memory", "32Gi"}};
  Result<Node> n = DecodeNode(node, "Node");
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(NodeToSpec(*n).value().gpu_memory_mib, 32768);
  node["metadata"]["labels"] = {{"tessera.io/gpu-memory", "24576"}};
  n = DecodeNode(node, "Node");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(NodeToSpec(*n).value().gpu_memory_mib, 24576);
}

// ---------------------------------------------------------------------------- the filter

ExtenderArgs ArgsFor(const Json& pod, const std::vector<std::string>& names) {
  Json body = {{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", names}};
  Result<ExtenderArgs> args = DecodeExtenderArgs(body.dump());
  EXPECT_TRUE(args.ok()) << args.error().message;
  return std::move(*args);
}

// Filter then bind `pod` on n1; "" when both pass, else the filter's reason or the bind error.
std::string FilterAndBind(Extender& ext, const Json& pod) {
  ExtenderFilterResult f = ext.Filter(ArgsFor(pod, {"n1"}));
  if (f.node_names.empty()) {
    Json reasons = f.failed_nodes.empty() ? f.failed_and_unresolvable_nodes : f.failed_nodes;
    return "refused: " + reasons.dump();
  }
  const Json& m = pod["metadata"];
  return ext
      .Bind({m["name"].get<std::string>(), m["namespace"].get<std::string>(),
             m["uid"].get<std::string>(), "n1"})
      .error;
}

const Json kSixGiB = {{"nvidia.com/gpu", "1"}, {"nvidia.com/gpumem", "6000"}};

TEST(GpuMemoryFilter, FileModeSharesOneGpuByMemory) {
  const Json nodes = {{"items", {HamiNode("n1", 1, 16384)}}};
  auto ext = Extender::FromJson(nodes.dump(), R"({"items":[]})", {});
  ASSERT_TRUE(ext.ok()) << ext.error().message;
  EXPECT_EQ(FilterAndBind(**ext, PodWith("a", kSixGiB)), "");
  // A second 6000 MiB pod has room for its memory on the GPU the first holds.
  EXPECT_EQ(FilterAndBind(**ext, PodWith("b", kSixGiB)), "");
  // 4384 MiB are left: a third is refused, and the reason names GPU memory.
  const std::string third = FilterAndBind(**ext, PodWith("c", kSixGiB));
  EXPECT_NE(third.find("gpu-memory: not enough GPU memory left"), std::string::npos) << third;
  // What is left still takes a pod that fits in it.
  EXPECT_EQ(FilterAndBind(**ext, PodWith("d", {{"nvidia.com/gpumem", "4000"}})), "");
  const Json state = Json::parse((*ext)->StateJson());
  EXPECT_EQ(state["nodes"][0]["gpu_free_milli"][0], 997) << state.dump();
}

TEST(GpuMemoryFilter, FileModePercentageAndAGpuWithoutComputeLeft) {
  const Json nodes = {{"items", {HamiNode("n1", 1, 16384)}}};
  auto ext = Extender::FromJson(nodes.dump(), R"({"items":[]})", {});
  ASSERT_TRUE(ext.ok()) << ext.error().message;
  const Json half = {{"nvidia.com/gpu", "1"}, {"nvidia.com/gpumem-percentage", "40"}};
  EXPECT_EQ(FilterAndBind(**ext, PodWith("a", half)), "");
  EXPECT_EQ(FilterAndBind(**ext, PodWith("b", half)), "");
  const std::string third = FilterAndBind(**ext, PodWith("c", half));
  EXPECT_NE(third.find("gpu-memory"), std::string::npos) << third;

  // A GPU whose compute is all taken refuses a memory-only pod (HAMi's compute-exhausted
  // check), and the reason names GPU compute, not memory.
  auto full = Extender::FromJson(nodes.dump(), R"({"items":[]})", {});
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(FilterAndBind(**full, PodWith("cores", {{"nvidia.com/gpucores", "100"},
                                                    {"nvidia.com/gpumem", "1000"}})),
            "");
  const std::string refused = FilterAndBind(**full, PodWith("m", kSixGiB));
  EXPECT_NE(refused.find("gpu: not enough GPU left"), std::string::npos) << refused;
  EXPECT_EQ(refused.find("gpu-memory"), std::string::npos) << refused;
}

TEST(GpuMemoryFilter, ApiModeSharesOneGpuByMemory) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(HamiNode("n1", 1, 16384));
  for (const std::string name : {"a", "b", "c"}) fake.AddPod(PodWith(name, kSixGiB));
  Live live(fake);
  ASSERT_TRUE(live.Sync());
  EXPECT_EQ(live.FilterAndBind(fake.GetPod("ml", "a"), "n1"), "");
  EXPECT_EQ(live.FilterAndBind(fake.GetPod("ml", "b"), "n1"), "");
  const std::string third = live.FilterAndBind(fake.GetPod("ml", "c"), "n1");
  EXPECT_NE(third.find("gpu-memory: not enough GPU memory left"), std::string::npos) << third;
  // HAMi's device plugin is told each pod's memory and 0 cores on the same device.
  const Json b = fake.GetPod("ml", "b");
  EXPECT_EQ(b["metadata"]["annotations"]["hami.io/vgpu-devices-allocated"],
            "GPU-n1-0,NVIDIA,6000,0:;")
      << b.dump();
}

}  // namespace
}  // namespace tessera::k8s
