#pragma once

// An in-process Kubernetes API server for tests: the REST subset `tessera serve` uses, over
// real HTTP on 127.0.0.1 (port 0), with controls to change objects and inject faults.

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace httplib {
class Server;
}

namespace tessera::k8s::testing {

/// Serves
///   GET  /api/v1/nodes, /api/v1/pods            list (limit/continue), items in key order;
///                                               pods also by fieldSelector=spec.nodeName=N
///   GET  /apis/policy/v1[beta1]/poddisruptionbudgets   the same for budgets
///   GET  ...?watch=true&resourceVersion=RV      chunked stream of event lines after RV
///   PATCH /api/v1/namespaces/NS/pods/NAME       JSON merge patch of metadata.annotations
///                                               (metadata.uid must match when given)
///   POST /api/v1/namespaces/NS/pods/NAME/binding  sets spec.nodeName and copies the Binding's
///                                               metadata.annotations onto the pod, in one
///                                               change (409 if bound or the UID differs);
///                                               emits MODIFIED
///   POST /api/v1/nodes, /api/v1/namespaces/NS/pods  create (a pod without them gets a UID and
///                                               a creationTimestamp of now; 409 if it exists)
///   PATCH /api/v1/namespaces/NS/pods/NAME/status  strategic merge patch of the status
///                                               (conditions merged by type); emits MODIFIED
///   DELETE /api/v1/namespaces/NS/pods/NAME      delete at once (404 if absent; 409 if
///                                               DeleteOptions.preconditions.uid differs)
///   POST /apis/events.k8s.io/v1/namespaces/NS/events  kept for RecordedEvents()
/// One resourceVersion counter for every change, as etcd has. Every request is recorded.
/// Thread-safe; the controls may be called while clients are connected.
class FakeApiServer {
 public:
  FakeApiServer();
  ~FakeApiServer();  ///< Stops.
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  /// Binds 127.0.0.1 on a free port and serves in the background. False on failure.
  bool Start();
  void Stop();
  /// "http://127.0.0.1:PORT".
  std::string url() const;

  // Objects. Each change gets the next resourceVersion (also written into the object) and an
  // event for the watchers. Pods are keyed "namespace/name", nodes by name.
  void AddNode(nlohmann::json node);
  void ModifyNode(nlohmann::json node);
  void DeleteNode(const std::string& name);
  void AddPod(nlohmann::json pod);
  void ModifyPod(nlohmann::json pod);
  void DeletePod(const std::string& namespace_name, const std::string& name);
  /// Adds or replaces a policy/v1 PodDisruptionBudget (/apis/policy/v1/poddisruptionbudgets).
  void PutDisruptionBudget(nlohmann::json pdb);
  void DeleteDisruptionBudget(const std::string& namespace_name, const std::string& name);
  /// The stored pod (null when absent).
  nlohmann::json GetPod(const std::string& namespace_name, const std::string& name) const;
  /// Every stored object of `resource` ("nodes", "pods", "poddisruptionbudgets"), in key order.
  std::vector<nlohmann::json> Objects(const std::string& resource) const;
  /// The events.k8s.io Events posted, in order.
  std::vector<nlohmann::json> RecordedEvents() const;
  /// When on, DELETE of a pod over HTTP marks it (metadata.deletionTimestamp, MODIFIED) as the
  /// API server does for a pod with a grace period, and DeletePod() removes it.
  void GracefulDeletes(bool on);
  /// The current resourceVersion.
  int64_t resource_version() const;

  // Faults.
  /// While held, watch streams send nothing new (events queue up).
  void HoldWatches(bool hold);
  /// While held, list requests wait (a slow initial list); they answer when released, with
  /// the objects as they are then.
  void HoldLists(bool hold);
  /// Cuts every open watch stream mid-way (no terminating chunk).
  void DropWatches();
  /// Sends every watcher of nodes and pods a BOOKMARK event at a new resourceVersion (no object
  /// changes), as the API server does for watches with allowWatchBookmarks.
  void SendBookmarks();
  /// Forgets the history: a watch from an older resourceVersion gets 410 Gone.
  void Compact();
  /// 410 as an HTTP status (default) or as a watch ERROR event with code 410.
  void SetGoneAsEvent(bool as_event);
  /// The next `times` requests with this method whose path starts with `path_prefix` get
  /// HTTP `status` with a Status body; with `watches` false, watch requests are not among them
  /// (a watch the cache reopens in the background then cannot take a failure meant for a list).
  void FailNext(const std::string& method, const std::string& path_prefix, int times,
                int status = 500, bool watches = true);
  /// Forgets the failures FailNext asked for that have not happened yet.
  void ClearFailures();
  /// Answers every request for `resource` ("nodes", "pods", "poddisruptionbudgets"; every API
  /// version) with 403 Forbidden and the Status kube-apiserver sends when RBAC does not allow
  /// the verb ("poddisruptionbudgets.policy is forbidden: User ... cannot list resource ..."),
  /// until Allow. Applies to lists and watches.
  void Forbid(const std::string& resource);
  void Allow(const std::string& resource);

  /// Every request, in arrival order: "GET /api/v1/pods?limit=500", "GET /api/v1/pods?watch"
  /// (watches), "PATCH /api/v1/namespaces/ns/pods/p", "POST .../binding". Failed ones too.
  std::vector<std::string> requests() const;
  /// The open watch streams.
  int open_watches() const;

 private:
  struct Event {
    int64_t rv;
    std::string resource;  // "nodes" or "pods"
    std::string line;      // the event line, with its newline
  };
  struct Failure {
    std::string method;
    std::string prefix;
    int times;
    int status;
    bool watches;
  };
  void Route();
  void Change(const std::string& resource, const std::string& type, nlohmann::json* object);
  static std::string Key(const std::string& resource, const nlohmann::json& object);

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  int64_t rv_ = 1000;                                                     // GUARDED_BY(mutex_)
  int64_t compacted_rv_ = 0;                                              // GUARDED_BY(mutex_)
  std::map<std::string, std::map<std::string, nlohmann::json>> objects_;  // by resource, key
  std::vector<Event> events_;                                             // GUARDED_BY(mutex_)
  std::vector<nlohmann::json> recorded_events_;                           // GUARDED_BY(mutex_)
  bool graceful_deletes_ = false;                                         // GUARDED_BY(mutex_)
  bool hold_ = false;                                                     // GUARDED_BY(mutex_)
  bool hold_lists_ = false;                                               // GUARDED_BY(mutex_)
  int drop_generation_ = 0;                                               // GUARDED_BY(mutex_)
  bool gone_as_event_ = false;                                            // GUARDED_BY(mutex_)
  bool stopping_ = false;                                                 // GUARDED_BY(mutex_)
  int open_watches_ = 0;                                                  // GUARDED_BY(mutex_)
  std::vector<Failure> failures_;                                         // GUARDED_BY(mutex_)
  std::set<std::string> forbidden_;    // resources; GUARDED_BY(mutex_)
  std::vector<std::string> requests_;  // GUARDED_BY(mutex_)
};

}  // namespace tessera::k8s::testing
