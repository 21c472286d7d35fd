#pragma once

// Keeps an API-mode Extender's model current from the Kubernetes API: list + watch of nodes
// and pods, as client-go's reflector does (see docs/EXTENDER.md, "The cluster cache").

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <thread>

#include "k8s/api/disruption_budget.h"
#include "k8s/api/kube_api.h"
#include "k8s/extender/extender.h"
#include "util/clock.h"

namespace tessera::k8s {

/// Writes one structured log line: level ("info", "warn", "error"), message, fields.
using LogFunction =
    std::function<void(std::string_view level, std::string_view msg, const nlohmann::json& fields)>;

/// Options of a ClusterCache.
struct ClusterCacheOptions {
  int page_size = 500;              ///< list in pages of this many items (limit/continue)
  int watch_timeout_seconds = 300;  ///< each watch's timeoutSeconds; then it is resumed
  /// Back-off after an error: initial, doubled after each further error, capped; reset by a
  /// successful list or a watch that delivered an event.
  double backoff_initial_seconds = 0.5;
  double backoff_max_seconds = 30;
  /// Also list + watch policy/v1 PodDisruptionBudgets (/apis/policy/v1/poddisruptionbudgets)
  /// and hand them to Extender::SetDisruptionBudgets, for the NumPDBViolations of preempt.
  /// Readiness does not wait for them: without budgets preempt counts no violation.
  bool watch_disruption_budgets = false;
  Sleeper* sleeper = nullptr;  ///< not owned; a RealSleeper when null
  LogFunction log;             ///< LogJson on stderr when empty
};

/// One reflector per resource (nodes: /api/v1/nodes, pods: /api/v1/pods), each on its own
/// thread:
///  1. list (in pages), apply every item to the Extender, and delete from it every object it
///     knew that the new list lacks (an object deleted while we were not watching);
///  2. watch from the list's resourceVersion (with bookmarks); ADDED/MODIFIED upsert,
///     DELETED deletes, BOOKMARK moves the resourceVersion;
///  3. when the watch ends or the connection drops, watch again from the last resourceVersion
///     seen (nothing lost, nothing replayed); on 410 Gone (HTTP status or an ERROR event with
///     code 410) list again (step 1);
///  4. after an error, wait (Sleeper) with exponential back-off before the next call.
/// When both initial lists are in, Extender::MarkSynced (then /readyz answers ready).
/// With watch_disruption_budgets, a third reflector keeps the budgets current.
/// Objects the Extender rejects (undecodable, not fitting) are logged and skipped.
///
/// Start/Stop are called from one thread; the KubeApi and the Extender must outlive the cache.
class ClusterCache {
 public:
  ClusterCache(KubeApi* api, Extender* extender, ClusterCacheOptions options);
  ClusterCache(const ClusterCache&) = delete;
  ClusterCache& operator=(const ClusterCache&) = delete;
  ~ClusterCache();  ///< Stops.

  /// Starts both reflectors in the background.
  void Start();
  /// Stops both reflectors (cancels their watches, wakes their sleeps) and joins. Idempotent.
  void Stop();
  /// Both initial lists are in.
  bool synced() const { return synced_count_.load() >= 2; }

  /// Per-resource counters ("nodes", "pods", "poddisruptionbudgets"), for tests and logs.
  struct Stats {
    int lists = 0;    ///< complete lists (the initial one and each relist)
    int watches = 0;  ///< watch requests started
    int errors = 0;   ///< failed calls and bad events
  };
  Stats stats(std::string_view resource) const;

 private:
  class Reflector;

  KubeApi* api_;
  Extender* extender_;
  ClusterCacheOptions options_;
  std::unique_ptr<Sleeper> own_sleeper_;
  std::unique_ptr<Reflector> nodes_;
  std::unique_ptr<Reflector> pods_;
  std::unique_ptr<Reflector> pdbs_;  // null unless watch_disruption_budgets
  std::thread nodes_thread_;
  std::thread pods_thread_;
  std::thread pdbs_thread_;
  /// The budgets by "namespace/name"; touched only by the budgets' reflector thread.
  std::map<std::string, PodDisruptionBudget> budgets_;
  std::atomic<bool> stop_{false};
  std::atomic<int> synced_count_{0};
};

}  // namespace tessera::k8s
