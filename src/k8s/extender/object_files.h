#pragma once

// File mode's source of objects, the counterpart of API mode's ClusterCache: the Node and Pod
// objects of kubectl JSON (`kubectl get nodes,pods -o json`, or analyze's snapshot) fed to a
// ClusterEventSink as the cache would feed the API's, with the item each came from for
// messages ("nodes: items[2]").

#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "k8s/api/cluster_events.h"
#include "util/result.h"

namespace tessera::k8s {

/// One object of kubectl JSON already parsed, and where it came from for messages
/// ("snap.json: items[3]"). The JSON is not owned.
struct JsonObject {
  const nlohmann::json* json = nullptr;
  std::string path;
};

/// The items of `doc` — a v1 List ({"items": [...]}), a bare array, or a single object — with
/// their paths ("nodes: items[2]", "nodes: [2]" for an array). `what` names the document.
Result<std::vector<JsonObject>> ListObjects(const nlohmann::json& doc, std::string_view what);

/// What FeedObjects leaves to its caller: each pod UID's item ("pods: items[3] (ns/name)"), and
/// warnings on pods the sink accepted but the files contradict (bound to a node not listed).
struct FedObjects {
  std::map<std::string, std::string> path_of;
  std::vector<std::string> warnings;
};

/// Feeds `nodes`, then `pods` to `sink`. A pod that does not decode but names a UID is fed as
/// undecodable (fail closed), and a pod the sink refuses is still counted (its error is the
/// sink's business). Error, naming the item: a node that does not decode or that the sink
/// refuses, a node without a name, duplicate nodes or pod UIDs, a pod without a UID that does
/// not decode, no nodes.
Result<FedObjects> FeedObjects(ClusterEventSink& sink, std::span<const JsonObject> nodes,
                               std::span<const JsonObject> pods);

}  // namespace tessera::k8s
