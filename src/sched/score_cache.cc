#include "sched/score_cache.h"

#include "sched/gpu_choice.h"

namespace tessera {

ScoreCache::ScoreCache(const Cluster& cluster, const Policy& policy, const NodeGroups& groups,
                       const PodShapes& shapes, const ScoreContext& context)
    : cluster_(cluster),
      policy_(policy),
      groups_(groups),
      shapes_(shapes),
      context_(context),
      paired_bit_(policy.UsesContext() ? policy.PairedContextBit() : 0),
      slots_(policy.UsesContext() ? kContextSlots : 1) {}

void ScoreCache::Grow(int gid) {
  lines_.resize(static_cast<size_t>(gid) + 1);
  memo_.resize(static_cast<size_t>(gid) + 1);
}

uint32_t ScoreCache::Classify(int gid, Lines& l, int shape, const PodRequest& pod, bool fits) {
  const FitReason fit = fits ? FitReason::kFits : groups_.Check(gid, pod);
  uint32_t value = static_cast<uint32_t>(fit) + 1;
  if (fit == FitReason::kFits) {
    const auto score_shape = static_cast<size_t>(shapes_.score_shape(shape));
    if (l.line_of.size() <= score_shape) l.line_of.resize(shapes_.score_shapes());
    uint32_t& line = l.line_of[score_shape];
    if (line == 0) {
      line = static_cast<uint32_t>(l.lines.size() / slots_) + 1;
      l.lines.resize(l.lines.size() + slots_);
    }
    value |= line << 4;
  }
  return value;
}

FitReason ScoreCache::Fit(int gid, int shape, const PodRequest& pod) {
  Lines& l = lines_[gid];
  if (l.fit.size() <= static_cast<size_t>(shape)) l.fit.resize(shapes_.size());
  uint32_t& fit = l.fit[shape];
  if (fit == 0) fit = Classify(gid, l, shape, pod, false);
  return static_cast<FitReason>((fit & 15) - 1);
}

// Evaluate with a context, when no entry of the line holds `context`: computes it in an
// empty entry or in the one computed longest ago.
ScoreCache::Entry* ScoreCache::Fill(int gid, Entry* first, int64_t context, const PodRequest& pod) {
  constexpr size_t kSlots = kContextSlots;
  size_t i = 0;
  while (i < kSlots && first[i].known) ++i;
  if (i == kSlots) {  // all taken: replace the oldest
    i = first->next;
    first->next = static_cast<uint8_t>((i + 1) % kSlots);
  }
  first[i].context = context;
  if (paired_bit_ == 0) {
    Compute(gid, first[i], pod);
    return &first[i];
  }
  // Score both values of the policy's paired bit; keep the other one too, unless cached.
  // (Known entries are contiguous from the first: `i` is the first unknown one or all are.)
  const int64_t sibling = context ^ paired_bit_;
  size_t j = 0;
  for (; j < kSlots && (j == i || first[j].known); ++j) {
    if (j != i && first[j].context == sibling) {  // cached already
      Compute(gid, first[i], pod);
      return &first[i];
    }
  }
  if (j == kSlots) {  // all taken: replace the oldest but the one just filled
    j = first->next;
    if (j == i) j = (j + 1) % kSlots;
    first->next = static_cast<uint8_t>((j + 1) % kSlots);
  }
  first[j].context = sibling;
  ComputePair(gid, first[i], first[j], (context & paired_bit_) != 0, pod);
  return &first[i];
}

// Compute for both values of the paired bit: `e` under the current context with that bit
// `bit_set`, `sibling` under it flipped. The pod fits the group (Classify).
void ScoreCache::ComputePair(int gid, Entry& e, Entry& sibling, bool bit_set,
                             const PodRequest& pod) {
  e.known = 1;
  sibling.known = 1;
  if (policy_.mode() == ScoreMode::kUniformRandom) {
    Compute(gid, e, pod);
    sibling.raw = e.raw;
    sibling.gpus = e.gpus;
    return;
  }
  const NodeGroups::Group& g = groups_.group(gid);
  const int node = g.representative;
  const NodeSpec& spec = cluster_.spec(node);
  NodeScore s[2];
  policy_.ScorePair(
      NodeView{spec, cluster_.model_id(node), g.key.state, context_.value(), &memo_[gid]}, pod, s);
  e.raw = s[bit_set ? 1 : 0].score;
  e.gpus = s[bit_set ? 1 : 0].gpus;
  sibling.raw = s[bit_set ? 0 : 1].score;
  sibling.gpus = s[bit_set ? 0 : 1].gpus;
  if (!pod.IsCpuOnly()) {
    const GpuTopology* topology = cluster_.topology(node);
    const bool e_ok = UsableGpuChoice(topology, spec.gpu_count, pod, e.gpus);
    const bool sibling_ok = UsableGpuChoice(topology, spec.gpu_count, pod, sibling.gpus);
    if (!e_ok || !sibling_ok) {
      const GpuSet fallback = DefaultGpuChoice(spec.gpu_count, g.key.state, pod, topology);
      if (!e_ok) e.gpus = fallback;
      if (!sibling_ok) sibling.gpus = fallback;
    }
  }
}

// The score of a pod that fits the group (Classify).
void ScoreCache::Compute(int gid, Entry& e, const PodRequest& pod) {
  e.known = 1;
  e.raw = 0;
  e.gpus = 0;
  const NodeGroups::Group& g = groups_.group(gid);
  const int node = g.representative;
  const NodeSpec& spec = cluster_.spec(node);
  if (policy_.mode() != ScoreMode::kUniformRandom) {
    const NodeScore s = policy_.Score(
        NodeView{spec, cluster_.model_id(node), g.key.state, context_.value(), &memo_[gid]}, pod);
    e.raw = s.score;
    e.gpus = s.gpus;
  }
  if (!pod.IsCpuOnly()) {
    e.gpus = GpusOnNode(spec.gpu_count, g.key.state, cluster_.topology(node), pod, e.gpus);
  }
}

ScoreCache::Entry ScoreCache::Score(int gid, const PodRequest& pod) {
  Entry e;
  Compute(gid, e, pod);
  return e;
}

int32_t ScoreCache::Bound(int gid, const PodRequest& pod) {
  return policy_.ScoreBound(NodeView{groups_.type_spec(gid), groups_.group(gid).model,
                                     groups_.group(gid).key.state, context_.value(), &memo_[gid]},
                            pod);
}

}  // namespace tessera
