#include "k8s/api/objects.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "k8s/hami/register.h"
#include "k8s/testdata.h"
#include "k8s/translate/translate.h"

namespace tessera::k8s {
namespace {

Pod MustParsePod(const std::string& text) {
  Result<Pod> pod = ParsePodJson(text);
  EXPECT_TRUE(pod.ok()) << (pod.ok() ? "" : pod.error().message);
  return pod.ok() ? *pod : Pod{};
}

Node MustParseNode(const std::string& text) {
  Result<Node> node = ParseNodeJson(text);
  EXPECT_TRUE(node.ok()) << (node.ok() ? "" : node.error().message);
  return node.ok() ? *node : Node{};
}

PodSpec MustSpec(const Pod& pod) {
  Result<PodSpec> spec = PodToSpec(pod);
  EXPECT_TRUE(spec.ok()) << (spec.ok() ? "" : spec.error().message);
  return spec.ok() ? *spec : PodSpec{};
}

NodeSpec MustSpec(const Node& node) {
  Result<NodeSpec> spec = NodeToSpec(node);
  EXPECT_TRUE(spec.ok()) << (spec.ok() ? "" : spec.error().message);
  return spec.ok() ? *spec : NodeSpec{};
}

int64_t MilliOf(const ResourceList& r, const std::string& name) {
  auto it = r.find(name);
  return it == r.end() ? -1 : *ToMilli(it->second);
}

// A pod whose only container has the given resources JSON ({"requests": ..., "limits": ...}).
std::string PodWithResources(const std::string& resources) {
  return R"({"metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"name":"c",)"
         R"("resources":)" +
         resources + "}]}}";
}

std::string PodError(const std::string& text) {
  Result<Pod> pod = ParsePodJson(text);
  if (!pod.ok()) return pod.error().message;
  Result<PodSpec> spec = PodToSpec(*pod);
  EXPECT_FALSE(spec.ok()) << "no error for " << text;
  return spec.ok() ? "" : spec.error().message;
}

PodSpec SpecOf(const std::string& text) { return MustSpec(MustParsePod(text)); }

// ---------------------------------------------------------------------------- real fixtures

TEST(K8sObjects, TesseraPodFromKubectl) {
  const Pod pod = MustParsePod(ReadTestdata("pod_tessera.json"));
  EXPECT_EQ(pod.uid, "5f1c2b9e-0d7a-4b8e-9a51-3c2e7f0a1b11");
  EXPECT_EQ(pod.name, "infer-0");
  EXPECT_EQ(pod.namespace_name, "ml");
  EXPECT_EQ(pod.annotations.at("note"), "a <b> & c");  // kubectl wrote \u003cb\u003e \u0026
  EXPECT_EQ(pod.annotations.at("tessera.io/gpu-model"), "T4|A10");
  EXPECT_EQ(pod.labels.at("tessera.io/class"), "LS");
  EXPECT_EQ(pod.priority, 1000);
  EXPECT_EQ(pod.scheduler_name, "default-scheduler");
  EXPECT_EQ(pod.node_name, "");
  EXPECT_FALSE(pod.deleting);
  EXPECT_EQ(pod.qos_class, "Burstable");
  ASSERT_EQ(pod.containers.size(), 3u);
  EXPECT_EQ(pod.containers[0].name, "server");
  EXPECT_EQ(pod.containers[1].name, "sidecar");
  EXPECT_EQ(pod.containers[2].name, "fetch");
  EXPECT_EQ(pod.containers[2].kind, Container::Kind::kInit);
  EXPECT_EQ(pod.containers[2].json_path, "Pod.spec.initContainers[0]");
  // The limits-only container counts its limits as requests.
  EXPECT_EQ(MilliOf(pod.containers[1].requests, "cpu"), 250);
  // Effective: max(app sum 750m, init 2) = 2 CPU; max(640Mi, 1Gi) = 1Gi.
  EXPECT_EQ(MilliOf(pod.requests, "cpu"), 2000);
  EXPECT_EQ(*ToMiB(pod.requests.at("memory")), 1024);
  EXPECT_EQ(*ToInt(pod.requests.at("tessera.io/gpu")), 1);

  const PodSpec spec = MustSpec(pod);
  EXPECT_EQ(spec.name, "ml/infer-0");
  EXPECT_EQ(spec.cpu_milli, 2000);
  EXPECT_EQ(spec.memory_mib, 1024);
  EXPECT_EQ(spec.gpu_count, 1);
  EXPECT_EQ(spec.gpu_milli, 500);
  EXPECT_EQ(spec.gpu_memory_mib, 8192);
  EXPECT_EQ(spec.gpu_spec, "T4|A10");
  EXPECT_EQ(spec.qos, "LS");  // label beats the Kubernetes class
}

TEST(K8sObjects, HamiPodWithSidecarAndOverhead) {
  // kubectl kept the YAML integers: "nvidia.com/gpu": 1 is a JSON number here.
  const Pod pod = MustParsePod(ReadTestdata("pod_hami.json"));
  EXPECT_EQ(pod.priority, -5);
  EXPECT_EQ(pod.resource_version, "48213");
  EXPECT_EQ(pod.labels.at("team"), "vision");
  ASSERT_EQ(pod.containers.size(), 3u);
  EXPECT_EQ(pod.containers[1].kind, Container::Kind::kSidecar);
  EXPECT_EQ(pod.containers[2].kind, Container::Kind::kInit);
  EXPECT_EQ(pod.qos_class, "Guaranteed");
  // cpu: max(1.5 + 0.2, 1 + 0.2) + 0.1 overhead; memory: max(3Gi + 256Mi, 1Gi + 256Mi) + 64Mi.
  EXPECT_EQ(MilliOf(pod.requests, "cpu"), 1800);
  EXPECT_EQ(*ToMiB(pod.requests.at("memory")), 3392);

  const PodSpec spec = MustSpec(pod);
  EXPECT_EQ(spec.name, "default/hami-share");
  EXPECT_EQ(spec.cpu_milli, 1800);
  EXPECT_EQ(spec.memory_mib, 3392);
  EXPECT_EQ(spec.gpu_count, 1);
  EXPECT_EQ(spec.gpu_milli, 300);  // gpucores 30 %
  EXPECT_EQ(spec.gpu_memory_mib, 3000);
  EXPECT_EQ(spec.gpu_spec, "");
  EXPECT_EQ(spec.qos, "BE");  // from the annotation
}

TEST(K8sObjects, RunningPodBeingDeleted) {
  const Pod pod = MustParsePod(ReadTestdata("pod_running.json"));
  EXPECT_EQ(pod.node_name, "gpu-node-1");
  EXPECT_EQ(pod.priority, 2000000000);
  EXPECT_EQ(pod.scheduler_name, "tessera");
  EXPECT_EQ(pod.phase, "Running");
  EXPECT_TRUE(pod.deleting);
  EXPECT_EQ(pod.qos_class, "Guaranteed");
  const PodSpec spec = MustSpec(pod);
  EXPECT_EQ(spec.cpu_milli, 4000);
  EXPECT_EQ(spec.memory_mib, 15258);  // 16G = 16e9 bytes
  EXPECT_EQ(spec.gpu_count, 2);
  EXPECT_EQ(spec.gpu_milli, 1000);
  EXPECT_EQ(spec.gpu_memory_mib, 0);
  EXPECT_EQ(spec.gpu_spec, "V100M32|V100M16");  // "V100M32| V100M16 " normalised
  EXPECT_EQ(spec.qos, "Guaranteed");
}

TEST(K8sObjects, OnlyTheSchedulersDisruptionTargetMarksAPreemptionVictim) {
  const auto victim = [](const std::string& conditions) {
    return MustParsePod(R"({"apiVersion": "v1", "kind": "Pod",
      "metadata": {"name": "p", "namespace": "ml", "uid": "u1"},
      "spec": {"containers": [{"name": "c"}]},
      "status": {"phase": "Running", "conditions": )" +
                        conditions + "}}")
        .disruption_target;
  };
  EXPECT_TRUE(victim(R"([{"type": "DisruptionTarget", "status": "True",
                          "reason": "PreemptionByScheduler"}])"));
  EXPECT_FALSE(victim(R"([{"type": "DisruptionTarget", "status": "True",
                           "reason": "EvictionByEvictionAPI"}])"));
  EXPECT_FALSE(victim(R"([{"type": "DisruptionTarget", "status": "False",
                           "reason": "PreemptionByScheduler"}])"));
  EXPECT_FALSE(victim(R"([{"type": "DisruptionTarget", "status": "True"}])"));
  EXPECT_FALSE(victim(R"("not a list")"));
}

