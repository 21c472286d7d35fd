#include "k8s/extender_protocol.h"

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "k8s/json_util.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// Parses a body that must be a JSON object; `what` names the type in errors.
Result<Json> ParseObjectBody(std::string_view body, size_t max_bytes, std::string_view what) {
  Result<Json> j = ParseJson(body, max_bytes, what);
  if (!j.ok()) return j.error();
  if (!j->is_object()) return TypeError(what, "object", *j);
  return j;
}

// The required Pod field of a request.
Result<Pod> RequiredPod(const Json& obj) {
  const Json* p = FindField(obj, "Pod");
  if (p == nullptr || p->is_null()) return Error{"Pod: missing"};
  return DecodePod(*p, "Pod");
}

// A list of strings (null elements are "", as in Go); nullopt when absent or null.
Result<std::optional<std::vector<std::string>>> StringList(const Json& obj, std::string_view key) {
  const Json* list = nullptr;
  TESSERA_K8S_ASSIGN(list, ArrayField(obj, key, ""));
  if (list == nullptr) return std::optional<std::vector<std::string>>();
  std::vector<std::string> out;
  out.reserve(list->size());
  for (size_t i = 0; i < list->size(); ++i) {
    std::string s;
    TESSERA_K8S_RETURN_IF_ERROR(ReadString(&(*list)[i], PathIndex(key, i), &s));
    out.push_back(std::move(s));
  }
  return std::optional<std::vector<std::string>>(std::move(out));
}

// The items of a v1.NodeList ({"items": [...]}) or of a bare array; nullptr when null/absent.
// *items_path receives the path of the array.
Result<const Json*> NodeListItems(const Json& obj, std::string_view key, std::string* items_path) {
  const Json* v = FindField(obj, key);
  if (v == nullptr || v->is_null()) return static_cast<const Json*>(nullptr);
  if (v->is_array()) {
    *items_path = std::string(key);
    return v;
  }
  if (!v->is_object()) return TypeError(key, "NodeList object", *v);
  *items_path = PathKey(key, "items");
  const Json* items = nullptr;
  TESSERA_K8S_ASSIGN(items, ArrayField(*v, "items", key));
  static const Json kEmpty = Json::array();
  return items == nullptr ? &kEmpty : items;
}

std::string DumpValue(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<MetaVictims> DecodeMetaVictims(const Json& v, std::string_view path) {
  MetaVictims m;
  if (v.is_null()) return m;
  if (!v.is_object()) return TypeError(path, "MetaVictims object", v);
  TESSERA_K8S_RETURN_IF_ERROR(ReadInt64(FindField(v, "NumPDBViolations"),
                                        PathKey(path, "NumPDBViolations"), kInt64Min, kInt64Max,
                                        &m.num_pdb_violations));
  const Json* pods = nullptr;
  TESSERA_K8S_ASSIGN(pods, ArrayField(v, "Pods", path));
  if (pods == nullptr) return m;
  const std::string pods_path = PathKey(path, "Pods");
  for (size_t i = 0; i < pods->size(); ++i) {
    const Json& p = (*pods)[i];
    const std::string ppath = PathIndex(pods_path, i);
    if (!p.is_object()) return TypeError(ppath, "MetaPod object", p);
    std::string uid;
    TESSERA_K8S_RETURN_IF_ERROR(ReadString(FindField(p, "UID"), PathKey(ppath, "UID"), &uid));
    m.pod_uids.push_back(std::move(uid));
  }
  return m;
}

Result<Victims> DecodeVictims(const Json& v, std::string_view path) {
  Victims out;
  if (v.is_null()) return out;
  if (!v.is_object()) return TypeError(path, "Victims object", v);
  TESSERA_K8S_RETURN_IF_ERROR(ReadInt64(FindField(v, "NumPDBViolations"),
                                        PathKey(path, "NumPDBViolations"), kInt64Min, kInt64Max,
                                        &out.num_pdb_violations));
  const Json* pods = nullptr;
  TESSERA_K8S_ASSIGN(pods, ArrayField(v, "Pods", path));
  if (pods == nullptr) return out;
  const std::string pods_path = PathKey(path, "Pods");
  for (size_t i = 0; i < pods->size(); ++i) {
    Pod pod;
    TESSERA_K8S_ASSIGN(pod, DecodePod((*pods)[i], PathIndex(pods_path, i)));
    out.pods.push_back(std::move(pod));
  }
  return out;
}

// A map field whose values decode with `decode`; nullopt when absent or null.
template <typename T, typename Decode>
Result<std::optional<std::map<std::string, T>>> DecodeMap(const Json& obj, std::string_view key,
                                                          Decode decode) {
  const Json* m = nullptr;
  TESSERA_K8S_ASSIGN(m, ObjectField(obj, key, ""));
  if (m == nullptr) return std::optional<std::map<std::string, T>>();
  std::map<std::string, T> out;
  for (auto it = m->begin(); it != m->end(); ++it) {
    T value;
    TESSERA_K8S_ASSIGN(value, decode(*it, PathKey(key, it.key())));
    out.emplace(it.key(), std::move(value));
  }
  return std::optional<std::map<std::string, T>>(std::move(out));
}

// A required, non-empty string field.
Status RequiredString(const Json& obj, std::string_view key, std::string* out) {
  TESSERA_K8S_RETURN_IF_ERROR(ReadString(FindField(obj, key), key, out));
  if (out->empty()) return Error{std::string(key) + ": missing"};
  return Status();
}

OrderedJson StringMapJson(const std::map<std::string, std::string>& m) {
  OrderedJson out = OrderedJson::object();
  for (const auto& [k, v] : m) out[k] = v;
  return out;
}

OrderedJson MetaVictimsJson(const MetaVictims& m) {
  OrderedJson pods = OrderedJson::array();
  for (const std::string& uid : m.pod_uids) {
    OrderedJson p = OrderedJson::object();
    p["UID"] = uid;
    pods.push_back(std::move(p));
  }
  OrderedJson out = OrderedJson::object();
  out["Pods"] = std::move(pods);
  out["NumPDBViolations"] = m.num_pdb_violations;
  return out;
}

}  // namespace

