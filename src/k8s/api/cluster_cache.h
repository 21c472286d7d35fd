#pragma once

// Keeps a component (a ClusterEventSink) current from the Kubernetes API: list + watch of nodes,
// pods and, optionally, PodDisruptionBudgets, as client-go's reflector does (see
// docs/EXTENDER.md, "The cluster cache"), and says whether it is in sync.

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <thread>

#include "k8s/api/cluster_events.h"
#include "k8s/api/disruption_budget.h"
#include "k8s/api/kube_api.h"
#include "util/clock.h"

namespace prometheus {
class Registry;
}

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
  /// Also list + watch PodDisruptionBudgets (policy/v1; policy/v1beta1 where v1 is not
  /// served) and hand them to the sink, for the NumPDBViolations of preempt. Sync does not
  /// wait for them. Where neither version is served, one warning is logged and budgets stay
  /// empty; where the account may not list them (401/403), the warning of BudgetsUnavailable
  /// is logged and the list retried with back-off, budgets empty meanwhile.
  bool watch_disruption_budgets = false;
  Sleeper* sleeper = nullptr;    ///< not owned; a RealSleeper when null
  const Clock* clock = nullptr;  ///< wall clock for event ages; the system clock when null
  LogFunction log;               ///< LogJson on stderr when empty
  /// Registers tessera_cache_* metrics here when set (not owned; must outlive the cache).
  prometheus::Registry* metrics = nullptr;
};

/// One reflector per resource (nodes: /api/v1/nodes, pods: /api/v1/pods), each on its own
/// thread:
///  1. list (in pages), apply every item to the sink, and delete from it every object it knew
///     that the new list lacks (an object deleted while we were not watching); pods also get
///     BeginPodList/EndPodList around the list;
///  2. watch from the list's resourceVersion (with bookmarks); ADDED/MODIFIED upsert,
///     DELETED deletes, BOOKMARK moves the resourceVersion;
///  3. when the watch ends or the connection drops, watch again from the last resourceVersion
///     seen (nothing lost, nothing replayed); on 410 Gone (HTTP status or an ERROR event with
///     code 410) list again (step 1);
///  4. after an error, wait (Sleeper) with exponential back-off before the next call.
/// Sync: the sink is told it is in sync once the initial lists of nodes and pods are in, and
/// out of sync while a watch is known broken (from a failed or cut watch until the next one is
/// answered) or a relist is under way; SyncChanged is called on every change.
/// Objects that do not decode are logged and counted; a pod that does not decode is also
/// handed to the sink as a PodIdentity when its UID can be read.
///
/// Start/Stop are called from one thread; the KubeApi and the sink must outlive the cache.
class ClusterCache {
 public:
  ClusterCache(KubeApi* api, ClusterEventSink* sink, ClusterCacheOptions options);
  ClusterCache(const ClusterCache&) = delete;
  ClusterCache& operator=(const ClusterCache&) = delete;
  ~ClusterCache();  ///< Stops.

  /// Starts the reflectors in the background.
  void Start();
  /// Stops the reflectors (cancels their watches, wakes their sleeps) and joins. Idempotent.
  void Stop();
  /// The current sync state (as last told to the sink).
  SyncStatus sync_status() const;
  bool synced() const { return sync_status().synced; }

  /// Per-resource counters ("nodes", "pods", "poddisruptionbudgets"), for tests and logs.
  struct Stats {
    int lists = 0;                  ///< complete lists (the initial one and each relist)
    int watches = 0;                ///< watch requests started
    int errors = 0;                 ///< failed calls and bad events
    int not_applied = 0;            ///< objects the sink rejected or that did not decode
    double last_event_seconds = 0;  ///< Clock time of the last event or list (0: none yet)
  };
  Stats stats(std::string_view resource) const;

 private:
  class Reflector;
  /// Recomputes the sync state from the reflectors' and tells the sink when it changed.
  void UpdateSync();

  KubeApi* api_;
  ClusterEventSink* sink_;
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
  mutable std::mutex sync_mutex_;
  SyncStatus sync_;  // GUARDED_BY(sync_mutex_)
};

}  // namespace tessera::k8s
