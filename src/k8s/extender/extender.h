#pragma once

// The kube-scheduler extender's logic, without HTTP: filter, prioritize, preempt and bind GPU
// pods on a cluster model held in memory and kept as the API's objects say (see
// docs/EXTENDER.md, "tessera serve").

#include <array>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "frag/target_workload.h"
#include "k8s/api/cluster_events.h"
#include "k8s/api/disruption_budget.h"
#include "k8s/api/kube_api.h"
#include "k8s/api/objects.h"
#include "k8s/extender/cluster_model.h"
#include "k8s/extender/evictor.h"
#include "k8s/extender/extender_protocol.h"
#include "k8s/extender/filter_passes.h"
#include "k8s/extender/node_filter.h"
#include "k8s/extender/padded_strings.h"
#include "k8s/extender/pending_queue.h"
#include "k8s/extender/pod_state.h"
#include "k8s/extender/preemptor.h"
#include "k8s/extender/wire.h"
#include "k8s/hami/register.h"
#include "k8s/translate/node_topology.h"
#include "k8s/translate/translate.h"
#include "model/cluster.h"
#include "model/topology.h"
#include "policy/policy.h"
#include "sched/classes.h"
#include "sched/cycle.h"
#include "sched/engine.h"
#include "sched/headroom.h"
#include "sched/scheduler.h"
#include "sched/victims.h"
#include "util/clock.h"
#include "util/mutex.h"
#include "util/result.h"
#include "util/spin_lock.h"

namespace prometheus {
struct MetricFamily;
class Registry;
}  // namespace prometheus

namespace tessera::k8s {

struct StatusView;  // k8s/extender/status.h

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

/// The extender: the verbs of kube-scheduler's extender protocol (filter, prioritize, preempt,
/// bind) over a cluster model (cluster_model.h: the API's objects → the engine's Cluster, facts
/// then guesses, fail closed, every pod's state), with the GPU queue and its SLO metrics
/// (pending_queue.h), the headroom (sched/headroom.h, sched/cycle.h), filter's per-group
/// verdicts (node_filter.h) and the preemption (preemptor.h).
///
/// Two modes. File mode (FromJson): the objects come from kubectl JSON once, Bind only updates
/// the model, nodes keep the order of the node list (the policy's tie order). API mode
/// (Create): a ClusterCache feeds the objects (this class is its ClusterEventSink), nodes are
/// in name order, and Bind writes the Binding, GPU annotations included, through the API.
/// In API mode every verb refuses until the cache is in sync (initial lists applied, no watch
/// known broken, no relist under way): filter fails every candidate with a reason naming the
/// sync state, bind answers an error and writes nothing, preempt offers no node.
///
/// Target workload M (fgd, tessera): ExtenderOptions::workload when given, fixed; else built
/// from the bound pods when the model is rebuilt (file mode: from every pod of the file); with
/// no pods at all, a single class of one whole GPU.
///
/// Thread-safe: every public method takes `mutex_`; the members below it are
/// GUARDED_BY(mutex_). Bind never over-allocates: it re-checks the fit under the lock.
class Extender final : public ClusterEventSink {
 public:
  /// Loads the nodes from `nodes_json` (a v1 NodeList as `kubectl get nodes -o json` prints
  /// it; a single Node or a bare array is accepted too) and, when `pods_json` is not empty,
  /// the pods (a v1 PodList). Pods are accounted as in API mode (bound, not ended: occupy
  /// their node, fail closed); what could not be applied as given is listed in warnings().
  /// Errors name the item ("nodes: items[2].status.allocatable.cpu: ..."): malformed JSON, a
  /// node that does not decode, duplicate nodes or pod UIDs, no nodes.
  static Result<std::unique_ptr<Extender>> FromJson(std::string_view nodes_json,
                                                    std::string_view pods_json,
                                                    const ExtenderOptions& options);
  /// One object of kubectl JSON already parsed, and where it came from for messages
  /// ("snap.json: items[3]"). The JSON is not owned; it is read during FromObjects only.
  struct JsonObject {
    const nlohmann::json* json = nullptr;
    std::string path;
  };
  /// FromJson for objects already parsed and sorted by kind (analyze's snapshot reader,
  /// serve's file mode): the Node objects, then the Pod objects, read, accounted and
  /// reported as FromJson does, with each object's path in messages.
  static Result<std::unique_ptr<Extender>> FromObjects(std::span<const JsonObject> nodes,
                                                       std::span<const JsonObject> pods,
                                                       const ExtenderOptions& options);
  /// An Extender in API mode: no nodes or pods yet; not ready until the ClusterCache that feeds
  /// it reports the first sync. Error: unknown policy, no API client.
  static Result<std::unique_ptr<Extender>> Create(const ExtenderOptions& options,
                                                  const LiveOptions& live);
  Extender(const Extender&) = delete;
  Extender& operator=(const Extender&) = delete;
  ~Extender() override;

