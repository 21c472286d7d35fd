// deploy/: every manifest parses, the expected objects are there, and the wiring holds: two
// leader-elected kube-scheduler replicas, each with the extender as a sidecar whose verbs
// are on loopback, reached by the KubeSchedulerConfiguration with the verbs the HTTP server
// serves; the only Service is the metrics one, which reaches the /metrics-only listener, as
// the ServiceMonitor and the plain scrape job of deploy/monitoring/ do; the resources Tessera
// reads are managed; the RBAC covers what the extender and the second scheduler do, no more.
// (tests/e2e/deploy_kubectl_test.sh also runs kubectl on them, offline, and
// tests/e2e/deploy_prometheus_test.sh scrapes them with Prometheus.)

#include <gtest/gtest.h>
#include <httplib.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "k8s/api/objects.h"
#include "k8s/extender/extender.h"
#include "k8s/extender/extender_protocol.h"
#include "k8s/serve/http_server.h"
#include "k8s/serve/serve_config.h"
#include "k8s/translate/translate.h"
#include "policy/policy.h"
#include "replay/replay_policy.h"
#include "util/file.h"

namespace tessera {
namespace {

const std::string kDeploy = std::string(TESSERA_SOURCE_DIR) + "/deploy";

struct Manifests {
  std::map<std::string, YAML::Node> by_key;  // "Kind/namespace/name"
  std::vector<std::string> files;            // deploy/*.yaml but kustomization.yaml
};

std::string Key(const std::string& kind, const std::string& ns, const std::string& name) {
  return kind + "/" + ns + "/" + name;
}

Manifests Load() {
  Manifests m;
  for (const auto& entry : std::filesystem::directory_iterator(kDeploy)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".yaml" || name == "kustomization.yaml") continue;
    m.files.push_back(name);
    std::vector<YAML::Node> docs;
    try {
      docs = YAML::LoadAllFromFile(entry.path().string());
    } catch (const YAML::Exception& e) {
      ADD_FAILURE() << name << ": " << e.what();
      continue;
    }
    for (const YAML::Node& doc : docs) {
      if (!doc || doc.IsNull()) continue;
      EXPECT_TRUE(doc["apiVersion"].IsScalar()) << name;
      EXPECT_TRUE(doc["kind"].IsScalar()) << name;
      EXPECT_TRUE(doc["metadata"]["name"].IsScalar()) << name;
      const std::string kind = doc["kind"].as<std::string>("");
      const std::string ns = doc["metadata"]["namespace"].as<std::string>("");
      const std::string key = Key(kind, ns, doc["metadata"]["name"].as<std::string>(""));
      EXPECT_TRUE(m.by_key.emplace(key, doc).second) << "duplicate " << key;
    }
  }
  std::sort(m.files.begin(), m.files.end());
  return m;
}

YAML::Node Get(const Manifests& m, const std::string& kind, const std::string& ns,
               const std::string& name) {
  auto it = m.by_key.find(Key(kind, ns, name));
  if (it == m.by_key.end()) {
    ADD_FAILURE() << "missing " << Key(kind, ns, name);
    return YAML::Node();
  }
  return it->second;
}

// The set of verbs of the rules granting `resource` in `group`.
std::set<std::string> Verbs(const YAML::Node& role, const std::string& group,
                            const std::string& resource) {
  std::set<std::string> verbs;
  for (const YAML::Node& rule : role["rules"]) {
    bool group_ok = false;
    bool resource_ok = false;
    for (const YAML::Node& g : rule["apiGroups"]) group_ok |= g.as<std::string>() == group;
    for (const YAML::Node& r : rule["resources"]) resource_ok |= r.as<std::string>() == resource;
    if (!group_ok || !resource_ok) continue;
    for (const YAML::Node& v : rule["verbs"]) verbs.insert(v.as<std::string>());
  }
  return verbs;
}

// Whether `binding` binds role `role_kind`/`role_name` to ServiceAccount ns/name.
void ExpectBinds(const YAML::Node& binding, const std::string& role_kind,
                 const std::string& role_name, const std::string& ns, const std::string& sa) {
  EXPECT_EQ(binding["roleRef"]["kind"].as<std::string>(""), role_kind);
  EXPECT_EQ(binding["roleRef"]["name"].as<std::string>(""), role_name);
  bool found = false;
  for (const YAML::Node& s : binding["subjects"]) {
    found |= s["kind"].as<std::string>("") == "ServiceAccount" &&
             s["name"].as<std::string>("") == sa && s["namespace"].as<std::string>("") == ns;
  }
  EXPECT_TRUE(found) << binding["metadata"]["name"].as<std::string>("") << " does not bind " << ns
                     << "/" << sa;
}

/// The container `name` of a Deployment's pod.
YAML::Node Container(const YAML::Node& deployment, const std::string& name) {
  for (const YAML::Node& c : deployment["spec"]["template"]["spec"]["containers"]) {
    if (c["name"].as<std::string>("") == name) return c;
  }
  ADD_FAILURE() << "no container " << name;
  return YAML::Node();
}

// YAML to JSON, every scalar a string (enough for a pod whose numbers are quoted).
nlohmann::json ToJson(const YAML::Node& n) {
  if (n.IsMap()) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& kv : n) j[kv.first.as<std::string>()] = ToJson(kv.second);
    return j;
  }
  if (n.IsSequence()) {
    nlohmann::json j = nlohmann::json::array();
    for (const YAML::Node& e : n) j.push_back(ToJson(e));
    return j;
  }
  return n.IsScalar() ? nlohmann::json(n.as<std::string>()) : nlohmann::json();
}

