// The extender wire codecs (extender_protocol.h). Bodies are parsed with nlohmann/json, except
// on the request path's fast path (DecodeFast below): kube-scheduler's filter/prioritize body
// for a nodeCacheCapable extender is read with simdjson's On-Demand parser (Debian:
// libsimdjson-dev), which leaves the node names as views into the body. docs/PERFORMANCE.md,
// "JSON decoding on the request path", has the cost of each decoder and the commands.
#include "k8s/extender/extender_protocol.h"

#include <simdjson.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "k8s/api/json_util.h"

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
  TESSERA_ASSIGN_OR_RETURN(list, ArrayField(obj, key, ""));
  if (list == nullptr) return std::optional<std::vector<std::string>>();
  std::vector<std::string> out;
  out.reserve(list->size());
  for (size_t i = 0; i < list->size(); ++i) {
    std::string s;
    TESSERA_RETURN_IF_ERROR(ReadString(&(*list)[i], PathIndex(key, i), &s));
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
  TESSERA_ASSIGN_OR_RETURN(items, ArrayField(*v, "items", key));
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
  TESSERA_RETURN_IF_ERROR(ReadInt64(FindField(v, "NumPDBViolations"),
                                    PathKey(path, "NumPDBViolations"), kInt64Min, kInt64Max,
                                    &m.num_pdb_violations));
  const Json* pods = nullptr;
  TESSERA_ASSIGN_OR_RETURN(pods, ArrayField(v, "Pods", path));
  if (pods == nullptr) return m;
  const std::string pods_path = PathKey(path, "Pods");
  for (size_t i = 0; i < pods->size(); ++i) {
    const Json& p = (*pods)[i];
    const std::string ppath = PathIndex(pods_path, i);
    if (!p.is_object()) return TypeError(ppath, "MetaPod object", p);
    std::string uid;
    TESSERA_RETURN_IF_ERROR(ReadString(FindField(p, "UID"), PathKey(ppath, "UID"), &uid));
    m.pod_uids.push_back(std::move(uid));
  }
  return m;
}

Result<Victims> DecodeVictims(const Json& v, std::string_view path) {
  Victims out;
  if (v.is_null()) return out;
  if (!v.is_object()) return TypeError(path, "Victims object", v);
  TESSERA_RETURN_IF_ERROR(ReadInt64(FindField(v, "NumPDBViolations"),
                                    PathKey(path, "NumPDBViolations"), kInt64Min, kInt64Max,
                                    &out.num_pdb_violations));
  const Json* pods = nullptr;
  TESSERA_ASSIGN_OR_RETURN(pods, ArrayField(v, "Pods", path));
  if (pods == nullptr) return out;
  const std::string pods_path = PathKey(path, "Pods");
  for (size_t i = 0; i < pods->size(); ++i) {
    Pod pod;
    TESSERA_ASSIGN_OR_RETURN(pod, DecodePod((*pods)[i], PathIndex(pods_path, i)));
    out.pods.push_back(std::move(pod));
  }
  return out;
}

// A map field whose values decode with `decode`; nullopt when absent or null.
template <typename T, typename Decode>
Result<std::optional<std::map<std::string, T>>> DecodeMap(const Json& obj, std::string_view key,
                                                          Decode decode) {
  const Json* m = nullptr;
  TESSERA_ASSIGN_OR_RETURN(m, ObjectField(obj, key, ""));
  if (m == nullptr) return std::optional<std::map<std::string, T>>();
  std::map<std::string, T> out;
  for (auto it = m->begin(); it != m->end(); ++it) {
    T value;
    TESSERA_ASSIGN_OR_RETURN(value, decode(*it, PathKey(key, it.key())));
    out.emplace(it.key(), std::move(value));
  }
  return std::optional<std::map<std::string, T>>(std::move(out));
}

// A required, non-empty string field.
Status RequiredString(const Json& obj, std::string_view key, std::string* out) {
  TESSERA_RETURN_IF_ERROR(ReadString(FindField(obj, key), key, out));
  if (out->empty()) return Error{std::string(key) + ": missing"};
  return Status();
}

