#include "k8s/serve/serve_config.h"

#include <gtest/gtest.h>

#include <string>

namespace tessera::k8s {
namespace {

TEST(ServeConfig, ReadsEveryKey) {
  ServeConfig c;
  Status s = ParseServeConfig(R"(# tessera.yaml
listen: 0.0.0.0:8888
policy: tessera
seed: 7
logRequests: true
spinMicroseconds: 0
probeListen: 0.0.0.0:8889
bindRequiresFilterSeconds: 30
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
  EXPECT_EQ(c.filter_pass_seconds, 30u);
  EXPECT_EQ(c.tls_cert_file, "/tls/tls.crt");
  EXPECT_EQ(c.tls_key_file, "/tls/tls.key");
  EXPECT_EQ(c.tls_client_ca_file, "/tls/ca.crt");
  EXPECT_FALSE(c.read_node_before_bind);
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

TEST(ServeConfig, ErrorsNameFileLineAndKey) {
  const auto error = [](const std::string& text) {
    ServeConfig c;
    Status s = ParseServeConfig(text, "tessera.yaml", &c);
    return s.ok() ? std::string("ok") : s.error().message;
  };
  EXPECT_EQ(error("listen: a:1\nport: 80\n"),
            "tessera.yaml:2: port: unknown key (known: listen, probeListen, policy, seed, "
            "logRequests, spinMicroseconds, bindRequiresFilterSeconds, tls, kubernetes)");
  EXPECT_EQ(error("tls:\n  cert: x\n"),
            "tessera.yaml:2: tls.cert: unknown key (known: certFile, keyFile, clientCAFile)");
  EXPECT_EQ(error("spinMicroseconds: 10001\n"),
            "tessera.yaml:1: spinMicroseconds: expected 0..10000, got 10001");
  EXPECT_EQ(error("spinMicroseconds: -5\n"),
            "tessera.yaml:1: spinMicroseconds: expected an unsigned integer, got \"-5\"");
  EXPECT_EQ(error("kubernetes:\n  inCluster: maybe\n"),
            "tessera.yaml:2: kubernetes.inCluster: expected true or false, got \"maybe\"");
  EXPECT_EQ(error("kubernetes:\n  inCluster: \"true\"\n"),
            "tessera.yaml:2: kubernetes.inCluster: expected true or false, got \"true\"");
  EXPECT_EQ(error("kubernetes:\n  kubeConfig: x\n"),
            "tessera.yaml:2: kubernetes.kubeConfig: unknown key (known: inCluster, kubeconfig, "
            "readNodeBeforeBind)");
  EXPECT_EQ(error("seed: -1\n"), "tessera.yaml:1: seed: expected an unsigned integer, got \"-1\"");
  EXPECT_EQ(error("seed: 99999999999999999999\n"),
            "tessera.yaml:1: seed: expected an unsigned integer, got \"99999999999999999999\"");
  EXPECT_EQ(error("\n\npolicy: [fgd]\n"), "tessera.yaml:3: policy: expected a string, got a list");
  EXPECT_EQ(error("kubernetes: yes\n"),
            "tessera.yaml:1: kubernetes: expected a mapping, got \"yes\"");
  EXPECT_EQ(error("- listen\n"), "tessera.yaml:1: expected a mapping of settings, got a list");
  EXPECT_EQ(error("listen: [unclosed\n").rfind("tessera.yaml:", 0), 0u);
}

}  // namespace
}  // namespace tessera::k8s