TEST(DeployManifests, EveryObjectIsThereAndListedInTheKustomization) {
  const Manifests m = Load();
  const std::set<std::string> want = {
      Key("Namespace", "", "tessera"),
      Key("ClusterRole", "", "tessera-extender"),
      Key("ClusterRoleBinding", "", "tessera-extender"),
      Key("ConfigMap", "tessera", "tessera-config"),
      Key("ServiceAccount", "tessera", "tessera-scheduler"),
      Key("PodDisruptionBudget", "tessera", "tessera-scheduler"),
      Key("ClusterRoleBinding", "", "tessera-scheduler-as-kube-scheduler"),
      Key("ClusterRoleBinding", "", "tessera-scheduler-as-volume-scheduler"),
      Key("RoleBinding", "kube-system", "tessera-scheduler-authentication-reader"),
      Key("Role", "tessera", "tessera-scheduler-leader-election"),
      Key("RoleBinding", "tessera", "tessera-scheduler-leader-election"),
      Key("ConfigMap", "tessera", "tessera-scheduler-config"),
      Key("Deployment", "tessera", "tessera-scheduler"),
      Key("Service", "tessera", "tessera-scheduler-metrics"),
  };
  std::set<std::string> got;
  for (const auto& [key, doc] : m.by_key) got.insert(key);
  EXPECT_EQ(got, want);

  const YAML::Node k = YAML::LoadFile(kDeploy + "/kustomization.yaml");
  EXPECT_EQ(k["kind"].as<std::string>(""), "Kustomization");
  std::vector<std::string> listed;
  for (const YAML::Node& r : k["resources"]) listed.push_back(r.as<std::string>());
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(listed, m.files);
}