  /// Decides every candidate (NodeNames, else the names of Nodes): fits → NodeNames. Rejected,
  /// with "<filter>: <explanation>": not enough cpu/memory/gpu/gpu-memory left → FailedNodes
  /// (preemption may help); unknown, cordoned or blocked node, GPU model or count, no GPUs, GPUs
  /// with less memory than the pod asks per GPU, a node without the pod's device plugin
  /// resources → FailedAndUnresolvableNodes. Not in sync: every candidate unresolvable. A pod
  /// PodToSpec rejects gets Error set and no node. Remembers the pod (seen) and the nodes it
  /// passed, for Bind. When the request carried full Nodes, the passing ones come back in Nodes.
  ExtenderFilterResult Filter(const ExtenderArgs& args);
  /// Filter, answered as the JSON body of EncodeExtenderFilterResult, written as the candidates
  /// are decided (no maps built: the HTTP path of large clusters). The failure maps list the
  /// nodes in request order instead of sorted; the JSON means the same.
  std::string FilterJson(const ExtenderArgs& args);
  /// FilterJson for a body decoded by DecodeExtenderArgsRef (names as views: the server's
  /// path). Same answer, byte for byte.
  std::string FilterJson(const ExtenderArgsRef& args);
  /// Scores each candidate: feasible nodes get the policy's score (Scheduler::ScoreNodes),
  /// mapped to 0..10 by min–max over the feasible candidates, rounded down (all equal → 10);
  /// unknown, blocked or infeasible candidates get 0, and every candidate while not in sync. A
  /// pod PodToSpec rejects gets an empty list. Remembers the pod (seen).
  HostPriorityList Prioritize(const ExtenderArgs& args);
  /// Prioritize, answered as the JSON body of EncodeHostPriorityList (no list built).
  std::string PrioritizeJson(const ExtenderArgs& args);
  /// PrioritizeJson for a body decoded by DecodeExtenderArgsRef. Same answer, byte for byte.
  std::string PrioritizeJson(const ExtenderArgsRef& args);
  /// Binds the pod with this UID to `args.node`. Refused (an error, nothing written, nothing
  /// allocated): not in sync; a UID no filter saw; a node that this extender's filter did not
  /// pass for this UID within filter_pass_seconds; an unknown or blocked node; a pod that no
  /// longer fits ("does not fit: <reason>"). Idempotent per UID: bound or assumed on that node
  /// again succeeds without allocating; on another node it is an error.
  /// API mode: reads the node's pods from the API first (LiveOptions::read_node_before_bind),
  /// picks GPUs by the policy, assumes the pod, then — without holding the lock — creates the
  /// Binding with the GPU annotations (tessera.io/gpu-indices; with HAMi's register on the node
  /// also HAMi's, see k8s/hami/annotations.h), which the API server writes onto the pod with
  /// spec.nodeName. A Binding the API server rejects un-assumes the pod; one whose outcome is
  /// unknown (no answer) keeps it assumed until the API shows the truth, and a retry of the
  /// same bind finds out. A concurrent Bind of the same UID waits for the first one.
  ExtenderBindingResult Bind(const ExtenderBindingArgs& args);
  /// File mode: releases the pod with `uid` (it was deleted). False if it held nothing.
  bool Unbind(const std::string& uid);

  /// Chooses preemption victims (k8s/extender/preemption.h, SelectVictims) on each candidate
  /// node of NodeNameToMetaVictims and NodeNameToVictims, among the pods of the model on that
  /// node, with their priority and labels and the budgets of SetDisruptionBudgets. Victims the
  /// scheduler sent are kept; victims are added when they do not free enough. Only nodes with
  /// at least one victim are answered: unknown, cordoned or blocked nodes, nodes where the pod
  /// fits without victims and nodes where no victim set makes it fit are left out; nothing
  /// while not in sync; a pod PodToSpec rejects gets no node. Changes no allocation.
  ExtenderPreemptionResult Preempt(const ExtenderPreemptionArgs& args);

  // ClusterEventSink (API mode; file mode feeds itself through the same methods). The model
  // is built at the first sync; after it, a node whose capacity changes rebuilds the model
  // (and M), and a pod that changes places its node(s) again.
  Status UpsertNode(const Node& node) override;
  void DeleteNode(const std::string& name) override;
  /// A bound pod that has not ended occupies its node (waits for it when the node is not known
  /// yet); a pod that ended is released; a pending pod is remembered (seen). Error (logged by
  /// the cache; the pod is still accounted, fail closed): PodToSpec rejects it, or its GPU
  /// annotation is malformed.
  Status UpsertPod(const Pod& pod) override;
  void UndecodablePod(const PodIdentity& pod, const std::string& error) override;
  void DeletePod(const std::string& uid) override;
  void BeginPodList() override;
  void EndPodList(const std::set<std::string>& uids, const std::string& resource_version) override;
  void SetDisruptionBudgets(std::vector<PodDisruptionBudget> pdbs) override;
  void SyncChanged(const SyncStatus& status) override;

