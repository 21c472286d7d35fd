#pragma once

// The nodes of a cluster grouped by equal state, as the Scheduler decides over them: nodes with
// the same capacity type (capacity, GPU model, GPU memory and topology) and the same NodeState
// form one group, which a policy scores once and a pod fits alike (CheckFit). Each group has an
// id, reused once the group empties, and a 32-byte Record (its FitSummary and its size) in one
// array by id, which a decision reads first; the lowest rank of its members in the per-seed
// node order is kept beside it (ties go to the node that comes first in that order). The
// groups follow the nodes' states through Insert and Remove, around each change of a node's
// allocation. Reads the Cluster, never writes it; the Cluster must outlive it. Not copyable;
// not thread-safe.

#include <cstdint>
#include <set>
#include <unordered_map>
#include <vector>

#include "model/cluster.h"
#include "model/fit.h"
#include "model/fit_summary.h"

namespace tessera {

class NodeGroups {
 public:
  /// What a decision reads of a group before anything else, by group id; for a free id, a
  /// FitSummary that fits nothing and no members.
  struct Record {
    FitSummary fit = FitSummary::None();
    int32_t members = 0;
  };
  static_assert(sizeof(Record) == 32);
  /// The nodes of one capacity type in one state.
  struct Key {
    int type;
    NodeState state;
    bool operator==(const Key&) const = default;
  };
  struct Group {
    Key key;
    int representative = -1;   ///< a member, whose spec and topology stand for all of them
    std::set<int> ranks;       ///< ranks of the members in the node order
    std::vector<int> members;  ///< the member nodes (for uniform draws)
    int model = -1;            ///< GPU model id of the members (−1: no GPUs)
    int live_pos = -1;         ///< the group's index in live()
  };

  /// No node in a group yet: Insert puts them in. `node_order` is a permutation of the
  /// cluster's node indices (the tie order).
  NodeGroups(const Cluster& cluster, const std::vector<int>& node_order);
  NodeGroups(const NodeGroups&) = delete;
  NodeGroups& operator=(const NodeGroups&) = delete;

  /// Puts `node` into the group of its current state and returns the group's id; *created is
  /// set to whether the group is new (then its id may be one past every id before).
  int Insert(int node, bool* created);
  /// Takes `node` out of its group (before its state changes); true if the group emptied,
  /// whose id is free from then on.
  bool Remove(int node);

  /// The id of `node`'s group (−1 between Remove and Insert).
  int group_of(int node) const { return group_of_[node]; }
  /// The rank of `node` in the node order.
  int rank(int node) const { return rank_[node]; }
  /// Group ids in use or free: the length of every array by group id.
  int ids() const { return static_cast<int>(records_.size()); }
  const Group& group(int gid) const { return groups_[gid]; }
  const Record& record(int gid) const { return records_[gid]; }
  /// By group id: the records.
  const Record* records() const { return records_.data(); }
  /// By group id: the lowest rank of a member.
  const int32_t* min_ranks() const { return min_rank_.data(); }
  int32_t min_rank(int gid) const { return min_rank_[gid]; }
  /// The ids of the groups that hold at least one node.
  const std::vector<int>& live() const { return live_; }
  /// The spec of the first node of the group's capacity type: the capacity and model of every
  /// member, from a small array (the representative's spec is one more cache miss per group
  /// on large clusters).
  const NodeSpec& type_spec(int gid) const {
    return cluster_->spec(type_node_[groups_[gid].key.type]);
  }

  /// CheckFit of `pod` on the group's state (its topology included).
  FitReason Check(int gid, const PodRequest& pod) const;
  /// The same for a pod whose FitQuery is `query`, from the group's record where it is exact.
  FitReason Reason(const FitQuery& query, int gid, const PodRequest& pod) const {
    if (query.ExactOn(records_[gid].fit)) return query.Reason(records_[gid].fit);
    return Check(gid, pod);
  }
  /// The member of the group with its lowest rank.
  int FirstMember(int gid) const;

 private:
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };

  const Cluster* cluster_;
  std::vector<int> rank_;        // node -> rank in node_order
  std::vector<int> type_;        // node -> capacity type id
  std::vector<int> type_node_;   // capacity type id -> its first node
  std::vector<int> group_of_;    // node -> group id
  std::vector<int> member_pos_;  // node -> position in its group's members
  std::vector<Group> groups_;
  std::vector<Record> records_;    // by group id
  std::vector<int32_t> min_rank_;  // by group id: the lowest rank of a member in node_order
  std::vector<int> free_groups_;
  std::vector<int> live_;  // ids of non-empty groups
  std::unordered_map<Key, int, KeyHash> group_index_;
};

}  // namespace tessera
