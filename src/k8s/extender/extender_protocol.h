#pragma once

// The kube-scheduler extender v1 wire types (k8s.io/kube-scheduler/extender/v1) and their JSON
// codecs. No HTTP and no scheduling here: bodies in, structs out, and back.
//
// Decoding follows Go's encoding/json, which is what kube-scheduler's side speaks: keys match
// case-insensitively ("Pod", "pod", "POD"; the exact spelling wins when several are present),
// unknown keys are ignored, null is "absent". Wrong types, malformed or truncated JSON and
// bodies over the size limit are errors naming the JSON path ("NodeNames[2]: expected string,
// got number") or the byte offset. Encoding writes the exact PascalCase keys kube-scheduler
// expects, compact, in Go's field order. Every function is pure, never throws, and is
// thread-safe.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "k8s/api/objects.h"
#include "util/result.h"

namespace tessera::k8s {

/// The default limit on a request body, in bytes (16 MiB).
inline constexpr size_t kDefaultMaxExtenderBodyBytes = size_t{16} << 20;
/// The bytes a filter/prioritize body needs allocated past its end to be parsed in place
/// (simdjson reads ahead; DecodeExtenderArgsRef's body_capacity).
inline constexpr size_t kExtenderBodyPadding = 64;

/// Body of POST <prefix>/filter and <prefix>/prioritize.
/// Wire: {"Pod": {...}, "Nodes": {"metadata": {}, "items": [Node...]} | null,
///        "NodeNames": ["n1", ...] | null}.
/// kube-scheduler sends NodeNames when the extender is configured nodeCacheCapable: true, else
/// Nodes (a v1.NodeList; a bare array of nodes is accepted too).
struct ExtenderArgs {
  Pod pod;                                             ///< required
  std::optional<std::vector<Node>> nodes;              ///< nullopt when null/absent
  std::optional<std::vector<std::string>> node_names;  ///< nullopt when null/absent
  /// When `nodes` is set: each node object re-serialised (compact), in the same order, so a
  /// filter answer can return the chosen ones unchanged (ExtenderFilterResult::nodes_json).
  std::vector<std::string> nodes_json;

  /// The candidate names: node_names if given, else the names of `nodes`, else empty.
  std::vector<std::string> CandidateNames() const;
  /// The same, as views into this object (valid while it lives and is not changed).
  std::vector<std::string_view> CandidateNameViews() const;
};

/// A filter/prioritize body decoded for the server's request path (DecodeExtenderArgsRef):
/// the candidate names are views, not copies. On the fast path (kube-scheduler's exact body,
/// names without escapes) they point into the request body and `args.node_names` stays
/// nullopt; otherwise `args` is what DecodeExtenderArgs returns and the views point into it.
/// Not copyable or movable, so that views into `args` cannot dangle.
struct ExtenderArgsRef {
  ExtenderArgsRef() = default;
  ExtenderArgsRef(const ExtenderArgsRef&) = delete;
  ExtenderArgsRef& operator=(const ExtenderArgsRef&) = delete;

  ExtenderArgs args;
  bool has_node_names = false;          ///< NodeNames was present and not null
  std::vector<std::string_view> names;  ///< the candidates, as ExtenderArgs::CandidateNames
  /// Non-zero when a NodeNamesMemo recognised the NodeNames array: bodies decoded with the
  /// same id had byte-identical NodeNames arrays, hence the same names in the same order.
  /// An id is never given to another array text (ids are unique in the process).
  uint64_t names_id = 0;
};

/// The NodeNames arrays that DecodeExtenderArgsRef saw more than once, remembered (their exact
/// text and where each name lies in it) so that the next identical array is recognised with
/// one memcmp instead of being scanned name by name. kube-scheduler sends the same list request
/// after request when it scores every node (small clusters, percentageOfNodesToScore 100).
/// An array is remembered on its second sighting (a hash of its text filters the first ones),
/// so lists that change every request (kube-scheduler's rotating start) only cost that hash.
/// A hit is an exact byte comparison: a wrong hit is impossible. Holds kSlots arrays (filter
/// and prioritize send different lists), the oldest replaced first. Thread-safe.
class NodeNamesMemo {
 public:
  static constexpr size_t kSlots = 4;
  /// One remembered array.
  struct Entry {
    uint64_t id = 0;            ///< unique in the process
    std::string text;           ///< '[' ... ']' exactly as in the body
    std::vector<uint32_t> at;   ///< where each name starts in text
    std::vector<uint32_t> len;  ///< and its length (names are plain: no escapes)
  };

