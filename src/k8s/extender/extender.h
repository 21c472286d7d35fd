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
#include "k8s/extender/binder.h"
#include "k8s/extender/cluster_model.h"
#include "k8s/extender/evictor.h"
#include "k8s/extender/extender_options.h"
#include "k8s/extender/extender_protocol.h"
#include "k8s/extender/extender_state.h"
#include "k8s/extender/filter_passes.h"
#include "k8s/extender/node_filter.h"
#include "k8s/extender/object_files.h"
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

struct ExtenderMetrics;  // metrics.h

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

  /// Chooses preemption victims (preemptor.h; sched/victims.h, SelectVictims) on each candidate
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
  Extender(const ExtenderOptions& options, const LiveOptions& live);
  /// Filter's loop; the caller holds the lock and decoded `spec` from `pod`. Remembers the
  /// pod, then calls visit(index, name, node or -1, FilterSection, reason) for each candidate
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

  mutable Mutex mutex_;
  const ExtenderOptions options_;
  std::unique_ptr<ExtenderMetrics> metrics_;  // cells are thread-safe themselves
  /// The cluster model and the queue, headroom and preemptions beside it.
  ExtenderState state_ TESSERA_GUARDED_BY(mutex_);
  GroupVerdicts verdicts_ TESSERA_GUARDED_BY(mutex_);
  CandidateScores scores_ TESSERA_GUARDED_BY(mutex_);
  Binder binder_ TESSERA_GUARDED_BY(mutex_);
  std::vector<int> preempt_nodes_ TESSERA_GUARDED_BY(mutex_);  ///< filter's resolvable refusals
  /// The API writes of PreemptionMode::kEvict (null in other modes and in file mode). Last:
  /// destroyed first, so its worker never calls back into a half-destroyed extender.
  std::unique_ptr<Evictor> evictor_;
};

}  // namespace tessera::k8s