std::vector<std::string> ExtenderArgs::CandidateNames() const {
  if (node_names) return *node_names;
  std::vector<std::string> out;
  if (nodes) {
    out.reserve(nodes->size());
    for (const Node& n : *nodes) out.push_back(n.name);
  }
  return out;
}

Result<ExtenderArgs> DecodeExtenderArgs(std::string_view body, size_t max_bytes) {
  Json j;
  TESSERA_K8S_ASSIGN(j, ParseObjectBody(body, max_bytes, "ExtenderArgs"));
  ExtenderArgs args;
  TESSERA_K8S_ASSIGN(args.pod, RequiredPod(j));
  std::string items_path;
  const Json* items = nullptr;
  TESSERA_K8S_ASSIGN(items, NodeListItems(j, "Nodes", &items_path));
  if (items != nullptr) {
    std::vector<Node> nodes;
    nodes.reserve(items->size());
    args.nodes_json.reserve(items->size());
    for (size_t i = 0; i < items->size(); ++i) {
      Node n;
      TESSERA_K8S_ASSIGN(n, DecodeNode((*items)[i], PathIndex(items_path, i)));
      nodes.push_back(std::move(n));
      args.nodes_json.push_back(DumpValue((*items)[i]));
    }
    args.nodes = std::move(nodes);
  }
  TESSERA_K8S_ASSIGN(args.node_names, StringList(j, "NodeNames"));
  return args;
}

Result<ExtenderPreemptionArgs> DecodeExtenderPreemptionArgs(std::string_view body,
                                                            size_t max_bytes) {
  Json j;
  TESSERA_K8S_ASSIGN(j, ParseObjectBody(body, max_bytes, "ExtenderPreemptionArgs"));
  ExtenderPreemptionArgs args;
  TESSERA_K8S_ASSIGN(args.pod, RequiredPod(j));
  TESSERA_K8S_ASSIGN(args.node_name_to_victims,
                     DecodeMap<Victims>(j, "NodeNameToVictims", DecodeVictims));
  TESSERA_K8S_ASSIGN(args.node_name_to_meta_victims,
                     DecodeMap<MetaVictims>(j, "NodeNameToMetaVictims", DecodeMetaVictims));
  return args;
}

Result<ExtenderBindingArgs> DecodeExtenderBindingArgs(std::string_view body, size_t max_bytes) {
  Json j;
  TESSERA_K8S_ASSIGN(j, ParseObjectBody(body, max_bytes, "ExtenderBindingArgs"));
  ExtenderBindingArgs args;
  TESSERA_K8S_RETURN_IF_ERROR(RequiredString(j, "PodName", &args.pod_name));
  TESSERA_K8S_RETURN_IF_ERROR(
      ReadString(FindField(j, "PodNamespace"), "PodNamespace", &args.pod_namespace));
  TESSERA_K8S_RETURN_IF_ERROR(RequiredString(j, "PodUID", &args.pod_uid));
  TESSERA_K8S_RETURN_IF_ERROR(RequiredString(j, "Node", &args.node));
  return args;
}

std::string EncodeExtenderFilterResult(const ExtenderFilterResult& result) {
  std::string out = "{\"Nodes\":";
  if (result.nodes_json) {
    out += "{\"metadata\":{},\"items\":[";
    for (size_t i = 0; i < result.nodes_json->size(); ++i) {
      if (i > 0) out += ',';
      out += (*result.nodes_json)[i];
    }
    out += "]}";
  } else {
    out += "null";
  }
  OrderedJson names = OrderedJson::array();
  for (const std::string& n : result.node_names) names.push_back(n);
  out += ",\"NodeNames\":" + DumpJson(names);
  out += ",\"FailedNodes\":" + DumpJson(StringMapJson(result.failed_nodes));
  out += ",\"FailedAndUnresolvableNodes\":" +
         DumpJson(StringMapJson(result.failed_and_unresolvable_nodes));
  out += ",\"Error\":" + DumpJson(OrderedJson(result.error));
  out += "}";
  return out;
}

