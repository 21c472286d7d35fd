#include "k8s/api/kube_api.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "k8s/fake_apiserver.h"
#include "util/file.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;
using testing::FakeApiServer;

Json Node(const std::string& name) {
  return {{"metadata", {{"name", name}, {"uid", "uid-" + name}}},
          {"status", {{"allocatable", {{"cpu", "4"}, {"memory", "8Gi"}}}}}};
}

std::unique_ptr<HttpKubeApi> Client(const FakeApiServer& fake) {
  KubeApiConfig c;
  c.server = fake.url();
  c.source = "test";
  Result<std::unique_ptr<HttpKubeApi>> api = HttpKubeApi::Create(c);
  EXPECT_TRUE(api.ok()) << api.error().message;
  return std::move(*api);
}

TEST(KubeApi, ListFollowsContinueTokens) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  for (const char* n : {"a", "b", "c", "d", "e"}) fake.AddNode(Node(n));
  auto api = Client(fake);
  std::vector<std::string> names;
  std::string token;
  int pages = 0;
  do {
    ListPage page;
    ListOptions o;
    o.limit = 2;
    o.continue_token = token;
    ApiStatus s = api->List("/api/v1/nodes", o, &page);
    ASSERT_TRUE(s.ok()) << s.error;
    for (const Json& item : page.items) names.push_back(item["metadata"]["name"]);
    EXPECT_EQ(page.resource_version, std::to_string(fake.resource_version()));
    token = page.continue_token;
    ++pages;
  } while (!token.empty() && pages < 10);
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  const std::vector<std::string> requests = fake.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0], "GET /api/v1/nodes?limit=2");
  EXPECT_EQ(requests[1], "GET /api/v1/nodes?limit=2&continue=b");
}

TEST(KubeApi, ErrorsNameMethodUrlStatusAndMessage) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.FailNext("GET", "/api/v1/pods", 1, 503);
  auto api = Client(fake);
  ListPage page;
  ApiStatus s = api->List("/api/v1/pods", ListOptions{}, &page);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.http_status, 503);
  EXPECT_EQ(s.error,
            "GET " + fake.url() + "/api/v1/pods?limit=500: HTTP 503: \"injected failure\"");
  // A pod that does not exist: the API's Status message comes through.
  s = api->BindPod("ml", "ghost", "u1", "n1", {});
  EXPECT_EQ(s.http_status, 404);
  EXPECT_EQ(s.error,
            "POST " + fake.url() +
                "/api/v1/namespaces/ml/pods/ghost/binding: HTTP 404: \"pods \\\"ml/ghost\\\" "
                "not found\"");
  // Nobody listening: no status, the transport error.
  fake.Stop();
  s = api->List("/api/v1/pods", ListOptions{1, "", ""}, &page);
  EXPECT_EQ(s.http_status, 0);
  EXPECT_NE(s.error.find(": no response: cannot connect"), std::string::npos) << s.error;
}

TEST(KubeApi, WatchStreamsEventLinesAndStopsOnRequest) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(Node("a"));
  const std::string from = std::to_string(fake.resource_version());
  fake.AddNode(Node("b"));
  fake.DeleteNode("a");
  auto api = Client(fake);
  std::vector<std::string> seen;
  ApiStatus s = api->Watch(
      "/api/v1/nodes", from, 60,
      [&](std::string_view line) {
        Json e = Json::parse(line);
        seen.push_back(e["type"].get<std::string>() + " " +
                       e["object"]["metadata"]["name"].get<std::string>());
        return seen.size() < 3;
      },
      [&] { seen.push_back("open"); });
  EXPECT_TRUE(s.ok()) << s.error;
  EXPECT_EQ(seen, (std::vector<std::string>{"open", "ADDED b", "DELETED a"}));
}