TEST(K8sObjects, DeploymentTemplatesFromKubectl) {
  const nlohmann::json web = nlohmann::json::parse(ReadTestdata("deployment_web.json"));
  Result<Pod> pod = DecodePod(web["spec"]["template"], "Deployment.spec.template");
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  EXPECT_EQ(pod->labels.at("app"), "web");
  EXPECT_EQ(pod->qos_class, "BestEffort");
  EXPECT_TRUE(pod->requests.empty());
  const PodSpec web_spec = MustSpec(*pod);
  EXPECT_EQ(web_spec.cpu_milli, 0);
  EXPECT_EQ(web_spec.gpu_count, 0);
  EXPECT_EQ(web_spec.qos, "BestEffort");

  const nlohmann::json train = nlohmann::json::parse(ReadTestdata("deployment_train.json"));
  pod = DecodePod(train["spec"]["template"], "Deployment.spec.template");
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  EXPECT_EQ(pod->qos_class, "Burstable");  // cpu request 6 < limit 8
  const PodSpec train_spec = MustSpec(*pod);
  EXPECT_EQ(train_spec.cpu_milli, 6000);
  EXPECT_EQ(train_spec.memory_mib, 65536);  // limit only: defaulted as request
  EXPECT_EQ(train_spec.gpu_count, 4);
  EXPECT_EQ(train_spec.gpu_milli, 1000);
}