// {"k":"v",...} in key order (std::map is sorted). Linear: ordered_json's operator[] searches
// its keys one by one, which made a 5000-node answer quadratic.
void AppendStringMap(std::string* out, const std::map<std::string, std::string>& m) {
  *out += '{';
  bool first = true;
  for (const auto& [k, v] : m) {
    if (!first) *out += ',';
    first = false;
    AppendJsonString(out, k);
    *out += ':';
    AppendJsonString(out, v);
  }
  *out += '}';
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

// The fast path of DecodeExtenderArgs, for the body kube-scheduler sends a nodeCacheCapable
// extender: exactly the keys "Pod", "Nodes" (null) and "NodeNames" (null or an array of
// strings without escapes), each once. simdjson's On-Demand parser reads the outer object and
// the names, without a JSON tree (a tree of 5000 names was most of the cost of a request):
// it has checked that the whole body is UTF-8 without a control byte in any string, so the
// names are their own text and stay views into the body. The Pod value is parsed and decoded
// as in the general path. Anything else (other keys, other spellings, escapes, malformed JSON,
// errors of any kind) returns nullopt, and the general path decides, so the two paths accept
// the same bodies with the same result.
// The fast path's result: the pod, and the names as views into the body.
struct FastArgs {
  Pod pod;
  std::optional<std::vector<std::string_view>> node_names;
  uint64_t names_id = 0;        ///< the NodeNamesMemo entry that matched, or 0
  std::string_view names_text;  ///< the array's text ('[' ... ']') when it was read
};

using MemoEntries = std::array<std::shared_ptr<const NodeNamesMemo::Entry>, NodeNamesMemo::kSlots>;

namespace od = simdjson::ondemand;

static_assert(kExtenderBodyPadding >= simdjson::SIMDJSON_PADDING);

/// Bodies up to this size are parsed by the parser its thread keeps (its buffers, about six
/// bytes per byte of the largest body so far, stay allocated for the next request); larger
/// ones by a parser of their own, freed after.
constexpr size_t kKeptParserBytes = size_t{2} << 20;

bool IsBlank(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

/// The nesting depth of `j` (0 for a scalar).
int Depth(const Json& j) {
  if (!j.is_structured()) return 0;
  int depth = 0;
  for (const Json& e : j) depth = std::max(depth, Depth(e));
  return depth + 1;
}

/// What one pass over a body found; views into the text that was parsed.
struct Scanned {
  std::string_view pod_text;
  bool has_names = false;
  std::vector<std::string_view> names;
  std::string_view names_text;  ///< '[' ... ']' exactly as in the text
};

/// The fast path's keys and values in `text` (padded); false for anything else.
bool Scan(od::parser& parser, simdjson::padded_string_view text, Scanned* out) {
  od::document doc;
  if (parser.iterate(text).get(doc) != simdjson::SUCCESS) return false;
  od::object obj;
  if (doc.get_object().get(obj) != simdjson::SUCCESS) return false;
  bool seen_pod = false, seen_nodes = false, seen_names = false;
  for (auto field_result : obj) {
    od::field field;
    if (std::move(field_result).get(field) != simdjson::SUCCESS) return false;
    // The key as written: an escaped spelling of "Pod" is another key here.
    const od::raw_json_string key = field.key();
    od::value value = field.value();
    if (!seen_pod && key.is_equal("Pod")) {
      seen_pod = true;
      // An object, its text as it is (any other Pod is the general path's to judge).
      od::object pod;
      if (value.get_object().get(pod) != simdjson::SUCCESS ||
          pod.raw_json().get(out->pod_text) != simdjson::SUCCESS) {
        return false;
      }
    } else if (!seen_nodes && key.is_equal("Nodes")) {
      seen_nodes = true;
      bool null = false;
      if (value.is_null().get(null) != simdjson::SUCCESS || !null) return false;
    } else if (!seen_names && key.is_equal("NodeNames")) {
      seen_names = true;
      bool null = false;
      if (value.is_null().get(null) != simdjson::SUCCESS) return false;
      if (null) continue;
      const char* open = value.raw_json_token().data();  // the '['
      od::array array;
      if (value.get_array().get(array) != simdjson::SUCCESS) return false;
      out->has_names = true;
      const char* last = nullptr;  // past the last name's closing quote
      for (auto element : array) {
        od::value v;
        if (std::move(element).get(v) != simdjson::SUCCESS) return false;
        // A name is ~20 bytes of text with its quotes and comma: one allocation for the list.
        if (last == nullptr) out->names.reserve(text.size() / 16 + 1);
        // The token runs from its opening quote to the next structural character.
        std::string_view token = v.raw_json_token();
        while (!token.empty() && IsBlank(token.back())) token.remove_suffix(1);
        if (token.size() < 2 || token.front() != '"' || token.back() != '"') return false;
        last = token.data() + token.size();
        out->names.emplace_back(token.data() + 1, token.size() - 2);
      }
      // The iteration has checked that only commas and blanks lie between the names and
      // blanks before the ']'; a backslash in between is an escape in a name, which the
      // general path decodes.
      const char* close = last != nullptr ? last : open + 1;
      if (last != nullptr && std::memchr(open, '\\', static_cast<size_t>(last - open))) {
        return false;
      }
      while (IsBlank(*close)) ++close;  // the padding ends any run of blanks
      if (*close != ']') return false;
      out->names_text = std::string_view(open, static_cast<size_t>(close + 1 - open));
    } else {
      return false;
    }
  }
  // Nothing after the object (On-Demand reads no further than it is asked to).
  return seen_pod && doc.current_location().error() == simdjson::OUT_OF_BOUNDS;
}

/// Scan with the parser this thread keeps, or one of its own for a large text.
bool ScanWithParser(simdjson::padded_string_view text, Scanned* out) {
  if (text.size() > kKeptParserBytes) {
    od::parser parser;
    return Scan(parser, text, out);
  }
  static thread_local od::parser parser;
  return Scan(parser, text, out);
}

/// The Pod, parsed and decoded as the general path does; nullopt on any error.
std::optional<Pod> FastPod(std::string_view text, size_t max_bytes) {
  Result<Json> pod = ParseJson(text, max_bytes, "Pod");
  // The body nests one deeper than its Pod, and the general path's limit is on the body.
  if (!pod.ok() || Depth(*pod) >= kMaxJsonDepth) return std::nullopt;
  Result<Pod> decoded = DecodePod(*pod, "Pod");
  if (!decoded.ok()) return std::nullopt;
  return std::move(*decoded);
}

/// kube-scheduler writes NodeNames last ({"Pod":...,"Nodes":null,"NodeNames":[...]}). A body
/// that ends with an array the memo remembers, then '}', is decoded without reading that array
/// again: the text before it is parsed with "[]" in its place. When that "[]" is the value of
/// NodeNames, the body is the same document with the remembered array (valid JSON, plain
/// names, checked when it was first read) as that value, so this is exact.
std::optional<FastArgs> FromMemo(std::string_view body, const MemoEntries& memo, size_t max_bytes) {
  std::string_view head = body;
  while (!head.empty() && IsBlank(head.back())) head.remove_suffix(1);
  if (head.empty() || head.back() != '}') return std::nullopt;
  head.remove_suffix(1);
  while (!head.empty() && IsBlank(head.back())) head.remove_suffix(1);
  for (const auto& e : memo) {
    if (e == nullptr || e->text.size() > head.size() ||
        std::memcmp(head.data() + head.size() - e->text.size(), e->text.data(), e->text.size()) !=
            0) {
      continue;
    }
    const std::string_view before = head.substr(0, head.size() - e->text.size());
    std::string text;
    text.reserve(before.size() + 3 + simdjson::SIMDJSON_PADDING);
    text.append(before).append("[]}");
    Scanned scan;
    if (!ScanWithParser(simdjson::padded_string_view(text.data(), text.size(), text.capacity()),
                        &scan) ||
        !scan.has_names || scan.names_text.data() != text.data() + before.size() ||
        scan.names_text.size() != 2) {
      return std::nullopt;
    }
    std::optional<Pod> pod = FastPod(scan.pod_text, max_bytes);
    if (!pod) return std::nullopt;
    FastArgs args;
    args.pod = std::move(*pod);
    const char* at_text = body.data() + before.size();
    const size_t n = e->at.size();
    std::vector<std::string_view> names(n);
    std::string_view* out = names.data();
    const uint32_t* at = e->at.data();
    const uint32_t* len = e->len.data();
    for (size_t k = 0; k < n; ++k) out[k] = std::string_view(at_text + at[k], len[k]);
    args.node_names = std::move(names);
    args.names_id = e->id;
    return args;
  }
  return std::nullopt;
}

/// The fast path. `capacity`: the bytes allocated at body.data(); with kExtenderBodyPadding to
/// spare the body is parsed where it is, else a padded copy is.
std::optional<FastArgs> DecodeFast(std::string_view body, size_t capacity, size_t max_bytes,
                                   const MemoEntries* memo) {
  if (body.size() > max_bytes) return std::nullopt;
  if (memo != nullptr) {
    if (std::optional<FastArgs> hit = FromMemo(body, *memo, max_bytes)) return hit;
  }
  Scanned scan;
  std::optional<simdjson::padded_string> copy;
  const char* parsed = body.data();
  if (capacity >= body.size() + kExtenderBodyPadding) {
    if (!ScanWithParser(simdjson::padded_string_view(body.data(), body.size(), capacity), &scan)) {
      return std::nullopt;
    }
  } else {
    copy.emplace(body);
    parsed = copy->data();
    if (!ScanWithParser(*copy, &scan)) return std::nullopt;
  }
  std::optional<Pod> pod = FastPod(scan.pod_text, max_bytes);
  if (!pod) return std::nullopt;
  FastArgs args;
  args.pod = std::move(*pod);
  if (scan.has_names) {
    // Views into the body, also when the copy was parsed.
    const auto into_body = [&](std::string_view v) {
      return std::string_view(body.data() + (v.data() - parsed), v.size());
    };
    if (copy) {
      for (std::string_view& name : scan.names) name = into_body(name);
      scan.names_text = into_body(scan.names_text);
    }
    args.names_text = scan.names_text;
    // An array the memo remembers elsewhere in the body than at its end.
    if (memo != nullptr) {
      for (const auto& e : *memo) {
        if (e != nullptr && e->text == args.names_text) args.names_id = e->id;
      }
    }
    args.node_names = std::move(scan.names);
  }
  return args;
}

/// Ids of NodeNamesMemo entries, unique in the process.
std::atomic<uint64_t> next_memo_id{1};

}  // namespace

std::array<std::shared_ptr<const NodeNamesMemo::Entry>, NodeNamesMemo::kSlots>
NodeNamesMemo::Snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_;
}

