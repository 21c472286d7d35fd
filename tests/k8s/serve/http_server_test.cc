#include "k8s/serve/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "k8s/extender/extender.h"
#include "k8s/extender/extender_protocol.h"
#include "k8s/testdata.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;

Json NodeObject(const std::string& name, int gpus) {
  Json allocatable = {{"cpu", "8"}, {"memory", "32Gi"}, {"tessera.io/gpu", std::to_string(gpus)}};
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", name},
            {"labels", {{"tessera.io/gpu-model", "A10"}, {"tessera.io/gpu-memory", "24576"}}}}},
          {"status", {{"allocatable", allocatable}}}};
}

std::string Nodes() {
  Json list = {{"kind", "List"},
               {"items", {NodeObject("n1", 2), NodeObject("n2", 4), NodeObject("n3", 1)}}};
  return list.dump();
}

Json Pod(const std::string& uid, int milli) {
  Json limits = {{"cpu", "100m"},
                 {"memory", "64Mi"},
                 {"tessera.io/gpu", "1"},
                 {"tessera.io/gpu-milli", std::to_string(milli)}};
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "p-" + uid}, {"namespace", "ml"}, {"uid", uid}}},
          {"spec", {{"containers", {{{"name", "c"}, {"resources", {{"limits", limits}}}}}}}}};
}

std::string FilterBody(const std::string& uid, int milli) {
  Json body = {
      {"Pod", Pod(uid, milli)}, {"Nodes", nullptr}, {"NodeNames", {"n1", "n2", "n3", "ghost"}}};
  return body.dump();
}

