#include "k8s/http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <cctype>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "k8s/extender.h"
#include "k8s/extender_protocol.h"
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

class HttpServerTest : public ::testing::Test {
 protected:
  void StartServer(size_t max_body = kDefaultMaxExtenderBodyBytes) {
    Result<std::unique_ptr<Extender>> e = Extender::FromJson(Nodes(), "", ExtenderOptions{});
    ASSERT_TRUE(e.ok()) << e.error().message;
    extender_ = std::move(*e);
    HttpServerOptions options;
    options.host = "127.0.0.1";
    options.port = 0;
    options.max_body_bytes = max_body;
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
  // n1 has both GPUs free: offered with no victim.
  EXPECT_EQ(p->body, "{\"NodeNameToMetaVictims\":{\"n1\":{\"Pods\":[],\"NumPDBViolations\":0}}}");
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
  EXPECT_EQ(p->body,
            "{\"NodeNameToMetaVictims\":{"
            "\"n1\":{\"Pods\":[],\"NumPDBViolations\":0},"
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
