#include "k8s/extender/pending_queue.h"

#include <algorithm>
#include <utility>

namespace tessera::k8s {

int ClassOfPod(const QosClasses& classes, const Pod& pod) {
  static const std::string key(kClassKey);
  std::string_view label;
  if (auto it = pod.labels.find(key); it != pod.labels.end()) {
    label = it->second;
  } else if (auto at = pod.annotations.find(key); at != pod.annotations.end()) {
    label = at->second;
  }
  return classes.Classify(label, pod.priority);
}

PendingQueue::PendingQueue(QosClasses classes, std::vector<std::string> scheduler_names)
    : classes_(std::move(classes)),
      scheduler_names_(scheduler_names.begin(), scheduler_names.end()) {}

void PendingQueue::Pending(const std::string& uid, const Pod& pod, bool gpu, bool from_filter,
                           double now_s) {
  auto it = pods_.find(uid);
  const bool by_name = scheduler_names_.count(pod.scheduler_name) != 0;
  const bool filtered = from_filter || (it != pods_.end() && it->second.filtered);
  if (!gpu || pod.deleting || !pod.node_name.empty() || (!by_name && !filtered)) {
    if (it != pods_.end()) pods_.erase(it);
    return;
  }
  if (it == pods_.end()) {
    Entry e;
    e.key = ObjectKey(pod.namespace_name, pod.name);
    const std::optional<double> created = Rfc3339Seconds(pod.creation_timestamp);
    // A creation time in the future (clock skew) counts from now: waits are never negative.
    e.created_s = created.has_value() ? std::min(*created, now_s) : now_s;
    it = pods_.emplace(uid, std::move(e)).first;
  }
  // A UID names one object: its name and creation time stay; its labels may change.
  Entry& e = it->second;
  e.cls = ClassOfPod(classes_, pod);
  e.filtered = filtered;
  e.by_name = by_name;
}

std::optional<PendingQueue::Waited> PendingQueue::Bound(const std::string& uid, double now_s) {
  auto it = pods_.find(uid);
  if (it == pods_.end()) return std::nullopt;
  Waited w{it->second.cls, std::max(0.0, now_s - it->second.created_s)};
  pods_.erase(it);
  return w;
}

void PendingQueue::Remove(const std::string& uid) { pods_.erase(uid); }

std::vector<int> PendingQueue::CountByClass() const {
  std::vector<int> counts(classes_.classes.size(), 0);
  for (const auto& [uid, e] : pods_) {
    if (e.cls >= 0 && static_cast<size_t>(e.cls) < counts.size()) ++counts[e.cls];
  }
  return counts;
}

}  // namespace tessera::k8s