TEST(K8sObjects, HamiNodeFromKubectl) {
  const Node node = MustParseNode(ReadTestdata("node_hami.json"));
  EXPECT_EQ(node.name, "gpu-node-1");
  EXPECT_EQ(node.uid, "9c2f3e4d-5a6b-4c7d-8e9f-a0b1c2d3e4f5");
  EXPECT_EQ(node.resource_version, "771234");
  EXPECT_FALSE(node.unschedulable);
  EXPECT_EQ(node.allocatable.at("nvidia.com/gpu"), "30");
  EXPECT_EQ(node.capacity.at("cpu"), "64");
  EXPECT_EQ(node.labels.at("topology.kubernetes.io/zone"), "zone-a");

  Result<std::vector<HamiDevice>> devices =
      ParseHamiNodeRegister(node.annotations.at("hami.io/node-nvidia-register"));
  ASSERT_TRUE(devices.ok()) << devices.error().message;
  ASSERT_EQ(devices->size(), 3u);
  const HamiDevice& d0 = (*devices)[0];
  EXPECT_EQ(d0.uuid, "GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec");
  EXPECT_EQ(d0.split_count, 10);
  EXPECT_EQ(d0.memory_mib, 32768);
  EXPECT_EQ(d0.cores, 100);
  EXPECT_EQ(d0.type, "NVIDIA-Tesla V100-PCIE-32GB");
  EXPECT_EQ(d0.numa, 0);
  EXPECT_TRUE(d0.healthy);
  EXPECT_EQ(d0.index, 0);
  EXPECT_EQ(d0.mode, "hami-core");
  EXPECT_FALSE((*devices)[2].healthy);
  EXPECT_EQ((*devices)[2].numa, 1);
  EXPECT_EQ((*devices)[2].index, 2);

  const NodeSpec spec = MustSpec(node);
  EXPECT_EQ(spec.name, "gpu-node-1");
  EXPECT_EQ(spec.cpu_milli, 63500);
  EXPECT_EQ(spec.memory_mib, 255740);  // 261878068Ki
  EXPECT_EQ(spec.gpu_count, 2);        // healthy HAMi devices, not the 30 shares
  // GFD's label before the HAMi type, by the engine's name (Tesla-V100-PCIE-32GB).
  EXPECT_EQ(spec.gpu_model, "V100M32");
  EXPECT_EQ(spec.gpu_memory_mib, 32768);
}

TEST(K8sObjects, HamiJsonRegisterNode) {
  const Node node = MustParseNode(ReadTestdata("node_hami_json.json"));
  Result<std::vector<HamiDevice>> devices =
      ParseHamiNodeRegister(node.annotations.at("hami.io/node-nvidia-register"));
  ASSERT_TRUE(devices.ok()) << devices.error().message;
  ASSERT_EQ(devices->size(), 2u);
  EXPECT_EQ((*devices)[0].uuid, "GPU-3f0c9a1e-aaaa-bbbb-cccc-000000000001");
  EXPECT_EQ((*devices)[0].index, 0);
  EXPECT_EQ((*devices)[0].numa, 0);
  EXPECT_EQ((*devices)[1].index, 1);
  EXPECT_EQ((*devices)[1].numa, 1);
  EXPECT_EQ((*devices)[1].memory_mib, 23028);
  EXPECT_EQ((*devices)[1].mode, "hami-core");
  const NodeSpec spec = MustSpec(node);
  EXPECT_EQ(spec.cpu_milli, 16000);
  EXPECT_EQ(spec.memory_mib, 65536);
  EXPECT_EQ(spec.gpu_count, 2);
  EXPECT_EQ(spec.gpu_model, "A10");  // HAMi's "NVIDIA-NVIDIA A10", by the engine's name
  EXPECT_EQ(spec.gpu_memory_mib, 23028);
}