TEST(DeployManifests, ExtenderIsALoopbackSidecarOfTwoLeaderElectedSchedulers) {
  const Manifests m = Load();
  const YAML::Node deployment = Get(m, "Deployment", "tessera", "tessera-scheduler");
  EXPECT_EQ(deployment["spec"]["replicas"].as<int>(0), 2);
  const YAML::Node c = Container(deployment, "tessera");
  EXPECT_EQ(c["image"].as<std::string>(""), "localhost/tessera:0.1.0");  // scripts/build-image.sh
  EXPECT_EQ(c["args"].as<std::vector<std::string>>(std::vector<std::string>{}),
            (std::vector<std::string>{"serve", "--config", "/etc/tessera/tessera.yaml"}));
  // The pod offers Tessera's probe and metrics ports, not the verbs' one.
  ASSERT_EQ(c["ports"].size(), 2u);
  EXPECT_EQ(c["ports"][0]["name"].as<std::string>(""), "probes");
  EXPECT_EQ(c["ports"][0]["containerPort"].as<int>(0), 8889);
  EXPECT_EQ(c["ports"][1]["name"].as<std::string>(""), "metrics");
  EXPECT_EQ(c["ports"][1]["containerPort"].as<int>(0), 8890);
  EXPECT_EQ(c["livenessProbe"]["httpGet"]["path"].as<std::string>(""), "/healthz");
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["path"].as<std::string>(""), "/readyz");
  EXPECT_EQ(c["volumeMounts"][0]["mountPath"].as<std::string>(""), "/etc/tessera");
  // No Service in front of the verbs: the only Service is the metrics one, on port 8890 only.
  for (const auto& [key, doc] : m.by_key) {
    if (key.rfind("Service/", 0) != 0) continue;
    EXPECT_EQ(key, Key("Service", "tessera", "tessera-scheduler-metrics"));
    ASSERT_EQ(doc["spec"]["ports"].size(), 1u) << key;
    EXPECT_EQ(doc["spec"]["ports"][0]["targetPort"].as<std::string>(""), "metrics") << key;
  }
  // The PodDisruptionBudget keeps one replica.
  const YAML::Node pdb = Get(m, "PodDisruptionBudget", "tessera", "tessera-scheduler");
  EXPECT_EQ(pdb["spec"]["maxUnavailable"].as<int>(0), 1);

  // tessera.yaml, with the schema `tessera serve --config` reads: the verbs on loopback, the
  // probes and the metrics on every address.
  const YAML::Node config = YAML::Load(
      Get(m, "ConfigMap", "tessera", "tessera-config")["data"]["tessera.yaml"].as<std::string>(""));
  EXPECT_EQ(config["listen"].as<std::string>(""), "127.0.0.1:8888");
  EXPECT_EQ(config["probeListen"].as<std::string>(""), "0.0.0.0:8889");
  EXPECT_EQ(config["metricsListen"].as<std::string>(""), "0.0.0.0:8890");
  const std::string policy = config["policy"].as<std::string>("");
  EXPECT_EQ(policy, "tessera");
  const std::vector<std::string>& known = PolicyNames();
  EXPECT_NE(std::find(known.begin(), known.end(), policy), known.end());
  EXPECT_EQ(config["seed"].as<int>(0), 42);
  EXPECT_FALSE(config["logRequests"].as<bool>(true));
  EXPECT_TRUE(config["kubernetes"]["inCluster"].as<bool>(false));
  EXPECT_TRUE(config["kubernetes"]["readNodeBeforeBind"].as<bool>(false));
  EXPECT_GT(config["bindRequiresFilterSeconds"].as<int>(0), 0);
}

// The shipped extender keeps idle GPUs for LS, sized as `tessera replay --policy tessera` sizes
// them (so that what a replay predicts is what the deployed extender does): the same mode,
// window, factor, bucket and yield, and LS (the classes with useHeadroom) protected.
TEST(DeployManifests, TheShippedExtenderKeepsTheReplaysHeadroom) {
  const Manifests m = Load();
  const std::string text =
      Get(m, "ConfigMap", "tessera", "tessera-config")["data"]["tessera.yaml"].as<std::string>("");
  k8s::ServeConfig config;
  const Status st = k8s::ParseServeConfig(text, "tessera.yaml", &config);
  ASSERT_TRUE(st.ok()) << st.error().message;
  const HeadroomOptions& h = config.headroom;
  const HeadroomOptions want = TesseraReplayPolicy().headroom;
  EXPECT_EQ(h.mode, HeadroomOptions::Mode::kBacklog);
  EXPECT_EQ(h.mode, want.mode);
  EXPECT_EQ(h.gpus, want.gpus);
  EXPECT_EQ(h.window_s, want.window_s);
  EXPECT_EQ(h.bucket_s, want.bucket_s);
  EXPECT_EQ(h.factor, want.factor);
  EXPECT_EQ(h.yield_after, want.yield_after);
  EXPECT_EQ(h.yield_keep, want.yield_keep);
  EXPECT_EQ(h.hold_non_preemptible, want.hold_non_preemptible);
  EXPECT_EQ(h.slo_classes_preempt, want.slo_classes_preempt);
  EXPECT_TRUE(h.model_gpus.empty());
  EXPECT_EQ(HeadroomProtectedPriority(config.classes), want.min_priority);
}

