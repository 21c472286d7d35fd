#include "k8s/extender/pod_state.h"

#include <utility>

#include "k8s/api/objects.h"

namespace tessera::k8s {

int ClassOfRecord(const QosClasses& classes, const PodRecord& r) {
  auto it = r.meta.labels.find(std::string(kClassKey));
  return classes.Classify(it == r.meta.labels.end() ? "" : it->second, r.meta.priority);
}

const char* PodPhaseName(PodPhase phase) {
  switch (phase) {
    case PodPhase::kSeen:
      return "seen";
    case PodPhase::kAssumed:
      return "assumed";
    case PodPhase::kBound:
      return "bound";
  }
  return "?";
}

void PodStates::Index(const std::string& uid, const PodRecord& r) {
  if (r.phase == PodPhase::kSeen) {
    if (!r.meta.nominated_node.empty()) nominated_[r.meta.nominated_node].insert(uid);
    return;
  }
  by_node_[r.node].insert(uid);
  if (r.phase == PodPhase::kAssumed) ++assumed_;
}

void PodStates::Unindex(const std::string& uid, const PodRecord& r) {
  auto& index = r.phase == PodPhase::kSeen ? nominated_ : by_node_;
  const std::string& node = r.phase == PodPhase::kSeen ? r.meta.nominated_node : r.node;
  if (r.phase == PodPhase::kSeen && node.empty()) return;
  auto it = index.find(node);
  if (it != index.end()) {
    it->second.erase(uid);
    if (it->second.empty()) index.erase(it);
  }
  if (r.phase == PodPhase::kAssumed) --assumed_;
}

void PodStates::Evict() {
  while (seen_order_.size() > max_seen_) {
    const auto [uid, sequence] = seen_order_.front();
    seen_order_.pop_front();
    auto it = records_.find(uid);
    // Only a record still seen, and not sighted again since, is forgotten.
    if (it != records_.end() && it->second.phase == PodPhase::kSeen &&
        it->second.changed == sequence) {
      Unindex(uid, it->second);
      records_.erase(it);
    }
  }
}

bool PodStates::See(const std::string& uid, PodRecord seen) {
  auto it = records_.find(uid);
  const bool fresh = it == records_.end();
  if (!fresh && it->second.phase == PodPhase::kBound) return false;
  seen.changed = ++sequence_;
  if (fresh) {
    seen.phase = PodPhase::kSeen;
    seen.node.clear();
    seen.assumed_gpus = 0;
    auto [pos, inserted] = records_.emplace(uid, std::move(seen));
    Index(uid, pos->second);
  } else if (it->second.phase == PodPhase::kAssumed) {
    PodRecord& r = it->second;
    seen.phase = r.phase;
    seen.node = r.node;
    seen.assumed_gpus = r.assumed_gpus;
    seen.assumed_s = r.assumed_s;
    r = std::move(seen);
    return false;
  } else {
    seen.phase = PodPhase::kSeen;
    seen.node.clear();
    seen.assumed_gpus = 0;
    Unindex(uid, it->second);
    it->second = std::move(seen);
    Index(uid, it->second);
  }
  seen_order_.emplace_back(uid, sequence_);
  Evict();
  return fresh;
}

bool PodStates::Assume(const std::string& uid, const std::string& node, GpuSet gpus, double now_s) {
  auto it = records_.find(uid);
  if (it == records_.end() || it->second.phase != PodPhase::kSeen) return false;
  PodRecord& r = it->second;
  Unindex(uid, r);
  r.phase = PodPhase::kAssumed;
  r.node = node;
  r.assumed_gpus = gpus;
  r.assumed_s = now_s;
  r.changed = ++sequence_;
  Index(uid, r);
  return true;
}

std::string PodStates::Forget(const std::string& uid) {
  auto it = records_.find(uid);
  if (it == records_.end() || it->second.phase != PodPhase::kAssumed) return "";
  PodRecord& r = it->second;
  Unindex(uid, r);
  std::string node = std::move(r.node);
  r.phase = PodPhase::kSeen;
  r.node.clear();
  r.assumed_gpus = 0;
  r.changed = ++sequence_;
  Index(uid, r);
  seen_order_.emplace_back(uid, r.changed);
  Evict();
  return node;
}

void PodStates::Nominate(const std::string& uid, const std::string& node) {
  auto it = records_.find(uid);
  if (it == records_.end() || it->second.phase != PodPhase::kSeen) return;
  Unindex(uid, it->second);
  it->second.meta.nominated_node = node;
  Index(uid, it->second);
}

std::vector<std::string> PodStates::Observe(const std::string& uid, PodRecord api) {
  std::vector<std::string> nodes = {api.node};
  api.phase = PodPhase::kBound;
  api.changed = ++sequence_;
  auto it = records_.find(uid);
  if (it != records_.end()) {
    PodRecord& r = it->second;
    // Our own choice stays a fact on the node we bound it to (the API object may lack the
    // annotation the Binding carried only if someone removed it).
    if (r.phase != PodPhase::kSeen && r.node == api.node) {
      api.assumed_gpus = r.assumed_gpus;
      api.assumed_s = r.assumed_s;
    }
    if (r.phase != PodPhase::kSeen && r.node != api.node) nodes.push_back(r.node);
    Unindex(uid, r);
    r = std::move(api);
    Index(uid, r);
  } else {
    auto [pos, inserted] = records_.emplace(uid, std::move(api));
    Index(uid, pos->second);
  }
  return nodes;
}

std::vector<std::string> PodStates::Remove(const std::string& uid) {
  std::vector<std::string> nodes;
  auto it = records_.find(uid);
  if (it != records_.end()) {
    if (it->second.phase != PodPhase::kSeen) nodes.push_back(it->second.node);
    Unindex(uid, it->second);
    records_.erase(it);
  }
  if (removed_.insert(uid).second) {
    removed_order_.push_back(uid);
    while (removed_order_.size() > max_seen_) {
      removed_.erase(removed_order_.front());
      removed_order_.pop_front();
    }
  }
  return nodes;
}

void PodStates::BeginList() { list_began_ = ++sequence_; }

std::vector<std::string> PodStates::EndList(const std::set<std::string>& uids,
                                            uint64_t list_version) {
  std::vector<std::string> gone;
  for (const auto& [uid, r] : records_) {
    if (uids.count(uid) != 0) continue;
    // Changed before the list began: the list is newer, and it lacks the pod. Changed since
    // (e.g. assumed while the list was in flight), but its object is no newer than the list:
    // the pod existed when the list was taken and is not in it, so it was deleted before —
    // an event no watch from the list's version will bring.
    const bool older_object =
        list_version != 0 && r.resource_version != 0 && r.resource_version <= list_version;
    if (r.changed < list_began_ || older_object) gone.push_back(uid);
  }
  std::vector<std::string> nodes;
  for (const std::string& uid : gone) {
    for (std::string& n : Remove(uid)) nodes.push_back(std::move(n));
  }
  return nodes;
}

const PodRecord* PodStates::Find(const std::string& uid) const {
  auto it = records_.find(uid);
  return it == records_.end() ? nullptr : &it->second;
}

const std::set<std::string>* PodStates::NominatedTo(const std::string& node) const {
  auto it = nominated_.find(node);
  return it == nominated_.end() ? nullptr : &it->second;
}

std::vector<std::string> PodStates::OnNode(const std::string& node) const {
  auto it = by_node_.find(node);
  if (it == by_node_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

bool PodStates::Removed(const std::string& uid) const { return removed_.count(uid) > 0; }

}  // namespace tessera::k8s
