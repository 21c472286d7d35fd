#pragma once

// Carries out the preemptions `tessera serve` decides itself (ExtenderOptions::preemption =
// kEvict), with the API writes kube-scheduler's own preemption makes
// (pkg/scheduler/framework/preemption, actuatePodPreemption), in that order:
//   1. the preemptor's status.nominatedNodeName = the node (a strategic merge patch of its
//      status), so that every scheduler and extender reading the API holds the room for it;
//   2. per victim: the condition DisruptionTarget=True (reason PreemptionByScheduler) on its
//      status, then a DELETE with the precondition of its UID and its own grace period, then an
//      events.k8s.io/v1 Event "Preempted" on it naming the preemptor and the node.
// Why the extender does it at all: kube-scheduler's DefaultPreemption looks for victims with its
// own filters before it asks an extender, and its filters ignore the resources deploy/ marks
// ignoredByScheduler (every GPU resource), so it finds no victim on any node ("expected at
// least one victim pod on node") and never calls the preempt verb (docs/EXTENDER.md,
// "Preemption").
//
// One worker thread, in the order the preemptions were decided; each write is tried once (a
// failure is logged, and reported to `on_failed` for the preemptor's write). Thread-safe.

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "k8s/api/kube_api.h"

namespace tessera::k8s {

/// A pod named for the API: namespace, name and UID.
struct PodRef {
  std::string namespace_name;
  std::string name;
  std::string uid;
};

/// One preemption: `preemptor` goes to `node` once `victims` are gone.
struct Eviction {
  PodRef preemptor;
  std::string node;
  std::vector<PodRef> victims;
};

class Evictor {
 public:
  /// `api` must outlive the Evictor. `scheduler_name` starts the victims' condition message, as
  /// kube-scheduler's does ("tessera-scheduler: preempting to accommodate a higher priority
  /// pod"). `on_failed(eviction, error)` is called from the worker when the preemptor's
  /// nomination could not be written (the caller drops the room it held for it).
  Evictor(KubeApi* api, std::string scheduler_name,
          std::function<void(const Eviction&, const std::string&)> on_failed);
  /// Finishes the preemption under way, drops the queued ones, joins the worker.
  ~Evictor();
  Evictor(const Evictor&) = delete;
  Evictor& operator=(const Evictor&) = delete;

  /// Queues `e`; returns at once.
  void Enqueue(Eviction e);
  /// Waits until every queued preemption is carried out (for tests).
  void Drain();

 private:
  void Run();
  void CarryOut(const Eviction& e);

  KubeApi* api_;
  std::string scheduler_name_;
  std::function<void(const Eviction&, const std::string&)> on_failed_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<Eviction> queue_;  // GUARDED_BY(mutex_)
  bool busy_ = false;           // GUARDED_BY(mutex_)
  bool stopping_ = false;       // GUARDED_BY(mutex_)
  std::thread worker_;
};

}  // namespace tessera::k8s