TEST(K8sObjects, TesseraNodeFromKubectl) {
  const Node node = MustParseNode(ReadTestdata("node_tessera.json"));
  EXPECT_TRUE(node.unschedulable);
  const NodeSpec spec = MustSpec(node);
  EXPECT_EQ(spec.name, "a10-7");
  EXPECT_EQ(spec.cpu_milli, 31500);
  EXPECT_EQ(spec.memory_mib, 128000);
  EXPECT_EQ(spec.gpu_count, 8);
  EXPECT_EQ(spec.gpu_model, "A10");
  EXPECT_EQ(spec.gpu_memory_mib, 24576);
}

// ---------------------------------------------------------------------------- pod rules

TEST(K8sObjects, GpuRequestFamilies) {
  PodSpec s = SpecOf(PodWithResources(R"({"limits":{"nvidia.com/gpu":"1"}})"));
  EXPECT_EQ(s.gpu_count, 1);
  EXPECT_EQ(s.gpu_milli, 1000);  // nvidia.com/gpu alone is a whole GPU
  EXPECT_EQ(s.gpu_memory_mib, 0);

  s = SpecOf(PodWithResources(R"({"limits":{"nvidia.com/gpumem":"4096"}})"));
  EXPECT_EQ(s.gpu_count, 1);  // HAMi's default count
  EXPECT_EQ(s.gpu_milli, 1);  // a share by memory (HAMi's defaultCores 0)
  EXPECT_EQ(s.gpu_memory_mib, 4096);

  s = SpecOf(PodWithResources(R"({"limits":{"nvidia.com/gpu":1,"nvidia.com/gpucores":0}})"));
  EXPECT_EQ(s.gpu_milli, 1000);  // 0 = no core limit

  s = SpecOf(PodWithResources(R"({"requests":{"tessera.io/gpu-milli":"250"}})"));
  EXPECT_EQ(s.gpu_count, 1);
  EXPECT_EQ(s.gpu_milli, 250);

  s = SpecOf(
      PodWithResources(R"({"limits":{"tessera.io/gpu":"8","tessera.io/gpu-memory":"1Ki"}})"));
  EXPECT_EQ(s.gpu_count, 8);
  EXPECT_EQ(s.gpu_milli, 1000);
  EXPECT_EQ(s.gpu_memory_mib, 1);  // a suffix means bytes, rounded up to MiB

  // tessera.io/* wins over nvidia.com/*.
  s = SpecOf(PodWithResources(
      R"({"limits":{"tessera.io/gpu":"1","tessera.io/gpu-milli":"100","nvidia.com/gpu":"4"}})"));
  EXPECT_EQ(s.gpu_count, 1);
  EXPECT_EQ(s.gpu_milli, 100);

  // A zero count without per-GPU resources is CPU-only.
  s = SpecOf(PodWithResources(R"({"limits":{"nvidia.com/gpu":"0"}})"));
  EXPECT_EQ(s.gpu_count, 0);
  EXPECT_EQ(s.gpu_milli, 0);

  // Requests win over limits.
  s = SpecOf(PodWithResources(R"({"requests":{"cpu":"1"},"limits":{"cpu":"2"}})"));
  EXPECT_EQ(s.cpu_milli, 1000);
  EXPECT_EQ(s.qos, "Burstable");
}

TEST(K8sObjects, GpusAcrossContainers) {
  // Two whole-GPU app containers add up; an init container needing 3 alone does not raise it.
  PodSpec s = SpecOf(R"({"metadata":{"name":"p"},"spec":{
    "initContainers":[{"name":"i","resources":{"limits":{"nvidia.com/gpu":"3"}}}],
    "containers":[{"name":"a","resources":{"limits":{"nvidia.com/gpu":"2"}}},
                  {"name":"b","resources":{"limits":{"nvidia.com/gpu":"2","nvidia.com/gpumem":"100"}}},
                  {"name":"c","resources":{"requests":{"cpu":"1"}}}]}})");
  EXPECT_EQ(s.name, "p");
  EXPECT_EQ(s.gpu_count, 4);
  EXPECT_EQ(s.gpu_milli, 1000);
  EXPECT_EQ(s.gpu_memory_mib, 100);

  // A sidecar's GPU stays beside a later init container: max(1 + 1, 4 + 1) = 5.
  s = SpecOf(R"({"spec":{
    "initContainers":[{"name":"s","restartPolicy":"Always","resources":{"limits":{"tessera.io/gpu":"1"}}},
                      {"name":"i","resources":{"limits":{"tessera.io/gpu":"4"}}}],
    "containers":[{"name":"a","resources":{"limits":{"tessera.io/gpu":"1"}}}]}})");
  EXPECT_EQ(s.gpu_count, 5);

  // One sharing container alone is fine, even as an init container.
  s = SpecOf(
      R"({"spec":{"initContainers":[{"name":"i","resources":{"limits":{"tessera.io/gpu-milli":"300"}}}],
    "containers":[{"name":"a"}]}})");
  EXPECT_EQ(s.gpu_count, 1);
  EXPECT_EQ(s.gpu_milli, 300);
}