  /// File mode: always true. API mode: in sync and the model built.
  bool ready() const;
  /// Why not ready ("" when ready).
  std::string not_ready_reason() const;
  /// Pods assumed (Bind accepted) that the API has not shown bound yet.
  int assumed_pods() const;
  /// File mode: what FromJson could not apply as given (JSON paths and why).
  std::vector<std::string> warnings() const;

  /// Records one HTTP request of `verb` ("filter", "bind", ...) that took `seconds`. Lock-free
  /// for the known verbs.
  void RecordRequest(std::string_view verb, double seconds);

  /// The cluster model as the extender holds it, typed (what `tessera analyze` reads; StateJson
  /// writes the same).
  ModelView View() const;

  /// {"policy", "mode", "synced", "sync_reason", "gpu_capacity_milli", "gpu_allocated_milli",
  /// "nodes": [{"name", "gpu_model", "gpu_count", "unschedulable", "blocked" (reason or ""),
  /// "cpu_left_milli", "memory_left_mib", "gpu_free_milli": [...], "topology" (the compact
  /// text "nvlink=0-3/4-7;numa=0-3/4-7;kubelet=none", or null: none)}],
  /// "assignments": [{"uid", "pod", "node", "gpus": [...], "gpu_milli", "state"
  /// ("assumed" | "confirmed"), "gpus_from" ("annotation" | "tessera" | "guess" |
  /// "estimate")}] (sorted by UID), "unaccounted": [{"uid", "pod", "node", "why"}] (pods
  /// estimated, unreadable, or that could not be placed), "classes": [{"name", "priority",
  /// "slo_wait_seconds" (null: none), "preemptible", "use_headroom", "pending"}] (in config
  /// order), "pending": [{"uid", "pod", "class", "waiting_seconds", "nominated_node" (the node
  /// its preemption made room on, or null)}] (the GPU queue, longest wait first)}.
  std::string StateJson() const;
  /// The tessera_* metrics (Prometheus), with those registered in metrics_registry().
  std::vector<prometheus::MetricFamily> CollectMetrics() const;
  /// Where the components beside the extender (the ClusterCache) register their metrics, so
  /// that /metrics shows them too. Lives as long as the Extender.
  prometheus::Registry* metrics_registry();
  /// CollectMetrics as Prometheus text exposition (format 0.0.4).
  std::string MetricsText() const;

  /// Totals, for tests.
  int64_t gpu_allocated_milli() const;
  int64_t gpu_capacity_milli() const;
  /// Pods placed on nodes (assumed and bound).
  int bound_pods() const;
  /// The topology the model holds for node `name` (null: none or unknown node), for tests.
  TopologyPtr node_topology(const std::string& name) const;
  /// The GPU queue's depth by class index (ExtenderOptions::classes), for tests.
  std::vector<int> pending_gpu_pods() const;

 private:
  struct Metrics;  // metrics.h: the prometheus-cpp families and cells
  /// How filter sorts a candidate.
  enum class Candidate : uint8_t { kFits, kFailed, kUnresolvable };

  Extender(const ExtenderOptions& options, bool api_mode);
  /// Filter's loop; the caller holds the lock and decoded `spec` from `pod`. Remembers the
  /// pod, then calls visit(index, name, node or -1, Candidate, reason) for each candidate
  /// (node_filter.h's codes; kReasonUnknown for a fit) and counts the rejections. Returns the
  /// PodToSpec error (no candidate visited), or OK. `names_id`: ExtenderArgsRef::names_id (0
  /// when unknown). A node's own explanation is kReasonDetail + k, `(*details)[k]` its text.
  template <typename Visit>
  Status FilterCandidatesLocked(const Pod& pod, const Result<PodSpec>& spec,
                                std::span<const std::string_view> names, uint64_t names_id,
                                std::vector<std::string>* details, Visit&& visit)
      TESSERA_REQUIRES(mutex_);
  /// FilterJson's body: candidates `names`; `nodes_json` non-null: answer Nodes too.
  std::string FilterJsonOf(const Pod& pod, std::span<const std::string_view> names,
                           uint64_t names_id, const std::vector<std::string>* nodes_json);
  /// Prioritize's loop; the caller holds the lock. Calls visit(index, name, node or -1,
  /// score 0..10) for each candidate, in order; nothing when PodToSpec rejects the pod.
  template <typename Visit>
  void ScoreCandidatesLocked(const Pod& pod, std::span<const std::string_view> names,
                             uint64_t names_id, Visit&& visit) TESSERA_REQUIRES(mutex_);
  std::string PrioritizeJsonOf(const Pod& pod, std::span<const std::string_view> names,
                               uint64_t names_id);

