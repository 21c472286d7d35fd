#include "k8s/extender/object_files.h"

#include <set>
#include <utility>

#include "k8s/api/json_util.h"
#include "k8s/api/objects.h"
#include "k8s/extender/extender_internal.h"
#include "k8s/translate/translate.h"

namespace tessera::k8s {

Result<std::vector<JsonObject>> ListObjects(const nlohmann::json& doc, std::string_view what) {
  std::vector<JsonObject> items;
  const auto path = [&](size_t i) {
    return std::string(what) + ": " + PathIndex(doc.is_array() ? "" : "items", i);
  };
  if (doc.is_array()) {
    for (size_t i = 0; i < doc.size(); ++i) items.push_back({&doc[i], path(i)});
    return items;
  }
  if (!doc.is_object()) return TypeError(what, "object or array", doc);
  const nlohmann::json* list = FindField(doc, "items");
  if (list == nullptr) {  // a single object
    items.push_back({&doc, path(0)});
    return items;
  }
  if (list->is_null()) return items;
  if (!list->is_array()) return TypeError(PathKey(what, "items"), "array", *list);
  for (size_t i = 0; i < list->size(); ++i) items.push_back({&(*list)[i], path(i)});
  return items;
}

Result<FedObjects> FeedObjects(ClusterEventSink& sink, std::span<const JsonObject> nodes,
                               std::span<const JsonObject> pods) {
  std::set<std::string> names;
  for (const JsonObject& object : nodes) {
    const std::string& path = object.path;
    Result<Node> node = DecodeNode(*object.json, path);
    if (!node.ok()) return node.error();
    Result<NodeSpec> spec = NodeToSpec(*node);
    if (!spec.ok()) return Error{path + ": " + spec.error().message};
    if (spec->name.empty()) return Error{path + ": node without metadata.name"};
    if (!names.insert(spec->name).second) {
      return Error{path + ": duplicate node " + QuoteForError(spec->name)};
    }
    Status s = sink.UpsertNode(*node);
    if (!s.ok()) return Error{path + ": " + s.error().message};
  }
  if (names.empty()) return Error{"nodes: no nodes"};

  // Pods: accounted as the API's would be (fail closed); what is not applied as given is a
  // warning that names the item.
  FedObjects fed;
  std::set<std::string> uids;
  for (const JsonObject& object : pods) {
    const std::string& path = object.path;
    Result<Pod> pod = DecodePod(*object.json, path);
    const PodIdentity id = ReadPodIdentity(*object.json);
    const std::string uid = pod.ok() ? PodUid(*pod) : id.uid;
    if (!uid.empty() && !uids.insert(uid).second) {
      return Error{path + ": duplicate pod UID " + uid};
    }
    if (!pod.ok()) {
      if (uid.empty()) return pod.error();
      fed.path_of[uid] = path;
      sink.UndecodablePod(id, pod.error().message);
      continue;
    }
    const std::string& where = fed.path_of[uid] =
        path + " (" + ObjectKey(pod->namespace_name, pod->name) + ")";
    (void)sink.UpsertPod(*pod);  // what is not applied as given is the sink's to report
    if (!pod->node_name.empty() && !names.count(pod->node_name) && !PodEnded(pod->phase)) {
      fed.warnings.push_back(where + ": bound to unknown node " + QuoteForError(pod->node_name) +
                             " (ignored)");
    }
  }
  return fed;
}

}  // namespace tessera::k8s
