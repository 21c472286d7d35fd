#include "analyze/snapshot.h"

#include <set>
#include <utility>

#include "k8s/api/json_util.h"
#include "k8s/api/objects.h"

namespace tessera::analyze {
namespace {

using Json = nlohmann::json;
using k8s::ArrayField;
using k8s::FindField;
using k8s::ObjectField;
using k8s::PathIndex;
using k8s::PathKey;
using k8s::QuoteForError;
using k8s::ReadBool;
using k8s::ReadInt64;
using k8s::ReadString;

/// A snapshot file may be far larger than one request body.
constexpr size_t kMaxSnapshotBytes = size_t{1} << 31;

/// The item kind a list's kind implies ("" for a generic List).
std::string KindOfList(std::string_view list_kind) {
  if (list_kind == "NodeList") return "Node";
  if (list_kind == "PodList") return "Pod";
  if (list_kind == "PodDisruptionBudgetList") return "PodDisruptionBudget";
  return "";
}

/// A non-empty string field under metadata, or an error naming it.
Status RequireMetadataString(const Json& item, const std::string& path, std::string_view key) {
  const Json* meta = FindField(item, "metadata");
  const std::string mpath = PathKey(path, "metadata");
  if (meta == nullptr || meta->is_null()) return Error{mpath + ": missing"};
  if (!meta->is_object()) return k8s::TypeError(mpath, "object", *meta);
  std::string value;
  TESSERA_RETURN_IF_ERROR(ReadString(FindField(*meta, key), PathKey(mpath, key), &value));
  if (value.empty()) return Error{PathKey(mpath, key) + ": missing"};
  return {};
}

/// A field that must be present and an object (or array when `array`).
Status RequireField(const Json& obj, const std::string& path, std::string_view key, bool array) {
  const Json* v = FindField(obj, key);
  const std::string vpath = PathKey(path, key);
  if (v == nullptr || v->is_null()) return Error{vpath + ": missing"};
  if (array ? !v->is_array() : !v->is_object()) {
    return k8s::TypeError(vpath, array ? "array" : "object", *v);
  }
  return {};
}

Result<std::vector<OwnerReference>> ReadOwners(const Json& item, const std::string& path) {
  std::vector<OwnerReference> owners;
  const Json* meta = FindField(item, "metadata");
  const std::string mpath = PathKey(path, "metadata");
  const Json* refs = nullptr;
  TESSERA_ASSIGN_OR_RETURN(refs, ArrayField(*meta, "ownerReferences", mpath));
  if (refs == nullptr) return owners;
  const std::string rpath = PathKey(mpath, "ownerReferences");
  for (size_t i = 0; i < refs->size(); ++i) {
    const Json& r = (*refs)[i];
    const std::string p = PathIndex(rpath, i);
    if (!r.is_object()) return k8s::TypeError(p, "object", r);
    OwnerReference o;
    TESSERA_RETURN_IF_ERROR(ReadString(FindField(r, "kind"), PathKey(p, "kind"), &o.kind));
    TESSERA_RETURN_IF_ERROR(ReadString(FindField(r, "name"), PathKey(p, "name"), &o.name));
    TESSERA_RETURN_IF_ERROR(
        ReadBool(FindField(r, "controller"), PathKey(p, "controller"), &o.controller));
    if (o.kind.empty()) return Error{PathKey(p, "kind") + ": missing"};
    if (o.name.empty()) return Error{PathKey(p, "name") + ": missing"};
    owners.push_back(std::move(o));
  }
  return owners;
}

Result<int64_t> ReadRestarts(const Json& item, const std::string& path) {
  int64_t total = 0;
  const Json* status = nullptr;
  TESSERA_ASSIGN_OR_RETURN(status, ObjectField(item, "status", path));
  if (status == nullptr) return total;
  const std::string spath = PathKey(path, "status");
  for (std::string_view key : {"containerStatuses", "initContainerStatuses"}) {
    const Json* list = nullptr;
    TESSERA_ASSIGN_OR_RETURN(list, ArrayField(*status, key, spath));
    if (list == nullptr) continue;
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string p = PathIndex(PathKey(spath, key), i);
      if (!(*list)[i].is_object()) return k8s::TypeError(p, "object", (*list)[i]);
      int64_t n = 0;
      TESSERA_RETURN_IF_ERROR(ReadInt64(FindField((*list)[i], "restartCount"),
                                        PathKey(p, "restartCount"), 0, int64_t{1} << 40, &n));
      total += n;
    }
  }
  return total;
}

Result<std::optional<IntOrPercent>> ReadIntOrPercent(const Json* v, const std::string& path) {
  if (v == nullptr || v->is_null()) return std::optional<IntOrPercent>();
  IntOrPercent out;
  if (v->is_number()) {
    TESSERA_RETURN_IF_ERROR(ReadInt64(v, path, 0, int64_t{1} << 31, &out.value));
    return std::optional<IntOrPercent>(out);
  }
  if (!v->is_string()) return k8s::TypeError(path, "integer or percentage string", *v);
  const std::string s = v->get<std::string>();
  const bool pct = !s.empty() && s.back() == '%';
  const std::string digits = pct ? s.substr(0, s.size() - 1) : s;
  if (digits.empty() || digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    return Error{path + ": bad value " + QuoteForError(s) + " (expected an integer or \"N%\")"};
  }
  out.value = std::stoll(digits);
  out.percent = pct;
  if (pct && out.value > 100) return Error{path + ": " + QuoteForError(s) + " is over 100%"};
  return std::optional<IntOrPercent>(out);
}

Result<SnapshotPdb> ReadPdb(const Json& item, const std::string& path) {
  SnapshotPdb p;
  p.path = path;
  TESSERA_RETURN_IF_ERROR(RequireMetadataString(item, path, "name"));
  TESSERA_RETURN_IF_ERROR(RequireMetadataString(item, path, "namespace"));
  TESSERA_RETURN_IF_ERROR(RequireField(item, path, "spec", false));
  Result<k8s::PodDisruptionBudget> pdb = k8s::DecodePodDisruptionBudget(item, path);
  if (!pdb.ok()) return pdb.error();
  p.pdb = std::move(*pdb);
  const Json& spec = *FindField(item, "spec");
  const std::string spath = PathKey(path, "spec");
  TESSERA_ASSIGN_OR_RETURN(p.min_available, ReadIntOrPercent(FindField(spec, "minAvailable"),
                                                             PathKey(spath, "minAvailable")));
  TESSERA_ASSIGN_OR_RETURN(p.max_unavailable, ReadIntOrPercent(FindField(spec, "maxUnavailable"),
                                                               PathKey(spath, "maxUnavailable")));
  if (p.min_available && p.max_unavailable) {
    return Error{spath + ": minAvailable and maxUnavailable are both set"};
  }
  const Json* status = FindField(item, "status");
  if (status != nullptr && status->is_object()) {
    p.has_status = FindField(*status, "disruptionsAllowed") != nullptr;
  }
  return p;
}

/// What a document of `role` is expected to hold, for messages.
std::string Expected(DocumentRole role, const std::string& flag) {
  const std::string who = flag.empty() ? std::string("this file") : flag;
  if (role == DocumentRole::kNodes) {
    return who +
           " expects nodes: a NodeList as `kubectl get nodes -o json` prints it, or a List "
           "that holds Node objects (`kubectl get nodes,pods -A -o json`)";
  }
  return who + " expects pods: a List of Pod objects as `kubectl get pods -A -o json` prints it";
}

/// The kind an item without "kind" is taken to be in a document of `role`.
std::string DefaultKind(DocumentRole role) {
  if (role == DocumentRole::kNodes) return "Node";
  if (role == DocumentRole::kPods) return "Pod";
  return "";
}

/// Adds one object to `s`; `list_kind` is the kind its list implies ("" if none), `doc` the
/// document's role and flag.
Status AddItem(const Json& item, const std::string& path, const std::string& list_kind,
               const SnapshotText& doc, Snapshot* s, std::set<std::string>* node_names,
               std::set<std::string>* pod_keys) {
  if (!item.is_object()) return k8s::TypeError(path, "object", item);
  std::string kind;
  TESSERA_RETURN_IF_ERROR(ReadString(FindField(item, "kind"), PathKey(path, "kind"), &kind));
  if (!kind.empty() && !list_kind.empty() && kind != list_kind) {
    return Error{PathKey(path, "kind") + ": a " + kind + " in a list of " + list_kind + " objects"};
  }
  if (kind.empty()) kind = list_kind;
  if (kind.empty()) kind = DefaultKind(doc.role);
  if (kind.empty()) return Error{PathKey(path, "kind") + ": missing"};
  if (kind == "Node" && doc.role == DocumentRole::kPods) {
    return Error{path + ": a Node, but " + Expected(doc.role, doc.flag) +
                 " (give nodes with --nodes)"};
  }
  if (kind == "Node") {
    TESSERA_RETURN_IF_ERROR(RequireMetadataString(item, path, "name"));
    TESSERA_RETURN_IF_ERROR(RequireField(item, path, "status", false));
    TESSERA_RETURN_IF_ERROR(
        RequireField(*FindField(item, "status"), PathKey(path, "status"), "allocatable", false));
    Result<k8s::Node> node = k8s::DecodeNode(item, path);
    if (!node.ok()) return node.error();
    if (!node_names->insert(node->name).second) {
      return Error{path + ": duplicate node " + QuoteForError(node->name)};
    }
    s->nodes.push_back(std::move(*node));
    s->node_paths.push_back(path);
    s->node_items.push_back(std::move(item));
    return {};
  }
  if (kind == "Pod") {
    TESSERA_RETURN_IF_ERROR(RequireMetadataString(item, path, "name"));
    TESSERA_RETURN_IF_ERROR(RequireMetadataString(item, path, "namespace"));
    TESSERA_RETURN_IF_ERROR(RequireField(item, path, "spec", false));
    TESSERA_RETURN_IF_ERROR(
        RequireField(*FindField(item, "spec"), PathKey(path, "spec"), "containers", true));
    SnapshotPod p;
    p.path = path;
    Result<k8s::Pod> pod = k8s::DecodePod(item, path);
    if (!pod.ok()) return pod.error();
    p.pod = std::move(*pod);
    TESSERA_ASSIGN_OR_RETURN(p.owners, ReadOwners(item, path));
    TESSERA_ASSIGN_OR_RETURN(p.restarts, ReadRestarts(item, path));
    const std::string key = k8s::ObjectKey(p.pod.namespace_name, p.pod.name);
    if (!pod_keys->insert(key).second) return Error{path + ": duplicate pod " + key};
    if (!p.pod.uid.empty() && !pod_keys->insert("uid:" + p.pod.uid).second) {
      return Error{path + ": duplicate pod UID " + p.pod.uid};
    }
    s->pods.push_back(std::move(p));
    s->pod_items.push_back(std::move(item));
    return {};
  }
  if (kind == "PodDisruptionBudget") {
    Result<SnapshotPdb> pdb = ReadPdb(item, path);
    if (!pdb.ok()) return pdb.error();
    s->pdbs.push_back(std::move(*pdb));
    return {};
  }
  return Error{PathKey(path, "kind") + ": unknown kind " + QuoteForError(kind) +
               " (expected Node, Pod or PodDisruptionBudget, as `kubectl get nodes,pods,pdb -A "
               "-o json` prints)"};
}

/// Adds every object of one parsed document.
Status AddObjects(Json& doc, const SnapshotText& text, Snapshot* s,
                  std::set<std::string>* node_names, std::set<std::string>* pod_keys) {
  const std::string& name = text.name;
  if (doc.is_array()) {
    for (size_t i = 0; i < doc.size(); ++i) {
      TESSERA_RETURN_IF_ERROR(
          AddItem(doc[i], name + ": " + PathIndex("", i), "", text, s, node_names, pod_keys));
    }
    return {};
  }
  if (!doc.is_object()) return k8s::TypeError(name, "object or array", doc);
  std::string kind;
  TESSERA_RETURN_IF_ERROR(ReadString(FindField(doc, "kind"), name + ": kind", &kind));
  Json* items = const_cast<Json*>(FindField(doc, "items"));
  const bool list = kind == "List" || (kind.size() > 4 && kind.ends_with("List")) ||
                    (kind.empty() && items != nullptr);
  if (!list) return AddItem(doc, name + ": (object)", "", text, s, node_names, pod_keys);
  const std::string item_kind = KindOfList(kind);
  if (kind != "List" && !kind.empty() && item_kind.empty()) {
    return Error{name + ": kind: unknown list kind " + QuoteForError(kind) +
                 " (expected List, NodeList, PodList or PodDisruptionBudgetList)"};
  }
  // A typed list of the wrong kind for the document's role, refused as a whole.
  if ((text.role == DocumentRole::kNodes && !item_kind.empty() && item_kind != "Node") ||
      (text.role == DocumentRole::kPods && item_kind == "Node")) {
    return Error{name + ": a " + kind + ", but " + Expected(text.role, text.flag)};
  }
  if (items == nullptr || items->is_null()) return {};
  if (!items->is_array()) return k8s::TypeError(name + ": items", "array", *items);
  for (size_t i = 0; i < items->size(); ++i) {
    TESSERA_RETURN_IF_ERROR(AddItem((*items)[i], name + ": " + PathIndex("items", i), item_kind,
                                    text, s, node_names, pod_keys));
  }
  return {};
}

/// AddObjects, then the role's check of what the document held.
Status AddDocument(Json& doc, const SnapshotText& text, Snapshot* s,
                   std::set<std::string>* node_names, std::set<std::string>* pod_keys) {
  const size_t nodes = s->nodes.size(), pods = s->pods.size(), pdbs = s->pdbs.size();
  TESSERA_RETURN_IF_ERROR(AddObjects(doc, text, s, node_names, pod_keys));
  if (text.role == DocumentRole::kNodes && s->nodes.size() == nodes) {
    return Error{text.name + ": no Node objects (" + std::to_string(s->pods.size() - pods) +
                 " Pod, " + std::to_string(s->pdbs.size() - pdbs) + " PodDisruptionBudget), but " +
                 Expected(text.role, text.flag)};
  }
  return {};
}

}  // namespace

