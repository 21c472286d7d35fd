#pragma once

// What filter and prioritize decide about one node for one request, on the cluster model
// (cluster_model.h): the reason a node is refused, as a code with its text, and the
// per-request memo by scheduler group — nodes of one group (same capacity type and state) fit
// alike, so a group's first candidate decides for all of them: the fit, the node's own
// explanation (a topology shortfall, a GPU model the pod does not allow), and the headroom
// (sched/cycle.h, HeadroomGate::MayUse). Prioritize's scores are memoised by group the same
// way (CandidateScores).
//
// Not thread-safe: the Extender's lock guards each instance.

#include <array>
#include <climits>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "k8s/extender/cluster_model.h"
#include "k8s/extender/padded_strings.h"
#include "model/fit.h"
#include "sched/cycle.h"
#include "sched/headroom.h"

namespace tessera::k8s {

/// Why filter refuses a candidate: one of the kReason* below, kReasonFit + FitReason, or a
/// node's own explanation (kReasonDetail + k: the k-th text of the request's details).
inline constexpr int kReasonUnknown = 0;  ///< also: no reason (the node fits)
inline constexpr int kReasonCordoned = 1;
inline constexpr int kReasonNotSynced = 2;
inline constexpr int kReasonBlocked = 3;
inline constexpr int kReasonNoGpus = 4;
inline constexpr int kReasonGpuMemoryCapacity = 5;
inline constexpr int kReasonTesseraFamily = 6;  ///< pod's tessera.io/* not offered
inline constexpr int kReasonNvidiaFamily = 7;   ///< pod's nvidia.com/* not offered
inline constexpr int kReasonHeadroom = 8;       ///< would eat idle GPUs kept for a class
inline constexpr int kReasonNominated = 9;      ///< room held for a pod nominated there
inline constexpr int kReasonFit = 10;
inline constexpr int kReasonDetail = kReasonFit + kNumFitReasons;

/// The text of a code below kReasonDetail.
const std::string& ReasonText(int reason);
/// ':' and the JSON string of each text (a failure entry's value), by code below kReasonDetail.
const PaddedStrings& QuotedReasons();
/// The node flags (NodeFlag) that refuse a pod with `request` and GPU resource `families`.
uint8_t RequestMask(const PodRequest& request, uint8_t families);
/// The code of a candidate whose flags meet the mask.
int FlagReason(uint8_t flags);
/// Whether preemption may help a node refused for `counted` (FailedNodes rather than
/// FailedAndUnresolvableNodes): not enough cpu, memory, GPU or GPU memory left, a topology
/// shortfall (ending pods in a domain frees it; preempt's victim search checks the fit with the
/// node's topology), the headroom, or room held for a nominated pod.
inline bool ResolvableReason(int counted) {
  if (counted == kReasonHeadroom || counted == kReasonNominated) return true;
  if (counted < kReasonFit || counted >= kReasonDetail) return false;
  const auto reason = static_cast<FitReason>(counted - kReasonFit);
  return reason == FitReason::kCpu || reason == FitReason::kMemory || reason == FitReason::kGpu ||
         reason == FitReason::kGpuMemory || reason == FitReason::kTopology;
}
/// The refusal of a held pod for the floor of GPU model `model` (an id), naming it, with the
/// floor and the model's `idle` GPUs.
std::string ModelHeadroomText(const Headroom& headroom, const Cluster& cluster, int model,
                              int64_t idle);

/// Filter's decisions of one request, by scheduler group.
class GroupVerdicts {
 public:
  struct Verdict {
    int reason = kReasonFit;  ///< kReasonFit + FitReason, a refined kReason*, or a detail
    /// Where the headroom refuses: kReasonHeadroom, or the detail code of its model's floor.
    int headroom_reason = kReasonHeadroom;
    bool keeps_headroom = true;  ///< a held pod that fits keeps the headroom there (HeldMayUse)
    /// Refused for a topology that no freeing of GPUs would satisfy (the pod does not fit it
    /// on the node emptied): unresolvable, where other topology refusals are not.
    bool never = false;
  };