// Whether `selector` (a map of labels) selects an object with `labels`.
bool Selects(const YAML::Node& selector, const YAML::Node& labels) {
  if (!selector.IsMap() || selector.size() == 0) return false;
  for (const auto& kv : selector) {
    if (labels[kv.first.as<std::string>()].as<std::string>("") != kv.second.as<std::string>()) {
      return false;
    }
  }
  return true;
}

TEST(DeployManifests, MetricsServiceReachesTheMetricsListener) {
  const Manifests m = Load();
  const YAML::Node deployment = Get(m, "Deployment", "tessera", "tessera-scheduler");
  const YAML::Node svc = Get(m, "Service", "tessera", "tessera-scheduler-metrics");
  // Headless, over the scheduler pods: every replica is scraped on its own.
  EXPECT_EQ(svc["spec"]["clusterIP"].as<std::string>(""), "None");
  EXPECT_TRUE(
      Selects(svc["spec"]["selector"], deployment["spec"]["template"]["metadata"]["labels"]));
  const YAML::Node port = svc["spec"]["ports"][0];
  EXPECT_EQ(port["name"].as<std::string>(""), "metrics");
  // The target port names the tessera container's port, which is metricsListen's.
  int container_port = 0;
  for (const YAML::Node& p : Container(deployment, "tessera")["ports"]) {
    if (p["name"].as<std::string>("") == port["targetPort"].as<std::string>("")) {
      container_port = p["containerPort"].as<int>(0);
    }
  }
  EXPECT_EQ(container_port, 8890);
  const YAML::Node config = YAML::Load(
      Get(m, "ConfigMap", "tessera", "tessera-config")["data"]["tessera.yaml"].as<std::string>(""));
  EXPECT_EQ(config["metricsListen"].as<std::string>(""),
            "0.0.0.0:" + std::to_string(container_port));
  // The annotations a plain Prometheus' service-endpoints job reads.
  const YAML::Node annotations = svc["metadata"]["annotations"];
  EXPECT_EQ(annotations["prometheus.io/scrape"].as<std::string>(""), "true");
  EXPECT_EQ(annotations["prometheus.io/port"].as<int>(0), port["port"].as<int>(-1));
  EXPECT_EQ(annotations["prometheus.io/path"].as<std::string>(""), "/metrics");

  // The Prometheus Operator's ServiceMonitor selects this Service and its port by name.
  const YAML::Node monitor =
      YAML::LoadFile(kDeploy + "/monitoring/prometheus-operator/service-monitor.yaml");
  EXPECT_EQ(monitor["kind"].as<std::string>(""), "ServiceMonitor");
  EXPECT_EQ(monitor["metadata"]["namespace"].as<std::string>(""), "tessera");
  EXPECT_TRUE(Selects(monitor["spec"]["selector"]["matchLabels"], svc["metadata"]["labels"]));
  EXPECT_EQ(monitor["spec"]["namespaceSelector"]["matchNames"][0].as<std::string>(""), "tessera");
  ASSERT_EQ(monitor["spec"]["endpoints"].size(), 1u);
  EXPECT_EQ(monitor["spec"]["endpoints"][0]["port"].as<std::string>(""), "metrics");
  EXPECT_EQ(monitor["spec"]["endpoints"][0]["path"].as<std::string>(""),
            annotations["prometheus.io/path"].as<std::string>(""));
  // The plain scrape job keeps this Service's metrics port (tests/e2e/deploy_prometheus_test.sh
  // runs it).
  const YAML::Node scrape = YAML::LoadFile(kDeploy + "/monitoring/prometheus/scrape-config.yaml");
  ASSERT_EQ(scrape["scrape_configs"].size(), 1u);
  bool keeps = false;
  for (const YAML::Node& r : scrape["scrape_configs"][0]["relabel_configs"]) {
    keeps |= r["action"].as<std::string>("") == "keep" &&
             r["regex"].as<std::string>("") == "tessera-scheduler-metrics;metrics";
  }
  EXPECT_TRUE(keeps);
}