/// A raw TCP connection to 127.0.0.1:port, for what an HTTP client library will not send
/// (pipelining, broken requests, half-sent bodies). Reads time out after 5 s.
class RawConnection {
 public:
  explicit RawConnection(int port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval tv{5, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~RawConnection() { close(fd_); }
  bool connected() const { return connected_; }
  bool Send(const std::string& bytes) {
    return send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }
  void ShutdownWrite() { shutdown(fd_, SHUT_WR); }
  /// Reads until `until` has been seen (from the start of what was read), the peer closes, or
  /// the read times out; returns everything read.
  std::string ReadUntil(const std::string& until = "") {
    std::string got;
    char buf[65536];
    while (until.empty() || got.find(until) == std::string::npos) {
      const ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    return got;
  }

 private:
  int fd_;
  bool connected_ = false;
};

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string Post(const std::string& path, const std::string& body, const std::string& extra = "") {
  return "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + extra +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

class HttpServerTest : public ::testing::Test {
 protected:
  void StartServer(size_t max_body = kDefaultMaxExtenderBodyBytes, int spin_us = 250,
                   HttpRoutes routes = HttpRoutes::kAll) {
    Result<std::unique_ptr<Extender>> e = Extender::FromJson(Nodes(), "", ExtenderOptions{});
    ASSERT_TRUE(e.ok()) << e.error().message;
    extender_ = std::move(*e);
    HttpServerOptions options;
    options.host = "127.0.0.1";
    options.port = 0;
    options.max_body_bytes = max_body;
    options.socket.spin_us = spin_us;
    options.routes = routes;
    server_ = std::make_unique<HttpServer>(extender_.get(), options);
    Status s = server_->Start();
    ASSERT_TRUE(s.ok()) << s.error().message;
    ASSERT_GT(server_->port(), 0);
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }
  httplib::Client Client() {
    httplib::Client c("127.0.0.1", server_->port());
    c.set_connection_timeout(5);
    c.set_read_timeout(5);
    c.set_tcp_nodelay(true);
    return c;
  }

  std::unique_ptr<Extender> extender_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpServerTest, HealthReadyMetricsState) {
  StartServer();
  httplib::Client c = Client();
  auto health = c.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "ok");
  auto ready = c.Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200);

  ASSERT_TRUE(c.Post("/filter", FilterBody("u1", 500), "application/json"));
  auto metrics = c.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  for (const char* name :
       {"tessera_requests_total{verb=\"filter\"} 1", "tessera_request_duration_seconds_bucket",
        "tessera_pods_bound_total", "tessera_filter_rejections_total{reason=\"unknown-node\"} 1",
        "tessera_gpu_allocated_milli", "tessera_gpu_capacity_milli 7000",
        "tessera_node_gpu_free_milli{node=\"n2\"} 4000"}) {
    EXPECT_NE(metrics->body.find(name), std::string::npos) << name << "\n" << metrics->body;
  }
  auto state = c.Get("/state");
  ASSERT_TRUE(state);
  EXPECT_EQ(state->status, 200);
  Json j = Json::parse(state->body);
  EXPECT_EQ(j["nodes"].size(), 3u);
  EXPECT_EQ(j["policy"], "fgd");
}

TEST_F(HttpServerTest, FilterPrioritizeBindPreempt) {
  StartServer();
  httplib::Client c = Client();
  auto filter = c.Post("/filter", FilterBody("u1", 1000), "application/json");
  ASSERT_TRUE(filter);
  EXPECT_EQ(filter->status, 200);
  EXPECT_EQ(filter->get_header_value("Content-Type"), "application/json");
  Result<ExtenderFilterResult> fr = DecodeExtenderFilterResult(filter->body);
  ASSERT_TRUE(fr.ok()) << fr.error().message;
  EXPECT_EQ(fr->node_names, (std::vector<std::string>{"n1", "n2", "n3"}));
  EXPECT_EQ(fr->failed_and_unresolvable_nodes.at("ghost"), "unknown node");
  EXPECT_TRUE(fr->failed_nodes.empty());
  EXPECT_EQ(fr->error, "");

  auto prio = c.Post("/prioritize", FilterBody("u1", 1000), "application/json");
  ASSERT_TRUE(prio);
  EXPECT_EQ(prio->status, 200);
  Result<HostPriorityList> pl = DecodeHostPriorityList(prio->body);
  ASSERT_TRUE(pl.ok()) << pl.error().message;
  ASSERT_EQ(pl->size(), 4u);
  for (const HostPriority& hp : *pl) {
    EXPECT_GE(hp.score, 0);
    EXPECT_LE(hp.score, 10);
  }

  const std::string bind = EncodeExtenderBindingArgs({"p-u1", "ml", "u1", "n3"});
  for (int i = 0; i < 2; ++i) {  // idempotent
    auto b = c.Post("/bind", bind, "application/json");
    ASSERT_TRUE(b);
    EXPECT_EQ(b->status, 200);
    EXPECT_EQ(b->body, "{\"Error\":\"\"}");
  }
  EXPECT_EQ(extender_->gpu_allocated_milli(), 1000);
  auto other =
      c.Post("/bind", EncodeExtenderBindingArgs({"p-u1", "ml", "u1", "n1"}), "application/json");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 200);
  Result<ExtenderBindingResult> br = DecodeExtenderBindingResult(other->body);
  ASSERT_TRUE(br.ok());
  EXPECT_NE(br->error.find("already bound"), std::string::npos);

  Json preempt = {{"Pod", Pod("u2", 1000)}, {"NodeNameToMetaVictims", {{"n1", nullptr}}}};
  auto p = c.Post("/preempt", preempt.dump(), "application/json");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->status, 200);
  // n1 has both GPUs free: the pod fits without victims, so n1 is not offered (kube-scheduler
  // fails a preemption on a node without victims).
  EXPECT_EQ(p->body, "{\"NodeNameToMetaVictims\":{}}");
}

// A connection whose first request has no candidates (its thread has answered none before)
// gets the complete filter answer, each key once (it once got
// {"Nodes":null,"NodeNames":[],"FailedNodes":{],"FailedNodes":{},"Error":""}).
TEST_F(HttpServerTest, FilterWithoutCandidatesGetsACompleteAnswer) {
  StartServer();
  for (const Json& names : {Json::array(), Json(nullptr)}) {
    httplib::Client c = Client();  // a new connection, served by a new thread
    const Json body = {{"Pod", Pod("u1", 500)}, {"Nodes", nullptr}, {"NodeNames", names}};
    auto filter = c.Post("/filter", body.dump(), "application/json");
    ASSERT_TRUE(filter);
    EXPECT_EQ(filter->status, 200);
    EXPECT_EQ(filter->body,
              R"({"Nodes":null,"NodeNames":[],"FailedNodes":{},"FailedAndUnresolvableNodes":{},)"
              R"("Error":""})");
  }
}

