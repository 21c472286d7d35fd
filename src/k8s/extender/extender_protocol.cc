#include "k8s/extender/extender_protocol.h"

#include <algorithm>
#include <atomic>
#include <bit>
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
// printable-ASCII strings without escapes), each once. The Pod value is parsed and decoded
// as in the general path; NodeNames are copied straight from the text, without a JSON tree
// (that tree was most of the cost of a 5000-node request). Anything else (other keys, other
// spellings, escapes, malformed JSON, errors of any kind) returns nullopt, and the general
// path decides, so the two paths accept the same bodies with the same result.
// The fast path's result: the pod, and the names as views into the body.
struct FastArgs {
  Pod pod;
  std::optional<std::vector<std::string_view>> node_names;
  uint64_t names_id = 0;        ///< the NodeNamesMemo entry that matched, or 0
  std::string_view names_text;  ///< the array's text when it was scanned
};

using MemoEntries = std::array<std::shared_ptr<const NodeNamesMemo::Entry>, NodeNamesMemo::kSlots>;

// The bytes of `v` (eight, little-endian) that PlainString must look at: '"', '\\', below
// 0x20, 0x7f and above. Only the lowest flagged byte is exact (a borrow may flag bytes above
// it), which is all the scan needs.
inline uint64_t SpecialBytes(uint64_t v) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  const auto equal = [&](uint8_t b) {
    const uint64_t x = v ^ (kOnes * b);
    return (x - kOnes) & ~x & kHigh;
  };
  const uint64_t below_space = (v - kOnes * 0x20) & ~v & kHigh;
  return equal('"') | equal('\\') | equal(0x7f) | below_space | (v & kHigh);
}

class FastArgsScanner {
 public:
  explicit FastArgsScanner(std::string_view text, const MemoEntries* memo = nullptr)
      : s_(text), memo_(memo) {}

  std::optional<FastArgs> Decode(size_t max_bytes) {
    if (s_.size() > max_bytes || !Eat('{')) return std::nullopt;
    std::string_view pod_text;
    bool seen_pod = false, seen_nodes = false, seen_names = false;
    FastArgs args;
    do {
      std::string_view key;
      if (!PlainString(&key) || !Eat(':')) return std::nullopt;
      if (key == "Pod" && !seen_pod) {
        seen_pod = true;
        if (!SkipValue(&pod_text)) return std::nullopt;
      } else if (key == "Nodes" && !seen_nodes) {
        seen_nodes = true;
        if (!Null()) return std::nullopt;
      } else if (key == "NodeNames" && !seen_names) {
        seen_names = true;
        if (!Null()) {
          std::vector<std::string_view> names;
          Ws();
          const size_t start = i_;
          if (Remembered(&names, &args.names_id)) {
            args.node_names = std::move(names);
          } else {
            if (!Names(&names)) return std::nullopt;
            args.node_names = std::move(names);
            args.names_text = s_.substr(start, i_ - start);
          }
        }
      } else {
        return std::nullopt;
      }
    } while (Eat(','));
    if (!Eat('}')) return std::nullopt;
    Ws();
    if (i_ != s_.size() || !seen_pod) return std::nullopt;
    Result<Json> pod = ParseJson(pod_text, max_bytes, "Pod");
    if (!pod.ok() || pod->is_null()) return std::nullopt;
    Result<Pod> decoded = DecodePod(*pod, "Pod");
    if (!decoded.ok()) return std::nullopt;
    args.pod = std::move(*decoded);
    return args;
  }

 private:
  /// Deeper values go to the general path, which enforces kMaxJsonDepth on the whole body.
  static constexpr int kMaxDepth = 256;