TEST(KubeApi, WatchReportsGoneAndCutStreams) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddNode(Node("a"));
  fake.Compact();
  auto api = Client(fake);
  bool opened = false;
  ApiStatus s = api->Watch(
      "/api/v1/nodes", "1", 60, [](std::string_view) { return true; }, [&] { opened = true; });
  EXPECT_TRUE(s.gone()) << s.error;
  EXPECT_FALSE(opened);  // a 410 is no open watch
  EXPECT_NE(s.error.find("HTTP 410"), std::string::npos) << s.error;

  // A stream cut mid-way is an error, after the events that came.
  const std::string from = std::to_string(fake.resource_version());
  fake.AddNode(Node("b"));
  int events = 0;
  s = api->Watch(
      "/api/v1/nodes", from, 60,
      [&](std::string_view) {
        ++events;
        fake.DropWatches();
        return true;
      },
      nullptr);
  EXPECT_EQ(events, 1);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.http_status, 200);
  EXPECT_NE(s.error.find("watch stream cut"), std::string::npos) << s.error;
}

TEST(KubeApi, BindingCarriesTheAnnotationsAndTheUid) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  fake.AddPod(
      {{"metadata",
        {{"name", "p"}, {"namespace", "ml"}, {"uid", "u1"}, {"annotations", {{"keep", "1"}}}}},
       {"spec", {{"containers", Json::array()}}}});
  auto api = Client(fake);
  // Another pod's UID: refused, and nothing of the Binding lands on the pod.
  ApiStatus s = api->BindPod("ml", "p", "another-uid", "n1", {{"a/b", "y"}});
  EXPECT_EQ(s.http_status, 409) << s.error;
  EXPECT_EQ(fake.GetPod("ml", "p")["metadata"]["annotations"], (Json{{"keep", "1"}}));
  EXPECT_FALSE(fake.GetPod("ml", "p")["spec"].contains("nodeName"));
  s = api->BindPod("ml", "p", "u1", "n1", {{"a/b", "x"}});
  ASSERT_TRUE(s.ok()) << s.error;
  Json pod = fake.GetPod("ml", "p");
  EXPECT_EQ(pod["spec"]["nodeName"], "n1");
  EXPECT_EQ(pod["metadata"]["annotations"], (Json{{"keep", "1"}, {"a/b", "x"}}));
}