Result<Snapshot> ReadSnapshot(const std::vector<SnapshotText>& docs) {
  Snapshot s;
  std::set<std::string> node_names;
  std::set<std::string> pod_keys;
  for (const SnapshotText& d : docs) {
    Result<Json> doc = k8s::ParseJson(d.text, kMaxSnapshotBytes, d.name);
    if (!doc.ok()) return doc.error();
    TESSERA_RETURN_IF_ERROR(AddDocument(*doc, d, &s, &node_names, &pod_keys));
    s.sources.push_back(d.name);
  }
  if (s.nodes.empty()) {
    return Error{"no Node objects in the input (give `kubectl get nodes,pods,pdb -A -o json`)"};
  }
  return s;
}

ApiSnapshot ListSnapshot(k8s::KubeApi& api, const std::string& server) {
  ApiSnapshot out;
  Snapshot s;
  std::set<std::string> node_names;
  std::set<std::string> pod_keys;
  struct Collection {
    std::vector<std::string> paths;  ///< then the older versions to ask on 404
    const char* kind;
    bool budgets;  ///< optional: the read goes on without them (k8s::BudgetsUnavailable)
  };
  const Collection collections[] = {{{"/api/v1/nodes"}, "Node", false},
                                    {{"/api/v1/pods"}, "Pod", false},
                                    {k8s::DisruptionBudgetPaths(), "PodDisruptionBudget", true}};
  for (const Collection& c : collections) {
    k8s::ListOptions options;
    size_t path_index = 0;
    size_t index = 0;
    for (;;) {
      const std::string& path = c.paths[path_index];
      k8s::ListPage page;
      k8s::ApiStatus st = api.List(path, options, &page);
      if (!st.ok()) {
        if (st.http_status == 404 && index == 0 && path_index + 1 < c.paths.size()) {
          ++path_index;  // not served: the older version
          continue;
        }
        if (c.budgets) {
          s.budgets_not_read = k8s::BudgetsUnavailable(st.http_status, st.error);
          if (!s.budgets_not_read.empty()) {
            s.pdbs.clear();
            break;
          }
        }
        out.api_error = ApiReadError{st.error, st.http_status};
        return out;
      }
      for (Json& item : page.items) {
        const std::string where = server + " " + path + ": " + PathIndex("items", index++);
        Status added = AddItem(item, where, c.kind, SnapshotText{}, &s, &node_names, &pod_keys);
        if (!added.ok()) {
          out.input_error = added.error();
          return out;
        }
      }
      if (page.continue_token.empty()) break;
      options.continue_token = page.continue_token;
    }
  }
  if (s.nodes.empty()) {
    out.input_error = Error{server + ": the API lists no nodes"};
    return out;
  }
  s.sources.push_back(server);
  out.snapshot = std::move(s);
  return out;
}

Result<std::unique_ptr<k8s::Extender>> MakeFileExtender(const Snapshot& snapshot,
                                                        const k8s::ExtenderOptions& options) {
  std::vector<k8s::JsonObject> nodes, pods;
  for (size_t i = 0; i < snapshot.node_items.size(); ++i) {
    nodes.push_back({&snapshot.node_items[i], snapshot.node_paths[i]});
  }
  for (size_t i = 0; i < snapshot.pod_items.size(); ++i) {
    pods.push_back({&snapshot.pod_items[i], snapshot.pods[i].path});
  }
  Result<std::unique_ptr<k8s::Extender>> ext = k8s::Extender::FromObjects(nodes, pods, options);
  if (!ext.ok()) return ext.error();
  std::vector<k8s::PodDisruptionBudget> budgets;
  for (const SnapshotPdb& p : snapshot.pdbs) budgets.push_back(p.pdb);
  (*ext)->SetDisruptionBudgets(std::move(budgets));
  return ext;
}

}  // namespace tessera::analyze