TEST(DeployManifests, SchedulerConfigurationWiresTheExtender) {
  const Manifests m = Load();
  const YAML::Node cm = Get(m, "ConfigMap", "tessera", "tessera-scheduler-config");
  const YAML::Node config = YAML::Load(cm["data"]["scheduler-config.yaml"].as<std::string>(""));
  EXPECT_EQ(config["apiVersion"].as<std::string>(""), "kubescheduler.config.k8s.io/v1");
  EXPECT_EQ(config["kind"].as<std::string>(""), "KubeSchedulerConfiguration");
  EXPECT_EQ(config["percentageOfNodesToScore"].as<int>(0), 100);
  ASSERT_EQ(config["profiles"].size(), 1u);
  EXPECT_EQ(config["profiles"][0]["schedulerName"].as<std::string>(""), "tessera-scheduler");
  ASSERT_EQ(config["extenders"].size(), 1u);
  const YAML::Node e = config["extenders"][0];
  EXPECT_EQ(e["urlPrefix"].as<std::string>(""), "http://127.0.0.1:8888");  // the sidecar
  EXPECT_TRUE(e["nodeCacheCapable"].as<bool>(false));
  EXPECT_FALSE(e["enableHTTPS"].as<bool>(true));
  EXPECT_GT(e["weight"].as<int>(0), 0);
  EXPECT_FALSE(e["httpTimeout"].as<std::string>("").empty());
  std::set<std::string> managed;
  for (const YAML::Node& r : e["managedResources"]) {
    EXPECT_TRUE(r["ignoredByScheduler"].as<bool>(false)) << r["name"].as<std::string>("");
    managed.insert(r["name"].as<std::string>(""));
  }
  EXPECT_EQ(managed, (std::set<std::string>{
                         std::string(k8s::kTesseraGpu), std::string(k8s::kTesseraGpuMilli),
                         std::string(k8s::kTesseraGpuMemory), std::string(k8s::kNvidiaGpu),
                         std::string(k8s::kHamiGpuMem), std::string(k8s::kHamiGpuMemPercent),
                         std::string(k8s::kHamiGpuCores)}));
  // Leader election in the namespace where the Role grants the Lease.
  EXPECT_TRUE(config["leaderElection"]["leaderElect"].as<bool>(false));
  EXPECT_EQ(config["leaderElection"]["resourceNamespace"].as<std::string>(""), "tessera");

  // Every verb is a route of the real HTTP server: an empty body gets 400 (it decodes
  // nothing), never 404.
  Result<std::unique_ptr<k8s::Extender>> ext = k8s::Extender::FromJson(
      R"({"items":[{"metadata":{"name":"n"},"status":{"allocatable":{"cpu":"1"}}}]})", "", {});
  ASSERT_TRUE(ext.ok()) << ext.error().message;
  k8s::HttpServerOptions options;
  options.port = 0;
  k8s::HttpServer server(ext->get(), options);
  ASSERT_TRUE(server.Start().ok());
  httplib::Client client("127.0.0.1", server.port());
  client.set_read_timeout(5);
  for (const char* verb : {"filterVerb", "prioritizeVerb", "preemptVerb", "bindVerb"}) {
    const std::string path = "/" + e[verb].as<std::string>("");
    auto r = client.Post(path, "", "application/json");
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 400) << verb << " -> " << path;
  }
  server.Stop();

  // The scheduler Deployment reads that file.
  const YAML::Node deployment = Get(m, "Deployment", "tessera", "tessera-scheduler");
  const YAML::Node c = Container(deployment, "kube-scheduler");
  const std::string mount = c["volumeMounts"][0]["mountPath"].as<std::string>("");
  const std::vector<std::string> command =
      c["command"].as<std::vector<std::string>>(std::vector<std::string>{});
  EXPECT_NE(
      std::find(command.begin(), command.end(), "--config=" + mount + "/scheduler-config.yaml"),
      command.end());
  bool mounted = false;
  for (const YAML::Node& v : deployment["spec"]["template"]["spec"]["volumes"]) {
    mounted |= v["name"].as<std::string>("") == c["volumeMounts"][0]["name"].as<std::string>("") &&
               v["configMap"]["name"].as<std::string>("") == "tessera-scheduler-config";
  }
  EXPECT_TRUE(mounted);
  EXPECT_NE(c["image"].as<std::string>("").find("kube-scheduler"), std::string::npos);
}

