#pragma once

// What a list/watch cache (ClusterCache) tells the component it keeps current: objects added,
// changed and deleted, whole lists, and whether the cache is in sync with the API server.

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <set>
#include <string>
#include <vector>

#include "k8s/api/disruption_budget.h"
#include "k8s/api/objects.h"
#include "util/result.h"

namespace tessera::k8s {

/// What could be read of a pod object that did not decode (a bad quantity, a wrong type): enough
/// to know where it runs, so that its node is not treated as free.
struct PodIdentity {
  std::string uid;
  std::string namespace_name;
  std::string name;
  std::string node_name;  ///< spec.nodeName ("" when unbound or unreadable)
  std::string phase;      ///< status.phase ("" when unreadable)
  std::string resource_version;
};

/// What can be read of a pod object whatever else is wrong with it (fields of the wrong type
/// are left empty). The UID is "namespace/name" when the object has none.
PodIdentity ReadPodIdentity(const nlohmann::json& obj);

/// Whether the cache's view is complete and current.
struct SyncStatus {
  bool synced = false;
  /// Why not (empty when synced): "initial list of pods in progress", "watch of pods broken
  /// since 2026-12-01T23:45:01.123Z: <error>", "relisting pods: 410 Gone", ...
  std::string reason;
  bool operator==(const SyncStatus&) const = default;
};

/// Receives a ClusterCache's events. Calls come from the cache's reflector threads, one thread
/// per resource (nodes, pods, budgets), so implementations must be thread-safe; the calls of one
/// resource arrive in order.
class ClusterEventSink {
 public:
  virtual ~ClusterEventSink() = default;

  /// A node was added or changed. An error is logged and counted as an object not applied.
  virtual Status UpsertNode(const Node& node) = 0;
  virtual void DeleteNode(const std::string& name) = 0;
  /// A pod was added or changed (bound or not, ended or not). Errors as UpsertNode.
  virtual Status UpsertPod(const Pod& pod) = 0;
  /// A pod object that did not decode; `error` names the JSON path.
  virtual void UndecodablePod(const PodIdentity& pod, const std::string& error) = 0;
  /// A pod was deleted (by UID; "namespace/name" for objects without one).
  virtual void DeletePod(const std::string& uid) = 0;
  /// A complete list of the pods starts (before its first item is upserted) ...
  virtual void BeginPodList() = 0;
  /// ... and ended: `uids` holds every pod it contained, `resource_version` is the list's (the
  /// state it shows). What the sink learnt of pods before BeginPodList and the list lacks no
  /// longer exists; so does a pod it learnt of since whose object is no newer than the list.
  virtual void EndPodList(const std::set<std::string>& uids,
                          const std::string& resource_version) = 0;
  /// The PodDisruptionBudgets, all of them, after each change.
  virtual void SetDisruptionBudgets(std::vector<PodDisruptionBudget> pdbs) = 0;
  /// The sync state changed (see SyncStatus). The first synced status follows the initial
  /// lists of nodes and pods.
  virtual void SyncChanged(const SyncStatus& status) = 0;
};

}  // namespace tessera::k8s