uint64_t NodeNamesMemo::Offer(std::string_view text, const std::vector<std::string_view>& names) {
  if (text.size() > std::numeric_limits<uint32_t>::max()) return 0;
  const uint64_t hash = std::hash<std::string_view>{}(text);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (std::find(seen_hashes_.begin(), seen_hashes_.end(), hash) == seen_hashes_.end()) {
      seen_hashes_[next_hash_] = hash;  // first sighting: remember only the hash
      next_hash_ = (next_hash_ + 1) % seen_hashes_.size();
      return 0;
    }
  }
  auto entry = std::make_shared<Entry>();
  entry->id = next_memo_id.fetch_add(1);
  entry->text.assign(text);
  entry->at.reserve(names.size());
  entry->len.reserve(names.size());
  for (const std::string_view name : names) {
    entry->at.push_back(static_cast<uint32_t>(name.data() - text.data()));
    entry->len.push_back(static_cast<uint32_t>(name.size()));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& h : seen_hashes_) {
    if (h == hash) h = 0;  // remembered now; a later eviction needs two sightings again
  }
  entries_[next_] = std::move(entry);
  next_ = (next_ + 1) % kSlots;
  return entries_[(next_ + kSlots - 1) % kSlots]->id;
}

uint64_t NodeNamesMemo::hits() const { return hits_.load(); }

