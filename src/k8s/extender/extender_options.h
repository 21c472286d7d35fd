#pragma once

// What a `tessera serve` extender is configured with (serve_config.h reads it from YAML and
// flags): the policy, the classes of service and the headroom, who preempts, the kubelet
// topology policy per node pool, and in API mode the API client. Plain values.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "k8s/api/kube_api.h"
#include "k8s/translate/node_topology.h"
#include "model/pod.h"
#include "sched/classes.h"
#include "sched/headroom.h"
#include "util/clock.h"
#include "util/spin_lock.h"

namespace tessera::k8s {

/// What an API-mode Extender needs besides ExtenderOptions.
struct LiveOptions {
  KubeApi* api = nullptr;  ///< not owned; must outlive the Extender
  /// Before a bind, read the target node's pods from the API (a consistent list by field
  /// selector) and count every pod it shows bound there that the watch has not delivered yet:
  /// a lagging or stalled watch, another scheduler's binds, or the previous leader's, can then
  /// not make this extender hand out a GPU that is taken.
  bool read_node_before_bind = true;
};

/// Who carries out a preemption for a GPU pod that fits no node.
enum class PreemptionMode : uint8_t {
  /// kube-scheduler: its PostFilter asks the preempt verb, which chooses the victims (Preempt);
  /// the extender evicts nothing itself. Right for a kube-scheduler whose own filters see the
  /// GPU resources (not ignoredByScheduler); with deploy/'s configuration its preemption never
  /// reaches the extender (evictor.h).
  kVerb,
  /// The extender: when filter finds no node for a pod that may preempt, it chooses the victims
  /// and the node as the preempt verb and kube-scheduler would, holds the room for the
  /// preemptor, and writes what kube-scheduler's preemption writes (Evictor). API mode only.
  kEvict,
  /// Nobody: the preempt verb offers no node, filter evicts nothing.
  kOff,
};

/// Options of an Extender.
struct ExtenderOptions {
  std::string policy = "fgd";  ///< a name MakePolicy knows
  uint64_t seed = 42;          ///< drives the `random` policy's draws
  /// Filter and prioritize keep trying the lock this long before they sleep (microseconds;
  /// util/spin_lock.h).
  int spin_us = kDefaultSpinMicroseconds;
  /// Bind only a pod to a node that this extender's own filter passed for that pod UID at most
  /// this many seconds before (0: no such check). A second wall behind kube-scheduler: a client
  /// that reaches the port cannot place a pending pod past the scheduler's filters.
  double filter_pass_seconds = 600;
  const Clock* clock = nullptr;  ///< not owned; the system clock when null
  /// The classes of service of the SLO metrics and /state (k8s/extender/pending_queue.h):
  /// pods by their tessera.io/class label, else by spec.priority; filter and bind read them
  /// for the headroom (below).
  QosClasses classes = DefaultQosClasses();
  /// Pending pods with one of these spec.schedulerName values are in the GPU queue from the
  /// moment the watch shows them (besides the pods filter or prioritize saw).
  std::vector<std::string> scheduler_names = {"tessera-scheduler"};
  /// Whole idle GPUs kept for the classes with use_headroom (sched/headroom.h; its
  /// min_priority is set from those classes). A pod of a preemptible class below that
  /// priority is held to it (sched/cycle.h): filter refuses a node where placing it would leave
  /// fewer idle GPUs than the target, or fewer idle GPUs of the node's model than that model's
  /// floor (model_gpus; reason "headroom: ...", naming the model for a floor), and bind puts a held
  /// share on a used GPU when its GPUs would eat the headroom (HeldMayUse, PlaceHeld: the
  /// replay's rule). On its
  /// status.nominatedNodeName a held pod is not checked: its preemption freed the GPUs it
  /// takes there. kStatic keeps `gpus`; kForecast and kBacklog size the target from the
  /// idle GPUs protected pods take when this extender binds them, and from the GPUs departures
  /// make idle, on this extender's clock. kNone: nothing is kept.
  HeadroomOptions headroom;
  /// The kubelet policy per node pool: the first pool whose selector matches a node sets its
  /// topology's `kubelet`; a matching node without a known topology keeps none, and that the
  /// policy cannot be honoured there is logged.
  std::vector<NodePoolTopology> topology_pools;
  /// The pods whose request mix is the target workload M of the fgd and tessera policies
  /// (TargetWorkload::FromPods), e.g. the cluster's own history as `tessera record` writes
  /// it. Empty: M is rebuilt from the bound pods with the model (below).
  std::vector<PodSpec> workload;
  /// Who preempts (PreemptionMode). Pending pods nominated to a node (status.nominatedNodeName,
  /// whoever wrote it) hold their room there against pods of lower or equal priority in every
  /// mode, as kube-scheduler holds it for the resources it sees.
  PreemptionMode preemption = PreemptionMode::kVerb;
};

/// Upper bounds of the scheduling-wait histogram (creation → bound), in seconds (+Inf is
/// implicit): from a sub-second LS SLO to half an hour.
inline constexpr std::array<double, 16> kWaitBuckets = {0.1, 0.25, 0.5, 1,   2.5, 5,   10,   20,
                                                        30,  60,   120, 300, 600, 900, 1200, 1800};

/// Upper bounds of the request-duration histogram, in seconds (+Inf is implicit); binds wait
/// for the API server, so the buckets reach seconds.
inline constexpr std::array<double, 15> kRequestDurationBuckets = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10};

}  // namespace tessera::k8s
