#pragma once

// The cluster as the API's objects say, for the extender's verbs: nodes and pods → the engine's
// Cluster (sched/engine.h), each node placed from the pods bound or assumed on it, and every
// pod's state (pod_state.h: seen → assumed → bound → released). kube-scheduler's cache, for the
// GPUs it does not see.
//
// The model is a function of the objects: each node's allocations are placed from its pods,
// facts first — pods whose GPUs the API's objects name (tessera.io/gpu-indices, HAMi's
// vgpu-devices-allocated) and this extender's own binds, in UID order — then the pods without
// GPU indices, in UID order, on the generic choice. A node is placed again whenever one of its
// pods changes, so the result does not depend on the order events came in. Fail closed: a bound
// pod always occupies its node; when its request does not decode, it counts as whole GPUs
// (FailClosedSpec); when nothing of it can be read, or it cannot be placed beside the others
// (its GPUs are taken, the node shrank), the node is *blocked*: blocked() says why, and the
// verbs take no GPU pod there.
//
// Nodes are in rank order: file mode, the node list's (the policy's tie order); API mode, by
// name. The engine is rebuilt when a node's capacity changes (new node indices and model ids;
// the `rebuilt` callback hears of it), with the target workload M of the fgd and tessera
// policies: the configured workload when given, else the bound pods' requests.
//
// Not thread-safe: the Extender's lock guards it. Reading before the first Build is not allowed.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "k8s/api/kube_api.h"
#include "k8s/api/objects.h"
#include "k8s/extender/node_name_index.h"
#include "k8s/extender/pod_state.h"
#include "k8s/hami/register.h"
#include "k8s/translate/node_topology.h"
#include "model/cluster.h"
#include "model/pod.h"
#include "model/topology.h"
#include "sched/engine.h"
#include "sched/scheduler.h"
#include "util/result.h"

namespace tessera::k8s {

/// The pod annotation that carries a bound pod's GPU indices on its node: "0-3", "1,3",
/// "0-1,4" (ranges inclusive). Written with the Binding; read from every bound pod.
inline constexpr std::string_view kGpuIndicesAnnotation = "tessera.io/gpu-indices";

/// Where a placed pod's GPUs come from: its annotation, Tessera's own bind, a guess over the
/// free GPUs, or an estimate (the pod could not be read; it holds what it asks for).
enum class GpuSource : uint8_t { kAnnotation, kTessera, kGuess, kEstimate };

/// The cluster model, typed (what `tessera analyze` reads; /state writes the same): per node
/// whether it is cordoned or blocked, every placed pod's node and GPUs, and the pods the model
/// could not account for as given.
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

/// A node as last read.
struct NodeRecord {
  NodeSpec spec;
  bool unschedulable = false;
  std::vector<HamiDevice> gpus;  ///< HAMi devices by GPU index; empty when unknown
  uint8_t families = 0;          ///< GpuFamily bits it offers
  int64_t rank = 0;              ///< file mode: position in the node list (the tie order)
  std::string topology_note;     ///< the last topology error or warning logged for it
};

/// Why a node takes no pod of some kind, as bits (ClusterModel::flags): a candidate whose bits
/// meet the request's mask is rejected without looking further, so the common case costs one
/// byte read.
enum NodeFlag : uint8_t {
  kCordoned = 1,
  kBlocked = 2,
  kNoGpus = 4,
  kNoTessera = 8,  ///< does not offer tessera.io/gpu
  kNoNvidia = 16,  ///< offers neither nvidia.com/gpu nor a HAMi register
};

class ClusterModel {
 public:
  struct Options {
    std::string policy;  ///< a name MakePolicy knows
    uint64_t seed = 42;
    /// The target workload M of the fgd and tessera policies; empty: the bound pods'.
    std::vector<PodSpec> workload;
    /// API mode: nodes by name, and pods merely seen do not count for M.
    bool api_mode = false;
  };
  /// A placed pod.
  struct Assignment {
    std::string pod;  ///< "namespace/name"
    int node = -1;
    PodRequest request;
    GpuSet gpus = 0;
    GpuSource source = GpuSource::kGuess;
  };
  /// A node object read (without the lock): its record, the note to log once per node and
  /// text (a topology annotation that does not parse, or a node pool's kubelet policy the node
  /// cannot honour), and whether that note is an error.
  struct NodeRead {
    NodeRecord record;
    bool note_is_error = false;
  };

  /// `rebuilt` is called after each rebuild of the engine, before the pods are placed.
  ClusterModel(Options options, std::function<void(const Cluster&)> rebuilt);
  ClusterModel(const ClusterModel&) = delete;
  ClusterModel& operator=(const ClusterModel&) = delete;

  /// The record a node object gives, with the kubelet policy of the first of `pools` whose
  /// selector matches it. Error: the node does not translate, or has no name.
  static Result<NodeRead> ReadNode(const Node& node, std::span<const NodePoolTopology> pools);
  /// The record a pod object gives (request decoded or estimated, annotations, metadata);
  /// `error` gets PodToSpec's error when the request is an estimate.
  static PodRecord RecordOf(const Pod& pod, std::string* error);
  /// The same, with PodToSpec's answer for the pod already at hand.
  static PodRecord RecordOf(const Pod& pod, const Result<PodSpec>& spec, std::string* error);

