#pragma once

// The kube-scheduler extender's logic, without HTTP: filter, prioritize and bind GPU pods on a
// cluster model held in memory (see docs/EXTENDER.md, "tessera serve").

#include <array>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "frag/target_workload.h"
#include "k8s/api/disruption_budget.h"
#include "k8s/api/kube_api.h"
#include "k8s/api/objects.h"
#include "k8s/extender/extender_protocol.h"
#include "model/cluster.h"
#include "policy/policy.h"
#include "sched/scheduler.h"
#include "util/clock.h"
#include "util/result.h"
#include "util/spin_lock.h"

namespace tessera::k8s {

/// The pod annotation that carries a bound pod's GPU indices on its node: "0-3", "1,3",
/// "0-1,4" (ranges inclusive). Read when the cluster is loaded.
inline constexpr std::string_view kGpuIndicesAnnotation = "tessera.io/gpu-indices";
// HAMi's pod annotations (docs/develop/protocol.md of HAMi), written by Bind in API mode so
// that HAMi's device plugin enforces the assignment.
inline constexpr std::string_view kHamiDevicesToAllocate = "hami.io/vgpu-devices-to-allocate";
/// The same value; HAMi's own scheduler counts a pod's devices from it.
inline constexpr std::string_view kHamiDevicesAllocated = "hami.io/vgpu-devices-allocated";
/// Unix seconds; HAMi's device plugin only picks up pods that carry it.
inline constexpr std::string_view kHamiBindTime = "hami.io/bind-time";
inline constexpr std::string_view kHamiVgpuNode = "hami.io/vgpu-node";
inline constexpr std::string_view kHamiVgpuTime = "hami.io/vgpu-time";
inline constexpr std::string_view kHamiBindPhase = "hami.io/bind-phase";

/// What an API-mode Extender needs besides ExtenderOptions.
struct LiveOptions {
  KubeApi* api = nullptr;        ///< not owned; must outlive the Extender
  const Clock* clock = nullptr;  ///< not owned; the system clock when null
  /// How long a pod bound through the API stays "assumed" (allocated in the model) without the
  /// watch showing it bound, before its allocation is dropped.
  double assume_ttl_seconds = 30;
};

/// Options of an Extender.
struct ExtenderOptions {
  std::string policy = "fgd";  ///< a name MakePolicy knows
  uint64_t seed = 42;          ///< drives the `random` policy's draws
  /// Filter and prioritize keep trying the lock this long before they sleep (microseconds;
  /// util/spin_lock.h).
  int spin_us = kDefaultSpinMicroseconds;
};

/// Upper bounds of the request-duration histogram, in seconds (+Inf is implicit).
inline constexpr std::array<double, 9> kRequestDurationBuckets = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1};

/// Bytes CopyShort may copy at once (prioritize's `{"Host":"<name>","Score":` pieces are
/// ~40 bytes).
inline constexpr size_t kCopyPad = 64;

/// Copies `n` bytes; up to kCopyPad of them as one fixed-size copy of 32 or kCopyPad bytes (no
/// call): then `src` must be readable and `dst` writable for kCopyPad bytes.
inline void CopyShort(char* dst, const char* src, size_t n) {
  if (n <= kCopyPad / 2) {
    std::memcpy(dst, src, kCopyPad / 2);
  } else if (n <= kCopyPad) {
    std::memcpy(dst, src, kCopyPad);
  } else {
    std::memcpy(dst, src, n);
  }
}

/// Strings in one buffer with kCopyPad bytes after the last, so that CopyShort may read
/// kCopyPad bytes from the start of any of them (the extender's answer pieces).
class PaddedStrings {
 public:
  void Add(std::string_view s);
  void Clear() { *this = PaddedStrings(); }
  size_t size() const { return at_.size(); }
  std::string_view operator[](size_t i) const { return {text_.data() + at_[i], len_[i]}; }
  size_t length(size_t i) const { return len_[i]; }
  /// The longest string's length (0 when empty).
  size_t max_length() const { return max_length_; }

 private:
  std::string text_ = std::string(kCopyPad, ' ');
  std::vector<uint32_t> at_;
  std::vector<uint32_t> len_;
  size_t max_length_ = 0;
};

