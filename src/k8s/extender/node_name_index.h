#pragma once

// The node names of one model (ClusterModel, rebuilt with it) and what the extender's verbs make of
// them: the index of a name; a request's candidate names turned into node indices, fast for the
// lists kube-scheduler sends (the same nodes in the same order, request after request); and
// the names as the JSON pieces the answers are written from.
//
// Resolve, for a list without an id, checks each name first against a guess: the node that
// followed the previous candidate's node the last time (kube-scheduler lists nodes in the
// same order every time, from a rotating start when it does not score every node), so a hit
// costs one string compare instead of a hash lookup; a miss looks the name up and remembers
// the node as the new guess. A list with an id (ExtenderArgsRef::names_id: the same id is the
// same list) is resolved once per model and answered from a memo of the last kResolvedLists
// lists after that.
//
// Not thread-safe; the Extender holds its lock. The PaddedStrings that QuotedNames and
// HostEntries hand out are immutable: a caller may keep reading them after the lock is
// released, and a Rebuild replaces them instead of changing them.

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "k8s/extender/padded_strings.h"

namespace tessera::k8s {

class NodeNameIndex {
 public:
  /// How many lists with an id Resolve remembers (the oldest is forgotten first).
  static constexpr size_t kResolvedLists = 4;

  NodeNameIndex() = default;
  NodeNameIndex(const NodeNameIndex&) = delete;
  NodeNameIndex& operator=(const NodeNameIndex&) = delete;

  /// Forgets the previous model (indices, guesses, memo, strings) and indexes `names`: node i
  /// is names[i] (the model's order). Names are distinct; a repeated one keeps its first index.
  void Rebuild(std::vector<std::string> names);
  /// Nodes indexed.
  int size() const { return static_cast<int>(names_.size()); }
  /// The name of node `node` (0 <= node < size()).
  const std::string& name(int node) const { return names_[node]; }
  /// The index of node `name`, or -1 if unknown.
  int Find(std::string_view name) const {
    auto it = index_.find(name);
    return it == index_.end() ? -1 : it->second;
  }
  /// Calls f(name) for every name, in the hash index's order (the Extender places nodes in
  /// this order after a Rebuild).
  template <typename F>
  void ForEachName(F&& f) const {
    for (const auto& [name, node] : index_) f(name);
  }

  /// The node index of each of `names` (-1 if unknown), as Find gives it; valid until the next
  /// call. A list with a non-zero `names_id` that was resolved before under the same model is
  /// answered from the memo without looking at `names`.
  std::span<const int> Resolve(std::span<const std::string_view> names, uint64_t names_id);

  /// The JSON string of each node's name, quotes included, by node (built at the first call
  /// after a Rebuild).
  std::shared_ptr<const PaddedStrings> QuotedNames();
  /// `{"Host":` + QuotedNames()[node] + `,"Score":`, by node: prioritize's answer entry up to
  /// its score (built at the first call after a Rebuild).
  std::shared_ptr<const PaddedStrings> HostEntries();

 private:
  /// Hashes std::string and std::string_view alike (lookups by view without a copy).
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  /// A list resolved under this model, by names_id (id 0: a free slot).
  struct ResolvedList {
    uint64_t names_id = 0;
    std::vector<int> nodes;
  };
  /// The node index of candidate `name`, or -1; `previous` is the node of the known candidate
  /// before it in the request (-1 for the first).
  int ResolveOne(int previous, std::string_view name);

  std::vector<std::string> names_;  ///< by node index
  std::unordered_map<std::string, int, NameHash, std::equal_to<>> index_;
  std::vector<int> successor_;  ///< by node: the node that followed it last time, or -1
  int first_guess_ = -1;        ///< the first candidate's node last time
  std::array<ResolvedList, kResolvedLists> resolved_;
  size_t next_resolved_ = 0;
  std::vector<int> scratch_;                           ///< lists without an id
  std::shared_ptr<const PaddedStrings> quoted_names_;  ///< null until QuotedNames
  std::shared_ptr<const PaddedStrings> host_entries_;  ///< null until HostEntries
};

}  // namespace tessera::k8s
