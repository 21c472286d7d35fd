#include "k8s/serve/serve_config.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "replay/replay_policy.h"

namespace tessera::k8s {
namespace {

// The error message of parsing `text` as tessera.yaml, or "ok".
std::string ParseError(const std::string& text) {
  ServeConfig c;
  Status s = ParseServeConfig(text, "tessera.yaml", &c);
  return s.ok() ? std::string("ok") : s.error().message;
}

TEST(ServeConfig, ReadsEveryKey) {
  ServeConfig c;
  Status s = ParseServeConfig(R"(# tessera.yaml
listen: 0.0.0.0:8888
policy: tessera
seed: 7
logRequests: true
spinMicroseconds: 0
probeListen: 0.0.0.0:8889
metricsListen: 0.0.0.0:8890
bindRequiresFilterSeconds: 30
workload: /var/lib/tessera/history.csv
tls:
  certFile: /tls/tls.crt
  keyFile: /tls/tls.key
  clientCAFile: /tls/ca.crt
kubernetes:
  inCluster: false
  kubeconfig: /etc/tessera/kubeconfig
  readNodeBeforeBind: false
)",
                              "tessera.yaml", &c);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(c.listen, "0.0.0.0:8888");
  EXPECT_EQ(c.policy, "tessera");
  EXPECT_EQ(c.seed, 7u);
  EXPECT_TRUE(c.log_requests);
  EXPECT_EQ(c.spin_us, 0);
  EXPECT_FALSE(c.in_cluster);
  EXPECT_EQ(c.kubeconfig, "/etc/tessera/kubeconfig");
  EXPECT_EQ(c.probe_listen, "0.0.0.0:8889");
  EXPECT_EQ(c.metrics_listen, "0.0.0.0:8890");
  EXPECT_EQ(c.filter_pass_seconds, 30u);
  EXPECT_EQ(c.tls_cert_file, "/tls/tls.crt");
  EXPECT_EQ(c.tls_key_file, "/tls/tls.key");
  EXPECT_EQ(c.tls_client_ca_file, "/tls/ca.crt");
  EXPECT_FALSE(c.read_node_before_bind);
  EXPECT_EQ(c.workload_file, "/var/lib/tessera/history.csv");
}

TEST(ServeConfig, AbsentKeysKeepTheirValue) {
  ServeConfig c;
  c.policy = "bestfit";
  ASSERT_TRUE(ParseServeConfig("kubernetes: {inCluster: true}\n", "f.yaml", &c).ok());
  EXPECT_TRUE(c.in_cluster);
  EXPECT_EQ(c.policy, "bestfit");
  EXPECT_EQ(c.listen, "127.0.0.1:8888");
  EXPECT_EQ(c.spin_us, kDefaultSpinMicroseconds);
  ASSERT_TRUE(ParseServeConfig("", "f.yaml", &c).ok());
  ASSERT_TRUE(ParseServeConfig("# only a comment\n", "f.yaml", &c).ok());
}

TEST(ServeConfig, TopologyPoolsSetTheKubeletPolicy) {
  ServeConfig c;
  ASSERT_TRUE(ParseServeConfig("topology:\n"
                               "  pools:\n"
                               "    - selector: {matchLabels: {pool: train, zone: a}}\n"
                               "      kubeletPolicy: restricted\n"
                               "    - kubeletPolicy: best-effort\n",
                               "f.yaml", &c)
                  .ok());
  ASSERT_EQ(c.topology_pools.size(), 2u);
  EXPECT_EQ(c.topology_pools[0].match_labels,
            (std::map<std::string, std::string>{{"pool", "train"}, {"zone", "a"}}));
  EXPECT_EQ(c.topology_pools[0].kubelet, KubeletTopologyPolicy::kRestricted);
  EXPECT_TRUE(c.topology_pools[1].match_labels.empty());
  EXPECT_EQ(c.topology_pools[1].kubelet, KubeletTopologyPolicy::kBestEffort);

  EXPECT_EQ(ParseError("topology:\n  pools:\n    - kubeletPolicy: strict\n"),
            "tessera.yaml:3: topology.pools[0].kubeletPolicy: unknown kubelet topology policy "
            "\"strict\" (known: none, best-effort, restricted, single-numa-node)");
  EXPECT_EQ(ParseError("topology:\n  pools:\n    - selector: {matchLabels: {a: b}}\n"),
            "tessera.yaml:3: topology.pools[0].kubeletPolicy: missing (required)");
  EXPECT_EQ(ParseError("topology:\n  pools:\n    - selector: {labels: {a: b}}\n"
                       "      kubeletPolicy: none\n"),
            "tessera.yaml:3: topology.pools[0].selector.labels: unknown key (known: matchLabels)");
  EXPECT_EQ(ParseError("topology:\n  nodes: []\n"),
            "tessera.yaml:2: topology.nodes: unknown key (known: pools)");
}

TEST(ServeConfig, ErrorsNameFileLineAndKey) {
  EXPECT_EQ(
      ParseError("listen: a:1\nport: 80\n"),
      "tessera.yaml:2: port: unknown key (known: listen, probeListen, metricsListen, "
      "policy, seed, logRequests, spinMicroseconds, bindRequiresFilterSeconds, classes, headroom, "
      "schedulerNames, topology, workload, preemption, tls, kubernetes)");
  EXPECT_EQ(ParseError("tls:\n  cert: x\n"),
            "tessera.yaml:2: tls.cert: unknown key (known: certFile, keyFile, clientCAFile)");
  EXPECT_EQ(ParseError("spinMicroseconds: 10001\n"),
            "tessera.yaml:1: spinMicroseconds: expected 0..10000, got 10001");
  EXPECT_EQ(ParseError("spinMicroseconds: -5\n"),
            "tessera.yaml:1: spinMicroseconds: expected an unsigned integer, got \"-5\"");
  EXPECT_EQ(ParseError("kubernetes:\n  inCluster: maybe\n"),
            "tessera.yaml:2: kubernetes.inCluster: expected true or false, got \"maybe\"");
  EXPECT_EQ(ParseError("kubernetes:\n  inCluster: \"true\"\n"),
            "tessera.yaml:2: kubernetes.inCluster: expected true or false, got \"true\"");
  EXPECT_EQ(ParseError("kubernetes:\n  kubeConfig: x\n"),
            "tessera.yaml:2: kubernetes.kubeConfig: unknown key (known: inCluster, kubeconfig, "
            "readNodeBeforeBind)");
  EXPECT_EQ(ParseError("seed: -1\n"),
            "tessera.yaml:1: seed: expected an unsigned integer, got \"-1\"");
  EXPECT_EQ(ParseError("seed: 99999999999999999999\n"),
            "tessera.yaml:1: seed: expected an unsigned integer, got \"99999999999999999999\"");
  EXPECT_EQ(ParseError("\n\npolicy: [fgd]\n"),
            "tessera.yaml:3: policy: expected a string, got a list");
  EXPECT_EQ(ParseError("kubernetes: yes\n"),
            "tessera.yaml:1: kubernetes: expected a mapping, got \"yes\"");
  EXPECT_EQ(ParseError("- listen\n"), "tessera.yaml:1: expected a mapping of settings, got a list");
  EXPECT_EQ(ParseError("listen: [unclosed\n").rfind("tessera.yaml:", 0), 0u);
}

TEST(ServeConfig, ClassesDefaultToTheReplays) {
  ServeConfig c;
  ASSERT_TRUE(ParseServeConfig("policy: fgd\n", "f.yaml", &c).ok());
  ASSERT_EQ(c.classes.classes.size(), 4u);
  EXPECT_EQ(c.classes.classes[0].name, "LS");
  EXPECT_EQ(c.classes.classes[0].priority, 1000);
  EXPECT_EQ(c.classes.classes[0].slo_wait_s, 1.0);
  EXPECT_FALSE(c.classes.classes[0].preemptible);
  EXPECT_TRUE(c.classes.classes[0].use_headroom);
  EXPECT_EQ(c.classes.classes[3].name, "BE");
  EXPECT_LT(c.classes.classes[3].slo_wait_s, 0);
  EXPECT_EQ(c.scheduler_names, std::vector<std::string>{"tessera-scheduler"});
}

TEST(ServeConfig, ReadsClassesAndSchedulerNames) {
  ServeConfig c;
  Status s = ParseServeConfig(R"(classes:
  - {name: batch, priority: -10}
  - name: inference
    priority: 100000
    sloWaitSeconds: 0.5
    preemptible: false
    useHeadroom: true
  - {name: dev, priority: 50, sloWaitSeconds: 300}
schedulerNames: [tessera-scheduler, gpu-scheduler]
)",
                              "tessera.yaml", &c);
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(c.classes.classes.size(), 3u);
  const QosClass& inference = c.classes.classes[1];
  EXPECT_EQ(inference.name, "inference");
  EXPECT_EQ(inference.priority, 100000);
  EXPECT_EQ(inference.slo_wait_s, 0.5);
  EXPECT_FALSE(inference.preemptible);
  EXPECT_TRUE(inference.use_headroom);
  const QosClass& batch = c.classes.classes[0];
  EXPECT_EQ(batch.priority, -10);
  EXPECT_LT(batch.slo_wait_s, 0);  // no SLO
  EXPECT_TRUE(batch.preemptible);
  EXPECT_FALSE(batch.use_headroom);
  EXPECT_EQ(c.classes.fallback, 0);  // the lowest priority
  EXPECT_EQ(c.scheduler_names, (std::vector<std::string>{"tessera-scheduler", "gpu-scheduler"}));
  // Classification: the label, else the band of spec.priority, else the lowest class.
  EXPECT_EQ(c.classes.Classify("dev", 1'000'000), 2);
  EXPECT_EQ(c.classes.Classify("unknown", 100000), 1);
  EXPECT_EQ(c.classes.Classify("", 99999), 2);
  EXPECT_EQ(c.classes.Classify("", 50), 2);
  EXPECT_EQ(c.classes.Classify("", 49), 0);
  EXPECT_EQ(c.classes.Classify("", -11), 0);
}

