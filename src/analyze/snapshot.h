#pragma once

// A cluster snapshot as `tessera analyze` and `tessera serve`'s file mode read it: the Node,
// Pod and PodDisruptionBudget objects of `kubectl get nodes,pods,pdb -A -o json` files (one
// List, several files, or separate lists per kind) or of the live API. Objects are decoded by the
// same readers `tessera serve` uses (k8s/api/objects.h, k8s/api/disruption_budget.h); what those
// readers leave out and a move plan needs — owner references, restart counts, a budget's
// minAvailable / maxUnavailable — is read here. Boundary code for untrusted JSON: every error names
// the source and the JSON path
// ("snap.json: items[3].metadata.name: missing") and nothing throws. Pure and thread-safe.

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "k8s/api/disruption_budget.h"
#include "k8s/api/kube_api.h"
#include "k8s/api/objects.h"
#include "k8s/extender/extender.h"
#include "util/result.h"

namespace tessera::analyze {

/// One metadata.ownerReferences entry.
struct OwnerReference {
  std::string kind;  ///< "ReplicaSet", "StatefulSet", "Job", "DaemonSet", "Node", ...
  std::string name;
  bool controller = false;  ///< the managing controller (at most one per object)
};

/// A pod of the snapshot: the object as serve decodes it, plus what a move plan reads.
struct SnapshotPod {
  k8s::Pod pod;
  std::string path;  ///< "snap.json: items[3]"
  std::vector<OwnerReference> owners;
  /// Σ restartCount over status.containerStatuses and status.initContainerStatuses.
  int64_t restarts = 0;
};

/// minAvailable / maxUnavailable of a PodDisruptionBudget: a count or a percentage.
struct IntOrPercent {
  int64_t value = 0;
  bool percent = false;  ///< value is a percentage (0..100) of the matching pods
};

/// A PodDisruptionBudget of the snapshot.
struct SnapshotPdb {
  k8s::PodDisruptionBudget pdb;
  std::string path;
  std::optional<IntOrPercent> min_available;
  std::optional<IntOrPercent> max_unavailable;
  bool has_status = false;  ///< status.disruptionsAllowed was present
};

/// What the objects say, in input order, with each object's JSON kept for the extender's file
/// mode (k8s::Extender::FromJson), which places the bound pods' GPUs as serve does.
struct Snapshot {
  std::vector<k8s::Node> nodes;
  std::vector<std::string> node_paths;
  std::vector<SnapshotPod> pods;
  std::vector<SnapshotPdb> pdbs;
  std::vector<nlohmann::json> node_items;  ///< by node index
  std::vector<nlohmann::json> pod_items;   ///< by pod index
  std::vector<std::string> sources;        ///< files read, or the API server
  /// Why the API's PodDisruptionBudgets were not read (k8s::BudgetsUnavailable: the account
  /// may not list them, or no version is served); "" when they were, and for files.
  std::string budgets_not_read;
};

/// What one document must hold, where a command gives each file a role (serve's --nodes and
/// --pods); analyze takes any mix.
enum class DocumentRole {
  kAny,  ///< Node, Pod and PodDisruptionBudget objects in any mix
  /// At least one Node: a NodeList (`kubectl get nodes -o json`), or a List that also holds
  /// Pods and budgets (`kubectl get nodes,pods,pdb -A -o json`); items without a kind are
  /// Nodes. A PodList or PodDisruptionBudgetList is refused.
  kNodes,
  /// Pods and budgets, no Node (`kubectl get pods -A -o json`); items without a kind are Pods.
  /// A NodeList, or a Node item, is refused.
  kPods,
};

/// One input document and its name for messages (a file name).
struct SnapshotText {
  std::string name;
  std::string text;
  DocumentRole role = DocumentRole::kAny;
  std::string flag = {};  ///< the option that named the file ("--nodes"), for messages of a role
};

/// Reads every document into one snapshot. Each document is a List (kind "List", "NodeList",
/// "PodList" or "PodDisruptionBudgetList", with items), a bare array, or one object. Items
/// need "kind" (Node, Pod or PodDisruptionBudget) unless the list's kind or the document's
/// role names it; an item of a kind other than its typed list's ("Pod" in a NodeList) is an
/// error. Errors (with the document's name and the JSON path): malformed or truncated JSON, an
/// unknown kind, an object without metadata.name (Pod and PodDisruptionBudget:
/// metadata.namespace; Pod: spec.containers; Node: status.allocatable), a field the readers
/// reject, duplicate nodes or pods, no nodes at all, a document that does not hold what its
/// role asks ("pods.json: a PodList, but --nodes expects nodes: ...").
Result<Snapshot> ReadSnapshot(const std::vector<SnapshotText>& docs);

/// serve's extender in file mode over the snapshot's objects (k8s::Extender::FromObjects:
/// nodes in input order, the bound pods placed, what is not applied as given in warnings(),
/// messages naming each object's path), with the snapshot's budgets for preempt. `tessera
/// serve --nodes/--pods` and analyze's model (BuildModel) both start from it.
Result<std::unique_ptr<k8s::Extender>> MakeFileExtender(const Snapshot& snapshot,
                                                        const k8s::ExtenderOptions& options);

/// An API read that failed: the message, and whether the server refused (HTTP 401/403) or
/// could not be reached / answered otherwise.
struct ApiReadError {
  std::string message;
  int http_status = 0;  ///< 0: no answer
};

/// Lists nodes, pods and PodDisruptionBudgets (k8s::DisruptionBudgetPaths: policy/v1, else
/// policy/v1beta1) from the API, page by page, and reads them as ReadSnapshot does. An API
/// error (403, unreachable server, a cut page) is returned as such: no partial snapshot;
/// except on the budgets, which only narrow the move plan: where the account may not list them
/// (401/403) or no version is served (404), the snapshot has none and budgets_not_read says
/// why, as `tessera serve` goes on without them. `server` names the source in messages.
struct ApiSnapshot {
  std::optional<Snapshot> snapshot;
  std::optional<ApiReadError> api_error;  ///< set when the API failed
  std::optional<Error> input_error;       ///< set when an object does not decode
};
ApiSnapshot ListSnapshot(k8s::KubeApi& api, const std::string& server);

}  // namespace tessera::analyze
