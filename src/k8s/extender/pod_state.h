#pragma once

// The life of a pod in the extender, one state machine, as kube-scheduler's cache draws its own
// (pkg/scheduler/backend/cache/interface.go):
//
//        See                           Assume                  Observe (the API shows it bound
//   (filter, prioritize,   +------+  (bind accepted:  +---------+    to that node)  +-------+
//    or the API shows  --> | seen | ---------------> | assumed | ----------------> | bound |
//    it pending)           +------+   GPUs chosen,    +---------+                   +-------+
//                            ^        capacity held)     |   |                          |
//                            |           Forget          |   | Observe (bound to        |
//                            +---------------------------+   |  another node: the API   |
//                              (the Binding failed)          |  is right)  ------------>|
//                                                            |                          |
//   Observe (the API shows a pod bound by anyone) --------------------------------------+
//                                                            |                          |
//                    Remove (deleted, ended, or missing from a relist) ----> released <-+
//
// What the diagram promises:
//  - An assumed pod is never expired by time. It leaves `assumed` only when the API shows it
//    bound (to that node or another), deleted or ended, when a relist that began after the
//    assumption does not contain it, or when its Binding failed (Forget).
//  - A pod the API shows pending while it is assumed stays assumed: that object predates the
//    Binding (an event in flight), it does not contradict it.
//  - A bound pod occupies its node whatever its request says; PodRecord::estimated and ::opaque
//    tell the placement how much of that is known (fail closed).
// PodStates holds the records and the transitions only; what they take on a node (which GPUs)
// is the placement's (ClusterModel, cluster_model.h). Not thread-safe: the Extender's lock guards
// it.

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "k8s/hami/annotations.h"
#include "model/pod.h"
#include "model/resources.h"
#include "sched/classes.h"

namespace tessera::k8s {

/// Where a pod is in its life (the diagram above).
enum class PodPhase : uint8_t { kSeen, kAssumed, kBound };
/// "seen", "assumed", "bound".
const char* PodPhaseName(PodPhase phase);

/// What preemption and /state need to know of a pod besides its request.
struct PodMeta {
  std::string namespace_name;
  std::string name;
  int32_t priority = 0;  ///< spec.priority
  std::map<std::string, std::string> labels;
  /// status.nominatedNodeName: the node its preemption made room on (the headroom lets it
  /// take its victims' GPUs there).
  std::string nominated_node;
  /// status.conditions DisruptionTarget=True: a preemption victim (its departure refills no
  /// headroom).
  bool victim = false;
  /// status.startTime in Unix seconds (-1: absent): the victim order of preemption.
  double start_s = -1;
  /// metadata.deletionTimestamp is set: it is terminating (a victim within its grace period).
  bool deleting = false;
  /// spec.preemptionPolicy: Never — it waits rather than evict anyone.
  bool preempt_never = false;
};

/// One pod as the extender knows it.
struct PodRecord {
  PodPhase phase = PodPhase::kSeen;
  std::string key;   ///< "namespace/name"
  std::string node;  ///< kAssumed, kBound: the node; "" while seen
  /// What the pod takes: the decoded request, or, when `estimated`, FailClosedSpec's estimate.
  PodSpec spec;
  /// PodToSpec rejected the pod (the message): `spec` is an estimate in whole GPUs.
  std::string estimated;
  /// The object did not decode at all (the message): nothing of its request is known, so its
  /// node takes no GPU pod while it is there.
  std::string opaque;
  /// The API object's tessera.io/gpu-indices annotation, when present.
  std::optional<std::string> gpu_indices;
  /// The API object's hami.io/vgpu-devices-allocated annotation, when present.
  std::optional<std::string> hami_allocated;
  /// The GPUs this extender chose (set by Assume, kept once bound): a fact like an annotation.
  GpuSet assumed_gpus = 0;
  /// When this extender assumed it (its clock, Unix seconds; -1: not assumed here), kept once
  /// bound: its start for the victim order until the API shows status.startTime.
  double assumed_s = -1;
  PodMeta meta;
  uint8_t gpu_families = 0;    ///< GpuFamily bits of its resources (filter's family match)
  HamiContainerLayout layout;  ///< GPUs per container in HAMi's order (bind's annotations)
  /// metadata.resourceVersion of the last API object applied, as a number (0: none, or not a
  /// number). Orders a consistent read of a node against what the watch delivered.
  uint64_t resource_version = 0;
  /// PodStates' sequence number of the last change (relists drop what they lack only among
  /// records last changed before they began).
  uint64_t changed = 0;
};

/// The class index of a pod record's metadata among `classes`: its label tessera.io/class, else
/// its priority (QosClasses::Classify).
int ClassOfRecord(const QosClasses& classes, const PodRecord& r);

/// The pods of one extender by UID, and their transitions. Each transition that can change what
/// occupies a node returns the names of the nodes concerned (to be placed again).
class PodStates {
 public:
  /// How many records in kSeen are kept; the oldest are forgotten first (pods seen by filter
  /// that never came back, pending pods of other schedulers).
  explicit PodStates(size_t max_seen = 65536) : max_seen_(max_seen) {}