TEST(K8sObjects, QosClassRules) {
  auto qos = [](const std::string& resources) {
    return MustParsePod(PodWithResources(resources)).qos_class;
  };
  EXPECT_EQ(qos("{}"), "BestEffort");
  EXPECT_EQ(qos(R"({"limits":{"nvidia.com/gpu":"1"}})"), "BestEffort");  // only cpu/memory count
  EXPECT_EQ(qos(R"({"limits":{"cpu":"1","memory":"1Gi"}})"), "Guaranteed");
  EXPECT_EQ(qos(R"({"requests":{"cpu":"1","memory":"1Gi"},"limits":{"cpu":"1","memory":"1Gi"}})"),
            "Guaranteed");
  EXPECT_EQ(qos(R"({"requests":{"cpu":"1000m"},"limits":{"cpu":"1","memory":"1Gi"}})"),
            "Guaranteed");  // equal quantities in different spellings
  EXPECT_EQ(qos(R"({"limits":{"cpu":"1"}})"), "Burstable");
  EXPECT_EQ(qos(R"({"requests":{"memory":"1Gi"}})"), "Burstable");
  // status.qosClass, when present, is taken as is.
  EXPECT_EQ(MustParsePod(R"({"status":{"qosClass":"Burstable"}})").qos_class, "Burstable");
}

TEST(K8sObjects, CaseInsensitiveFieldsNullsAndUnknownKeys) {
  const Pod pod = MustParsePod(R"({"Metadata":{"NAME":"x","namespace":null,"labels":null,
    "annotations":{"k":null},"unknown":{"deep":[1,2,3]}},
    "SPEC":{"nodename":"n1","priority":null,"containers":null,"initContainers":[],
            "futureField":true},
    "status":null,"extra":[{}]})");
  EXPECT_EQ(pod.name, "x");
  EXPECT_EQ(pod.namespace_name, "");
  EXPECT_EQ(pod.node_name, "n1");
  EXPECT_EQ(pod.priority, 0);
  EXPECT_EQ(pod.annotations.at("k"), "");
  EXPECT_TRUE(pod.containers.empty());
  // The exact spelling wins over a case-folded one.
  EXPECT_EQ(MustParsePod(R"({"metadata":{"NAME":"fold","name":"exact"}})").name, "exact");
}

// ---------------------------------------------------------------------------- pod errors

TEST(K8sObjects, PodDecodeErrorsNameTheJsonPath) {
  EXPECT_EQ(PodError(R"({"spec":{"containers":[{"name":"a"},
      {"name":"b","resources":{"requests":{"memory":"12Zi"}}}]}})"),
            "Pod.spec.containers[1].resources.requests.memory: bad quantity \"12Zi\" "
            "(unknown suffix \"Zi\")");
  EXPECT_EQ(PodError(R"({"spec":{"containers":{}}})"),
            "Pod.spec.containers: expected array, got object");
  EXPECT_EQ(PodError(R"({"spec":{"containers":[7]}})"),
            "Pod.spec.containers[0]: expected container object, got number");
  EXPECT_EQ(PodError(R"({"metadata":{"annotations":{"tessera.io/gpu-model":5}}})"),
            "Pod.metadata.annotations[\"tessera.io/gpu-model\"]: expected string, got number");
  EXPECT_EQ(PodError(R"({"metadata":"x"})"), "Pod.metadata: expected object, got string");
  EXPECT_EQ(PodError(R"({"metadata":{"name":["x"]}})"),
            "Pod.metadata.name: expected string, got array");
  EXPECT_EQ(PodError(R"({"spec":{"priority":1.5}})"),
            "Pod.spec.priority: expected integer, got 1.5");
  EXPECT_EQ(PodError(R"({"spec":{"priority":"7"}})"),
            "Pod.spec.priority: expected integer, got string");
  EXPECT_EQ(PodError(R"({"spec":{"priority":3000000000}})"),
            "Pod.spec.priority: 3000000000 out of range [-2147483648, 2147483647]");
  EXPECT_EQ(PodError(R"({"spec":{"initContainers":[{"restartPolicy":true}]}})"),
            "Pod.spec.initContainers[0].restartPolicy: expected string, got boolean");
  EXPECT_EQ(PodError(R"({"spec":{"overhead":{"cpu":{}}}})"),
            "Pod.spec.overhead.cpu: expected quantity string, got object");
  EXPECT_EQ(PodError(PodWithResources(R"({"limits":{"cpu":"-1"}})")),
            "Pod.spec.containers[0].resources.limits.cpu: negative quantity \"-1\"");
  EXPECT_EQ(PodError(PodWithResources(R"({"limits":{"nvidia.com/gpu":true}})")),
            "Pod.spec.containers[0].resources.limits[\"nvidia.com/gpu\"]: expected quantity "
            "string, got boolean");
  EXPECT_EQ(PodError(PodWithResources(R"({"requests":[]})")),
            "Pod.spec.containers[0].resources.requests: expected object of quantities, got array");
  EXPECT_EQ(PodError("[]"), "Pod: expected Pod object, got array");
  EXPECT_EQ(PodError("{\"spec\": "), PodError("{\"spec\": "));  // stable
  EXPECT_NE(PodError("{\"spec\": ").find("Pod: malformed JSON at byte 9"), std::string::npos);
  EXPECT_EQ(PodError(R"({"metadata":{"deletionTimestamp":5}})"),
            "Pod.metadata.deletionTimestamp: expected string, got number");
}