  /// Builds the engine now from the nodes known (API mode before the first sync: an empty
  /// model for the verbs to refuse on).
  void Build();
  /// The objects are in (file loaded, or the first sync came): builds the model and places
  /// every node. Further changes place what they touch.
  void Load();
  bool loaded() const { return loaded_; }
  /// Rebuilds if a node's capacity changed since the last build (once loaded).
  void Refresh() {
    if (loaded_ && dirty_) Rebuild();
  }

  // Nodes. Each returns after the model is up to date.
  /// Adds or updates a node; true when its note is new (to be logged, once per node and text).
  bool UpsertNode(NodeRead read);
  void DeleteNode(const std::string& name);

  // Pods: PodStates' transitions, each node they concern placed again.
  /// A pending pod; true when its record is new (then counted for the policy's context,
  /// Scheduler::Observe, unless it is opaque).
  bool See(const std::string& uid, PodRecord record);
  /// The API shows the pod bound (PodStates::Observe).
  void Observe(const std::string& uid, PodRecord record);
  /// Deleted or ended; false when it held nothing.
  bool Remove(const std::string& uid);
  /// Bind accepted: `uid` assumed on `node` with `gpus`.
  void Assume(const std::string& uid, const std::string& node, GpuSet gpus, double now_s);
  /// The Binding failed: an assumed pod is seen again.
  void Forget(const std::string& uid);
  /// This extender's own nomination of a pending pod ("" clears it).
  void Nominate(const std::string& uid, const std::string& node) { pods_.Nominate(uid, node); }
  void BeginList() { pods_.BeginList(); }
  void EndList(const std::set<std::string>& uids, uint64_t list_version);
  /// Applies a consistent read of `node`'s pods (PodList JSON items): pods it shows bound there
  /// that the watch has not delivered (newer resourceVersions, not removed) are observed;
  /// nothing is removed (the watch tells that).
  void MergeNodeRead(const std::string& node, const ListPage& page);

  // Reading.
  const Cluster& cluster() const { return *cluster_; }
  /// The scheduler over the cluster (its score and GPU caches change as it is asked).
  Scheduler& scheduler() { return *scheduler_; }
  const Scheduler& scheduler() const { return *scheduler_; }
  const Engine& engine() const { return *engine_; }
  /// The model's node names (indices by name, candidates resolved, the answers' name pieces).
  NodeNameIndex& names() { return names_; }
  const NodeNameIndex& names() const { return names_; }
  /// NodeFlag bits of node `node`.
  uint8_t flags(int node) const { return flags_[node]; }
  /// Why node `node` takes no pod ("" when it may).
  const std::string& blocked(int node) const { return blocked_[node]; }
  /// +1 per rebuild: node indices of an older generation mean other nodes.
  uint64_t generation() const { return generation_; }
  const PodStates& pods() const { return pods_; }
  /// The placed pods by UID.
  const std::map<std::string, Assignment>& assignments() const { return assignments_; }
  /// The record of node `name`; null when unknown.
  const NodeRecord* node(const std::string& name) const;
  /// The whole idle GPUs of the cluster now (0 before the first build), and by model id.
  int64_t idle_gpus() const { return scheduler_ != nullptr ? scheduler_->idle_gpus() : 0; }
  const std::vector<int64_t>& idle_gpus_by_model() const;
  ModelView View() const;

  /// File mode: what could not be applied as given (JSON paths and why).
  const std::vector<std::string>& warnings() const { return warnings_; }
  void AddWarning(std::string warning) { warnings_.push_back(std::move(warning)); }

 private:
  static uint8_t FlagsOf(const NodeRecord& record);
  void Rebuild();
  /// Places `node`'s pods again from their records (facts, then guesses; see the top of this
  /// file). No-op before the model is built or for an unknown node.
  void PlaceNode(const std::string& node);
  void PlaceNodes(const std::vector<std::string>& nodes);
  /// The GPUs `r`'s objects (or this extender) name on node `node`, if any; `why` gets a
  /// malformed annotation's message.
  std::optional<GpuSet> FactGpus(const PodRecord& r, int node, std::string* why) const;

  Options options_;
  std::function<void(const Cluster&)> rebuilt_;
  /// The engine (cluster, policy with its target workload, scheduler) as every front door
  /// assembles it; rebuilt when the nodes change.
  std::unique_ptr<Engine> engine_;
  Cluster* cluster_ = nullptr;      ///< &engine_->cluster(); null before the first build
  Scheduler* scheduler_ = nullptr;  ///< &engine_->scheduler(); null before the first build
  NodeNameIndex names_;
  std::vector<uint8_t> flags_;                    ///< NodeFlag bits by node index
  std::vector<std::string> blocked_;              ///< by node index; "" = not blocked
  std::vector<std::vector<std::string>> placed_;  ///< UIDs by node index
  /// Pods counted without knowing all of them, (UID, why) by node index: "estimated ...",
  /// "unreadable: ...", "not placed: ...".
  std::vector<std::vector<std::pair<std::string, std::string>>> unaccounted_;
  uint64_t generation_ = 0;
  PodStates pods_;
  std::map<std::string, Assignment> assignments_;
  std::map<std::string, NodeRecord> nodes_;  ///< by name
  std::vector<TopologyPtr> topologies_;      ///< one per distinct topology
  std::vector<std::string> warnings_;
  bool loaded_ = false;  ///< file loaded, or the first sync came: the model may be built
  bool dirty_ = true;    ///< nodes changed since the model was built
};

}  // namespace tessera::k8s