  /// The remembered arrays (a consistent snapshot; entries are immutable).
  std::array<std::shared_ptr<const Entry>, kSlots> Snapshot() const;
  /// Called for an array text that was scanned (not recognised) with its names as views into
  /// `text`; remembers it when it was seen before. Returns the id it got, or 0.
  uint64_t Offer(std::string_view text, const std::vector<std::string_view>& names);
  /// How many arrays were recognised, for tests and metrics.
  uint64_t hits() const;

 private:
  mutable std::mutex mutex_;
  std::array<std::shared_ptr<const Entry>, kSlots> entries_;  // GUARDED_BY(mutex_)
  size_t next_ = 0;                                           // GUARDED_BY(mutex_)
  std::array<uint64_t, 4 * kSlots> seen_hashes_{};            // GUARDED_BY(mutex_)
  size_t next_hash_ = 0;                                      // GUARDED_BY(mutex_)
  std::atomic<uint64_t> hits_{0};                             // recognised arrays
  friend Status DecodeExtenderArgsRef(std::string_view, ExtenderArgsRef*, size_t, NodeNamesMemo*,
                                      size_t);
};

/// Answer to filter. Wire: {"Nodes": null, "NodeNames": [...], "FailedNodes": {node: reason},
/// "FailedAndUnresolvableNodes": {node: reason}, "Error": ""}.
/// NodeNames is always an array ([] when nothing fits, never null); the maps are always
/// objects. FailedNodes = preemption might help; FailedAndUnresolvableNodes = it cannot.
struct ExtenderFilterResult {
  std::vector<std::string> node_names;
  std::map<std::string, std::string> failed_nodes;
  std::map<std::string, std::string> failed_and_unresolvable_nodes;
  std::string error;  ///< non-empty: kube-scheduler fails this scheduling attempt
  /// Nodes to return as "Nodes": {"metadata": {}, "items": [...]}, each a JSON object text
  /// (from ExtenderArgs::nodes_json). Needed only when the extender is not nodeCacheCapable:
  /// kube-scheduler then reads Nodes and ignores NodeNames. nullopt writes "Nodes": null.
  std::optional<std::vector<std::string>> nodes_json;

  bool operator==(const ExtenderFilterResult&) const = default;
};

/// One entry of the prioritize answer. Wire: {"Host": "n1", "Score": 7}; scores 0..10 by
/// convention (kube-scheduler multiplies by the extender's weight; it does not clamp).
struct HostPriority {
  std::string host;
  int64_t score = 0;

  bool operator==(const HostPriority&) const = default;
};
/// The prioritize answer is a bare JSON array of HostPriority ([] when empty).
using HostPriorityList = std::vector<HostPriority>;

/// Victims on one node, with full pods. Wire: {"Pods": [Pod...], "NumPDBViolations": n}.
struct Victims {
  std::vector<Pod> pods;
  int64_t num_pdb_violations = 0;
};

/// Victims on one node, by UID. Wire: {"Pods": [{"UID": "..."}...], "NumPDBViolations": n}.
struct MetaVictims {
  std::vector<std::string> pod_uids;
  int64_t num_pdb_violations = 0;

  bool operator==(const MetaVictims&) const = default;
};

/// Body of POST <prefix>/preempt. Wire: {"Pod": {...}, "NodeNameToVictims": {node: Victims} |
/// null, "NodeNameToMetaVictims": {node: MetaVictims} | null}; kube-scheduler fills the Meta
/// form for a nodeCacheCapable extender. A null victims entry decodes as no victims; newer
/// kube-schedulers may send candidates with empty victim lists.
struct ExtenderPreemptionArgs {
  Pod pod;  ///< required: the preemptor
  std::optional<std::map<std::string, Victims>> node_name_to_victims;
  std::optional<std::map<std::string, MetaVictims>> node_name_to_meta_victims;
};

/// Answer to preempt. Wire: {"NodeNameToMetaVictims": {node: MetaVictims}} (always an object).
struct ExtenderPreemptionResult {
  std::map<std::string, MetaVictims> node_name_to_meta_victims;

  bool operator==(const ExtenderPreemptionResult&) const = default;
};

/// Body of POST <prefix>/bind. Wire: {"PodName", "PodNamespace", "PodUID", "Node"} (strings).
struct ExtenderBindingArgs {
  std::string pod_name;       ///< required
  std::string pod_namespace;  ///< may be empty
  std::string pod_uid;        ///< required: binding is idempotent per UID
  std::string node;           ///< required