  /// The headroom's view of pod `uid` of class `cls` (sched/cycle.h: held, at risk, preempts
  /// instead of waiting); its wait counts from metadata.creationTimestamp, and a pod not in the
  /// GPU queue is not at risk. Nothing for cls < 0.
  HeadroomPod HeadroomOfLocked(const std::string& uid, int cls) const TESSERA_REQUIRES(mutex_);
  /// The headroom gate of a pod in this cycle (the model's idle GPUs now).
  HeadroomGate GateOfLocked(const HeadroomPod& pod) const TESSERA_REQUIRES(mutex_);
  /// Forgets pod `uid` (deleted or ended) and places its node again; a release it makes feeds
  /// the headroom's drain rate (kBacklog), unless it was a preemption's victim (its GPUs go to
  /// its preemptor).
  void RemovePodLocked(const std::string& uid) TESSERA_REQUIRES(mutex_);
  /// Why the verbs refuse to answer (out of sync with the API); none when they may answer.
  std::optional<std::string> GateLocked() const TESSERA_REQUIRES(mutex_);
  /// What /state and the model's gauges show (status.h), under the lock; F_n(M) and the
  /// stranded GPU per node only `with_fragmentation` (the metrics; /state does not show them).
  StatusView StatusLocked(bool with_fragmentation) const TESSERA_REQUIRES(mutex_);
  /// Remembers a pod seen by Filter/Prioritize (PodStates::See) and, the first time, counts
  /// it for the policy's context (Scheduler::Observe).
  void SeeLocked(const Pod& pod, const PodSpec& spec) TESSERA_REQUIRES(mutex_);
  /// Why Bind does not place a pod: the result tessera_binds_total counts it under, and what
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
  /// File-mode Bind, and API-mode Bind after its API calls: the checks shared by both; none
  /// when the pod may be bound to the node.
  std::optional<BindRefusal> CheckBindLocked(const ExtenderBindingArgs& args,
                                             const std::string& pod_key) const
      TESSERA_REQUIRES(mutex_);
  /// Chooses GPUs for `uid` on `node` and assumes it there; none, or why not.
  std::optional<BindRefusal> AssumeLocked(const std::string& uid, int node, GpuSet* gpus)
      TESSERA_REQUIRES(mutex_);
  ExtenderBindingResult BindThroughApi(const ExtenderBindingArgs& args, UniqueMutexLock& lock)
      TESSERA_REQUIRES(mutex_);
  double Now() const;
  /// The pod `uid` is bound (by this extender's Bind, or the watch shows it so): if it was in
  /// the GPU queue, its wait goes into the wait histogram and the SLO counters.
  void WaitEndedLocked(const std::string& uid) TESSERA_REQUIRES(mutex_);

  mutable Mutex mutex_;
  const ExtenderOptions options_;
  const bool api_mode_;  ///< Create: the objects come from the API, Bind writes through it
  ClusterModel model_ TESSERA_GUARDED_BY(mutex_);
  GroupVerdicts verdicts_ TESSERA_GUARDED_BY(mutex_);
  CandidateScores scores_ TESSERA_GUARDED_BY(mutex_);
  /// The nodes Filter passed per pod UID, for Bind's check (filter_pass_seconds).
  FilterPasses filter_passes_ TESSERA_GUARDED_BY(mutex_);
  std::unique_ptr<Metrics> metrics_;  // cells are thread-safe themselves
  PendingQueue queue_ TESSERA_GUARDED_BY(mutex_);
  std::unique_ptr<Headroom> headroom_ TESSERA_GUARDED_BY(mutex_);
  Preemptor preemptor_ TESSERA_GUARDED_BY(mutex_);
  std::vector<int> preempt_nodes_ TESSERA_GUARDED_BY(mutex_);  ///< filter's resolvable refusals

  // API mode only (Create).
  LiveOptions live_;
  SyncStatus sync_ TESSERA_GUARDED_BY(mutex_);                ///< as the cache last said
  std::set<std::string> binding_ TESSERA_GUARDED_BY(mutex_);  ///< UIDs whose API bind is in flight
  std::condition_variable_any bind_done_;                     ///< signalled when binding_ shrinks
  /// The API writes of PreemptionMode::kEvict (null in other modes and in file mode). Last:
  /// destroyed first, so its worker never calls back into a half-destroyed extender.
  std::unique_ptr<Evictor> evictor_;
};

}  // namespace tessera::k8s
