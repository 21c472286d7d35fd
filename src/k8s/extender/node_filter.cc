#include "k8s/extender/node_filter.h"

#include <algorithm>
#include <array>

#include "k8s/api/json_util.h"
#include "k8s/extender/extender_internal.h"
#include "k8s/translate/translate.h"
#include "model/topology.h"

namespace tessera::k8s {
namespace {

/// FitExplanation of each reason, built once (Filter answers one per rejected node).
const std::string& CachedFitExplanation(FitReason reason) {
  static const std::array<std::string, kNumFitReasons> table = [] {
    std::array<std::string, kNumFitReasons> t;
    for (int r = 0; r < kNumFitReasons; ++r) t[r] = FitExplanation(static_cast<FitReason>(r));
    return t;
  }();
  return table[static_cast<int>(reason)];
}

}  // namespace

const std::string& ReasonText(int reason) {
  static const std::array<std::string, kReasonFit> kTexts = {
      "unknown node",
      "unschedulable: node is cordoned",
      "not-synced: Tessera is not in sync with the Kubernetes API (see its /readyz); no GPU "
      "is offered until it is",
      "blocked: a pod bound to this node cannot be fully accounted for (see Tessera's /state)",
      "gpu-model: node has no GPUs",
      "gpu-memory: every GPU of the node has less memory than the pod requests per GPU",
      "device-plugin: node does not offer tessera.io/gpu, which the pod requests",
      "device-plugin: node does not offer nvidia.com/gpu, which the pod requests",
      "headroom: placing the pod here would take idle GPUs kept for the classes that may use "
      "headroom (see Tessera's /state)",
      "nominated: the GPUs left here are held for a pod of equal or higher priority that "
      "preemption nominated to this node",
  };
  if (reason < kReasonFit) return kTexts[reason];
  return CachedFitExplanation(static_cast<FitReason>(reason - kReasonFit));
}

const PaddedStrings& QuotedReasons() {
  static const PaddedStrings table = [] {
    PaddedStrings t;
    for (int r = 0; r < kReasonDetail; ++r) {
      std::string quoted = ":";
      AppendJsonString(&quoted, ReasonText(r));
      t.Add(quoted);
    }
    return t;
  }();
  return table;
}

uint8_t RequestMask(const PodRequest& request, uint8_t families) {
  uint8_t m = kCordoned | kBlocked;
  if (!request.IsCpuOnly()) m |= kNoGpus;
  if (families & kTesseraFamily) m |= kNoTessera;
  if (families & kNvidiaFamily) m |= kNoNvidia;
  return m;
}

int FlagReason(uint8_t flags) {
  if (flags & kCordoned) return kReasonCordoned;
  if (flags & kBlocked) return kReasonBlocked;
  if (flags & kNoGpus) return kReasonNoGpus;
  return flags & kNoTessera ? kReasonTesseraFamily : kReasonNvidiaFamily;
}

std::string ModelHeadroomText(const Headroom& headroom, const Cluster& cluster, int model,
                              int64_t idle) {
  return "headroom: placing the pod here would take idle " +
         cluster.models()[static_cast<size_t>(model)] +
         " GPUs kept for the classes that may use headroom (" +
         std::to_string(headroom.model_target(model)) + " kept, " + std::to_string(idle) + " idle)";
}

void GroupVerdicts::Begin(const ClusterModel& model, const Headroom& headroom,
                          const PodRequest& request, std::string_view gpu_spec,
                          const HeadroomGate& gate, std::vector<std::string>* details) {
  cluster_ = &model.cluster();
  scheduler_ = &model.scheduler();
  headroom_ = &headroom;
  // Group ids do not change within a request (no allocation changes during filter).
  if (memo_.size() < static_cast<size_t>(scheduler_->group_ids())) {
    memo_.resize(static_cast<size_t>(scheduler_->group_ids()));
  }
  if (++stamp_ == 0) {  // wrapped: forget every stamp
    std::fill(memo_.begin(), memo_.end(), Memo{});
    stamp_ = 1;
  }
  request_ = &request;
  gpu_spec_ = gpu_spec;
  gate_ = &gate;
  details_ = details;
  model_reasons_.clear();
  model_refusals_.clear();
}

const GroupVerdicts::Verdict& GroupVerdicts::Decide(int node, size_t group) {
  Memo& memo = memo_[group];
  memo.stamp = stamp_;
  Verdict& v = memo.verdict;
  const FitReason fit = cluster_->Check(node, *request_);
  v.reason = kReasonFit + static_cast<int>(fit);
  v.never = false;
  v.keeps_headroom = true;
  v.headroom_reason = kReasonHeadroom;
  if (fit == FitReason::kFits) {
    // The headroom depends on the node's state and model too (a group has one of each): once
    // per group as well.
    const Headroom::Shortfall why = gate_->MayUse(node, *request_);
    if (why != Headroom::Shortfall::kNone) [[unlikely]] {
      v.keeps_headroom = false;
      if (why == Headroom::Shortfall::kModel) v.headroom_reason = ModelFloor(node);
    }
  } else if (fit == FitReason::kGpuModel || fit == FitReason::kGpuMemory ||
             fit == FitReason::kTopology) [[unlikely]] {
    Explain(node, fit, &v);
  }
  return v;
}

void GroupVerdicts::Explain(int node, FitReason fit, Verdict* v) {
  const Cluster& cluster = *cluster_;
  const PodRequest& request = *request_;
  const NodeSpec& ns = cluster.spec(node);
  if (fit == FitReason::kGpuModel) {
    const std::string& node_model = ns.gpu_model;
    auto it = std::find_if(model_refusals_.begin(), model_refusals_.end(),
                           [&](const auto& m) { return m.first == node_model; });
    if (it == model_refusals_.end()) {
      model_refusals_.emplace_back(node_model, kReasonDetail + static_cast<int>(details_->size()));
      details_->push_back(ModelRefusal(node_model, gpu_spec_));
      it = model_refusals_.end() - 1;
    }
    v->reason = it->second;
  } else if (fit == FitReason::kGpuMemory) {
    if (ns.gpu_memory_mib > 0 && request.gpu_memory_mib > ns.gpu_memory_mib) {
      v->reason = kReasonGpuMemoryCapacity;
    }
  } else if (fit == FitReason::kTopology && ns.topology != nullptr) {
    v->reason = kReasonDetail + static_cast<int>(details_->size());
    details_->push_back(
        TopologyShortfall(*ns.topology, ns.gpu_count, cluster.state(node), request));
    // Would preemption help? Only if the pod fits the topology with every GPU free.
    NodeState empty = cluster.state(node);
    for (int g = 0; g < ns.gpu_count; ++g) {
      empty.gpu_free[g] = kMilliPerGpu;
      empty.gpu_mem_free[g] = static_cast<int32_t>(ns.gpu_memory_mib);
    }
    v->never = !TopologyFits(*ns.topology, ns.gpu_count, empty, request);
  }
}

int GroupVerdicts::ModelFloor(int node) {
  const HeadroomIdle node_idle = gate_->IdleOf(node);
  const int m = node_idle.model;
  auto it = std::find_if(model_reasons_.begin(), model_reasons_.end(),
                         [&](const auto& r) { return r.first == m; });
  if (it == model_reasons_.end()) {
    model_reasons_.emplace_back(m, kReasonDetail + static_cast<int>(details_->size()));
    details_->push_back(ModelHeadroomText(*headroom_, *cluster_, m, node_idle.model_idle));
    it = model_reasons_.end() - 1;
  }
  return it->second;
}

int GroupVerdicts::CountedDetail(int reason) const {
  int counted = kReasonFit + static_cast<int>(FitReason::kTopology);
  for (const auto& [m, code] : model_reasons_) {
    if (code == reason) counted = kReasonHeadroom;
  }
  for (const auto& [m, code] : model_refusals_) {
    if (code == reason) counted = kReasonFit + static_cast<int>(FitReason::kGpuModel);
  }
  return counted;
}

void CandidateScores::Prepare(ClusterModel& model, const PodRequest& request, uint8_t mask,
                              std::span<const int> node_of) {
  Scheduler& scheduler = model.scheduler();
  if (++stamp_ == 0) {  // wrapped: forget every stamp
    std::fill(memo_.begin(), memo_.end(), Memo{});
    stamp_ = 1;
  }
  nodes_.clear();
  group_of_.resize(node_of.size());
  for (size_t i = 0; i < node_of.size(); ++i) {
    const int node = node_of[i];
    int group = -1;
    if (node >= 0 && (model.flags(node) & mask) == 0) {
      group = scheduler.group_of(node);
      if (static_cast<size_t>(group) >= memo_.size()) memo_.resize(group + 1);
      Memo& g = memo_[static_cast<size_t>(group)];
      if (g.stamp != stamp_) {
        g.stamp = stamp_;
        g.score = kNoScore;
        nodes_.push_back(node);
      }
    }
    group_of_[i] = group;
  }
  const std::vector<std::pair<int, int>> scored = scheduler.ScoreNodes(request, nodes_);
  for (const auto& [node, score] : scored) {
    memo_[static_cast<size_t>(scheduler.group_of(node))].score = score;
  }
  lo_ = 0;
  hi_ = 0;
  for (size_t k = 0; k < scored.size(); ++k) {
    lo_ = k == 0 ? scored[k].second : std::min(lo_, scored[k].second);
    hi_ = k == 0 ? scored[k].second : std::max(hi_, scored[k].second);
  }
  // The engine's own choice among the candidates — the best score, then the lowest rank in
  // the tie order, as Scheduler::Decide and the replay choose — scores kPickScore; every other
  // candidate at most kOthersMaxScore. kube-scheduler adds the extender's score times its
  // weight times 10 to its own plugins' scores and breaks ties at random: with deploy/'s
  // weight 5 the gap of 5 is worth 250 points, more than its resource plugins can differ by
  // (NodeResourcesFit and BalancedAllocation, 100 each at weight 1), so the node the engine
  // chose is the node bound unless the pod's own preferences (affinity, spread) outweigh it.
  // (A node named twice is one candidate: both entries get its score.)
  pick_ = -1;
  int pick_score = 0;
  for (size_t i = 0; i < node_of.size(); ++i) {
    if (group_of_[i] < 0) continue;
    const int s = memo_[static_cast<size_t>(group_of_[i])].score;
    if (s == kNoScore) continue;
    if (pick_ < 0 ||
        PicksBefore(s, model.engine().rank(node_of[i]), pick_score, model.engine().rank(pick_))) {
      pick_ = node_of[i];
      pick_score = s;
    }
  }
  // The others: integer floor of kOthersMaxScore * (s - lo) / (hi - lo); all equal →
  // kOthersMaxScore. By table for the usual ranges (scores 0..100): a division per candidate
  // costs more than the rest of its work.
  by_table_ = int64_t{hi_} - lo_ < kTableRange;
  if (by_table_) {
    for (int s = lo_; s <= hi_; ++s) table_[s - lo_] = static_cast<int8_t>(Scale(s));
  }
}

}  // namespace tessera::k8s
