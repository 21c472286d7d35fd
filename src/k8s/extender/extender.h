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
#include "k8s/extender/evictor.h"
#include "k8s/extender/extender_protocol.h"
#include "k8s/extender/filter_passes.h"
#include "k8s/extender/node_name_index.h"
#include "k8s/extender/padded_strings.h"
#include "k8s/extender/pending_queue.h"
#include "k8s/extender/pod_state.h"
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

/// The pod annotation that carries a bound pod's GPU indices on its node: "0-3", "1,3",
/// "0-1,4" (ranges inclusive). Written with the Binding; read from every bound pod.
inline constexpr std::string_view kGpuIndicesAnnotation = "tessera.io/gpu-indices";

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

/// The extender: a Cluster, a Policy and a Scheduler over them, and every pod it knows with its
/// state (k8s/extender/pod_state.h: seen → assumed → bound → released).
///
/// The model is a function of the objects: each node's allocations are placed from the pods
/// bound (or assumed) on it, facts first — pods whose GPUs the API's objects name
/// (tessera.io/gpu-indices, HAMi's vgpu-devices-allocated) and this extender's own binds, in
/// UID order — then the pods without GPU indices, in UID order, on the generic choice. A node
/// is placed again whenever one of its pods changes, so the result does not depend on the
/// order events came in. Fail closed: a bound pod always occupies its node; when its request
/// does not decode, it counts as whole GPUs (FailClosedSpec); when nothing of it can be read,
/// or it cannot be placed beside the others (its GPUs are taken, the node shrank), the node is
/// *blocked*: filter refuses every GPU pod there with a reason, /state lists why, and
/// tessera_nodes_blocked counts it.
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
/// Thread-safe: every public method takes `mutex_`; all members below it are
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

  /// Where a placed pod's GPUs come from: its annotation, Tessera's own bind, a guess over the
  /// free GPUs, or an estimate (the pod could not be read; it holds what it asks for).
  enum class GpuSource : uint8_t { kAnnotation, kTessera, kGuess, kEstimate };
  /// The cluster model as the extender holds it, typed (what `tessera analyze` reads; StateJson
  /// writes the same): per node whether it is cordoned or blocked, every placed pod's node and
  /// GPUs, and the pods the model could not account for as given.
  struct ModelView {
    struct Node {
      std::string name;
      bool cordoned = false;
      std::string blocked;  ///< why no pod may be placed there; "" when it may
    };
    struct Placed {
      std::string uid;
      std::string pod;  ///< "namespace/name"
      int node = -1;    ///< index into nodes
      GpuSet gpus = 0;
      int64_t gpu_milli = 0;  ///< per GPU; 0 for a CPU-only pod
      bool assumed = false;   ///< bind accepted, not yet seen bound
      GpuSource source = GpuSource::kGuess;
    };
    struct Unaccounted {
      std::string uid;
      std::string pod;  ///< "namespace/name", "" when unknown
      int node = -1;
      std::string why;
    };
    std::vector<Node> nodes;               ///< in the model's node order
    std::vector<Placed> placed;            ///< by UID
    std::vector<Unaccounted> unaccounted;  ///< by node, then UID
  };
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
  struct Assignment {
    std::string pod;  ///< "namespace/name"
    int node = -1;
    PodRequest request;
    GpuSet gpus = 0;
    GpuSource source = GpuSource::kGuess;
  };
  /// A node as last read.
  struct NodeRecord {
    NodeSpec spec;
    bool unschedulable = false;
    std::vector<HamiDevice> gpus;  ///< HAMi devices by GPU index; empty when unknown
    uint8_t families = 0;          ///< GpuFamily bits it offers
    int64_t rank = 0;              ///< file mode: position in the node list (the tie order)
    std::string topology_note;     ///< the last topology error or warning logged for it
  };
  struct Metrics;  // extender.cc: the prometheus-cpp families and cells

  explicit Extender(const ExtenderOptions& options);
  /// How Filter sorts a candidate.
  enum class Candidate : uint8_t { kFits, kFailed, kUnresolvable };
  /// Why Filter rejects a candidate: one of the kReason* below, or kReasonFit + FitReason.
  static constexpr int kReasonUnknown = 0;
  static constexpr int kReasonCordoned = 1;
  static constexpr int kReasonNotSynced = 2;
  static constexpr int kReasonBlocked = 3;
  static constexpr int kReasonNoGpus = 4;
  static constexpr int kReasonGpuMemoryCapacity = 5;
  static constexpr int kReasonTesseraFamily = 6;  ///< pod's tessera.io/* not offered
  static constexpr int kReasonNvidiaFamily = 7;   ///< pod's nvidia.com/* not offered
  static constexpr int kReasonHeadroom = 8;       ///< would eat idle GPUs kept for a class
  static constexpr int kReasonNominated = 9;      ///< room held for a pod nominated there
  static constexpr int kReasonFit = 10;
  /// Codes from here on: the k-th text of a request's `details` (FilterCandidatesLocked), a
  /// node's own explanation (a topology shortfall, TopologyShortfall), counted as kTopology.
  static constexpr int kReasonDetail = kReasonFit + kNumFitReasons;
  /// The reason text of a kReason* code.
  static const std::string& ReasonText(int reason);
  /// ':' and the JSON string of each reason (a failure entry's value), by code.
  static const PaddedStrings& QuotedReasons();

  /// Filter's loop; the caller holds the lock and decoded `spec` from `pod`. Remembers the
  /// pod, then calls visit(index, name, node or -1, Candidate, reason) for each candidate
  /// (reason as above; kReasonUnknown for a fit) and counts the rejections. Returns the
  /// PodToSpec error (no candidate visited), or OK.
  /// `names_id`: ExtenderArgsRef::names_id (0 when unknown). A node refused for its topology
  /// gets the reason kReasonDetail + k, `(*details)[k]` its shortfall, one text per group.
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
  /// Whether `request` (pod `uid` of `priority`) fits node `node` (named `name`) beside the
  /// pending pods nominated there of at least its priority, each placed first (highest
  /// priority first) where it fits now — kube-scheduler's RunFilterPluginsWithNominatedPods
  /// for the GPUs it does not see. True when none is nominated there. Caller holds the lock.
  bool FitsBesideNominatedLocked(int node, const std::string& name, const std::string& uid,
                                 int32_t priority, const PodRequest& request) const
      TESSERA_REQUIRES(mutex_);
  /// For PreemptionMode::kEvict: the pod fits none of `nodes` (filter's resolvable refusals);
  /// if it may preempt (not preemptionPolicy: Never, not nominated to a node where pods of
  /// lower priority are still terminating), chooses the victims on each node without a pending
  /// nomination and the node as kube-scheduler would (ChoosePreemptionNode), nominates the pod
  /// there in the model and queues the API writes (Evictor). Caller holds the lock.
  void PreemptAtFilterLocked(const Pod& pod, const PodRequest& request,
                             const std::vector<int>& nodes) TESSERA_REQUIRES(mutex_);
  /// The victim search of Preempt and PreemptAtFilterLocked on the nodes of `proposed` (node
  /// name → the victims the scheduler sent, possibly none): one answer per node where some
  /// victim set makes the preemptor (UID `uid`, `priority`) fit, with the node's rank. Skips
  /// nodes with a pending nomination when `skip_nominated`. Caller holds the lock.
  std::vector<NodeVictims> VictimsLocked(
      const std::string& uid, int32_t priority, const PodRequest& request,
      std::map<std::string, std::vector<std::pair<VictimCandidate, PodMeta>>>& proposed,
      bool skip_nominated) TESSERA_REQUIRES(mutex_);

  /// Headroom (ExtenderOptions::headroom); the caller holds the lock.
  /// The headroom's view of pod `uid` of class `cls` (sched/cycle.h: held, at risk, preempts
  /// instead of waiting); its wait counts from metadata.creationTimestamp, and a pod not in the
  /// GPU queue is not at risk. Nothing for cls < 0.
  HeadroomPod HeadroomOfLocked(const std::string& uid, int cls) const TESSERA_REQUIRES(mutex_);
  /// The whole idle GPUs of the cluster now (the scheduler's running count; 0 before the model
  /// is built).
  int64_t IdleGpusLocked() const TESSERA_REQUIRES(mutex_);
  /// The same by GPU model id.
  const std::vector<int64_t>& IdleGpusByModelLocked() const TESSERA_REQUIRES(mutex_);
  /// The reason of a held pod refused for the floor of GPU model `model` (an id), naming it,
  /// with the floor and the model's `idle` GPUs.
  std::string ModelHeadroomTextLocked(int model, int64_t idle) const TESSERA_REQUIRES(mutex_);
  /// Moves the headroom to the clock's now (forecast buckets, backlog peaks that aged out).
  void UpdateHeadroomLocked() TESSERA_REQUIRES(mutex_);
  /// Feeds a release by a pod of `priority`: the idle GPUs before and after a change of the
  /// model (kBacklog).
  void NoteIdleChangeLocked(int64_t idle_before, int priority) TESSERA_REQUIRES(mutex_);
  /// Forgets pod `uid` (deleted or ended) and places its node again; a release it makes feeds
  /// the headroom's drain rate.
  void RemovePodLocked(const std::string& uid) TESSERA_REQUIRES(mutex_);
  /// The class index of a pod record's metadata (label tessera.io/class, else priority).
  int ClassOfRecord(const PodRecord& r) const TESSERA_REQUIRES(mutex_);

  /// Why the verbs refuse to answer (out of sync with the API); none when they may answer.
  std::optional<std::string> GateLocked() const TESSERA_REQUIRES(mutex_);
  /// View under the lock.
  ModelView ViewLocked() const TESSERA_REQUIRES(mutex_);
  /// What /state and the model's gauges show (status.h), under the lock; F_n(M) and the
  /// stranded GPU per node only `with_fragmentation` (the metrics; /state does not show them).
  StatusView StatusLocked(bool with_fragmentation) const TESSERA_REQUIRES(mutex_);
  /// Remembers a pod seen by Filter/Prioritize (PodStates::See) and, the first time, counts
  /// it for the policy's context (Scheduler::Observe).
  void SeeLocked(const Pod& pod, const PodSpec& spec) TESSERA_REQUIRES(mutex_);
  /// A pending pod's record from an API object: keeps this extender's own nomination of it
  /// while the object shows none yet; once the object shows one, that one is the truth.
  void KeepOwnNominationLocked(const std::string& uid, PodRecord* record) TESSERA_REQUIRES(mutex_);
  /// The record a pod object gives (request decoded or estimated, annotations, metadata);
  /// `error` gets PodToSpec's error when the request is an estimate.
  static PodRecord RecordOf(const Pod& pod, std::string* error);
  /// The same, with PodToSpec's answer for the pod already at hand.
  static PodRecord RecordOf(const Pod& pod, const Result<PodSpec>& spec, std::string* error);
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
  /// Applies a consistent read of `node`'s pods (PodList JSON items) to the model: pods it
  /// shows bound there that the watch has not delivered (newer resourceVersions, not removed)
  /// are observed; nothing is removed (the watch tells that). Caller holds the lock.
  void MergeNodeReadLocked(const std::string& node, const ListPage& page) TESSERA_REQUIRES(mutex_);

  /// Rebuilds the model if nodes changed (dirty_) and the first sync (or file load) is done.
  void EnsureModel() TESSERA_REQUIRES(mutex_);
  void Rebuild() TESSERA_REQUIRES(mutex_);
  /// Places `node`'s pods again from their records (facts, then guesses; see the class
  /// comment). No-op before the model is built or for an unknown node.
  void PlaceNode(const std::string& node) TESSERA_REQUIRES(mutex_);
  void PlaceNodes(const std::vector<std::string>& nodes) TESSERA_REQUIRES(mutex_);
  /// The GPUs `r`'s objects (or this extender) name on node `node`, if any; `why` gets a
  /// malformed annotation's message.
  std::optional<GpuSet> FactGpus(const PodRecord& r, int node, std::string* why) const
      TESSERA_REQUIRES(mutex_);
  double Now() const;
  /// The pod `uid` is bound (by this extender's Bind, or the watch shows it so): if it was in
  /// the GPU queue, its wait goes into the wait histogram and the SLO counters.
  void WaitEndedLocked(const std::string& uid) TESSERA_REQUIRES(mutex_);

  mutable Mutex mutex_;
  ExtenderOptions options_;  // GUARDED_BY(mutex_) (immutable)
  /// The engine (cluster, policy with its target workload, scheduler) as every front door
  /// assembles it (sched/engine.h); rebuilt when the nodes change. GUARDED_BY(mutex_).
  std::unique_ptr<Engine> engine_ TESSERA_GUARDED_BY(mutex_);
  Cluster* cluster_ TESSERA_GUARDED_BY(mutex_) =
      nullptr;  // &engine_->cluster(); null before the first build
  Scheduler* scheduler_ TESSERA_GUARDED_BY(mutex_) =
      nullptr;  // &engine_->scheduler(); null before the first build
  /// The model's node names: indices by name, candidates resolved, the answers' name pieces
  /// (immutable once built: a caller may keep reading them after releasing the lock); rebuilt
  /// with the model. GUARDED_BY(mutex_).
  NodeNameIndex node_names_ TESSERA_GUARDED_BY(mutex_);
  std::vector<int> score_nodes_
      TESSERA_GUARDED_BY(mutex_);  // GUARDED_BY(mutex_), ScoreCandidatesLocked's scratch
  std::vector<int> candidate_group_
      TESSERA_GUARDED_BY(mutex_);  // GUARDED_BY(mutex_), ScoreCandidatesLocked's scratch
  /// Why a node takes no pod of some kind, as bits by node index (node_flags_): a candidate
  /// whose bits meet the request's mask (RequestMask) is rejected without looking further, so
  /// the common case costs one byte read.
  enum NodeFlag : uint8_t {
    kCordoned = 1,
    kBlocked = 2,
    kNoGpus = 4,
    kNoTessera = 8,  ///< does not offer tessera.io/gpu
    kNoNvidia = 16,  ///< offers neither nvidia.com/gpu nor a HAMi register
  };
  static uint8_t FlagsOf(const NodeRecord& record);
  /// The node flags that reject a pod with `request` and GPU resource `families`.
  static uint8_t RequestMask(const PodRequest& request, uint8_t families);
  /// The kReason* of a candidate whose flags meet the mask.
  static int FlagReason(uint8_t flags);
  std::vector<uint8_t> node_flags_
      TESSERA_GUARDED_BY(mutex_);  // GUARDED_BY(mutex_), NodeFlag bits by node index
  std::vector<std::string> blocked_
      TESSERA_GUARDED_BY(mutex_);  // GUARDED_BY(mutex_), by node index; "" = not blocked
  std::vector<std::vector<std::string>> placed_
      TESSERA_GUARDED_BY(mutex_);  // GUARDED_BY(mutex_), UIDs by node index
  uint64_t model_generation_ TESSERA_GUARDED_BY(mutex_) = 0;  // GUARDED_BY(mutex_), +1 per Rebuild
  /// Filter's fit, or prioritize's score, of each scheduler group (Scheduler::group_of) for
  /// the current request: valid where `stamp` is the request's group_fit_stamp_.
  struct GroupFit {
    uint32_t stamp = 0;
    int reason = kReasonFit;     ///< kReasonFit + FitReason, or a refined kReason*
    bool keeps_headroom = true;  ///< a held pod that fits keeps the headroom there (HeldMayUse)
    /// Where it does not: kReasonHeadroom (H), or the detail code of its model's floor.
    int headroom_reason = kReasonHeadroom;
    /// Refused for a topology that no freeing of GPUs would satisfy (the pod does not fit it
    /// on the node emptied): unresolvable, where other topology refusals are not.
    bool never = false;
    int score = 0;
  };
  std::vector<GroupFit> group_fit_ TESSERA_GUARDED_BY(mutex_);  // GUARDED_BY(mutex_), by group id
  uint32_t group_fit_stamp_ TESSERA_GUARDED_BY(mutex_) = 0;     // GUARDED_BY(mutex_)
  PodStates pods_ TESSERA_GUARDED_BY(mutex_);                   // GUARDED_BY(mutex_)
  std::map<std::string, Assignment> assignments_
      TESSERA_GUARDED_BY(mutex_);  // GUARDED_BY(mutex_), placed pods by UID
  /// Pods counted without knowing all of them, (UID, why) by node index: "estimated ...",
  /// "unreadable: ...", "not placed: ..." (StateJson's and View's "unaccounted").
  std::vector<std::vector<std::pair<std::string, std::string>>> unaccounted_
      TESSERA_GUARDED_BY(mutex_);  // GUARDED_BY
  /// The nodes Filter passed per pod UID, for Bind's check (filter_pass_seconds).
  FilterPasses filter_passes_ TESSERA_GUARDED_BY(mutex_);             // GUARDED_BY(mutex_)
  std::vector<PodDisruptionBudget> pdbs_ TESSERA_GUARDED_BY(mutex_);  // GUARDED_BY(mutex_)
  std::map<std::string, NodeRecord> nodes_
      TESSERA_GUARDED_BY(mutex_);  // GUARDED_BY(mutex_), by name
  std::vector<TopologyPtr> topologies_
      TESSERA_GUARDED_BY(mutex_);  // GUARDED_BY(mutex_), one per distinct topology
  std::vector<std::string> warnings_ TESSERA_GUARDED_BY(mutex_);  // GUARDED_BY(mutex_), file mode
  std::unique_ptr<Metrics> metrics_;               // cells are thread-safe themselves
  PendingQueue queue_ TESSERA_GUARDED_BY(mutex_);  // GUARDED_BY(mutex_)
  std::unique_ptr<Headroom> headroom_ TESSERA_GUARDED_BY(mutex_);  // GUARDED_BY(mutex_)

  // API mode only (Create); all GUARDED_BY(mutex_).
  LiveOptions live_;
  bool api_mode_ TESSERA_GUARDED_BY(mutex_) = false;
  bool loaded_ TESSERA_GUARDED_BY(mutex_) =
      false;  ///< file loaded, or the first sync came: the model may be built
  bool dirty_ TESSERA_GUARDED_BY(mutex_) = true;  ///< nodes changed since the model was built
  SyncStatus sync_ TESSERA_GUARDED_BY(mutex_);    ///< as the cache last said
  std::set<std::string> binding_ TESSERA_GUARDED_BY(mutex_);  ///< UIDs whose API bind is in flight
  std::condition_variable_any bind_done_;                     ///< signalled when binding_ shrinks
  std::vector<int> preempt_nodes_
      TESSERA_GUARDED_BY(mutex_);  ///< filter's scratch: resolvable refusals (kEvict)
  /// The victims of this extender's own preemptions (kEvict), from the decision until the
  /// API shows them gone: leaving, before the watch shows them marked and deleted.
  std::set<std::string> evicting_ TESSERA_GUARDED_BY(mutex_);
  /// This extender's own nominations (kEvict), preemptor UID → node, until the API shows the
  /// pod with a nomination (or bound, or gone): an object of the pod written before the
  /// nomination (kube-scheduler's condition update, in flight) must not make the model forget
  /// it, or the next filter would preempt again.
  std::map<std::string, std::string> own_nominations_ TESSERA_GUARDED_BY(mutex_);
  /// The API writes of PreemptionMode::kEvict (null in other modes and in file mode). Last:
  /// destroyed first, so its worker never calls back into a half-destroyed extender.
  std::unique_ptr<Evictor> evictor_;
};

}  // namespace tessera::k8s