  void Ws() {
    while (i_ < s_.size() &&
           (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) {
      ++i_;
    }
  }
  bool Eat(char c) {
    Ws();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool Null() {
    Ws();
    if (s_.substr(i_, 4) != "null") return false;
    i_ += 4;
    return true;
  }
  // A string of printable ASCII without escapes.
  bool PlainString(std::string_view* out) {
    Ws();
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    const size_t start = ++i_;
    // Eight bytes at a time up to the first one that needs a look (a quote, a backslash, a
    // control or non-ASCII byte); the loop below decides on it.
    while (i_ + 8 <= s_.size()) {
      uint64_t v;
      std::memcpy(&v, s_.data() + i_, 8);
      const uint64_t special = SpecialBytes(v);
      if (special != 0) {
        i_ += static_cast<size_t>(std::countr_zero(special) / 8);
        break;
      }
      i_ += 8;
    }
    for (; i_ < s_.size(); ++i_) {
      const auto c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        *out = s_.substr(start, i_ - start);
        ++i_;
        return true;
      }
      if (c < 0x20 || c >= 0x7f || c == '\\') return false;
    }
    return false;
  }
  // An array the memo remembers, byte for byte, at i_: its names as views into s_. The scan
  // of those bytes would give the same names and end at the same ']' (it reads nothing
  // past it), so this is exact.
  bool Remembered(std::vector<std::string_view>* names, uint64_t* id) {
    if (memo_ == nullptr) return false;
    const std::string_view rest = s_.substr(i_);
    for (const auto& e : *memo_) {
      if (e == nullptr || e->text.size() > rest.size() ||
          std::memcmp(rest.data(), e->text.data(), e->text.size()) != 0) {
        continue;
      }
      const size_t n = e->at.size();
      names->resize(n);
      std::string_view* out = names->data();
      const uint32_t* at = e->at.data();
      const uint32_t* len = e->len.data();
      for (size_t k = 0; k < n; ++k) out[k] = std::string_view(rest.data() + at[k], len[k]);
      i_ += e->text.size();
      *id = e->id;
      return true;
    }
    return false;
  }
  bool Names(std::vector<std::string_view>* names) {
    if (!Eat('[')) return false;
    if (Eat(']')) return true;
    // A name is ~20 bytes of text with its quotes and comma: one allocation for the list.
    names->reserve((s_.size() - i_) / 16 + 1);
    do {
      std::string_view name;
      if (!PlainString(&name)) return false;
      names->emplace_back(name);
    } while (Eat(','));
    return Eat(']');
  }
  // The extent of one value (an object, array, string or scalar token); its content is
  // checked later by the real parser.
  bool SkipValue(std::string_view* out) {
    Ws();
    const size_t start = i_;
    int depth = 0;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '"') {
        for (++i_; i_ < s_.size() && s_[i_] != '"'; ++i_) {
          if (s_[i_] == '\\') ++i_;
        }
        if (i_ >= s_.size()) return false;
        ++i_;
      } else if (c == '{' || c == '[') {
        if (++depth > kMaxDepth) return false;
        ++i_;
      } else if (c == '}' || c == ']') {
        if (depth == 0) break;
        --depth;
        ++i_;
      } else if (depth == 0 && (c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t')) {
        break;
      } else {
        ++i_;
      }
      if (depth == 0 && (c == '"' || c == '}' || c == ']')) break;
    }
    if (depth != 0 || i_ == start) return false;
    *out = s_.substr(start, i_ - start);
    return true;
  }

  std::string_view s_;
  const MemoEntries* memo_;
  size_t i_ = 0;
};

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

namespace {

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

}  // namespace

Result<ExtenderArgs> DecodeExtenderArgs(std::string_view body, size_t max_bytes) {
  if (std::optional<FastArgs> fast = FastArgsScanner(body).Decode(max_bytes)) {
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
                             NodeNamesMemo* memo) {
  MemoEntries entries;
  if (memo != nullptr) entries = memo->Snapshot();
  if (std::optional<FastArgs> fast =
          FastArgsScanner(body, memo != nullptr ? &entries : nullptr).Decode(max_bytes)) {
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