TEST(K8sObjects, PodToSpecRejectsAbsurdRequests) {
  EXPECT_EQ(PodError(PodWithResources(R"({"limits":{"nvidia.com/gpu":"17"}})")),
            "Pod.spec.containers[0].resources[\"nvidia.com/gpu\"]: 17 GPUs is out of range 0..16");
  EXPECT_EQ(PodError(PodWithResources(R"({"limits":{"tessera.io/gpu-milli":"1500"}})")),
            "Pod.spec.containers[0].resources[\"tessera.io/gpu-milli\"]: 1500 milli-GPU is out "
            "of range 1..1000");
  EXPECT_EQ(PodError(PodWithResources(R"({"limits":{"tessera.io/gpu-milli":"0"}})")),
            "Pod.spec.containers[0].resources[\"tessera.io/gpu-milli\"]: 0 milli-GPU is out of "
            "range 1..1000");
  EXPECT_EQ(PodError(PodWithResources(R"({"limits":{"tessera.io/gpu":"0.5"}})")),
            "Pod.spec.containers[0].resources[\"tessera.io/gpu\"]: not a whole number");
  EXPECT_EQ(PodError(PodWithResources(R"({"limits":{"nvidia.com/gpucores":"150"}})")),
            "Pod.spec.containers[0].resources[\"nvidia.com/gpucores\"]: 150 percent is out of "
            "range 0..100");
  EXPECT_EQ(PodError(PodWithResources(R"({"limits":{"tessera.io/gpu-memory":"2147483648"}})")),
            "Pod.spec.containers[0].resources[\"tessera.io/gpu-memory\"]: 2147483648 MiB is out "
            "of range 0..1073741824");
  EXPECT_EQ(
      PodError(PodWithResources(R"({"limits":{"nvidia.com/gpu":"2","nvidia.com/gpucores":"50"}})")),
      "Pod.spec.containers[0].resources: a multi-GPU request (2 GPUs) must take whole GPUs, "
      "got 500 milli-GPU each");
  EXPECT_EQ(
      PodError(PodWithResources(R"({"limits":{"tessera.io/gpu":"0","tessera.io/gpu-milli":"5"}})")),
      "Pod.spec.containers[0].resources[\"tessera.io/gpu-milli\"]: is set, but the GPU "
      "count is 0");
  EXPECT_EQ(PodError(PodWithResources(
                R"({"limits":{"nvidia.com/gpu":"1","nvidia.com/gpumem-percentage":"101"}})")),
            "Pod.spec.containers[0].resources[\"nvidia.com/gpumem-percentage\"]: 101 percent is "
            "out of range 0..100");
  EXPECT_EQ(PodError(PodWithResources(R"({"limits":{"memory":"2Ei"}})")),
            "Pod.spec: total memory request is over the limit of 1099511627776 MiB");
  EXPECT_EQ(PodError(PodWithResources(R"({"limits":{"cpu":"2e9"}})")),
            "Pod.spec: total cpu request is over the limit of 1099511627776 milli-CPU");
  // Two containers sharing GPUs cannot be one engine request.
  EXPECT_NE(PodError(R"({"spec":{"containers":[
      {"name":"a","resources":{"limits":{"tessera.io/gpu-milli":"300"}}},
      {"name":"b","resources":{"limits":{"tessera.io/gpu":"1"}}}]}})")
                .find("Pod.spec.containers[0].resources: shares a GPU (300 milli-GPU)"),
            std::string::npos);
  EXPECT_NE(PodError(R"({"spec":{"containers":[
      {"name":"a","resources":{"limits":{"nvidia.com/gpu":"9"}}},
      {"name":"b","resources":{"limits":{"nvidia.com/gpu":"9"}}}]}})")
                .find("18 GPUs in total"),
            std::string::npos);
  // Sums beyond the exact range are reported, not wrapped.
  std::string many = R"({"spec":{"containers":[)";
  for (int i = 0; i < 12; ++i) {
    many += std::string(i ? "," : "") + R"({"resources":{"limits":{"cpu":"1e26"}}})";
  }
  many += "]}}";
  EXPECT_NE(PodError(many).find("Pod.spec: total of \"cpu\": out of range"), std::string::npos);
}