std::string EncodeHostPriorityList(const HostPriorityList& list) {
  OrderedJson out = OrderedJson::array();
  for (const HostPriority& h : list) {
    OrderedJson e = OrderedJson::object();
    e["Host"] = h.host;
    e["Score"] = h.score;
    out.push_back(std::move(e));
  }
  return DumpJson(out);
}

std::string EncodeExtenderPreemptionResult(const ExtenderPreemptionResult& result) {
  OrderedJson victims = OrderedJson::object();
  for (const auto& [node, m] : result.node_name_to_meta_victims) victims[node] = MetaVictimsJson(m);
  OrderedJson out = OrderedJson::object();
  out["NodeNameToMetaVictims"] = std::move(victims);
  return DumpJson(out);
}

std::string EncodeExtenderBindingResult(const ExtenderBindingResult& result) {
  OrderedJson out = OrderedJson::object();
  out["Error"] = result.error;
  return DumpJson(out);
}

std::string EncodeExtenderBindingArgs(const ExtenderBindingArgs& args) {
  OrderedJson out = OrderedJson::object();
  out["PodName"] = args.pod_name;
  out["PodNamespace"] = args.pod_namespace;
  out["PodUID"] = args.pod_uid;
  out["Node"] = args.node;
  return DumpJson(out);
}

Result<ExtenderFilterResult> DecodeExtenderFilterResult(std::string_view body, size_t max_bytes) {
  Json j;
  TESSERA_K8S_ASSIGN(j, ParseObjectBody(body, max_bytes, "ExtenderFilterResult"));
  ExtenderFilterResult r;
  std::string items_path;
  const Json* items = nullptr;
  TESSERA_K8S_ASSIGN(items, NodeListItems(j, "Nodes", &items_path));
  if (items != nullptr) {
    std::vector<std::string> nodes;
    for (size_t i = 0; i < items->size(); ++i) {
      const Json& n = (*items)[i];
      if (!n.is_object()) return TypeError(PathIndex(items_path, i), "Node object", n);
      nodes.push_back(DumpValue(n));
    }
    r.nodes_json = std::move(nodes);
  }
  std::optional<std::vector<std::string>> names;
  TESSERA_K8S_ASSIGN(names, StringList(j, "NodeNames"));
  if (names) r.node_names = std::move(*names);
  TESSERA_K8S_RETURN_IF_ERROR(
      ReadStringMap(FindField(j, "FailedNodes"), "FailedNodes", &r.failed_nodes));
  TESSERA_K8S_RETURN_IF_ERROR(ReadStringMap(FindField(j, "FailedAndUnresolvableNodes"),
                                            "FailedAndUnresolvableNodes",
                                            &r.failed_and_unresolvable_nodes));
  TESSERA_K8S_RETURN_IF_ERROR(ReadString(FindField(j, "Error"), "Error", &r.error));
  return r;
}

Result<HostPriorityList> DecodeHostPriorityList(std::string_view body, size_t max_bytes) {
  Json j;
  TESSERA_K8S_ASSIGN(j, ParseJson(body, max_bytes, "HostPriorityList"));
  HostPriorityList out;
  if (j.is_null()) return out;
  if (!j.is_array()) return TypeError("HostPriorityList", "array", j);
  for (size_t i = 0; i < j.size(); ++i) {
    const Json& e = j[i];
    const std::string path = PathIndex("HostPriorityList", i);
    if (!e.is_object()) return TypeError(path, "HostPriority object", e);
    HostPriority h;
    TESSERA_K8S_RETURN_IF_ERROR(ReadString(FindField(e, "Host"), PathKey(path, "Host"), &h.host));
    TESSERA_K8S_RETURN_IF_ERROR(
        ReadInt64(FindField(e, "Score"), PathKey(path, "Score"), kInt64Min, kInt64Max, &h.score));
    out.push_back(std::move(h));
  }
  return out;
}

Result<ExtenderPreemptionResult> DecodeExtenderPreemptionResult(std::string_view body,
                                                                size_t max_bytes) {
  Json j;
  TESSERA_K8S_ASSIGN(j, ParseObjectBody(body, max_bytes, "ExtenderPreemptionResult"));
  ExtenderPreemptionResult r;
  std::optional<std::map<std::string, MetaVictims>> m;
  TESSERA_K8S_ASSIGN(m, DecodeMap<MetaVictims>(j, "NodeNameToMetaVictims", DecodeMetaVictims));
  if (m) r.node_name_to_meta_victims = std::move(*m);
  return r;
}

Result<ExtenderBindingResult> DecodeExtenderBindingResult(std::string_view body, size_t max_bytes) {
  Json j;
  TESSERA_K8S_ASSIGN(j, ParseObjectBody(body, max_bytes, "ExtenderBindingResult"));
  ExtenderBindingResult r;
  TESSERA_K8S_RETURN_IF_ERROR(ReadString(FindField(j, "Error"), "Error", &r.error));
  return r;
}

}  // namespace tessera::k8s