std::vector<std::string_view> ExtenderArgs::CandidateNameViews() const {
  std::vector<std::string_view> out;
  if (node_names) {
    out.assign(node_names->begin(), node_names->end());
  } else if (nodes) {
    out.reserve(nodes->size());
    for (const Node& n : *nodes) out.emplace_back(n.name);
  }
  return out;
}

std::vector<std::string> ExtenderArgs::CandidateNames() const {
  if (node_names) return *node_names;
  std::vector<std::string> out;
  if (nodes) {
    out.reserve(nodes->size());
    for (const Node& n : *nodes) out.push_back(n.name);
  }
  return out;
}

Result<ExtenderArgs> DecodeExtenderArgsGeneral(std::string_view body, size_t max_bytes) {
  Json j;
  TESSERA_ASSIGN_OR_RETURN(j, ParseObjectBody(body, max_bytes, "ExtenderArgs"));
  ExtenderArgs args;
  TESSERA_ASSIGN_OR_RETURN(args.pod, RequiredPod(j));
  std::string items_path;
  const Json* items = nullptr;
  TESSERA_ASSIGN_OR_RETURN(items, NodeListItems(j, "Nodes", &items_path));
  if (items != nullptr) {
    std::vector<Node> nodes;
    nodes.reserve(items->size());
    args.nodes_json.reserve(items->size());
    for (size_t i = 0; i < items->size(); ++i) {
      Node n;
      TESSERA_ASSIGN_OR_RETURN(n, DecodeNode((*items)[i], PathIndex(items_path, i)));
      nodes.push_back(std::move(n));
      args.nodes_json.push_back(DumpValue((*items)[i]));
    }
    args.nodes = std::move(nodes);
  }
  TESSERA_ASSIGN_OR_RETURN(args.node_names, StringList(j, "NodeNames"));
  return args;
}

