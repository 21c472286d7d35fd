#include "sched/node_groups.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "model/topology.h"
#include "util/check.h"
#include "util/hash.h"

namespace tessera {

size_t NodeGroups::KeyHash::operator()(const Key& k) const {
  uint64_t h = static_cast<uint64_t>(k.type);
  h = HashMix(h, static_cast<uint64_t>(k.state.cpu_left));
  h = HashMix(h, static_cast<uint64_t>(k.state.memory_left));
  for (int i = 0; i < kMaxGpusPerNode; ++i) {
    h = HashMix(h,
                static_cast<uint64_t>(static_cast<uint32_t>(k.state.gpu_free[i])) |
                    (static_cast<uint64_t>(static_cast<uint32_t>(k.state.gpu_mem_free[i])) << 32));
  }
  for (uint16_t c : k.state.pods_by_tag) h = HashMix(h, c);
  return static_cast<size_t>(h);
}

NodeGroups::NodeGroups(const Cluster& cluster, const std::vector<int>& node_order)
    : cluster_(&cluster) {
  const int n = cluster_->size();
  TESSERA_CHECK(static_cast<int>(node_order.size()) == n);
  rank_.assign(n, -1);
  for (int r = 0; r < n; ++r) {
    TESSERA_CHECK(node_order[r] >= 0 && node_order[r] < n && rank_[node_order[r]] < 0);
    rank_[node_order[r]] = r;
  }
  // Capacity types: nodes with equal capacity, model and topology are interchangeable for
  // policies (topologies are interned by value in the Cluster: equal ids, equal topologies).
  std::map<std::tuple<int64_t, int64_t, int, int, int64_t, int>, int> types;
  type_.resize(n);
  for (int i = 0; i < n; ++i) {
    const NodeSpec& s = cluster_->spec(i);
    auto key = std::make_tuple(s.cpu_milli, s.memory_mib, s.gpu_count, cluster_->model_id(i),
                               s.gpu_memory_mib, cluster_->topology_id(i));
    const auto [it, added] = types.emplace(key, static_cast<int>(types.size()));
    type_[i] = it->second;
    if (added) type_node_.push_back(i);
  }
  group_of_.assign(n, -1);
  member_pos_.assign(n, -1);
}

int NodeGroups::Insert(int node, bool* created) {
  Key key{type_[node], cluster_->state(node)};
  auto it = group_index_.find(key);
  int gid;
  *created = it == group_index_.end();
  if (*created) {
    if (!free_groups_.empty()) {
      gid = free_groups_.back();
      free_groups_.pop_back();
    } else {
      gid = static_cast<int>(groups_.size());
      groups_.emplace_back();
      records_.emplace_back();
      min_rank_.emplace_back();
    }
    Group& g = groups_[gid];
    g.key = key;
    g.representative = node;
    g.ranks.clear();
    g.members.clear();
    g.model = cluster_->model_id(node);
    const int gpu_count = cluster_->spec(node).gpu_count;
    records_[gid] = Record{FitSummary::Of(gpu_count, g.model, key.state,
                                          TopologyBits(cluster_->topology(node), gpu_count)),
                           0};
    min_rank_[gid] = rank_[node];
    g.live_pos = static_cast<int>(live_.size());
    live_.push_back(gid);
    group_index_.emplace(key, gid);
  } else {
    gid = it->second;
  }
  Group& g = groups_[gid];
  g.ranks.insert(rank_[node]);
  min_rank_[gid] = std::min(min_rank_[gid], rank_[node]);
  ++records_[gid].members;
  member_pos_[node] = static_cast<int>(g.members.size());
  g.members.push_back(node);
  group_of_[node] = gid;
  return gid;
}

bool NodeGroups::Remove(int node) {
  const int gid = group_of_[node];
  Group& g = groups_[gid];
  g.ranks.erase(rank_[node]);
  --records_[gid].members;
  if (min_rank_[gid] == rank_[node] && !g.ranks.empty()) min_rank_[gid] = *g.ranks.begin();
  const int pos = member_pos_[node];
  const int last = g.members.back();
  g.members[pos] = last;
  member_pos_[last] = pos;
  g.members.pop_back();
  group_of_[node] = -1;
  if (g.members.empty()) {
    const int lp = g.live_pos;
    live_[lp] = live_.back();
    groups_[live_[lp]].live_pos = lp;
    live_.pop_back();
    group_index_.erase(g.key);
    records_[gid] = Record{};
    free_groups_.push_back(gid);
    return true;
  }
  if (g.representative == node) g.representative = g.members.front();
  return false;
}

FitReason NodeGroups::Check(int gid, const PodRequest& pod) const {
  const Group& g = groups_[gid];
  const int node = g.representative;
  return CheckFit(cluster_->spec(node).gpu_count, g.model, g.key.state, pod,
                  cluster_->topology(node));
}

// Members are few per group on average: a scan.
int NodeGroups::FirstMember(int gid) const {
  const int rank = min_rank_[gid];
  for (int node : groups_[gid].members) {
    if (rank_[node] == rank) return node;
  }
  return -1;
}

}  // namespace tessera