TEST_F(HttpServerTest, PreemptWithTheUpstreamShape) {
  StartServer();
  httplib::Client c = Client();
  // Fill n3 (one GPU) with a priority-0 pod.
  ASSERT_TRUE(c.Post("/filter", FilterBody("u-a", 1000), "application/json"));
  auto b =
      c.Post("/bind", EncodeExtenderBindingArgs({"p-u-a", "ml", "u-a", "n3"}), "application/json");
  ASSERT_TRUE(b);
  ASSERT_EQ(b->body, "{\"Error\":\"\"}");
  // The preemptor as kubectl printed it (priority 1000, half an A10 or T4); the body as a
  // nodeCacheCapable kube-scheduler sends it: PascalCase, null for the absent map, null and
  // empty victim lists.
  const std::string body = "{\"Pod\":" + ReadTestdata("pod_tessera.json") +
                           ",\"NodeNameToVictims\":null,\"NodeNameToMetaVictims\":{"
                           "\"n3\":{\"Pods\":null,\"NumPDBViolations\":0},"
                           "\"n1\":{\"Pods\":[],\"NumPDBViolations\":0},"
                           "\"ghost\":{\"Pods\":[{\"UID\":\"x\"}],\"NumPDBViolations\":0}}}";
  auto p = c.Post("/preempt", body, "application/json");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->status, 200);
  EXPECT_EQ(p->get_header_value("Content-Type"), "application/json");
  // n1 (the pod fits without victims) is not offered, nor the unknown node.
  EXPECT_EQ(p->body,
            "{\"NodeNameToMetaVictims\":{"
            "\"n3\":{\"Pods\":[{\"UID\":\"u-a\"}],\"NumPDBViolations\":0}}}");
  // Lower-case keys decode too (Go matches them case-insensitively).
  std::string lower = body;
  for (const char* key : {"\"Pod\"", "\"NodeNameToMetaVictims\"", "\"Pods\"", "\"UID\""}) {
    std::string k = key;
    std::string l = k;
    for (char& ch : l) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    for (size_t at = lower.find(k); at != std::string::npos; at = lower.find(k, at + 1)) {
      lower.replace(at, k.size(), l);
    }
  }
  auto pl = c.Post("/preempt", lower, "application/json");
  ASSERT_TRUE(pl);
  EXPECT_EQ(pl->status, 200);
  EXPECT_EQ(pl->body, p->body);
  // Nothing was evicted from the model: the scheduler deletes the victims.
  EXPECT_EQ(extender_->gpu_allocated_milli(), 1000);
}