TEST(ServeConfig, ClassErrorsNameFileLineAndKey) {
  EXPECT_EQ(ParseError("classes: []\n"),
            "tessera.yaml:1: classes: expected a non-empty list of classes, got a list");
  EXPECT_EQ(ParseError("classes: LS\n"),
            "tessera.yaml:1: classes: expected a non-empty list of classes, got \"LS\"");
  EXPECT_EQ(ParseError("classes:\n  - LS\n"),
            "tessera.yaml:2: classes[0]: expected a mapping, got \"LS\"");
  EXPECT_EQ(ParseError("classes:\n  - {name: LS}\n"),
            "tessera.yaml:2: classes[0].priority: missing (required)");
  EXPECT_EQ(ParseError("classes:\n  - {priority: 3}\n"),
            "tessera.yaml:2: classes[0].name: missing (required)");
  EXPECT_EQ(ParseError("classes:\n  - {name: LS, priority: 1}\n  - {name: LS, priority: 2}\n"),
            "tessera.yaml:3: classes[1].name: duplicate class \"LS\"");
  EXPECT_EQ(ParseError("classes:\n  - {name: LS, priority: high}\n"),
            "tessera.yaml:2: classes[0].priority: expected a number, got \"high\"");
  EXPECT_EQ(ParseError("classes:\n  - {name: LS, priority: 1.5}\n"),
            "tessera.yaml:2: classes[0].priority: expected an integer, got 1.5");
  EXPECT_EQ(ParseError("classes:\n  - {name: LS, priority: 3000000000}\n"),
            "tessera.yaml:2: classes[0].priority: expected -2147483648..2147483647, got "
            "3000000000");
  EXPECT_EQ(ParseError("classes:\n  - name: LS\n    priority: 1\n    sloWaitSeconds: -1\n"),
            "tessera.yaml:4: classes[0].sloWaitSeconds: expected 0..1000000000, got -1");
  EXPECT_EQ(ParseError("classes:\n  - {name: LS, priority: 1, preemptible: sometimes}\n"),
            "tessera.yaml:2: classes[0].preemptible: expected true or false, got \"sometimes\"");
  EXPECT_EQ(ParseError("classes:\n  - {name: LS, priority: 1, slo: 3}\n"),
            "tessera.yaml:2: classes[0].slo: unknown key (known: name, priority, sloWaitSeconds, "
            "preemptible, useHeadroom)");
  EXPECT_EQ(ParseError("schedulerNames: tessera-scheduler\n"),
            "tessera.yaml:1: schedulerNames: expected a list of strings, got "
            "\"tessera-scheduler\"");
}

}  // namespace
TEST(ServeConfig, ReadsHeadroom) {
  ServeConfig c;
  EXPECT_EQ(c.headroom.mode, HeadroomOptions::Mode::kNone);
  Status s = ParseServeConfig(
      "headroom:\n  mode: backlog\n  gpus: 2\n  windowSeconds: 1800\n  bucketSeconds: 30\n"
      "  quantile: 0.95\n  factor: 1.5\n  yieldAfter: 0.5\n  yieldKeep: 0.1\n",
      "tessera.yaml", &c);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(c.headroom.mode, HeadroomOptions::Mode::kBacklog);
  EXPECT_EQ(c.headroom.gpus, 2);
  EXPECT_EQ(c.headroom.window_s, 1800);
  EXPECT_EQ(c.headroom.bucket_s, 30);
  EXPECT_EQ(c.headroom.quantile, 0.95);
  EXPECT_EQ(c.headroom.factor, 1.5);
  EXPECT_EQ(c.headroom.yield_after, 0.5);
  EXPECT_EQ(c.headroom.yield_keep, 0.1);
  // The yield's defaults are the replay's (docs/REPLAY.md, "Headroom"); -1: never yield.
  ServeConfig d;
  ASSERT_TRUE(ParseServeConfig("headroom: {mode: backlog}\n", "tessera.yaml", &d).ok());
  EXPECT_EQ(d.headroom.yield_after, TesseraReplayPolicy().headroom.yield_after);
  EXPECT_EQ(d.headroom.yield_keep, TesseraReplayPolicy().headroom.yield_keep);
  ASSERT_TRUE(
      ParseServeConfig("headroom: {mode: backlog, yieldAfter: -1}\n", "tessera.yaml", &d).ok());
  EXPECT_EQ(d.headroom.yield_after, -1);
  EXPECT_EQ(ParseError("headroom:\n  yieldKeep: 2\n"),
            "tessera.yaml:2: headroom.yieldKeep: expected 0..1, got 2");
  EXPECT_EQ(ParseError("headroom:\n  mode: dynamic\n"),
            "tessera.yaml:2: headroom.mode: expected none, static, forecast or backlog, got "
            "\"dynamic\"");
  EXPECT_EQ(ParseError("headroom:\n  gpu: 4\n"),
            "tessera.yaml:2: headroom.gpu: unknown key (known: mode, gpus, windowSeconds, "
            "bucketSeconds, quantile, factor, yieldAfter, yieldKeep, models)");
  EXPECT_EQ(ParseError("headroom:\n  gpus: -1\n"),
            "tessera.yaml:2: headroom.gpus: expected an unsigned integer, got \"-1\"");
  EXPECT_EQ(ParseError("headroom:\n  quantile: 2\n"),
            "tessera.yaml:2: headroom.quantile: expected 0..1, got 2");
  EXPECT_EQ(ParseError("headroom: 4\n"), "tessera.yaml:1: headroom: expected a mapping, got \"4\"");
  EXPECT_EQ(
      ParseError("headroom:\n  mode: forecast\n  windowSeconds: 1000000000\n  bucketSeconds: 1\n"),
      "tessera.yaml:2: headroom: windowSeconds / bucketSeconds is 1000000000 buckets; at "
      "most 100000 (raise bucketSeconds)");
}