/// The extender: a Cluster, a Policy and a Scheduler over them, and the GPU assignment of each
/// pod it bound (or found bound at load), by pod UID.
///
/// Two modes. File mode (FromJson): the cluster is loaded once and Bind only updates the
/// model; nodes keep the order of the node list, which is also the tie order of the policy
/// (ties go to the node listed first). API mode (Create): a ClusterCache feeds nodes and pods
/// from the API (Upsert*/Delete*), nodes are in name order, and Bind writes the assignment
/// through the API (annotations, then the Binding), assuming the allocation until the watch
/// confirms it. The modes do not mix.
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
  /// An Extender in API mode: no nodes or pods yet; the ClusterCache feeds them through
  /// UpsertNode/DeleteNode/UpsertPod/DeletePod and calls MarkSynced once its initial lists
  /// are in. Bind then writes the assignment through `live.api` (see Bind). Nodes are kept in
  /// name order, which is the policy's tie order. Error: unknown policy.
  static Result<std::unique_ptr<Extender>> Create(const ExtenderOptions& options,
                                                  const LiveOptions& live);
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
  /// FilterJson for a body decoded by DecodeExtenderArgsRef (names as views: the server's
  /// path). Same answer, byte for byte.
  std::string FilterJson(const ExtenderArgsRef& args);
  /// Scores each candidate: feasible nodes get the policy's score (Scheduler::ScoreNodes),
  /// mapped to 0..10 by min–max over the feasible candidates, rounded down (all equal → 10);
  /// unknown or infeasible candidates get 0. A pod PodToSpec rejects gets an empty list.
  /// Remembers the pod by UID for a later Bind.
  HostPriorityList Prioritize(const ExtenderArgs& args);
  /// Prioritize, answered as the JSON body of EncodeHostPriorityList (no list built).
  std::string PrioritizeJson(const ExtenderArgs& args);
  /// PrioritizeJson for a body decoded by DecodeExtenderArgsRef. Same answer, byte for byte.
  std::string PrioritizeJson(const ExtenderArgsRef& args);
  /// Binds the pod last seen by Filter/Prioritize with this UID to `args.node`: re-checks the
  /// fit, picks GPUs by the policy's choice on that node, allocates. Idempotent per UID: the
  /// same UID on the same node again succeeds without allocating; on another node it is an
  /// error. A pod that no longer fits gets "does not fit: <reason>" and nothing changes.
  /// API mode: the allocation is "assumed"; then, without holding the lock, the pod's
  /// annotations are patched (tessera.io/gpu-indices; with HAMi's register on the node also
  /// hami.io/vgpu-devices-to-allocate and -allocated, vgpu-node, vgpu-time, bind-time,
  /// bind-phase=allocating) and only
  /// then the Binding is created. Any API failure rolls the allocation back and is answered
  /// in Error. A concurrent Bind of the same UID waits for the first one.
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
  // API mode (Create). The model is rebuilt lazily (before the next call that reads it) when
  // the set of nodes or a node's capacity changes; a rebuild re-applies every bound pod and
  // every assumed one, and rebuilds fgd's target workload M from the bound pods.

  /// Adds or updates a node from its API object. Error (node left as it was): NodeToSpec
  /// rejects it, or it has no name.
  Status UpsertNode(const Node& node);
  /// Removes a node; its pods stay known and are placed again if the node comes back.
  void DeleteNode(const std::string& name);
  /// Adds or updates a pod from its API object. A pod with spec.nodeName set that has not
  /// ended (phase not Succeeded/Failed) is allocated on its node: GPUs from annotation
  /// tessera.io/gpu-indices, else the generic choice; a pod this extender assumed is confirmed
  /// (no second allocation). A pod that ended is released. An unbound pod is remembered for
  /// Bind. Error (the pod is not allocated): PodToSpec rejects it, it does not fit its node,
  /// or its annotation is bad. A pod on a node not known yet waits for the node.
  Status UpsertPod(const Pod& pod);
  /// Releases and forgets the pod with this UID (deleted from the API), assumed or not.
  void DeletePod(const std::string& uid);
  /// The initial lists are in: ready() turns true and M is rebuilt from the bound pods.
  void MarkSynced();
  /// File mode: always true. API mode: after MarkSynced.
  bool ready() const;
  /// Drops the allocation of assumed pods whose TTL passed (also done at the start of
  /// Filter, Prioritize, Bind and the pod updates). Returns how many were dropped.
  int ExpireAssumed();
  /// Pods allocated by Bind in API mode that the watch has not shown bound yet.
  int assumed_pods() const;

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
    bool assumed = false;  ///< API mode: bound by us, not yet seen bound by the watch
    double expires = 0;    ///< when an assumed pod is dropped (Clock seconds)
  };
  /// API mode: a node as last read from the API.
  struct NodeRecord {
    NodeSpec spec;
    bool unschedulable = false;
    std::vector<HamiDevice> gpus;  ///< HAMi devices by GPU index; empty when unknown
  };
  /// API mode: a pod bound to a node and not ended.
  struct PodRecord {
    PodSpec spec;
    std::string node;
    std::optional<std::string> indices;  ///< annotation tessera.io/gpu-indices
    PodMeta meta;                        ///< priority and labels, for Preempt
  };
  struct VerbStats {
    int64_t count = 0;
    std::array<int64_t, kRequestDurationBuckets.size()> buckets{};  // non-cumulative
    double sum_seconds = 0;
  };

  Extender() = default;
  /// How Filter sorts a candidate.
  enum class Candidate : uint8_t { kFits, kFailed, kUnresolvable };
  /// Why Filter rejects a candidate: kReasonUnknown, kReasonCordoned, or
  /// kReasonFit + FitReason.
  static constexpr int kReasonUnknown = 0;
  static constexpr int kReasonCordoned = 1;
  static constexpr int kReasonFit = 2;
  /// Filter's loop; the caller holds the lock and decoded `spec` from `pod`. Remembers the
  /// pod, then calls visit(index, name, node or -1, Candidate, reason) for each candidate
  /// (reason as above; kReasonUnknown for a fit) and counts the rejections. Returns the
  /// PodToSpec error (no candidate visited), or "".
  /// `names_id`: ExtenderArgsRef::names_id (0 when unknown).
  template <typename Visit>
  std::string FilterCandidatesLocked(const Pod& pod, const Result<PodSpec>& spec,
                                     std::span<const std::string_view> names, uint64_t names_id,
                                     Visit&& visit);
  /// FilterJson's body: candidates `names`; `nodes_json` non-null: answer Nodes too.
  std::string FilterJsonOf(const Pod& pod, std::span<const std::string_view> names,
                           uint64_t names_id, const std::vector<std::string>* nodes_json);
  /// Prioritize's loop; the caller holds the lock. Calls visit(index, name, node or -1,
  /// score 0..10) for each candidate, in order; nothing when PodToSpec rejects the pod.
  template <typename Visit>
  void ScoreCandidatesLocked(const Pod& pod, std::span<const std::string_view> names,
                             uint64_t names_id, Visit&& visit);
  std::string PrioritizeJsonOf(const Pod& pod, std::span<const std::string_view> names,
                               uint64_t names_id);
  /// The JSON string of each node's name, quotes included, by node (built once per model and
  /// never changed after: a caller may keep reading it after releasing the lock).
  std::shared_ptr<const PaddedStrings> QuotedNames();
  /// `{"Host":` + QuotedNames()[node] + `,"Score":`, by node: prioritize's answer entry up to
  /// its score (built with QuotedNames; immutable like it).
  std::shared_ptr<const PaddedStrings> HostEntries();
  /// The node index of each candidate, -1 if unknown; valid until the next call (the caller
  /// holds the lock). A list with a non-zero `names_id` (ExtenderArgsRef: the same id is the
  /// same list) that was resolved before under the same model is not looked at again; other
  /// lists go through ResolveCandidate.
  std::span<const int> ResolveCandidates(std::span<const std::string_view> names,
                                         uint64_t names_id);
  /// The node index of candidate `name`, or -1 if unknown; `previous` is the node of the
  /// candidate before it in the request (-1 for the first). kube-scheduler lists nodes in the
  /// same order request after request (from a rotating start when it does not score every
  /// node): the node that followed each node last time is remembered and checked against the
  /// name, so a hit costs one string compare instead of a hash lookup.
  int ResolveCandidate(int previous, std::string_view name);
  /// What Bind's shared checks decided (BindLocked).
  struct BindAllocation {
    int node = -1;
    PodRequest request;
    GpuSet gpus = 0;
    bool allocated = false;  ///< false: the pod was already bound there, nothing changed
  };
  /// Bind's checks and allocation, for both modes; the caller holds the lock. A UID already
  /// bound answers "" on the same node (nothing allocated) and an error on another; an unseen
  /// UID, an unknown node or a pod that no longer fits is an error. Otherwise the policy's
  /// GPUs are allocated and recorded (as assumed, until `expires`, when `assumed`), and ""
  /// is returned. `pod_key` names the pod in errors.
  std::string BindLocked(const ExtenderBindingArgs& args, const std::string& pod_key, bool assumed,
                         double expires, BindAllocation* out);
  void Remember(const std::string& uid, const PodSpec& spec, const Pod& pod);
  static PodMeta MetaOf(const Pod& pod);
  /// The meta of a pod seen by Filter/Prioritize, or an empty one.
  PodMeta SeenMeta(const std::string& uid) const;
  /// API mode: remembers the GPU count of each container in HAMi's order (for Bind's
  /// hami.io/vgpu-devices-to-allocate). No-op in file mode.
  void RememberContainers(const std::string& uid, const Pod& pod);
  GpuSet ChooseGpus(int node, const PodRequest& request) const;
  ExtenderBindingResult BindThroughApi(const ExtenderBindingArgs& args,
                                       std::unique_lock<std::mutex>& lock);
  /// API mode: rebuilds the model if nodes changed (dirty_).
  void EnsureModel();
  void Rebuild();
  Status AllocateBound(const std::string& uid, const PodRecord& record);
  void Release(const std::string& uid);
  int ExpireAssumedLocked();
  double Now() const;

  mutable std::mutex mutex_;
  ExtenderOptions options_;                   // GUARDED_BY(mutex_) (immutable)
  std::unique_ptr<Cluster> cluster_;          // GUARDED_BY(mutex_)
  std::unique_ptr<TargetWorkload> workload_;  // GUARDED_BY(mutex_)
  std::unique_ptr<Policy> policy_;            // GUARDED_BY(mutex_)
  std::unique_ptr<Scheduler> scheduler_;      // GUARDED_BY(mutex_)
  /// Hashes std::string and std::string_view alike (lookups by view without a copy).
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, int, NameHash, std::equal_to<>>
      node_index_;                                     // GUARDED_BY(mutex_)
  std::shared_ptr<const PaddedStrings> quoted_names_;  // GUARDED_BY(mutex_); QuotedNames
  std::shared_ptr<const PaddedStrings> host_entries_;  // GUARDED_BY(mutex_); HostEntries
  std::vector<int> score_nodes_;      // GUARDED_BY(mutex_), ScoreCandidatesLocked's scratch
  std::vector<int> candidate_group_;  // GUARDED_BY(mutex_), ScoreCandidatesLocked's scratch
  std::vector<bool> unschedulable_;   // GUARDED_BY(mutex_)
  std::vector<int> successor_;        // GUARDED_BY(mutex_), by node (ResolveCandidate)
  int first_guess_ = -1;              // GUARDED_BY(mutex_), the first candidate's node
  /// Lists resolved by ResolveCandidates, by names_id (id 0: a free slot); cleared when the
  /// model's node indices change (Rebuild).
  struct ResolvedList {
    uint64_t names_id = 0;
    std::vector<int> nodes;
  };
  std::array<ResolvedList, 4> resolved_;  // GUARDED_BY(mutex_)
  size_t next_resolved_ = 0;              // GUARDED_BY(mutex_)
  std::vector<int> resolve_scratch_;      // GUARDED_BY(mutex_), lists without an id
  /// A filter candidate as FilterJsonOf lists it in its section.
  struct Decided {
    int quoted;      ///< node index into QuotedNames, or -1 - k for the k-th unknown name
    uint32_t index;  ///< position in the request
    int reason;      ///< kReason*
  };
  /// Filter's fit, or prioritize's score, of each scheduler group (Scheduler::group_of) for
  /// the current request: valid where `stamp` is the request's group_fit_stamp_.
  struct GroupFit {
    uint32_t stamp = 0;
    FitReason fit = FitReason::kFits;
    int score = 0;
  };
  std::vector<GroupFit> group_fit_;                // GUARDED_BY(mutex_), by group id
  uint32_t group_fit_stamp_ = 0;                   // GUARDED_BY(mutex_)
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

  // API mode only (Create); all GUARDED_BY(mutex_).
  LiveOptions live_;
  bool api_mode_ = false;
  bool synced_ = false;
  bool dirty_ = false;                       ///< nodes changed since the model was built
  std::map<std::string, NodeRecord> nodes_;  ///< by name
  std::map<std::string, PodRecord> pods_;    ///< bound, not ended, by UID
  std::set<std::string> assumed_;            ///< UIDs of assumed assignments
  std::set<std::string> binding_;            ///< UIDs whose API bind is in flight
  std::condition_variable bind_done_;        ///< signalled when binding_ shrinks
  /// (GPUs, runs alone) per container in HAMi's order (init containers, then app
  /// containers), by UID; "runs alone" marks a regular init container. Evicted with seen_.
  std::unordered_map<std::string, std::vector<std::pair<int, bool>>> container_gpus_;
};

}  // namespace tessera::k8s