  /// See: a pending pod (filter, prioritize, or the API shows it unbound). A new or seen record
  /// takes `seen`'s request and metadata; an assumed one keeps its phase, node and GPUs and
  /// takes the rest. A bound record is left as it is (the API does not unbind pods). Returns
  /// whether the record is new.
  bool See(const std::string& uid, PodRecord seen);
  /// Assume: seen → assumed on `node` with `gpus` at `now_s`. False (nothing changes) unless it was
  /// seen.
  bool Assume(const std::string& uid, const std::string& node, GpuSet gpus, double now_s = -1);
  /// Forget: assumed → seen (the Binding failed). Returns the node it held, "" if not assumed.
  std::string Forget(const std::string& uid);
  /// Observe: the API shows the pod bound to `api.node` and not ended. An assumed pod there is
  /// confirmed (its GPUs kept unless the object names others); any other becomes bound there.
  /// `api` must have phase kBound.
  std::vector<std::string> Observe(const std::string& uid, PodRecord api);
  /// Remove: deleted or ended. Returns its node when it held one.
  std::vector<std::string> Remove(const std::string& uid);

  /// A relist begins: remembers the sequence number.
  void BeginList();
  /// The relist ended with `uids`, showing the state at resourceVersion `list_version` (0:
  /// unknown): every record not listed is removed if it was last changed before BeginList, or
  /// if its object's resourceVersion is no newer than the list's (it existed then, so the list
  /// would hold it unless it was deleted). Returns the nodes concerned.
  std::vector<std::string> EndList(const std::set<std::string>& uids, uint64_t list_version);

  /// Sets the nomination of a pending (seen) pod, as the API would show it once its
  /// status.nominatedNodeName is written ("" clears it): this extender's own preemption,
  /// before the watch brings the object. No effect on a pod that is not seen.
  void Nominate(const std::string& uid, const std::string& node);

  const PodRecord* Find(const std::string& uid) const;
  /// The UIDs of the assumed and bound pods on `node`, in UID order.
  std::vector<std::string> OnNode(const std::string& node) const;
  /// The UIDs of the pending pods nominated to `node` (PodMeta::nominated_node), in UID order.
  const std::set<std::string>* NominatedTo(const std::string& node) const;
  /// Whether any pending pod is nominated anywhere.
  bool any_nominated() const { return !nominated_.empty(); }
  /// Whether `uid` was removed (among the most recent removals). A UID names one object for
  /// its whole life and an ended pod never runs again, so a read made before the removal must
  /// not bring it back.
  bool Removed(const std::string& uid) const;

  size_t size() const { return records_.size(); }
  int assumed() const { return assumed_; }
  const std::map<std::string, PodRecord>& records() const { return records_; }

 private:
  void Index(const std::string& uid, const PodRecord& r);
  void Unindex(const std::string& uid, const PodRecord& r);
  void Evict();

  size_t max_seen_;
  uint64_t sequence_ = 0;
  uint64_t list_began_ = 0;
  int assumed_ = 0;
  std::map<std::string, PodRecord> records_;                 ///< by UID
  std::map<std::string, std::set<std::string>> by_node_;     ///< assumed and bound UIDs
  std::map<std::string, std::set<std::string>> nominated_;   ///< seen UIDs by nominated node
  std::deque<std::pair<std::string, uint64_t>> seen_order_;  ///< (UID, sequence) of sightings
  /// The most recently removed UIDs (at most max_seen_).
  std::unordered_set<std::string> removed_;
  std::deque<std::string> removed_order_;
};

}  // namespace tessera::k8s