Result<ExtenderArgs> DecodeExtenderArgs(std::string_view body, size_t max_bytes) {
  if (std::optional<FastArgs> fast = DecodeFast(body, 0, max_bytes, nullptr)) {
    ExtenderArgs args;
    args.pod = std::move(fast->pod);
    if (fast->node_names) {
      args.node_names.emplace(fast->node_names->begin(), fast->node_names->end());
    }
    return args;
  }
  return DecodeExtenderArgsGeneral(body, max_bytes);
}

Status DecodeExtenderArgsRef(std::string_view body, ExtenderArgsRef* out, size_t max_bytes,
                             NodeNamesMemo* memo, size_t body_capacity) {
  MemoEntries entries;
  if (memo != nullptr) entries = memo->Snapshot();
  if (std::optional<FastArgs> fast =
          DecodeFast(body, body_capacity, max_bytes, memo != nullptr ? &entries : nullptr)) {
    out->args.pod = std::move(fast->pod);
    out->has_node_names = fast->node_names.has_value();
    if (fast->node_names) out->names = std::move(*fast->node_names);
    out->names_id = fast->names_id;
    if (memo != nullptr) {
      if (out->names_id != 0) {
        memo->hits_.fetch_add(1, std::memory_order_relaxed);
      } else if (out->has_node_names) {
        out->names_id = memo->Offer(fast->names_text, out->names);
      }
    }
    return Status();
  }
  Result<ExtenderArgs> general = DecodeExtenderArgsGeneral(body, max_bytes);
  if (!general.ok()) return general.error();
  out->args = std::move(*general);
  out->has_node_names = out->args.node_names.has_value();
  out->names = out->args.CandidateNameViews();
  return Status();
}

Result<ExtenderPreemptionArgs> DecodeExtenderPreemptionArgs(std::string_view body,
                                                            size_t max_bytes) {
  Json j;
  TESSERA_ASSIGN_OR_RETURN(j, ParseObjectBody(body, max_bytes, "ExtenderPreemptionArgs"));
  ExtenderPreemptionArgs args;
  TESSERA_ASSIGN_OR_RETURN(args.pod, RequiredPod(j));
  TESSERA_ASSIGN_OR_RETURN(args.node_name_to_victims,
                           DecodeMap<Victims>(j, "NodeNameToVictims", DecodeVictims));
  TESSERA_ASSIGN_OR_RETURN(args.node_name_to_meta_victims,
                           DecodeMap<MetaVictims>(j, "NodeNameToMetaVictims", DecodeMetaVictims));
  return args;
}

Result<ExtenderBindingArgs> DecodeExtenderBindingArgs(std::string_view body, size_t max_bytes) {
  Json j;
  TESSERA_ASSIGN_OR_RETURN(j, ParseObjectBody(body, max_bytes, "ExtenderBindingArgs"));
  ExtenderBindingArgs args;
  TESSERA_RETURN_IF_ERROR(RequiredString(j, "PodName", &args.pod_name));
  TESSERA_RETURN_IF_ERROR(
      ReadString(FindField(j, "PodNamespace"), "PodNamespace", &args.pod_namespace));
  TESSERA_RETURN_IF_ERROR(RequiredString(j, "PodUID", &args.pod_uid));
  TESSERA_RETURN_IF_ERROR(RequiredString(j, "Node", &args.node));
  return args;
}