  /// A new request on `model`: `request` (decoded from a pod allowing GPU models `gpu_spec`)
  /// under `gate` of `headroom`. Node explanations go to `details` (kReasonDetail + index). The
  /// arguments must outlive the request's calls.
  void Begin(const ClusterModel& model, const Headroom& headroom, const PodRequest& request,
             std::string_view gpu_spec, const HeadroomGate& gate,
             std::vector<std::string>* details);
  /// The verdict on node `node` (not refused by its flags), decided once per group: inline
  /// for the group's other nodes (filter asks once per candidate).
  const Verdict& Of(int node) {
    const auto group = static_cast<size_t>(scheduler_->group_of(node));
    if (memo_[group].stamp == stamp_) [[likely]]
      return memo_[group].verdict;
    return Decide(node, group);
  }
  /// What a refusal counts as in tessera_filter_rejections_total: a detail's kind (a topology
  /// shortfall, a model's headroom floor, a model not allowed), else the code itself.
  int Counted(int reason) const { return reason < kReasonDetail ? reason : CountedDetail(reason); }

 private:
  struct Memo {
    uint32_t stamp = 0;
    Verdict verdict;
  };
  int CountedDetail(int reason) const;
  /// Decides node `node`'s verdict for its group `group` and remembers it.
  const Verdict& Decide(int node, size_t group);
  /// A refusal's own explanation (a model not allowed, GPUs with too little memory, a topology
  /// shortfall) into `v`.
  [[gnu::noinline]] void Explain(int node, FitReason fit, Verdict* v);
  /// The detail code of the headroom floor of node `node`'s model.
  [[gnu::noinline]] int ModelFloor(int node);
  std::vector<Memo> memo_;  ///< by group id (sized in Begin); valid where stamp == stamp_
  uint32_t stamp_ = 0;
  const Cluster* cluster_ = nullptr;
  const Scheduler* scheduler_ = nullptr;
  const Headroom* headroom_ = nullptr;
  const PodRequest* request_ = nullptr;
  std::string_view gpu_spec_;
  const HeadroomGate* gate_ = nullptr;
  std::vector<std::string>* details_ = nullptr;
  /// (model id, detail code) of each model whose headroom floor refused a node.
  std::vector<std::pair<int, int>> model_reasons_;
  /// (node GPU model, detail code) of each model the pod's model constraint refused.
  std::vector<std::pair<std::string, int>> model_refusals_;
};

/// Prioritize's scores of one request over its candidates, one scheduler score per group:
/// the engine's own choice scores kPickScore, every other candidate at most kOthersMaxScore.
class CandidateScores {
 public:
  static constexpr int kPickScore = 10;
  static constexpr int kOthersMaxScore = 5;
  /// Scores candidates `node_of` (node indices, -1 unknown) for `request`; nodes whose flags
  /// meet `mask` score 0. Calls visit(i, score) for each candidate, in order.
  template <typename Visit>
  void Score(ClusterModel& model, const PodRequest& request, uint8_t mask,
             std::span<const int> node_of, Visit&& visit) {
    Prepare(model, request, mask, node_of);
    for (size_t i = 0; i < node_of.size(); ++i) visit(i, ScoreOf(i, node_of[i]));
  }

 private:
  /// Scores one node per group among the candidates and finds the pick and the scale.
  void Prepare(ClusterModel& model, const PodRequest& request, uint8_t mask,
               std::span<const int> node_of);
  int64_t ScoreOf(size_t i, int node) const {
    if (pick_ >= 0 && node == pick_) return kPickScore;
    if (group_of_[i] < 0) return 0;
    const int s = memo_[static_cast<size_t>(group_of_[i])].score;
    if (s == kNoScore) return 0;
    return by_table_ ? table_[s - lo_] : Scale(s);
  }
  int64_t Scale(int s) const {
    return hi_ > lo_ ? int64_t{kOthersMaxScore} * (s - lo_) / (hi_ - lo_) : kOthersMaxScore;
  }
  static constexpr int kNoScore = INT32_MIN;
  static constexpr int kTableRange = 1024;
  struct Memo {
    uint32_t stamp = 0;
    int score = 0;
  };
  std::vector<Memo> memo_;  ///< by group id; valid where stamp == stamp_
  uint32_t stamp_ = 0;
  std::vector<int> nodes_;     ///< one per group
  std::vector<int> group_of_;  ///< by candidate; -1: no score
  int pick_ = -1;
  int lo_ = 0;
  int hi_ = 0;
  bool by_table_ = false;
  std::array<int8_t, kTableRange> table_{};
};

}  // namespace tessera::k8s