  bool operator==(const ExtenderBindingArgs&) const = default;
};

/// Answer to bind. Wire: {"Error": ""}; a non-empty Error fails the binding.
struct ExtenderBindingResult {
  std::string error;

  bool operator==(const ExtenderBindingResult&) const = default;
};

// Requests kube-scheduler sends (decode) ------------------------------------------------------

/// Decodes a filter/prioritize body. Errors: size, JSON syntax (with byte offset), a body that
/// is not an object, Pod missing or null, wrong types, bad pods/nodes (as DecodePod/DecodeNode,
/// paths "Pod...", "Nodes.items[3]...", "NodeNames[2]").
Result<ExtenderArgs> DecodeExtenderArgs(std::string_view body,
                                        size_t max_bytes = kDefaultMaxExtenderBodyBytes);
/// The general decoder of DecodeExtenderArgs alone (nlohmann/json; no fast path): the
/// reference the fast path must agree with, for differential tests: DecodeExtenderArgs
/// answers what it answers for every body.
Result<ExtenderArgs> DecodeExtenderArgsGeneral(std::string_view body,
                                               size_t max_bytes = kDefaultMaxExtenderBodyBytes);
/// DecodeExtenderArgs into *out (a fresh ExtenderArgsRef), without copying the node names:
/// same acceptance, results and errors. `body` must outlive *out. With a `memo`, a NodeNames
/// array it remembers is recognised (out->names_id is set; at the end of the body, as
/// kube-scheduler writes it, it is not read again), and arrays seen twice are remembered.
/// `body_capacity`: the bytes allocated at body.data() (a std::string's capacity()); with
/// kExtenderBodyPadding of them past the body, it is parsed where it is instead of copied.
Status DecodeExtenderArgsRef(std::string_view body, ExtenderArgsRef* out,
                             size_t max_bytes = kDefaultMaxExtenderBodyBytes,
                             NodeNamesMemo* memo = nullptr, size_t body_capacity = 0);
/// Decodes a preempt body; as DecodeExtenderArgs (paths "NodeNameToVictims[\"n1\"].Pods[0]").
Result<ExtenderPreemptionArgs> DecodeExtenderPreemptionArgs(
    std::string_view body, size_t max_bytes = kDefaultMaxExtenderBodyBytes);
/// Decodes a bind body. PodName, PodUID and Node must be non-empty strings.
Result<ExtenderBindingArgs> DecodeExtenderBindingArgs(
    std::string_view body, size_t max_bytes = kDefaultMaxExtenderBodyBytes);

// Answers the extender sends (encode) ---------------------------------------------------------

/// {"Nodes":null,"NodeNames":[...],"FailedNodes":{...},"FailedAndUnresolvableNodes":{...},
/// "Error":""}. nodes_json entries are spliced in as they are (they must be JSON objects, as
/// ExtenderArgs::nodes_json holds).
std::string EncodeExtenderFilterResult(const ExtenderFilterResult& result);
/// [{"Host":"n1","Score":7},...]; "[]" when empty.
std::string EncodeHostPriorityList(const HostPriorityList& list);
/// {"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"u1"}],"NumPDBViolations":0}}}.
std::string EncodeExtenderPreemptionResult(const ExtenderPreemptionResult& result);
/// {"Error":""}.
std::string EncodeExtenderBindingResult(const ExtenderBindingResult& result);

// The other direction, for tests and tools that play kube-scheduler ---------------------------

/// {"PodName":...,"PodNamespace":...,"PodUID":...,"Node":...}.
std::string EncodeExtenderBindingArgs(const ExtenderBindingArgs& args);
/// Decodes a filter answer (Nodes items kept as JSON text in nodes_json).
Result<ExtenderFilterResult> DecodeExtenderFilterResult(
    std::string_view body, size_t max_bytes = kDefaultMaxExtenderBodyBytes);
/// Decodes a prioritize answer; null decodes as an empty list.
Result<HostPriorityList> DecodeHostPriorityList(std::string_view body,
                                                size_t max_bytes = kDefaultMaxExtenderBodyBytes);
/// Decodes a preempt answer.
Result<ExtenderPreemptionResult> DecodeExtenderPreemptionResult(
    std::string_view body, size_t max_bytes = kDefaultMaxExtenderBodyBytes);
/// Decodes a bind answer.
Result<ExtenderBindingResult> DecodeExtenderBindingResult(
    std::string_view body, size_t max_bytes = kDefaultMaxExtenderBodyBytes);

}  // namespace tessera::k8s