// ---------------------------------------------------------------------------- nodes

TEST(K8sObjects, NodeFallbacks) {
  // nvidia.com/gpu without HAMi, model unknown -> empty, memory from the GFD label.
  NodeSpec s = MustSpec(MustParseNode(R"({"metadata":{"name":"n","labels":
      {"nvidia.com/gpu.memory":"15360"}},"status":{"allocatable":{"nvidia.com/gpu":"4","cpu":8}}})"));
  EXPECT_EQ(s.gpu_count, 4);
  EXPECT_EQ(s.cpu_milli, 8000);
  EXPECT_EQ(s.gpu_model, "");
  EXPECT_EQ(s.gpu_memory_mib, 15360);
  // Memory from the known-model table.
  s = MustSpec(MustParseNode(R"({"metadata":{"labels":{"tessera.io/gpu-model":"V100M32"}},
      "status":{"allocatable":{"tessera.io/gpu":"8"}}})"));
  EXPECT_EQ(s.gpu_memory_mib, 32768);
  // No GPUs: model and memory dropped.
  s = MustSpec(MustParseNode(R"({"metadata":{"labels":{"tessera.io/gpu-model":"T4"}},
      "status":{"allocatable":{"cpu":"4","memory":"8Gi"}}})"));
  EXPECT_EQ(s.gpu_count, 0);
  EXPECT_EQ(s.gpu_model, "");
  EXPECT_EQ(s.gpu_memory_mib, 0);
  EXPECT_EQ(s.memory_mib, 8192);
  // tessera.io/gpu beats the HAMi devices; HAMi type used when no label.
  s = MustSpec(MustParseNode(R"({"metadata":{"annotations":{"hami.io/node-nvidia-register":
      "GPU-a,10,16384,100,NVIDIA-T4,0,true:"}},"status":{"allocatable":{"tessera.io/gpu":"3"}}})"));
  EXPECT_EQ(s.gpu_count, 3);
  EXPECT_EQ(s.gpu_model, "T4");  // HAMi's "NVIDIA-T4", by the engine's name
  EXPECT_EQ(s.gpu_memory_mib, 16384);
}

TEST(K8sObjects, NodeErrorsNameTheJsonPath) {
  auto error = [](const std::string& text) -> std::string {
    Result<Node> node = ParseNodeJson(text);
    if (!node.ok()) return node.error().message;
    Result<NodeSpec> spec = NodeToSpec(*node);
    EXPECT_FALSE(spec.ok()) << text;
    return spec.ok() ? "" : spec.error().message;
  };
  EXPECT_EQ(error(R"({"status":{"allocatable":{"cpu":"lots"}}})"),
            "Node.status.allocatable.cpu: bad quantity \"lots\" (no digits)");
  EXPECT_EQ(error(R"({"status":{"capacity":{"memory":[]}}})"),
            "Node.status.capacity.memory: expected quantity string, got array");
  EXPECT_EQ(error(R"({"spec":{"unschedulable":"yes"}})"),
            "Node.spec.unschedulable: expected boolean, got string");
  EXPECT_EQ(error(R"({"status":{"allocatable":{"nvidia.com/gpu":"17"}}})"),
            "Node.status.allocatable[\"nvidia.com/gpu\"]: 17 is out of range 0..16");
  EXPECT_EQ(error(R"({"status":{"allocatable":{"cpu":"2e9"}}})"),
            "Node.status.allocatable.cpu: 2000000000000 is out of range 0..1099511627776");
  EXPECT_EQ(error(R"({"metadata":{"labels":{"tessera.io/gpu-memory":"big"}},
      "status":{"allocatable":{"tessera.io/gpu":"1"}}})"),
            "Node.metadata.labels[\"tessera.io/gpu-memory\"]: bad quantity \"big\" (no digits)");
  EXPECT_EQ(error(R"({"metadata":{"annotations":{"hami.io/node-nvidia-register":"GPU-a,1,2"}}})"),
            "Node.metadata.annotations[\"hami.io/node-nvidia-register\"]: missing device "
            "separator ':'");
  EXPECT_EQ(
      error(R"({"metadata":{"annotations":{"hami.io/node-nvidia-register":
          "GPU-a,10,16384,100,T4,0,true:GPU-b,10,24576,100,A10,0,true:"}}})"),
      "Node.metadata.annotations[\"hami.io/node-nvidia-register\"]: mixed GPU types \"T4\" and "
      "\"A10\" on one node are not supported");
  std::string seventeen;
  for (int i = 0; i < 17; ++i) seventeen += "GPU-" + std::to_string(i) + ",1,1,100,T4,0,true:";
  EXPECT_NE(
      error(R"({"metadata":{"annotations":{"hami.io/node-nvidia-register":")" + seventeen + "\"}}}")
          .find("17 healthy GPUs, more than 16"),
      std::string::npos);
  EXPECT_EQ(error("7"), "Node: expected Node object, got number");
}