TEST(DeployManifests, RbacCoversWhatEachPartDoes) {
  const Manifests m = Load();
  // The extender: its cache (list/watch), the read of a node's pods and the binding on bind,
  // and what its preemption writes (the pods' status, the victims' deletion, events); no
  // patch of pods themselves (the GPU annotations travel in the Binding).
  const YAML::Node role = Get(m, "ClusterRole", "", "tessera-extender");
  const std::set<std::string> read = {"get", "list", "watch"};
  const auto covers = [](const std::set<std::string>& have, const std::set<std::string>& need) {
    return std::includes(have.begin(), have.end(), need.begin(), need.end());
  };
  EXPECT_TRUE(covers(Verbs(role, "", "nodes"), read));
  EXPECT_EQ(Verbs(role, "", "pods"), (std::set<std::string>{"delete", "get", "list", "watch"}));
  EXPECT_TRUE(covers(Verbs(role, "", "pods/binding"), {"create"}));
  EXPECT_EQ(Verbs(role, "", "pods/status"), (std::set<std::string>{"patch"}));
  EXPECT_EQ(Verbs(role, "events.k8s.io", "events"), (std::set<std::string>{"create"}));
  EXPECT_TRUE(covers(Verbs(role, "policy", "poddisruptionbudgets"), read));
  EXPECT_TRUE(Verbs(role, "", "secrets").empty());  // nothing more than needed
  // Granted to the pod's service account (the sidecar runs in tessera-scheduler's pod).
  ExpectBinds(Get(m, "ClusterRoleBinding", "", "tessera-extender"), "ClusterRole",
              "tessera-extender", "tessera", "tessera-scheduler");

  // The second scheduler: the default scheduler's roles, and its own Lease.
  const std::string sa = Get(m, "Deployment", "tessera",
                             "tessera-scheduler")["spec"]["template"]["spec"]["serviceAccountName"]
                             .as<std::string>("");
  EXPECT_EQ(sa, "tessera-scheduler");
  ExpectBinds(Get(m, "ClusterRoleBinding", "", "tessera-scheduler-as-kube-scheduler"),
              "ClusterRole", "system:kube-scheduler", "tessera", sa);
  ExpectBinds(Get(m, "ClusterRoleBinding", "", "tessera-scheduler-as-volume-scheduler"),
              "ClusterRole", "system:volume-scheduler", "tessera", sa);
  ExpectBinds(Get(m, "RoleBinding", "kube-system", "tessera-scheduler-authentication-reader"),
              "Role", "extension-apiserver-authentication-reader", "tessera", sa);
  EXPECT_TRUE(covers(Verbs(Get(m, "Role", "tessera", "tessera-scheduler-leader-election"),
                           "coordination.k8s.io", "leases"),
                     {"create", "get", "update"}));
  ExpectBinds(Get(m, "RoleBinding", "tessera", "tessera-scheduler-leader-election"), "Role",
              "tessera-scheduler-leader-election", "tessera", sa);
}

