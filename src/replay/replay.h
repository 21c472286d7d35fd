#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "frag/target_workload.h"
#include "model/node.h"
#include "policy/policy.h"
#include "replay/timeline.h"
#include "sched/classes.h"
#include "sched/headroom.h"

namespace tessera {

class ReplayPlacer;

/// How a replay runs besides the placement policy.
struct ReplayOptions {
  QosClasses qos = DefaultQosClasses();
  bool preemption = true;      ///< Kubernetes-style preemption by higher-priority pods
  double preempt_delay_s = 0;  ///< a pod may preempt only after waiting this long (seconds)
  HeadroomOptions headroom;
  double horizon_s = -1;  ///< the run ends here (virtual seconds); < 0: at the last arrival
  int samples = 500;      ///< time-series points over [0, horizon]
  uint64_t seed = 42;     ///< the node order for ties
  bool record_events = false;
  /// Called with (virtual now, horizon) every `progress_every` events, from the thread running
  /// the replay; empty: never. Reads no clock itself.
  std::function<void(double now_s, double horizon_s)> progress;
  int64_t progress_every = 1024;
  /// Who decides and carries out placements and victims; null: the engine in-process (the
  /// `placement` policy of RunReplay). Must outlive the run. With a headroom the placer keeps
  /// it (serve's own); the replay feeds a copy of the same component with the same starts and
  /// departures only to know when a pod held back may be tried again.
  ReplayPlacer* placer = nullptr;
};

/// One victim answer of a ReplayPlacer: the victims (pods) it chose on `node`, and how many of
/// their evictions exceed a disruption budget.
struct PlacerVictims {
  int node = -1;
  std::vector<int> pods;
  int64_t pdb_violations = 0;
};

/// The decisions of a replay, made somewhere else than the engine in-process.
///
/// The replay plays kube-scheduler and the pods' lifecycle: the queue, when a pod is tried,
/// which nodes may take a preemption, grace periods, victims re-created by their controller.
/// It keeps its own copy of the cluster for those rules. A placer answers its questions and
/// carries out what it decides — the test of `tessera serve` puts the extender behind one
/// (filter, prioritize, preempt and bind over HTTP, pods as objects in a fake API server), so
/// that the server and the in-process engine are compared pod by pod on one trace. Pods are
/// indices into the Timeline, nodes into RunReplay's `nodes`. Called from the replay's thread.
class ReplayPlacer {
 public:
  virtual ~ReplayPlacer() = default;
  /// The virtual clock moved to `now_s` (seconds since the trace's start); every question
  /// after it is asked at that time.
  virtual void SetTime(double now_s) = 0;
  /// Pod `pod` now exists and waits for a node: it arrived, or a victim was re-created.
  virtual void Created(int pod) = 0;
  /// Preemptor `pod` is nominated to `node` (status.nominatedNodeName, as kube-scheduler
  /// writes it) while its victims terminate; -1: the nomination is cleared (it was placed, or
  /// went back to the queue).
  virtual void Nominated(int pod, int node) = 0;
  /// The node for pending pod `pod` (among equal scores, the smallest `rank`), or -1 (no node
  /// fits it, or, for a pod held to the headroom, none keeps the headroom).
  virtual int ChooseNode(int pod, const std::vector<int>& rank) = 0;
  /// Whether `pod` fits on `node` now (a preemptor once its victims are gone).
  virtual bool FitsOn(int pod, int node) = 0;
  /// Places `pod` on `node` (which fits it); returns the GPUs it got.
  virtual GpuSet Bind(int pod, int node) = 0;
  /// Pod `pod` is gone: it finished, or it was a victim and its grace period ended.
  virtual void Deleted(int pod) = 0;
  /// For preemptor `pod`, the victims on each of `nodes` that would let it fit; nodes where
  /// none would are left out.
  virtual std::vector<PlacerVictims> Victims(int pod, const std::vector<int>& nodes) = 0;
};

/// Per-class figures of a replay. Waits are from arrival to the first start (seconds); a
/// pod still pending at the horizon counts with its wait so far (a lower bound).
struct ClassStats {
  std::string name;
  int arrived = 0;
  int started = 0;   ///< placed at least once
  int finished = 0;  ///< ran to completion within the horizon
  int running = 0;   ///< at the horizon (terminating victims included)
  int pending = 0;   ///< at the horizon (preemptors waiting for a grace period included)
  int rejected = 0;  ///< fit no node of the empty cluster
  double wait_p50_s = 0, wait_p95_s = 0, wait_p99_s = 0, wait_max_s = 0;
  double slo_wait_s = -1;      ///< the class's SLO, < 0 = none
  double slo_pct = 100;        ///< % of arrived, not rejected pods with wait <= SLO
  int preempted = 0;           ///< times a pod of this class was a victim
  int preemptors = 0;          ///< preemptions started by pods of this class
  double gpu_hours = 0;        ///< GPU-hours of runs that were not preempted, within the horizon
  double lost_gpu_hours = 0;   ///< GPU-hours of runs cut short by preemption
  double mean_alloc_gpus = 0;  ///< time-average of GPUs allocated to the class
};

/// The state of the cluster at one instant.
struct TimePoint {
  double t_s = 0;
  std::vector<int> pending;     ///< per class: in the queue
  std::vector<int> preempting;  ///< per class: preemptors waiting out their victims' grace
  int64_t allocated_milli = 0;
  double frag_ratio = 0;  ///< Σ F_n(M) / Σ R_n (0 without a target workload)
  int64_t idle_gpus = 0;
  int64_t headroom_gpus = 0;
};

/// What became of one pod (index into Timeline::pods) at the horizon.
struct PodOutcome {
  enum class Status { kNotArrived, kPending, kRunning, kFinished, kRejected };
  Status status = Status::kNotArrived;
  int qos_class = 0;
  double wait_s = -1;     ///< to the first start; -1 if never started
  int first_node = -1;    ///< where it first started; -1 if never started
  GpuSet first_gpus = 0;  ///< the GPUs of its first start
  int times_preempted = 0;
  std::string reason;  ///< for kRejected
};

/// One step of a replay, when ReplayOptions::record_events is set.
struct ReplayEvent {
  enum class Kind { kStart, kFinish, kPreempt, kNominate, kReject };
  double t_s = 0;
  Kind kind = Kind::kStart;
  int pod = -1;
  int node = -1;
  int by = -1;      ///< kPreempt: the preemptor
  GpuSet gpus = 0;  ///< kStart: the GPUs the pod got
};

struct ReplayResult {
  std::string policy;
  double horizon_s = 0;
  int64_t capacity_milli = 0;
  std::vector<ClassStats> classes;  ///< in QosClasses order
  std::vector<TimePoint> series;
  std::vector<PodOutcome> pods;
  std::vector<ReplayEvent> events;  ///< if record_events
  int preemptions = 0;              ///< victims in all
  double mean_alloc_pct = 0;        ///< time-average of allocated GPU, % of capacity
};

/// Replays `timeline` on an empty cluster of `nodes` with `placement`, as docs/ARCHITECTURE.md's
/// "Definitions" describe; see docs/REPLAY.md for the queue, preemption and headroom
/// rules. Virtual time only (no clock is read); deterministic for its inputs.
/// `workload` (may be null) gives the fragmentation of the time series; it must be resolved
/// against a cluster of `nodes`. Preconditions: classes non-empty, fallback valid, arrivals
/// and durations >= 0 (the readers guarantee it).
ReplayResult RunReplay(const std::vector<NodeSpec>& nodes, const Timeline& timeline,
                       const Policy& placement, const TargetWorkload* workload,
                       const ReplayOptions& options);

}  // namespace tessera
