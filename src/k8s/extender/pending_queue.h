#pragma once

// The GPU queue of `tessera serve`: the pending GPU pods for this scheduler, each with its class
// of service and when it was created, until it is bound (then its wait is known), deleted or
// ends. What the SLO metrics (queue depth, scheduling wait, SLO attainment) and /state's
// "pending" are made of.
//
// Which pods count ("for this scheduler"): a pod that is not bound (no spec.nodeName), has not
// ended (phase Succeeded/Failed), is not being deleted (kube-scheduler skips those), asks for
// GPUs (its request, decoded or estimated as whole GPUs, holds a GPU), and either names one of
// the configured scheduler names in spec.schedulerName (seen by the watch) or was sent to this
// extender's filter or prioritize (kube-scheduler sends only pods of its own profiles).
//
// Not thread-safe: the Extender's lock guards it.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "k8s/api/objects.h"
#include "sched/classes.h"

namespace tessera::k8s {

/// The class of a pod: the tessera.io/class label (else annotation) when it names a class,
/// else by spec.priority (QosClasses::Classify).
int ClassOfPod(const QosClasses& classes, const Pod& pod);

class PendingQueue {
 public:
  /// One pending pod.
  struct Entry {
    std::string key;        ///< "namespace/name"
    int cls = 0;            ///< index into the classes
    double created_s = 0;   ///< metadata.creationTimestamp, else when first seen (Unix s)
    bool filtered = false;  ///< sent to this extender's filter or prioritize
    bool by_name = false;   ///< spec.schedulerName is one of ours
  };
  /// A bound pod's wait.
  struct Waited {
    int cls = 0;
    double wait_s = 0;  ///< created → bound, ≥ 0
  };

  PendingQueue(QosClasses classes, std::vector<std::string> scheduler_names);

  /// The pod is pending as `pod` says (watch: `from_filter` false; filter/prioritize: true) at
  /// time `now_s`. Adds or updates it when it counts (see the file comment), removes it when
  /// it no longer does (it stopped asking for GPUs, is being deleted). `gpu`: its request holds
  /// a GPU.
  void Pending(const std::string& uid, const Pod& pod, bool gpu, bool from_filter, double now_s);
  /// The pod was bound at `now_s`: its wait if it was queued (then it leaves the queue).
  std::optional<Waited> Bound(const std::string& uid, double now_s);
  /// Deleted, ended, or gone from the API: leaves the queue.
  void Remove(const std::string& uid);
  /// Keeps only the pods `keep` says yes to (a relist's survivors).
  template <typename Keep>
  void RemoveUnless(Keep&& keep) {
    for (auto it = pods_.begin(); it != pods_.end();) {
      it = keep(it->first) ? std::next(it) : pods_.erase(it);
    }
  }

  const QosClasses& classes() const { return classes_; }
  /// Pending pods by class index.
  std::vector<int> CountByClass() const;
  /// The queued pods, by UID.
  const std::unordered_map<std::string, Entry>& pods() const { return pods_; }
  bool Contains(const std::string& uid) const { return pods_.count(uid) != 0; }
  /// Queued, and filter or prioritize saw it (a further sighting there changes nothing).
  bool Filtered(const std::string& uid) const {
    auto it = pods_.find(uid);
    return it != pods_.end() && it->second.filtered;
  }

 private:
  QosClasses classes_;
  std::set<std::string, std::less<>> scheduler_names_;
  std::unordered_map<std::string, Entry> pods_;
};

}  // namespace tessera::k8s