TEST(KubeApi, ListsPodsOfOneNodeByFieldSelector) {
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  for (const auto& [name, node] : std::vector<std::pair<std::string, std::string>>{
           {"a", "n1"}, {"b", "n2"}, {"c", "n1"}, {"d", ""}}) {
    Json pod = {{"metadata", {{"name", name}, {"namespace", "ml"}, {"uid", "u-" + name}}},
                {"spec", {{"containers", Json::array()}}}};
    if (!node.empty()) pod["spec"]["nodeName"] = node;
    fake.AddPod(pod);
  }
  auto api = Client(fake);
  ListPage page;
  ListOptions o;
  o.limit = 0;
  o.field_selector = "spec.nodeName=n1";
  ApiStatus s = api->List("/api/v1/pods", o, &page);
  ASSERT_TRUE(s.ok()) << s.error;
  std::vector<std::string> names;
  for (const Json& item : page.items) names.push_back(item["metadata"]["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(fake.requests().back(), "GET /api/v1/pods?limit=0&fieldSelector=spec.nodeName=n1");
}

TEST(KubeApi, DecodesBase64) {
  EXPECT_EQ(*DecodeBase64("aGVsbG8="), "hello");
  EXPECT_EQ(*DecodeBase64("aGVs\nbG8"), "hello");
  EXPECT_EQ(*DecodeBase64(""), "");
  EXPECT_FALSE(DecodeBase64("a*b").ok());
  EXPECT_EQ(DecodeBase64("a*b").error().message, "bad base64 at character 1 \"*\"");
  EXPECT_FALSE(DecodeBase64("a").ok());
}

// A fresh directory under /tmp for one test's files, removed with everything in it when the
// test ends.
class TempDir {
 public:
  TempDir() {
    char dir[] = "/tmp/tessera-kubeconfig-XXXXXX";
    EXPECT_NE(mkdtemp(dir), nullptr);
    path_ = dir;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  operator const std::string&() const { return path_; }

 private:
  std::string path_;
};

TEST(KubeApi, ReadsTheCurrentContextOfAKubeconfig) {
  const TempDir temp;
  const std::string& dir = temp;
  const std::string path = dir + "/config";
  ASSERT_TRUE(WriteFile(path, R"(apiVersion: v1
kind: Config
current-context: prod
clusters:
- name: dev
  cluster: {server: "https://dev:6443"}
- name: prod
  cluster:
    server: https://10.0.0.1:6443/proxy/
    certificate-authority-data: Q0EgUEVN
contexts:
- name: dev
  context: {cluster: dev, user: dev}
- name: prod
  context: {cluster: prod, user: admin}
users:
- name: admin
  user:
    token: s3cret
    client-certificate: certs/admin.crt
    client-key-data: S0VZ
)")
                  .ok());
  Result<KubeApiConfig> c = KubeconfigConfig(path);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->server, "https://10.0.0.1:6443/proxy/");
  EXPECT_EQ(c->ca_data, "CA PEM");
  EXPECT_EQ(c->token, "s3cret");
  EXPECT_EQ(c->client_cert_file, dir + "/certs/admin.crt");
  EXPECT_EQ(c->client_key_data, "KEY");
  EXPECT_FALSE(c->insecure_skip_tls_verify);
}

TEST(KubeApi, KubeconfigErrorsNameTheFileAndEntry) {
  const TempDir temp;
  const std::string& dir = temp;
  const std::string path = dir + "/config";
  ASSERT_TRUE(WriteFile(path, R"(current-context: c
clusters: [{name: k, cluster: {server: "https://k"}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: {exec: {command: aws}}}]
)")
                  .ok());
  Result<KubeApiConfig> c = KubeconfigConfig(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message,
            "kubeconfig " + path + ": users[0] \"u\": exec credential plugins are not supported");
  ASSERT_TRUE(WriteFile(path, "current-context: nope\ncontexts: []\n").ok());
  EXPECT_EQ(KubeconfigConfig(path).error().message,
            "kubeconfig " + path + ": contexts has no entry named \"nope\"");
  ASSERT_TRUE(WriteFile(path, "current-context: [unclosed\n").ok());
  EXPECT_EQ(KubeconfigConfig(path).error().message.rfind("kubeconfig " + path + ":", 0), 0u);
  EXPECT_FALSE(KubeconfigConfig(dir + "/missing").ok());
}

TEST(KubeApi, InClusterNeedsTheServiceEnvironmentAndFiles) {
  const TempDir temp;
  const std::string& dir = temp;
  unsetenv("KUBERNETES_SERVICE_HOST");
  EXPECT_FALSE(InClusterConfig(dir).ok());
  setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  Result<KubeApiConfig> c = InClusterConfig(dir);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find(dir + "/token"), std::string::npos) << c.error().message;
  ASSERT_TRUE(WriteFile(dir + "/token", "tok\n").ok());
  ASSERT_TRUE(WriteFile(dir + "/ca.crt", "PEM").ok());
  c = InClusterConfig(dir);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->server, "https://10.96.0.1:443");
  EXPECT_EQ(c->token_file, dir + "/token");
  EXPECT_EQ(c->ca_file, dir + "/ca.crt");
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
}

