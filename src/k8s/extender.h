#pragma once

// The kube-scheduler extender's logic, without HTTP: filter, prioritize and bind GPU pods on a
// cluster model held in memory (see docs/EXTENDER.md, "tessera serve").

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "frag/target_workload.h"
#include "k8s/disruption_budget.h"
#include "k8s/extender_protocol.h"
#include "model/cluster.h"
#include "policy/policy.h"
#include "sched/scheduler.h"
#include "util/result.h"

namespace tessera::k8s {

/// The pod annotation that carries a bound pod's GPU indices on its node: "0-3", "1,3",
/// "0-1,4" (ranges inclusive). Read when the cluster is loaded.
inline constexpr std::string_view kGpuIndicesAnnotation = "tessera.io/gpu-indices";

/// Options of an Extender.
struct ExtenderOptions {
  std::string policy = "fgd";  ///< a name MakePolicy knows
  uint64_t seed = 42;          ///< drives the `random` policy's draws
};

/// Upper bounds of the request-duration histogram, in seconds (+Inf is implicit).
inline constexpr std::array<double, 9> kRequestDurationBuckets = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1};

/// The extender: a Cluster, a Policy and a Scheduler over them, and the GPU assignment of each
/// pod it bound (or found bound at load), by pod UID.
///
/// The cluster is loaded once (FromJson); there is no API list/watch cache yet, so pods bound
/// or deleted by others are not seen. Nodes keep the order of the node list, which is also the
/// tie order of the policy (ties go to the node listed first).
///
/// Target workload M (fgd, tessera): built from the loaded pods (TargetWorkload::FromPods);
/// with no pods at all, a single class of one whole GPU (no CPU) with probability 1, so that
/// fgd prefers placements that keep whole GPUs free.
///
/// Thread-safe: every public method takes `mutex_`; all members below it are
/// GUARDED_BY(mutex_). Bind never over-allocates: it re-checks the fit under the lock.
class Extender {
 public:
  /// Loads the nodes from `nodes_json` (a v1 NodeList as `kubectl get nodes -o json` prints
  /// it; a single Node or a bare array is accepted too) and, when `pods_json` is not empty,
  /// the pods bound to them (a v1 PodList; pods with spec.nodeName set, not Succeeded/Failed).
  /// A bound pod's GPUs come from annotation tessera.io/gpu-indices, else the generic choice
  /// (DefaultGpuChoice). Errors name the item ("nodes: items[2].status.allocatable.cpu: ..."),
  /// including a bound pod that does not fit its node or names an unknown node.
  static Result<std::unique_ptr<Extender>> FromJson(std::string_view nodes_json,
                                                    std::string_view pods_json,
                                                    const ExtenderOptions& options);
  Extender(const Extender&) = delete;
  Extender& operator=(const Extender&) = delete;
  ~Extender();

  /// Decides every candidate (NodeNames, else the names of Nodes): fits → NodeNames; unknown
  /// node → FailedAndUnresolvableNodes "unknown node"; not enough cpu/memory/gpu/gpu-memory
  /// left → FailedNodes (preemption may help); GPU model or GPU count → FailedAndUnresolvable.
  /// Reasons read "<filter>: <explanation>". A pod that PodToSpec rejects gets Error set and
  /// no node. Remembers the pod by UID for a later Bind. When the request carried full Nodes,
  /// the answer returns the passing ones in Nodes as well.
  ExtenderFilterResult Filter(const ExtenderArgs& args);
  /// Filter, answered as the JSON body of EncodeExtenderFilterResult, written as the candidates
  /// are decided (no maps built: the HTTP path of large clusters). The failure maps list the
  /// nodes in request order instead of sorted; the JSON means the same.
  std::string FilterJson(const ExtenderArgs& args);
  /// Scores each candidate: feasible nodes get the policy's score (Scheduler::ScoreNodes),
  /// mapped to 0..10 by min–max over the feasible candidates, rounded down (all equal → 10);
  /// unknown or infeasible candidates get 0. A pod PodToSpec rejects gets an empty list.
  /// Remembers the pod by UID for a later Bind.
  HostPriorityList Prioritize(const ExtenderArgs& args);
  /// Prioritize, answered as the JSON body of EncodeHostPriorityList (no list built).
  std::string PrioritizeJson(const ExtenderArgs& args);
  /// Binds the pod last seen by Filter/Prioritize with this UID to `args.node`: re-checks the
  /// fit, picks GPUs by the policy's choice on that node, allocates. Idempotent per UID: the
  /// same UID on the same node again succeeds without allocating; on another node it is an
  /// error. A pod that no longer fits gets "does not fit: <reason>" and nothing changes.
  ExtenderBindingResult Bind(const ExtenderBindingArgs& args);
  /// Releases the allocation of the pod with `uid` (the pod was deleted). False if unknown.
  bool Unbind(const std::string& uid);