TEST(DeployManifests, ExamplePodOptsInAndTesseraReadsIt) {
  const YAML::Node pod = YAML::LoadFile(kDeploy + "/examples/gpu-pod.yaml");
  EXPECT_EQ(pod["spec"]["schedulerName"].as<std::string>(""), "tessera-scheduler");
  Result<k8s::Pod> decoded = k8s::DecodePod(ToJson(pod), "Pod");
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  Result<PodSpec> spec = k8s::PodToSpec(*decoded);
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->gpu_count, 1);
  EXPECT_EQ(spec->gpu_milli, 500);
  EXPECT_EQ(spec->gpu_memory_mib, 8192);
  EXPECT_EQ(spec->gpu_spec, "A10|T4");
}

// On nodes labelled by NVIDIA's GPU feature discovery (nvidia.com/gpu.product is the product
// name, nvidia.com/gpu.memory its MiB), the example pod's "A10|T4" names the A10 and T4 nodes,
// and a node of another model is refused with a reason naming its model and the pod's list.
TEST(DeployManifests, ExamplePodFitsNodesLabelledByGpuFeatureDiscovery) {
  const auto node = [](const std::string& name, const std::string& product,
                       const std::string& memory) {
    return nlohmann::json{
        {"apiVersion", "v1"},
        {"kind", "Node"},
        {"metadata",
         {{"name", name},
          {"labels", {{"nvidia.com/gpu.product", product}, {"nvidia.com/gpu.memory", memory}}}}},
        {"status",
         {{"allocatable", {{"cpu", "16"}, {"memory", "64Gi"}, {"tessera.io/gpu", "2"}}}}}};
  };
  const nlohmann::json nodes = {
      {"kind", "List"},
      {"items",
       {node("a10", "NVIDIA-A10", "23028"), node("t4", "Tesla-T4", "15360"),
        node("v100", "Tesla-V100-SXM2-16GB", "16384")}}};
  Result<std::unique_ptr<k8s::Extender>> ext = k8s::Extender::FromJson(nodes.dump(), "", {});
  ASSERT_TRUE(ext.ok()) << ext.error().message;
  const YAML::Node pod = YAML::LoadFile(kDeploy + "/examples/gpu-pod.yaml");
  nlohmann::json pod_json = ToJson(pod);
  pod_json["metadata"]["uid"] = "uid-infer-0";
  const nlohmann::json body = {
      {"Pod", pod_json}, {"Nodes", nullptr}, {"NodeNames", {"a10", "t4", "v100"}}};
  Result<k8s::ExtenderArgs> args = k8s::DecodeExtenderArgs(body.dump());
  ASSERT_TRUE(args.ok()) << args.error().message;
  const k8s::ExtenderFilterResult r = (*ext)->Filter(*args);
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.node_names, (std::vector<std::string>{"a10", "t4"}));
  EXPECT_TRUE(r.failed_nodes.empty());
  EXPECT_EQ(r.failed_and_unresolvable_nodes,
            (std::map<std::string, std::string>{
                {"v100",
                 "gpu-model: GPU model not allowed by the pod: node has V100M16, pod "
                 "allows A10|T4"}}));
  // /state names the nodes' models as the engine does.
  const nlohmann::json state = nlohmann::json::parse((*ext)->StateJson());
  std::vector<std::string> models;
  for (const nlohmann::json& n : state["nodes"]) models.push_back(n["gpu_model"]);
  EXPECT_EQ(models, (std::vector<std::string>{"A10", "T4", "V100M16"}));
}

}  // namespace
}  // namespace tessera