/// A self-signed certificate for 127.0.0.1 and its key (EC), made with the openssl CLI.
bool MakeCert(const std::string& dir, const std::string& name) {
  const std::string cmd =
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
      "-nodes -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 "
      "-keyout " +
      dir + "/" + name + ".key -out " + dir + "/" + name + ".crt >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

/// An https server answering GET /api/v1/nodes with an empty list to the bearer token in
/// `token` (and 401 otherwise); client certificates required when `client_ca` is given.
class TlsServer {
 public:
  TlsServer(const std::string& dir, const std::string& client_ca, std::string token)
      : server_((dir + "/server.crt").c_str(), (dir + "/server.key").c_str(),
                client_ca.empty() ? nullptr : client_ca.c_str()),
        token_(std::move(token)) {
    server_.Get("/api/v1/nodes", [this](const httplib::Request& req, httplib::Response& res) {
      if (!token_.empty() && req.get_header_value("Authorization") != "Bearer " + token_) {
        res.status = 401;
        res.set_content(R"({"kind":"Status","message":"Unauthorized","code":401})",
                        "application/json");
        return;
      }
      res.set_content(R"({"kind":"NodeList","metadata":{"resourceVersion":"7"},"items":[]})",
                      "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 5000 && !server_.is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ~TlsServer() {
    server_.stop();
    thread_.join();
  }
  bool valid() const { return server_.is_valid() && port_ > 0; }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::SSLServer server_;
  std::string token_;
  int port_ = 0;
  std::thread thread_;
};

ApiStatus ListNodes(const KubeApiConfig& c) {
  Result<std::unique_ptr<HttpKubeApi>> api = HttpKubeApi::Create(c);
  if (!api.ok()) return ApiStatus{0, api.error().message};
  ListPage page;
  ApiStatus s = (*api)->List("/api/v1/nodes", ListOptions{10, "", ""}, &page);
  if (s.ok() && page.resource_version != "7") s.error = "wrong list";
  return s;
}

TEST(KubeApiTls, VerifiesTheServerAndSendsTheToken) {
  const TempDir temp;
  const std::string& dir = temp;
  if (!MakeCert(dir, "server")) GTEST_SKIP() << "openssl CLI not available";
  TlsServer server(dir, "", "tok-1");
  ASSERT_TRUE(server.valid());
  KubeApiConfig c;
  c.server = server.url();
  c.source = "test";
  c.ca_file = dir + "/server.crt";
  ASSERT_TRUE(WriteFile(dir + "/token", "tok-1\n").ok());
  c.token_file = dir + "/token";
  ApiStatus s = ListNodes(c);
  EXPECT_TRUE(s.ok()) << s.error;
  // The token file is read again: a rotated token that the server does not know fails.
  ASSERT_TRUE(WriteFile(dir + "/token", "tok-2").ok());
  s = ListNodes(c);
  EXPECT_EQ(s.http_status, 401) << s.error;
  EXPECT_NE(s.error.find("HTTP 401: \"Unauthorized\""), std::string::npos) << s.error;
  // Without the CA the server is not trusted; with insecure-skip-tls-verify it is.
  c.token_file.clear();
  c.token = "tok-1";
  c.ca_file.clear();
  s = ListNodes(c);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.http_status, 0);
  EXPECT_NE(s.error.find("GET " + server.url() + "/api/v1/nodes?limit=10: no response"),
            std::string::npos)
      << s.error;
  c.insecure_skip_tls_verify = true;
  s = ListNodes(c);
  EXPECT_TRUE(s.ok()) << s.error;
}

TEST(KubeApiTls, KubeconfigInlineCaAndClientCertificate) {
  const TempDir temp;
  const std::string& dir = temp;
  if (!MakeCert(dir, "server") || !MakeCert(dir, "client")) GTEST_SKIP() << "no openssl CLI";
  TlsServer server(dir, dir + "/client.crt", "");
  ASSERT_TRUE(server.valid());
  const auto b64 = [&](const std::string& file) {
    const std::string out = dir + "/" + file + ".b64";
    EXPECT_EQ(std::system(("base64 -w0 " + dir + "/" + file + " > " + out).c_str()), 0);
    return ReadFile(out).value();
  };
  const std::string path = dir + "/kubeconfig";
  ASSERT_TRUE(WriteFile(path,
                        "current-context: c\n"
                        "clusters: [{name: k, cluster: {server: \"" +
                            server.url() + "\", certificate-authority-data: " + b64("server.crt") +
                            "}}]\n"
                            "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
                            "users: [{name: u, user: {client-certificate-data: " +
                            b64("client.crt") + ", client-key-data: " + b64("client.key") + "}}]\n")
                  .ok());
  Result<KubeApiConfig> c = KubeconfigConfig(path);
  ASSERT_TRUE(c.ok()) << c.error().message;
  ApiStatus s = ListNodes(*c);
  EXPECT_TRUE(s.ok()) << s.error;
  // Without the client certificate the server refuses the handshake.
  c->client_cert_data.clear();
  c->client_key_data.clear();
  s = ListNodes(*c);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.http_status, 0) << s.error;
}

}  // namespace
}  // namespace tessera::k8s