TEST_F(HttpServerTest, MalformedBodiesGet400WithJsonError) {
  StartServer();
  httplib::Client c = Client();
  const std::string full = FilterBody("u1", 500);
  struct Case {
    std::string path;
    std::string body;
    std::string expect;  // in the message
  };
  const std::vector<Case> cases = {
      {"/filter", "{\"Pod\": ", "malformed JSON"},
      {"/filter", full.substr(0, full.size() / 2), "malformed JSON"},
      {"/prioritize", "[1,2]", "ExtenderArgs"},
      {"/filter", "{\"Pod\":{},\"NodeNames\":[1]}", "NodeNames[0]"},
      {"/bind", "{\"PodName\":\"a\"}", "PodUID"},
      {"/preempt", "", "empty"},
  };
  for (const Case& k : cases) {
    auto r = c.Post(k.path, k.body, "application/json");
    ASSERT_TRUE(r) << k.path;
    EXPECT_EQ(r->status, 400) << k.path << " " << k.body;
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
    Json j = Json::parse(r->body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r->body;
    ASSERT_TRUE(j["Error"].is_string()) << r->body;
    EXPECT_NE(j["Error"].get<std::string>().find(k.expect), std::string::npos)
        << k.path << ": " << r->body;
  }
  EXPECT_EQ(extender_->gpu_allocated_milli(), 0);
  EXPECT_EQ(extender_->bound_pods(), 0);
}

TEST_F(HttpServerTest, OversizedBodyGets413) {
  StartServer(/*max_body=*/4096);
  httplib::Client c = Client();
  std::string body = FilterBody("u1", 500);
  body.insert(body.size() - 1, ",\"pad\":\"" + std::string(8192, 'x') + "\"");
  auto r = c.Post("/filter", body, "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  Json j = Json::parse(r->body, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r->body;
  EXPECT_TRUE(j["Error"].is_string());
  // A body under the limit still works.
  auto ok = c.Post("/filter", FilterBody("u1", 500), "application/json");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}

TEST_F(HttpServerTest, ConcurrentClientsAllGet200) {
  StartServer();
  constexpr int kThreads = 4;
  constexpr int kRequests = 250;
  std::atomic<int> ok{0};
  std::atomic<int> bound{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      httplib::Client c = Client();
      c.set_keep_alive(true);
      for (int i = 0; i < kRequests; ++i) {
        const std::string uid = "t" + std::to_string(t) + "-" + std::to_string(i);
        auto send = [&]() -> httplib::Result {
          if (i % 3 == 0) return c.Post("/filter", FilterBody(uid, 250), "application/json");
          if (i % 3 == 1) return c.Post("/prioritize", FilterBody(uid, 250), "application/json");
          auto f = c.Post("/filter", FilterBody(uid, 250), "application/json");
          if (!f || f->status != 200) return f;
          auto b = c.Post("/bind", EncodeExtenderBindingArgs({"p", "ml", uid, "n2"}),
                          "application/json");
          if (b && b->body == "{\"Error\":\"\"}") ++bound;
          return b;
        };
        httplib::Result r = send();
        if (r && r->status == 200) ++ok;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(ok.load(), kThreads * kRequests);
  EXPECT_EQ(bound.load(), 16);  // n2: 4 GPUs × 4 quarter-GPU pods
  EXPECT_EQ(extender_->gpu_allocated_milli(), 4000);
}

TEST_F(HttpServerTest, UnknownPathGets404AndWrongMethod405) {
  StartServer();
  httplib::Client c = Client();
  auto missing = c.Get("/nope?x=1");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(missing->body, "{\"Error\":\"no such path: /nope\"}");
  auto wrong = c.Get("/filter");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 405);
  EXPECT_EQ(wrong->get_header_value("Allow"), "POST");
  EXPECT_EQ(wrong->body, "{\"Error\":\"method GET not allowed on /filter (use POST)\"}");
  // A query string does not change the route.
  auto health = c.Get("/healthz?verbose=1");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->body, "ok");
}

// The listeners that the pod network reaches while the verbs stay on loopback (probeListen,
// metricsListen): each serves its own paths; the verbs, /state and the other's paths do not
// exist there (404, not 405), and a bind sent there changes nothing.
TEST_F(HttpServerTest, ProbeAndMetricsListenersServeOnlyTheirPaths) {
  const std::vector<std::string> verbs = {"/filter", "/prioritize", "/preempt", "/bind"};
  StartServer(kDefaultMaxExtenderBodyBytes, 0, HttpRoutes::kProbes);
  {
    httplib::Client c = Client();
    auto health = c.Get("/healthz");
    ASSERT_TRUE(health);
    EXPECT_EQ(health->status, 200);
    EXPECT_EQ(health->body, "ok");
    auto ready = c.Get("/readyz");
    ASSERT_TRUE(ready);
    EXPECT_EQ(ready->status, 200);
    EXPECT_EQ(ready->body, "ready");
    for (const char* path : {"/metrics", "/state"}) {
      auto r = c.Get(path);
      ASSERT_TRUE(r) << path;
      EXPECT_EQ(r->status, 404) << path;
    }
    for (const std::string& path : verbs) {
      auto post = c.Post(path, FilterBody("u1", 500), "application/json");
      ASSERT_TRUE(post) << path;
      EXPECT_EQ(post->status, 404) << path;
      auto get = c.Get(path);
      ASSERT_TRUE(get) << path;
      EXPECT_EQ(get->status, 404) << path;
    }
  }
  server_->Stop();

  StartServer(kDefaultMaxExtenderBodyBytes, 0, HttpRoutes::kMetrics);
  httplib::Client c = Client();
  const std::string bind = R"({"PodName":"p-u1","PodNamespace":"ml","PodUID":"u1","Node":"n2"})";
  for (const std::string& path : verbs) {
    auto post = c.Post(path, path == "/bind" ? bind : FilterBody("u1", 500), "application/json");
    ASSERT_TRUE(post) << path;
    EXPECT_EQ(post->status, 404) << path;
    EXPECT_EQ(post->body, "{\"Error\":\"no such path: " + path + "\"}");
  }
  for (const char* path : {"/healthz", "/readyz", "/state"}) {
    auto r = c.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 404) << path;
  }
  auto metrics = c.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(metrics->body.find("tessera_gpu_capacity_milli 7000"), std::string::npos);
  // Nothing reached the extender: no request counted, nothing bound.
  for (const char* verb : {"filter", "prioritize", "preempt", "bind"}) {
    const std::string zero = "tessera_requests_total{verb=\"" + std::string(verb) + "\"} 0\n";
    EXPECT_NE(metrics->body.find(zero), std::string::npos) << zero << metrics->body;
  }
  EXPECT_EQ(extender_->gpu_allocated_milli(), 0);
}

TEST_F(HttpServerTest, PipelinedRequestsAreAnsweredInOrderOnOneConnection) {
  StartServer();
  RawConnection raw(server_->port());
  ASSERT_TRUE(raw.connected());
  // Three requests in one write; the last asks to close.
  ASSERT_TRUE(raw.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" +
                       Post("/filter", FilterBody("u1", 500)) +
                       "GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  const std::string got = raw.ReadUntil();  // until the server closes
  EXPECT_EQ(Count(got, "HTTP/1.1 200 OK"), 3u) << got;
  const size_t ok = got.find("\r\n\r\nok");
  const size_t names = got.find("\"NodeNames\":[\"n1\",\"n2\",\"n3\"]");
  const size_t ready = got.find("\r\n\r\nready");
  ASSERT_NE(ok, std::string::npos) << got;
  ASSERT_NE(names, std::string::npos) << got;
  ASSERT_NE(ready, std::string::npos) << got;
  EXPECT_LT(ok, names);
  EXPECT_LT(names, ready);
  EXPECT_NE(got.find("Connection: close"), std::string::npos) << got;
}

TEST_F(HttpServerTest, ChunkedBodyAndExpectContinueAreUnderstood) {
  StartServer(kDefaultMaxExtenderBodyBytes, /*spin_us=*/0);  // also: no spinning at all
  const std::string body = FilterBody("u1", 500);
  {
    RawConnection raw(server_->port());
    ASSERT_TRUE(raw.connected());
    std::string chunked;
    for (size_t at = 0; at < body.size(); at += 50) {
      const std::string piece = body.substr(at, 50);
      char size[16];
      std::snprintf(size, sizeof size, "%zx\r\n", piece.size());
      chunked += size + piece + "\r\n";
    }
    chunked += "0\r\n\r\n";
    ASSERT_TRUE(
        raw.Send("POST /filter HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: "
                 "close\r\n\r\n" +
                 chunked));
    const std::string got = raw.ReadUntil();
    EXPECT_EQ(got.rfind("HTTP/1.1 200 OK", 0), 0u) << got;
    EXPECT_NE(got.find("\"NodeNames\":[\"n1\",\"n2\",\"n3\"]"), std::string::npos) << got;
  }
  {
    // curl's large uploads: the headers, then the body only after "100 Continue".
    RawConnection raw(server_->port());
    ASSERT_TRUE(raw.connected());
    const std::string request =
        Post("/filter", body, "Expect: 100-continue\r\nConnection: close\r\n");
    const size_t head = request.find("\r\n\r\n") + 4;
    ASSERT_TRUE(raw.Send(request.substr(0, head)));
    const std::string go_on = raw.ReadUntil("\r\n\r\n");
    EXPECT_EQ(go_on, "HTTP/1.1 100 Continue\r\n\r\n");
    ASSERT_TRUE(raw.Send(request.substr(head)));
    const std::string got = raw.ReadUntil();
    EXPECT_EQ(got.rfind("HTTP/1.1 200 OK", 0), 0u) << got;
    EXPECT_NE(got.find("\"NodeNames\":[\"n1\",\"n2\",\"n3\"]"), std::string::npos) << got;
  }
}

TEST_F(HttpServerTest, BrokenHttpGetsAJsonErrorAndChangesNothing) {
  StartServer();
  struct Case {
    std::string bytes;
    std::string status;
  };
  const std::vector<Case> cases = {
      {"NOT HTTP AT ALL\r\n\r\n", "HTTP/1.1 400 Bad Request"},
      {"POST /bind HTTP/1.1\r\nHost: x\r\nContent-Length: nine\r\n\r\n",
       "HTTP/1.1 400 Bad Request"},
      {"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: " + std::string(20000, 'a') + "\r\n\r\n",
       "HTTP/1.1 431 Request Header Fields Too Large"},
      {"POST /bind HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n",
       "HTTP/1.1 413 Payload Too Large"},
  };
  for (const Case& k : cases) {
    RawConnection raw(server_->port());
    ASSERT_TRUE(raw.connected());
    raw.Send(k.bytes);
    const std::string got = raw.ReadUntil();  // the server answers, then closes
    EXPECT_EQ(got.rfind(k.status, 0), 0u) << got.substr(0, 200);
    const size_t body = got.find("\r\n\r\n");
    ASSERT_NE(body, std::string::npos) << got.substr(0, 200);
    Json j = Json::parse(got.substr(body + 4), nullptr, false);
    ASSERT_TRUE(j.is_object()) << got.substr(0, 200);
    EXPECT_TRUE(j["Error"].is_string() && !j["Error"].get<std::string>().empty());
  }
  {
    // A bind whose body stops short: no answer (nobody to read it), no allocation.
    RawConnection raw(server_->port());
    ASSERT_TRUE(raw.connected());
    const std::string bind = Post("/bind", EncodeExtenderBindingArgs({"p", "ml", "u1", "n2"}));
    raw.Send(bind.substr(0, bind.size() - 10));
    raw.ShutdownWrite();
    EXPECT_EQ(raw.ReadUntil(), "");
  }
  EXPECT_EQ(extender_->gpu_allocated_milli(), 0);
  EXPECT_EQ(extender_->bound_pods(), 0);
  httplib::Client c = Client();
  auto health = c.Get("/healthz");  // still serving
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

TEST_F(HttpServerTest, StopClosesIdleKeepAliveConnections) {
  StartServer();
  RawConnection raw(server_->port());
  ASSERT_TRUE(raw.connected());
  ASSERT_TRUE(raw.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_EQ(raw.ReadUntil("\r\n\r\nok").rfind("HTTP/1.1 200 OK", 0), 0u);
  server_->Stop();                 // returns although the connection is still open and idle
  EXPECT_EQ(raw.ReadUntil(), "");  // closed by the server, not by the 5-s read timeout
}

TEST_F(HttpServerTest, StopAnswersARequestUnderWayThenCloses) {
  StartServer();
  RawConnection raw(server_->port());
  ASSERT_TRUE(raw.connected());
  const std::string bind = Post("/bind", EncodeExtenderBindingArgs({"p", "ml", "u1", "n2"}));
  // The filter that lets bind know the pod, then half a bind: a request under way.
  ASSERT_TRUE(raw.Send(Post("/filter", FilterBody("u1", 500))));
  EXPECT_NE(raw.ReadUntil("\"Error\":\"\"}").find("HTTP/1.1 200 OK"), std::string::npos);
  ASSERT_TRUE(raw.Send(bind.substr(0, bind.size() / 2)));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the server has read it
  std::thread stopper([&] { server_->Stop(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // Stop is waiting for it
  ASSERT_TRUE(raw.Send(bind.substr(bind.size() / 2)));
  const std::string got = raw.ReadUntil();  // answered, then closed
  stopper.join();
  EXPECT_EQ(got.rfind("HTTP/1.1 200 OK", 0), 0u) << got;
  EXPECT_NE(got.find("{\"Error\":\"\"}"), std::string::npos) << got;
  EXPECT_EQ(extender_->bound_pods(), 1);
}

TEST_F(HttpServerTest, StopIsIdempotentAndPortZeroIsReal) {
  StartServer();
  const int port = server_->port();
  EXPECT_NE(port, 0);
  server_->Stop();
  server_->Stop();
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(1);
  EXPECT_FALSE(c.Get("/healthz"));  // nothing listens any more
}

}  // namespace
}  // namespace tessera::k8s
