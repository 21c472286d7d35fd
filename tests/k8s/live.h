#pragma once

// An API-mode extender with its cache over the in-process fake API server, and the JSON
// builders of the objects the k8s tests feed it (tests/k8s/fake_apiserver.h). Test-only.

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "k8s/api/cluster_cache.h"
#include "k8s/api/kube_api.h"
#include "k8s/extender/extender.h"
#include "k8s/extender/extender_internal.h"
#include "k8s/extender/extender_protocol.h"
#include "k8s/fake_apiserver.h"
#include "k8s/translate/translate.h"
#include "util/clock.h"

namespace tessera::k8s::testing {

using Json = nlohmann::json;

/// Records the back-off asked for and returns at once (a 1 ms pause keeps loops calm).
class RecordingSleeper final : public Sleeper {
 public:
  bool Sleep(double seconds) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      sleeps_.push_back(seconds);
      if (woken_) return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::lock_guard<std::mutex> lock(mutex_);
    return !woken_;
  }
  void Wake() override {
    std::lock_guard<std::mutex> lock(mutex_);
    woken_ = true;
  }
  std::vector<double> sleeps() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return sleeps_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<double> sleeps_;
  bool woken_ = false;
};

/// Polls `done` (1 ms steps) for up to 30 s of wall time; the tests' only waiting. Generous
/// because a loaded CI machine under the sanitizers is slow, and a success returns at once.
inline bool WaitFor(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return done();
}

/// A node with `gpus` A10 GPUs (24 GiB) offered as `resource` (tessera.io/gpu, or
/// nvidia.com/gpu as NVIDIA's or HAMi's device plugin advertises them).
inline Json NodeObject(const std::string& name, int gpus, const std::string& cpu = "16",
                       const std::string& resource = "tessera.io/gpu") {
  return {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata",
       {{"name", name},
        {"uid", "uid-" + name},
        {"labels", {{"tessera.io/gpu-model", "A10"}, {"tessera.io/gpu-memory", "24576"}}}}},
      {"spec", Json::object()},
      {"status",
       {{"allocatable", {{"cpu", cpu}, {"memory", "64Gi"}, {resource, std::to_string(gpus)}}}}}};
}

struct PodShape {
  int gpus = 1;
  int milli = 1000;  // per GPU
  std::string node;
  std::string indices;
  std::string phase;
};

inline PodShape Shape(int gpus, int milli = 1000, std::string node = "", std::string indices = "",
                      std::string phase = "") {
  return PodShape{gpus, milli, std::move(node), std::move(indices), std::move(phase)};
}

inline Json PodObject(const std::string& name, const PodShape& s) {
  Json limits = {{"cpu", "1"}, {"memory", "1Gi"}};
  if (s.gpus > 0) {
    limits["tessera.io/gpu"] = std::to_string(s.gpus);
    limits["tessera.io/gpu-milli"] = std::to_string(s.milli);
  }
  Json annotations = Json::object();
  if (!s.indices.empty()) annotations["tessera.io/gpu-indices"] = s.indices;
  Json spec = {
      {"containers", {{{"name", "main"}, {"image", "x"}, {"resources", {{"limits", limits}}}}}}};
  if (!s.node.empty()) spec["nodeName"] = s.node;
  std::string phase = s.phase.empty() ? (s.node.empty() ? "Pending" : "Running") : s.phase;
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name}, {"namespace", "ml"}, {"uid", "uid-" + name}, {"annotations", annotations}}},
      {"spec", spec},
      {"status", {{"phase", phase}}}};
}

/// An API-mode extender and its cache over a fake API server.
struct Live {
  explicit Live(FakeApiServer& fake, const std::string& policy = "fgd", bool budgets = false,
                bool read_node = true) {
    KubeApiConfig c;
    c.server = fake.url();
    c.source = "test";
    // A request the loaded test machine loses (seen under ASan at load > 10: a list with no
    // answer) is retried after 5 s, well within WaitFor's 30 s, instead of taking all of it.
    c.read_timeout_seconds = 5;
    api = std::move(HttpKubeApi::Create(c).value());
    ExtenderOptions eo;
    eo.policy = policy;
    eo.clock = &clock;
    LiveOptions lo;
    lo.api = api.get();
    lo.read_node_before_bind = read_node;
    extender = std::move(Extender::Create(eo, lo).value());
    ClusterCacheOptions co;
    co.sleeper = &sleeper;
    co.backoff_initial_seconds = 0.5;
    co.backoff_max_seconds = 3;
    co.watch_timeout_seconds = 60;
    co.watch_disruption_budgets = budgets;
    co.metrics = extender->metrics_registry();
    co.clock = &clock;
    co.log = [this](std::string_view level, std::string_view msg, const Json& fields) {
      std::lock_guard<std::mutex> lock(log_mutex);
      logs.push_back(std::string(level) + " " + std::string(msg) + " " + fields.dump());
      if (fields.contains("retry_in_seconds")) {
        retries[fields["resource"].get<std::string>()].push_back(fields["retry_in_seconds"]);
      }
    };
    cache = std::make_unique<ClusterCache>(api.get(), extender.get(), co);
  }
  ~Live() { cache->Stop(); }

  bool Sync() {
    cache->Start();
    return WaitFor([&] { return extender->ready(); });
  }
  Json State() const { return Json::parse(extender->StateJson()); }
  /// The assignment of `pod` ("ml/name") in /state, or null.
  Json Assignment(const std::string& pod) const {
    const Json state = State();
    for (const Json& a : state["assignments"]) {
      if (a["pod"] == pod) return a;
    }
    return nullptr;
  }
  /// kube-scheduler's filter then bind of `pod` (as stored in the fake) to `node`.
  std::string FilterAndBind(const Json& pod, const std::string& node) {
    Json body = {{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", {node}}};
    Result<ExtenderArgs> args = DecodeExtenderArgs(body.dump());
    EXPECT_TRUE(args.ok());
    ExtenderFilterResult f = extender->Filter(*args);
    if (f.node_names.empty()) {
      return "filter rejected: " +
             Json(f.failed_nodes.empty() ? f.failed_and_unresolvable_nodes : f.failed_nodes).dump();
    }
    const Json& meta = pod["metadata"];
    return extender
        ->Bind({meta["name"].get<std::string>(), meta["namespace"].get<std::string>(),
                meta["uid"].get<std::string>(), node})
        .error;
  }

  ManualClock clock{1.7e9};
  RecordingSleeper sleeper;
  std::unique_ptr<HttpKubeApi> api;
  std::unique_ptr<Extender> extender;
  std::unique_ptr<ClusterCache> cache;
  std::mutex log_mutex;
  std::vector<std::string> logs;
  std::map<std::string, std::vector<double>> retries;  // back-off logged, by resource
  std::vector<double> Retries(const std::string& resource) {
    std::lock_guard<std::mutex> lock(log_mutex);
    return retries[resource];
  }
};

/// What the API server's objects say is over-allocated ("" when nothing is): on each node, the
/// pods bound there and not ended, with GPU indices (tessera.io/gpu-indices) on the GPUs they
/// name, and those without on whatever GPUs are left (whole GPUs first, then shares, first
/// fit). The GPUs of a node are its allocatable tessera.io/gpu or nvidia.com/gpu.
std::string ApiOverAllocation(const FakeApiServer& fake);
/// The same for these objects.
std::string OverAllocation(const std::vector<Json>& nodes, const std::vector<Json>& pods);

}  // namespace tessera::k8s::testing