TEST(K8sObjects, HamiRegisterFormats) {
  // The documented 7-field example (HAMi docs/develop/protocol.md), trailing ':' included.
  Result<std::vector<HamiDevice>> d = ParseHamiNodeRegister(
      "GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec,10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true:"
      "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448,10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true:");
  ASSERT_TRUE(d.ok()) << d.error().message;
  ASSERT_EQ(d->size(), 2u);
  EXPECT_EQ((*d)[1].uuid, "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448");
  EXPECT_EQ((*d)[1].index, 1);  // position when not given
  EXPECT_EQ((*d)[1].mode, "hami-core");
  // 9 fields and Go booleans.
  d = ParseHamiNodeRegister("GPU-x,4,40960,100,A100,1,T,3,mig:");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ((*d)[0], (HamiDevice{"GPU-x", 4, 40960, 100, "A100", 1, true, 3, "mig"}));
  // JSON, with case-folded keys and unknown ones.
  d = ParseHamiNodeRegister(
      R"( [{"ID":"GPU-j","count":2,"devmem":100,"Type":"T4","health":true,"migProfiles":[]}])");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ((*d)[0], (HamiDevice{"GPU-j", 2, 100, 0, "T4", 0, true, 0, "hami-core"}));
  EXPECT_TRUE(ParseHamiNodeRegister("[]")->empty());

  auto error = [](const std::string& v) {
    Result<std::vector<HamiDevice>> r = ParseHamiNodeRegister(v);
    EXPECT_FALSE(r.ok()) << v;
    return r.ok() ? "" : r.error().message;
  };
  EXPECT_EQ(error(""), "empty device list");
  EXPECT_EQ(error("GPU-a,1,2,3,T4,0,true,1:"),
            "device 0 \"GPU-a,1,2,3,T4,0,true,1\": has 8 fields, expected 7 or 9");
  EXPECT_EQ(error("GPU-a,x,2,3,T4,0,true:"),
            "device 0 \"GPU-a,x,2,3,T4,0,true\": invalid split count \"x\"");
  EXPECT_EQ(error("GPU-a,1,-2,3,T4,0,true:"),
            "device 0 \"GPU-a,1,-2,3,T4,0,true\": invalid memory \"-2\"");
  EXPECT_EQ(error("GPU-a,1,2,3,T4,0,yes:"),
            "device 0 \"GPU-a,1,2,3,T4,0,yes\": invalid health \"yes\"");
  EXPECT_EQ(error(",1,2,3,T4,0,true:"), "device 0 \",1,2,3,T4,0,true\": empty device id");
  EXPECT_EQ(error("GPU-a,1,2,3,T4,0,true,-1,mig:"),
            "device 0 \"GPU-a,1,2,3,T4,0,true,-1,mig\": invalid index \"-1\"");
  EXPECT_EQ(error("GPU-a,1,99999999999,3,T4,0,true:"),
            "device 0 \"GPU-a,1,99999999999,3,T4,0,true\": invalid memory \"99999999999\"");
  EXPECT_EQ(error(R"([{"id":"a","devmem":"1"}])"),
            "device[0].devmem: expected integer, got string");
  EXPECT_EQ(error(R"([{"id":""}])"), "device[0]: empty device id");
  EXPECT_EQ(error(R"([7])"), "device[0]: expected object, got number");
  EXPECT_NE(error(R"({"id":"a"})").find("has 1 fields, expected 7 or 9"), std::string::npos);
  EXPECT_NE(error("[{").find("malformed JSON at byte 2"), std::string::npos);
}

}  // namespace
}  // namespace tessera::k8s