  /// Chooses preemption victims (k8s/preemption.h, SelectVictims) on each candidate node of
  /// NodeNameToMetaVictims and NodeNameToVictims, among the pods of the model on that node
  /// (bound by Bind or loaded), with their recorded priority and labels and the budgets of
  /// SetDisruptionBudgets. Victims the scheduler sent are kept; victims are added when they do
  /// not free enough. Unknown or cordoned nodes, and nodes where no victim set makes the pod
  /// fit, are left out; a pod PodToSpec rejects gets no node. Changes no allocation: the
  /// victims are released when their deletion is seen (Unbind).
  ExtenderPreemptionResult Preempt(const ExtenderPreemptionArgs& args);
  /// Replaces the PodDisruptionBudgets that Preempt counts violations against.
  void SetDisruptionBudgets(std::vector<PodDisruptionBudget> pdbs);

  /// Records one HTTP request of `verb` ("filter", "bind", ...) that took `seconds`.
  void RecordRequest(std::string_view verb, double seconds);

  /// {"policy", "gpu_capacity_milli", "gpu_allocated_milli", "nodes": [{"name", "gpu_model",
  /// "gpu_count", "cpu_left_milli", "memory_left_mib", "gpu_free_milli": [...]}],
  /// "assignments": [{"uid", "pod", "node", "gpus": [...], "gpu_milli"}]} (sorted by UID).
  std::string StateJson() const;
  /// Prometheus text exposition (format 0.0.4) of the tessera_* metrics.
  std::string MetricsText() const;

  /// Totals, for tests.
  int64_t gpu_allocated_milli() const;
  int64_t gpu_capacity_milli() const;
  int bound_pods() const;

 private:
  /// What preemption needs to know of a pod besides its request.
  struct PodMeta {
    std::string namespace_name;
    std::string name;
    int32_t priority = 0;  ///< spec.priority
    std::map<std::string, std::string> labels;
  };
  struct Assignment {
    std::string pod;  ///< "namespace/name"
    int node = -1;
    PodRequest request;
    GpuSet gpus = 0;
    PodMeta meta;
  };
  struct VerbStats {
    int64_t count = 0;
    std::array<int64_t, kRequestDurationBuckets.size()> buckets{};  // non-cumulative
    double sum_seconds = 0;
  };

  Extender() = default;
  /// How Filter sorts a candidate.
  enum class Candidate : uint8_t { kFits, kFailed, kUnresolvable };
  /// Filter's loop: decodes the pod and remembers it, then, under the lock, calls
  /// visit(index, name, Candidate, reason) for each candidate and counts the rejections.
  /// Returns the PodToSpec error (no candidate visited), or "".
  template <typename Visit>
  std::string FilterCandidates(const ExtenderArgs& args, Visit&& visit);
  /// Prioritize's loop: calls visit(name, score 0..10) for each candidate, in order; nothing
  /// when PodToSpec rejects the pod.
  template <typename Visit>
  void ScoreCandidates(const ExtenderArgs& args, Visit&& visit);
  /// The node index of candidate `name` at `position` of a request's list, or -1 if unknown.
  /// kube-scheduler sends the same list again and again: the index found at each position is
  /// remembered and checked against the node's name, so a hit costs one string compare
  /// instead of a hash lookup (changes of the node list only cost a miss).
  int ResolveCandidate(size_t position, const std::string& name);
  void Remember(const std::string& uid, const PodSpec& spec, const Pod& pod);
  static PodMeta MetaOf(const Pod& pod);
  GpuSet ChooseGpus(int node, const PodRequest& request) const;

  mutable std::mutex mutex_;
  ExtenderOptions options_;                          // GUARDED_BY(mutex_) (immutable)
  std::unique_ptr<Cluster> cluster_;                 // GUARDED_BY(mutex_)
  std::unique_ptr<TargetWorkload> workload_;         // GUARDED_BY(mutex_)
  std::unique_ptr<Policy> policy_;                   // GUARDED_BY(mutex_)
  std::unique_ptr<Scheduler> scheduler_;             // GUARDED_BY(mutex_)
  std::unordered_map<std::string, int> node_index_;  // GUARDED_BY(mutex_)
  std::vector<bool> unschedulable_;                  // GUARDED_BY(mutex_)
  std::vector<int> candidate_guess_;  // GUARDED_BY(mutex_), by position (ResolveCandidate)
  std::map<std::string, Assignment> assignments_;  // GUARDED_BY(mutex_), by pod UID
  /// Pods seen by Filter/Prioritize, by UID, for Bind; the oldest are forgotten past a cap.
  std::unordered_map<std::string, PodSpec> seen_;           // GUARDED_BY(mutex_)
  std::deque<std::string> seen_order_;                      // GUARDED_BY(mutex_)
  std::unordered_map<std::string, PodMeta> seen_meta_;      // GUARDED_BY(mutex_), as seen_
  std::vector<PodDisruptionBudget> pdbs_;                   // GUARDED_BY(mutex_)
  int64_t preempt_nodes_total_ = 0;                         // GUARDED_BY(mutex_)
  int64_t preempt_victims_total_ = 0;                       // GUARDED_BY(mutex_)
  std::map<std::string, VerbStats, std::less<>> verbs_;     // GUARDED_BY(mutex_)
  std::map<std::string, int64_t, std::less<>> rejections_;  // GUARDED_BY(mutex_)
  int64_t pods_bound_total_ = 0;                            // GUARDED_BY(mutex_)
};

}  // namespace tessera::k8s
