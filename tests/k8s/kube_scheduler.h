#pragma once

// kube-scheduler's side of the extender protocol over real HTTP, `tessera serve` in API mode
// (extender, cache and HTTP server on port 0) over the in-process fake API server, and the
// objects of engine specs (NodeSpec, PodSpec) as the API server stores them. The tests that
// drive the server the way kube-scheduler does share these. Test-only.

#include <gtest/gtest.h>
#include <httplib.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "k8s/api/cluster_cache.h"
#include "k8s/api/kube_api.h"
#include "k8s/extender/extender.h"
#include "k8s/extender/extender_internal.h"
#include "k8s/extender/extender_protocol.h"
#include "k8s/fake_apiserver.h"
#include "k8s/live.h"
#include "k8s/serve/http_server.h"
#include "model/node.h"
#include "model/pod.h"
#include "util/clock.h"

namespace tessera::k8s::testing {

/// kube-scheduler's HTTP client of the extender: one keep-alive connection, 5 s timeouts.
class KubeScheduler {
 public:
  explicit KubeScheduler(int port) : client_("127.0.0.1", port) {
    client_.set_keep_alive(true);
    client_.set_connection_timeout(5);
    client_.set_read_timeout(5);
    client_.set_tcp_nodelay(true);
  }
  int Status(const std::string& path) {
    auto res = client_.Get(path);
    return res ? res->status : -1;
  }
  /// GET /state, parsed; null when it fails.
  Json State() {
    auto res = client_.Get("/state");
    return res && res->status == 200 ? Json::parse(res->body) : Json();
  }
  /// POSTs `body` to `path`; the body of a 200 answer, or "HTTP <status>: <body>".
  std::string Post(const std::string& path, const std::string& body, bool* ok) {
    auto res = client_.Post(path, body, "application/json");
    *ok = res && res->status == 200;
    if (!res) return "no answer";
    return *ok ? res->body : "HTTP " + std::to_string(res->status) + ": " + res->body;
  }

 private:
  httplib::Client client_;
};

/// kube-scheduler's /preempt for `pod` (its object as stored) with `nodes` as candidates and no
/// victims proposed (its dry run is blind to GPUs): the extender's answer, or the error.
inline Result<ExtenderPreemptionResult> PreemptWithoutProposals(
    KubeScheduler& kube, const Json& pod, const std::vector<std::string>& nodes) {
  Json candidates = Json::object();
  for (const std::string& n : nodes) {
    candidates[n] = {{"Pods", Json::array()}, {"NumPDBViolations", 0}};
  }
  const Json args = {
      {"Pod", pod}, {"NodeNameToVictims", nullptr}, {"NodeNameToMetaVictims", candidates}};
  bool ok = false;
  const std::string body = kube.Post("/preempt", args.dump(), &ok);
  if (!ok) return Error{body};
  return DecodeExtenderPreemptionResult(body);
}

/// `tessera serve` in API mode over `fake` (which must hold the nodes already), with `policy`
/// and `seed` (and the rest of `eo`), its clock standing still unless the test moves it (filter
/// passes stay fresh for the binds), and kube-scheduler's client connected once /readyz
/// answers 200.
struct Serve {
  Serve(FakeApiServer& fake, const std::string& policy, uint64_t seed, ExtenderOptions eo = {}) {
    KubeApiConfig kc;
    kc.server = fake.url();
    kc.source = "test";
    api = std::move(HttpKubeApi::Create(kc).value());
    eo.policy = policy;
    eo.seed = seed;
    eo.clock = &clock;
    LiveOptions lo;
    lo.api = api.get();
    extender = std::move(Extender::Create(eo, lo).value());
    ClusterCacheOptions co;
    co.log = [](std::string_view, std::string_view, const Json&) {};
    cache = std::make_unique<ClusterCache>(api.get(), extender.get(), co);
    HttpServerOptions so;
    so.port = 0;
    server = std::make_unique<HttpServer>(extender.get(), so);
    started = server->Start().ok();
    cache->Start();
    kube = std::make_unique<KubeScheduler>(server->port());
    ready = started && WaitFor([&] { return kube->Status("/readyz") == 200; });
  }
  ~Serve() {
    // The keep-alive connection first: HttpServer::Stop waits for idle keep-alive connections
    // to time out (cpp-httplib's 5 s keep-alive timeout).
    kube.reset();
    server->Stop();
    cache->Stop();
  }
  /// Whether the extender's /state lists no assignment of pod `uid`.
  bool Forgot(const std::string& uid) {
    const Json state = kube->State();
    if (!state.is_object()) return false;
    for (const Json& a : state["assignments"]) {
      if (a["uid"] == uid) return false;
    }
    return true;
  }

  ManualClock clock;
  std::unique_ptr<HttpKubeApi> api;
  std::unique_ptr<Extender> extender;
  std::unique_ptr<ClusterCache> cache;
  std::unique_ptr<HttpServer> server;
  std::unique_ptr<KubeScheduler> kube;
  bool started = false;
  bool ready = false;
};

/// The Node object of `s`: allocatable CPU, memory, pods and tessera.io/gpu, with the GPU
/// model and memory as labels.
inline Json NodeObjectOf(const NodeSpec& s) {
  Json labels = Json::object();
  Json allocatable = {{"cpu", std::to_string(s.cpu_milli / 1000)},
                      {"memory", std::to_string(s.memory_mib / 1024) + "Gi"},
                      {"pods", "110"}};
  if (s.gpu_count > 0) {
    labels["tessera.io/gpu-model"] = s.gpu_model;
    labels["tessera.io/gpu-memory"] = std::to_string(s.gpu_memory_mib);
    allocatable["tessera.io/gpu"] = std::to_string(s.gpu_count);
  }
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", s.name}, {"uid", "uid-" + s.name}, {"labels", labels}}},
          {"spec", Json::object()},
          {"status", {{"allocatable", allocatable}, {"capacity", allocatable}}}};
}

/// A pending Pod object "ml/`name`" (UID "uid-`name`") asking for what `p` asks, as limits
/// (tessera.io/gpu, -milli, -memory) and the tessera.io/gpu-model annotation; spec.priority
/// is `priority`.
inline Json PodObjectOf(const PodSpec& p, const std::string& name, int32_t priority = 0) {
  Json limits = {{"cpu", std::to_string(p.cpu_milli) + "m"},
                 {"memory", std::to_string(p.memory_mib) + "Mi"}};
  if (p.gpu_count > 0) {
    limits["tessera.io/gpu"] = std::to_string(p.gpu_count);
    if (p.gpu_milli < 1000) limits["tessera.io/gpu-milli"] = std::to_string(p.gpu_milli);
    if (p.gpu_memory_mib > 0) limits["tessera.io/gpu-memory"] = std::to_string(p.gpu_memory_mib);
  }
  Json annotations = Json::object();
  if (!p.gpu_spec.empty()) annotations["tessera.io/gpu-model"] = p.gpu_spec;
  Json spec = {
      {"schedulerName", "default-scheduler"},
      {"containers", {{{"name", "main"}, {"image", "x"}, {"resources", {{"limits", limits}}}}}}};
  if (priority != 0) spec["priority"] = priority;
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name}, {"namespace", "ml"}, {"uid", "uid-" + name}, {"annotations", annotations}}},
      {"spec", spec},
      {"status", {{"phase", "Pending"}}}};
}

}  // namespace tessera::k8s::testing
