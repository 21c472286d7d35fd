#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/node.h"
#include "model/pod.h"

namespace tessera {

class TargetWorkload;

/// A memo of values that depend only on one node state (capacity, GPU model and NodeState,
/// never on the pod or the context), which the scheduler keeps per group of equal nodes and
/// hands to the policy in NodeView::scratch: a policy may store such values in it on a first
/// Score / ScorePair and read them back on later calls for other pod shapes or contexts. The
/// scheduler resets it (valid = false) whenever the node state behind it changes. Policies that
/// use it must give the same result, bit for bit, with and without it (scratch null).
struct PolicyScratch {
  static constexpr int kValues = 4;
  bool valid = false;
  double values[kValues] = {};
  uint64_t bits = 0;  ///< for a set of flags (fgd: the target classes the node can host)
};

/// What a policy sees of a node: its capacity, GPU model and current state. The scheduler
/// may pass one view for a whole group of nodes in equal states.
struct NodeView {
  const NodeSpec& spec;  ///< capacity (the name may be any node of the same capacity and model)
  int model_id;          ///< -1 for a node without GPUs
  const NodeState& state;
  /// The policy's own cluster-wide context value (Policy::ContextKey), 0 for policies that
  /// use none; the same for every node of one decision.
  int64_t context = 0;
  /// The scheduler's memo for this node state (PolicyScratch), or null: then nothing is memoised.
  PolicyScratch* scratch = nullptr;
};

/// A cluster-wide summary the scheduler keeps up to date, for policies whose scores depend on
/// more than one node (Policy::ContextKey). "Seen" counts every pod passed to
/// Scheduler::Decide so far, the current one included, whether it was placed or not; no pod
/// that has not been asked about yet is known.
struct ClusterSummary {
  /// Idle nodes (all CPU and every GPU free) by GPU count (index 0..kMaxGpusPerNode).
  std::array<int, kMaxGpusPerNode + 1> idle_nodes_by_gpus{};
  /// The same when the scheduler was built, and the free GPU milli then.
  std::array<int, kMaxGpusPerNode + 1> start_idle_nodes_by_gpus{};
  int64_t start_free_gpu_milli = 0;
  int64_t total_gpu_milli = 0;
  int64_t free_gpu_milli = 0;  ///< cluster-wide, idle or not
  /// GPU milli requested by the pods seen (gpu_milli · gpu_count), by the pod's GPU count.
  std::array<int64_t, kMaxGpusPerNode + 1> seen_gpu_milli_by_count{};
  int64_t seen_pods = 0;
  /// Free GPU milli by GPU model id (index 0..kMaxGpuModels − 1), on idle nodes or not.
  std::array<int64_t, kMaxGpuModels> free_gpu_milli_by_model{};
};

/// A policy's verdict on one feasible node.
struct NodeScore {
  double score = 0;  ///< higher wins
  GpuSet gpus = 0;   ///< the GPUs to use, or 0 for the generic choice (DefaultGpuChoice)
};

/// How the scheduler turns raw scores into the integer 0..100 that decides.
enum class ScoreMode {
  kInteger,        ///< the raw score is already the integer score
  kMinMax,         ///< min–max normalised across the feasible nodes to 0..100, then floored
  kUniformRandom,  ///< no score: a feasible node is drawn uniformly at random
};

/// A placement policy: scores nodes for a pod. Implementations are small classes, one per
/// file, registered in policy/registry.cc. Score must be a pure function of (node, pod) and,
/// for policies that use one, the context value (see ContextKey): the scheduler caches it
/// per node state. Instances are immutable after construction and
/// safe to use from one thread per instance.
class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string_view name() const = 0;
  virtual ScoreMode mode() const { return ScoreMode::kInteger; }
  /// Scores `node`, on which `pod` fits (the filters already passed).
  virtual NodeScore Score(const NodeView& node, const PodRequest& pod) const = 0;

  /// Optional, for speed: false if Score never reads the pod's host memory request
  /// (PodRequest::memory_mib); the scheduler then computes one score for pod shapes that
  /// differ only in it (whether they fit is still checked for each). Default: true.
  virtual bool ReadsPodMemory() const { return true; }

  /// Policies whose scores depend on the cluster as a whole return true here and map the
  /// summary to an integer in ContextKey; the scheduler passes that value to Score in
  /// NodeView::context. So Score stays a pure function of (node, pod, context). ContextKey is
  /// called once per Decide / ScoreNodes call.
  virtual bool UsesContext() const { return false; }
  virtual int64_t ContextKey(const ClusterSummary& /*summary*/) const { return 0; }
  /// The part of `context` that Score depends on for a node of GPU model `model_id` (−1: no
  /// GPUs) and `pod`: Score must give the same result for any two context values whose
  /// ContextFor are equal (for that model and pod). The scheduler keys cached scores by it,
  /// so a context change recomputes only the scores it concerns; it is cheap only if few
  /// values occur per (model, pod shape). Called once per GPU model of the cluster per Decide /
  /// ScoreNodes call. Default: the whole context value.
  virtual int64_t ContextFor(int64_t context, int /*model_id*/, const PodRequest& /*pod*/) const {
    return context;
  }
  /// Optional, for speed: one bit of the context value (0: none) under whose two values a node
  /// is scored for little more than the cost of one, in ScorePair. The scheduler then scores
  /// both at once and caches both. ContextFor must pass the bit through unchanged:
  /// ContextFor(c ^ bit, m, pod) == ContextFor(c, m, pod) ^ bit.
  virtual int64_t PairedContextBit() const { return 0; }
  /// Fills out[0] with Score under `node.context` with PairedContextBit cleared and out[1] with
  /// Score under it set, bit for bit. Called only if PairedContextBit() != 0.
  virtual void ScorePair(const NodeView& node, const PodRequest& pod, NodeScore out[2]) const {
    const int64_t bit = PairedContextBit();
    NodeView view = node;
    view.context = node.context & ~bit;
    out[0] = Score(view, pod);
    view.context = node.context | bit;
    out[1] = Score(view, pod);
  }

  /// Optional, for speed (ScoreMode::kInteger policies without a context): whether
  /// ScoreBound gives bounds. Default: no.
  virtual bool HasScoreBound() const { return false; }
  /// An upper bound of the integer score Score gives `pod` on `node` (on which it fits), for
  /// a fraction of Score's cost; it must never be below that score. The scheduler skips
  /// Score on a node whose bound proves that it cannot win (its bound below the best score
  /// found, or equal to it with a later node in the tie order), so decisions stay those of
  /// the plain loop. It may use node.scratch as Score may. Called only if HasScoreBound().
  virtual int ScoreBound(const NodeView& /*node*/, const PodRequest& /*pod*/) const {
    return std::numeric_limits<int>::max();
  }
};

/// What a policy may need to be built.
struct PolicyContext {
  const TargetWorkload* workload = nullptr;  ///< the target workload M (fgd, tessera)
};

/// Builds the policy called `name`, or returns nullptr for an unknown name.
std::unique_ptr<Policy> MakePolicy(std::string_view name, const PolicyContext& context);
/// The names MakePolicy knows, in the order reports list them.
const std::vector<std::string>& PolicyNames();
/// What `--policy all` runs: PolicyNames without the GPU-memory comparison policies
/// (mem-bestfit, hami-binpack, hami-spread; docs/GPU_MEMORY.md), so that runs on pod lists
/// without GPU memory stay as they were.
const std::vector<std::string>& DefaultPolicyNames();

}  // namespace tessera