TEST(ServeConfig, ReadsHeadroomModels) {
  ServeConfig c;
  Status s = ParseServeConfig(
      "headroom:\n  mode: static\n  gpus: 1\n  models: {A10: 4, V100M16: 2}\n", "tessera.yaml", &c);
  ASSERT_TRUE(s.ok()) << s.error().message;
  const std::vector<std::pair<std::string, int64_t>> want = {{"A10", 4}, {"V100M16", 2}};
  EXPECT_EQ(c.headroom.model_gpus, want);
  EXPECT_EQ(c.headroom.gpus, 1);
  // Block style, and in a sized mode.
  ServeConfig b;
  s = ParseServeConfig("headroom:\n  mode: backlog\n  models:\n    A10: 0\n    T4: 10000000\n",
                       "tessera.yaml", &b);
  ASSERT_TRUE(s.ok()) << s.error().message;
  const std::vector<std::pair<std::string, int64_t>> block = {{"A10", 0}, {"T4", 10000000}};
  EXPECT_EQ(b.headroom.model_gpus, block);
  EXPECT_EQ(ParseError("headroom:\n  mode: static\n  models:\n    A10: -4\n"),
            "tessera.yaml:4: headroom.models.A10: expected an unsigned integer, got \"-4\"");
  EXPECT_EQ(ParseError("headroom:\n  mode: static\n  models:\n    A10: four\n"),
            "tessera.yaml:4: headroom.models.A10: expected an unsigned integer, got \"four\"");
  EXPECT_EQ(ParseError("headroom:\n  mode: static\n  models:\n    A10: 10000001\n"),
            "tessera.yaml:4: headroom.models.A10: expected 0..10000000, got 10000001");
  EXPECT_EQ(ParseError("headroom:\n  mode: static\n  models: [A10]\n"),
            "tessera.yaml:3: headroom.models: expected a mapping of GPU model to GPUs (e.g. "
            "{A10: 4}), got a list");
  EXPECT_EQ(ParseError("headroom:\n  mode: static\n  models:\n    A10: {gpus: 4}\n"),
            "tessera.yaml:4: headroom.models.A10: expected an unsigned integer, got a mapping");
  EXPECT_EQ(ParseError("headroom:\n  mode: static\n  models:\n    A10: 4\n    A10: 2\n"),
            "tessera.yaml:5: headroom.models.A10: duplicate GPU model \"A10\"");
  // Mode none keeps nothing: a floor with it is an error, not silently ignored.
  EXPECT_EQ(ParseError("headroom:\n  models: {A10: 4}\n"),
            "tessera.yaml:2: headroom.models: needs headroom.mode static, forecast or backlog "
            "(mode none keeps nothing)");
  EXPECT_EQ(ParseError("headroom:\n  models:\n    A10: 4\n  mode: none\n"),
            "tessera.yaml:3: headroom.models: needs headroom.mode static, forecast or backlog "
            "(mode none keeps nothing)");
}

}  // namespace tessera::k8s