std::string EncodeExtenderFilterResult(const ExtenderFilterResult& result) {
  std::string out;
  size_t reserve = 128;
  for (const std::string& n : result.node_names) reserve += n.size() + 3;
  for (const auto& [k, v] : result.failed_nodes) reserve += k.size() + v.size() + 6;
  for (const auto& [k, v] : result.failed_and_unresolvable_nodes)
    reserve += k.size() + v.size() + 6;
  out.reserve(reserve);
  out += "{\"Nodes\":";
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
  out += ",\"NodeNames\":[";
  for (size_t i = 0; i < result.node_names.size(); ++i) {
    if (i > 0) out += ',';
    AppendJsonString(&out, result.node_names[i]);
  }
  out += "],\"FailedNodes\":";
  AppendStringMap(&out, result.failed_nodes);
  out += ",\"FailedAndUnresolvableNodes\":";
  AppendStringMap(&out, result.failed_and_unresolvable_nodes);
  out += ",\"Error\":";
  AppendJsonString(&out, result.error);
  out += "}";
  return out;
}

std::string EncodeHostPriorityList(const HostPriorityList& list) {
  std::string out;
  out.reserve(2 + list.size() * 40);
  out += '[';
  for (size_t i = 0; i < list.size(); ++i) {
    if (i > 0) out += ',';
    out += "{\"Host\":";
    AppendJsonString(&out, list[i].host);
    out += ",\"Score\":";
    out += std::to_string(list[i].score);
    out += '}';
  }
  out += ']';
  return out;
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
  TESSERA_ASSIGN_OR_RETURN(j, ParseObjectBody(body, max_bytes, "ExtenderFilterResult"));
  ExtenderFilterResult r;
  std::string items_path;
  const Json* items = nullptr;
  TESSERA_ASSIGN_OR_RETURN(items, NodeListItems(j, "Nodes", &items_path));
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
  TESSERA_ASSIGN_OR_RETURN(names, StringList(j, "NodeNames"));
  if (names) r.node_names = std::move(*names);
  TESSERA_RETURN_IF_ERROR(
      ReadStringMap(FindField(j, "FailedNodes"), "FailedNodes", &r.failed_nodes));
  TESSERA_RETURN_IF_ERROR(ReadStringMap(FindField(j, "FailedAndUnresolvableNodes"),
                                        "FailedAndUnresolvableNodes",
                                        &r.failed_and_unresolvable_nodes));
  TESSERA_RETURN_IF_ERROR(ReadString(FindField(j, "Error"), "Error", &r.error));
  return r;
}

Result<HostPriorityList> DecodeHostPriorityList(std::string_view body, size_t max_bytes) {
  Json j;
  TESSERA_ASSIGN_OR_RETURN(j, ParseJson(body, max_bytes, "HostPriorityList"));
  HostPriorityList out;
  if (j.is_null()) return out;
  if (!j.is_array()) return TypeError("HostPriorityList", "array", j);
  for (size_t i = 0; i < j.size(); ++i) {
    const Json& e = j[i];
    const std::string path = PathIndex("HostPriorityList", i);
    if (!e.is_object()) return TypeError(path, "HostPriority object", e);
    HostPriority h;
    TESSERA_RETURN_IF_ERROR(ReadString(FindField(e, "Host"), PathKey(path, "Host"), &h.host));
    TESSERA_RETURN_IF_ERROR(
        ReadInt64(FindField(e, "Score"), PathKey(path, "Score"), kInt64Min, kInt64Max, &h.score));
    out.push_back(std::move(h));
  }
  return out;
}

Result<ExtenderPreemptionResult> DecodeExtenderPreemptionResult(std::string_view body,
                                                                size_t max_bytes) {
  Json j;
  TESSERA_ASSIGN_OR_RETURN(j, ParseObjectBody(body, max_bytes, "ExtenderPreemptionResult"));
  ExtenderPreemptionResult r;
  std::optional<std::map<std::string, MetaVictims>> m;
  TESSERA_ASSIGN_OR_RETURN(m,
                           DecodeMap<MetaVictims>(j, "NodeNameToMetaVictims", DecodeMetaVictims));
  if (m) r.node_name_to_meta_victims = std::move(*m);
  return r;
}

Result<ExtenderBindingResult> DecodeExtenderBindingResult(std::string_view body, size_t max_bytes) {
  Json j;
  TESSERA_ASSIGN_OR_RETURN(j, ParseObjectBody(body, max_bytes, "ExtenderBindingResult"));
  ExtenderBindingResult r;
  TESSERA_RETURN_IF_ERROR(ReadString(FindField(j, "Error"), "Error", &r.error));
  return r;
}

}  // namespace tessera::k8s
