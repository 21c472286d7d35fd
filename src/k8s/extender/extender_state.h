#pragma once

// What the extender's verbs share, under the Extender's lock: the cluster model
// (cluster_model.h) and what the verbs keep beside it — the GPU queue and its waits
// (pending_queue.h), the headroom (sched/headroom.h), the preemptions under way (preemptor.h),
// the nodes filter passed per pod (filter_passes.h) and the sync state of API mode — with the
// transitions the API's objects cause in all of them (kube-scheduler's event handlers of its
// cache and queue), and the steps of a bind that need the lock (its checks, and the assumption
// with the GPU choice under the headroom).
//
// Not thread-safe: the Extender holds its lock around every call.

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "k8s/api/cluster_events.h"
#include "k8s/api/objects.h"
#include "k8s/extender/cluster_model.h"
#include "k8s/extender/extender_options.h"
#include "k8s/extender/extender_protocol.h"
#include "k8s/extender/filter_passes.h"
#include "k8s/extender/pending_queue.h"
#include "k8s/extender/preemptor.h"
#include "k8s/extender/status.h"
#include "sched/cycle.h"
#include "sched/headroom.h"

namespace tessera::k8s {

struct ExtenderMetrics;  // metrics.h

/// Why a bind does not place a pod: the result tessera_binds_total counts it under, and what
/// the answer says.
struct BindRefusal {
  enum class Kind : uint8_t {
    kRejected,  ///< it does not fit, or the pod or node is unknown or blocked
    kRefused,   ///< filter did not pass the node, or the headroom keeps the GPUs
  };
  Kind kind = Kind::kRejected;
  std::string message;
  const char* result() const { return kind == Kind::kRefused ? "refused" : "rejected"; }
};

class ExtenderState {
 public:
  /// `options` and `metrics` must outlive it. `api_mode`: the objects come from the API (the
  /// verbs wait for its sync); else from files, loaded once.
  ExtenderState(const ExtenderOptions& options, bool api_mode, ExtenderMetrics* metrics);
  ExtenderState(const ExtenderState&) = delete;
  ExtenderState& operator=(const ExtenderState&) = delete;

  ClusterModel& model() { return model_; }
  const ClusterModel& model() const { return model_; }
  const PendingQueue& queue() const { return queue_; }
  Headroom& headroom() { return *headroom_; }
  Preemptor& preemptor() { return preemptor_; }
  FilterPasses& filter_passes() { return filter_passes_; }
  bool api_mode() const { return api_mode_; }
  /// The extender's clock, in seconds.
  double Now() const;

  /// Why the verbs refuse to answer (out of sync with the API); none when they may answer.
  std::optional<std::string> Gate() const;
  /// As the cluster cache says; the first sync builds the model from the initial lists.
  void SyncChanged(const SyncStatus& status);

  // The API's objects (ClusterEventSink, under the lock).
  /// A pod object, with the record it gives: pending → the GPU queue and the model (seen);
  /// bound → its wait ends, the model places it; ended → gone (RemovePod).
  void UpsertPod(const Pod& pod, PodRecord record);
  void UndecodablePod(const PodIdentity& pod, const std::string& error);
  void DeletePod(const std::string& uid);
  void EndPodList(const std::set<std::string>& uids, uint64_t list_version);
  /// A pod filter or prioritize saw (PodToSpec decoded it as `spec`): remembered (seen), in
  /// the GPU queue, and counted once for the policy's context (ClusterModel::See).
  void See(const Pod& pod, const PodSpec& spec);

  /// The headroom's view of pod `uid` of class `cls` (sched/cycle.h: held, at risk, preempts
  /// instead of waiting); its wait counts from metadata.creationTimestamp, and a pod not in the
  /// GPU queue is not at risk. Nothing for cls < 0.
  HeadroomPod HeadroomOf(const std::string& uid, int cls) const;
  /// The headroom gate of a pod in this cycle (the model's idle GPUs now).
  HeadroomGate GateOf(const HeadroomPod& pod) const;
  /// The pod `uid` is bound (by this extender, or the API shows it so): if it was in the GPU
  /// queue, its wait goes into the wait histogram and the SLO counters.
  void WaitEnded(const std::string& uid);

  /// The checks of a bind both modes share; none when the pod may be bound to the node.
  std::optional<BindRefusal> CheckBind(const ExtenderBindingArgs& args,
                                       const std::string& pod_key) const;
  /// Chooses GPUs for pending pod `uid` on `node` (the policy's, under the headroom: a held pod
  /// keeps the policy's GPUs where they leave the headroom whole, a held share that would eat
  /// it goes on the tightest used GPU with room, else it is refused) and assumes it there;
  /// none, or why not.
  std::optional<BindRefusal> Assume(const std::string& uid, int node, GpuSet* gpus);

  /// What /state and the model's gauges show (status.h).
  StatusView Status(bool with_fragmentation) const;

 private:
  /// Forgets pod `uid` (deleted or ended) and places its node again; a release it makes feeds
  /// the headroom's drain rate (kBacklog), unless it was a preemption's victim (its GPUs go to
  /// its preemptor).
  void RemovePod(const std::string& uid);

  const ExtenderOptions& options_;
  const bool api_mode_;
  ExtenderMetrics* metrics_;
  ClusterModel model_;
  PendingQueue queue_;
  std::unique_ptr<Headroom> headroom_;
  Preemptor preemptor_;
  FilterPasses filter_passes_;
  SyncStatus sync_;  ///< API mode: as the cache last said
};

}  // namespace tessera::k8s
