#pragma once

// A Kubernetes API that answers from a script, for the list and watch harnesses: a
// ClusterCache (the real reflectors, on their threads) keeps an Extender in API mode current
// from it, so a fuzzed list body or watch stream goes through exactly what `tessera serve`
// does with the API server's bytes. Deterministic: after the scripted answers every further
// watch waits until the cache stops, lists answer empty pages, back-offs do not wait, and the
// pods' watch lines are only delivered once the nodes' have been.

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "k8s/api/cluster_cache.h"
#include "k8s/api/kube_api.h"
#include "util/clock.h"

namespace tessera::fuzz {

inline constexpr const char* kNodesPath = "/api/v1/nodes";
inline constexpr const char* kPodsPath = "/api/v1/pods";
inline constexpr const char* kBudgetsPath = "/apis/policy/v1/poddisruptionbudgets";

/// Thread-safe (the reflectors call it from their threads).
class ScriptedApi final : public k8s::KubeApi {
 public:
  /// The body the first List of `path` answers (DecodeListPage reads it, as HttpKubeApi does).
  void SetList(const std::string& path, std::string body) { lists_[path] = std::move(body); }
  /// The lines the first Watch of `path` delivers.
  void SetWatch(const std::string& path, std::vector<std::string> lines) {
    watches_[path] = std::move(lines);
  }

  k8s::ApiStatus List(const std::string& path, const k8s::ListOptions&,
                      k8s::ListPage* page) override {
    std::string body = R"({"metadata":{"resourceVersion":"1"},"items":[]})";
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (list_calls_[path]++ == 0 && lists_.count(path)) body = lists_[path];
    }
    k8s::ApiStatus status;
    const Status decoded = k8s::DecodeListPage(body, page);
    if (!decoded.ok()) {
      status.http_status = 200;
      status.error = "GET " + path + ": " + decoded.error().message;
      return status;
    }
    status.http_status = 200;
    return status;
  }

  k8s::ApiStatus Watch(const std::string& path, const std::string&, int,
                       const std::function<bool(std::string_view line)>& on_event,
                       const std::function<void()>& on_open) override {
    std::vector<std::string> lines;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (watch_calls_[path]++ == 0 && watches_.count(path)) {
        lines = watches_[path];
        // The pods' events after the nodes'.
        if (path == kPodsPath) {
          cv_.wait(lock, [&] { return cancelled_ || idle_.count(kNodesPath); });
        }
      }
    }
    if (on_open) on_open();
    for (const std::string& line : lines) {
      if (!on_event(line)) break;
    }
    if (!lines.empty()) {
      k8s::ApiStatus ended;
      ended.http_status = 200;
      return ended;  // the stream ended; the reflector watches again
    }
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.insert(path);
    cv_.notify_all();
    cv_.wait(lock, [&] { return cancelled_; });
    k8s::ApiStatus ok;
    ok.http_status = 200;
    return ok;
  }

  void CancelWatches() override {
    std::lock_guard<std::mutex> lock(mutex_);
    cancelled_ = true;
    cv_.notify_all();
  }

  k8s::ApiStatus BindPod(const std::string&, const std::string&, const std::string&,
                         const std::string&, const std::map<std::string, std::string>&) override {
    return Refused("binds are not scripted");
  }
  k8s::ApiStatus PatchPodStatus(const std::string&, const std::string&,
                                const nlohmann::ordered_json&) override {
    return Refused("status patches are not scripted");
  }
  k8s::ApiStatus DeletePod(const std::string&, const std::string&, const std::string&) override {
    return Refused("deletions are not scripted");
  }
  k8s::ApiStatus CreateEvent(const std::string&, const nlohmann::ordered_json&) override {
    return Refused("events are not scripted");
  }
  static k8s::ApiStatus Refused(const std::string& why) {
    k8s::ApiStatus refused;
    refused.http_status = 403;
    refused.error = why;
    return refused;
  }

  /// Waits until the watches of `paths` wait for the end (all scripted answers consumed).
  bool WaitIdle(const std::vector<std::string>& paths) {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, std::chrono::seconds(20), [&] {
      for (const std::string& p : paths) {
        if (!idle_.count(p)) return false;
      }
      return true;
    });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::string, std::string> lists_;                 // GUARDED_BY(mutex_)
  std::map<std::string, std::vector<std::string>> watches_;  // GUARDED_BY(mutex_)
  std::map<std::string, int> list_calls_;                    // GUARDED_BY(mutex_)
  std::map<std::string, int> watch_calls_;                   // GUARDED_BY(mutex_)
  std::set<std::string> idle_;                               // GUARDED_BY(mutex_)
  bool cancelled_ = false;                                   // GUARDED_BY(mutex_)
};

/// Back-offs that do not wait (until Wake: then false, the cache is stopping).
class NoWaitSleeper final : public Sleeper {
 public:
  bool Sleep(double) override {
    std::lock_guard<std::mutex> lock(mutex_);
    return !woken_;
  }
  void Wake() override {
    std::lock_guard<std::mutex> lock(mutex_);
    woken_ = true;
  }

 private:
  std::mutex mutex_;
  bool woken_ = false;  // GUARDED_BY(mutex_)
};

/// Runs an API-mode Extender fed by a ClusterCache over `api` until every scripted answer is
/// consumed, then checks what any model must hold: /state is JSON, each key once; no more GPU
/// allocated than there is; every verb answers a well-formed answer. Stops the cache.
inline void RunCache(ScriptedApi* api) {
  k8s::ExtenderOptions options;
  k8s::LiveOptions live;
  live.api = api;
  live.read_node_before_bind = false;
  Result<std::unique_ptr<k8s::Extender>> ext = k8s::Extender::Create(options, live);
  FUZZ_CHECK(ext.ok(), ext.error().message);
  NoWaitSleeper sleeper;
  k8s::ClusterCacheOptions cache_options;
  cache_options.sleeper = &sleeper;
  cache_options.watch_disruption_budgets = true;
  cache_options.log = [](std::string_view, std::string_view, const nlohmann::json&) {};
  {
    k8s::ClusterCache cache(api, ext->get(), cache_options);
    cache.Start();
    FUZZ_CHECK(api->WaitIdle({kNodesPath, kPodsPath, kBudgetsPath}),
               std::string("the cache did not consume its script"));
    cache.Stop();
  }
  k8s::Extender& e = **ext;
  ParseAnswer(e.StateJson(), "/state");
  FUZZ_CHECK(
      e.gpu_allocated_milli() <= e.gpu_capacity_milli(),
      std::to_string(e.gpu_allocated_milli()) + " > " + std::to_string(e.gpu_capacity_milli()));
  // Every node as a candidate of a half-GPU pod: the answers keep their shape.
  const nlohmann::json state = nlohmann::json::parse(e.StateJson());
  nlohmann::json names = nlohmann::json::array();
  for (const nlohmann::json& n : state["nodes"]) names.push_back(n["name"]);
  const std::string body =
      R"({"Pod":{"metadata":{"name":"probe","namespace":"ml","uid":"probe"},"spec":{)"
      R"("containers":[{"name":"c","resources":{"limits":{"tessera.io/gpu":"1",)"
      R"("tessera.io/gpu-milli":"500"}}}]}},"Nodes":null,"NodeNames":)" +
      names.dump() + "}";
  Result<k8s::ExtenderArgs> args = k8s::DecodeExtenderArgs(body);
  FUZZ_CHECK(args.ok(), args.error().message);
  CheckFilterAnswer(e.FilterJson(*args));
  CheckPrioritizeAnswer(e.PrioritizeJson(*args));
}

}  // namespace tessera::fuzz
