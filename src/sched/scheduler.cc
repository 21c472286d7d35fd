#include "sched/scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "util/check.h"

namespace tessera {
namespace {

inline uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

// The integer score that decides: raw as is, or min–max normalised over [lo, hi] to 0..100.
int FinalScore(ScoreMode mode, double raw, double lo, double hi) {
  if (mode == ScoreMode::kMinMax) {
    return hi > lo ? static_cast<int>(std::floor(100.0 * (raw - lo) / (hi - lo))) : 0;
  }
  return mode == ScoreMode::kInteger ? static_cast<int>(raw) : 0;
}

}  // namespace

size_t Scheduler::KeyHash::operator()(const Key& k) const {
  uint64_t h = static_cast<uint64_t>(k.type);
  h = Mix(h, static_cast<uint64_t>(k.state.cpu_left));
  h = Mix(h, static_cast<uint64_t>(k.state.memory_left));
  for (int i = 0; i < kMaxGpusPerNode; ++i) {
    h = Mix(h, static_cast<uint64_t>(static_cast<uint32_t>(k.state.gpu_free[i])) |
                   (static_cast<uint64_t>(static_cast<uint32_t>(k.state.gpu_mem_free[i])) << 32));
  }
  for (uint16_t c : k.state.pods_by_tag) h = Mix(h, c);
  return static_cast<size_t>(h);
}

Scheduler::Scheduler(Cluster* cluster, const Policy* policy, const std::vector<int>& node_order,
                     uint64_t seed)
    : cluster_(cluster),
      policy_(policy),
      rng_(seed),
      uses_context_(policy->UsesContext()),
      paired_bit_(uses_context_ ? policy->PairedContextBit() : 0),
      slots_(uses_context_ ? kContextSlots : 1),
      columns_(!uses_context_ && policy->mode() == ScoreMode::kInteger),
      bounds_on_(columns_ && policy->HasScoreBound()) {
  const int n = cluster_->size();
  TESSERA_CHECK(static_cast<int>(node_order.size()) == n);
  rank_.assign(n, -1);
  for (int r = 0; r < n; ++r) {
    TESSERA_CHECK(node_order[r] >= 0 && node_order[r] < n && rank_[node_order[r]] < 0);
    rank_[node_order[r]] = r;
  }
  // Capacity types: nodes with equal capacity and model are interchangeable for policies.
  std::map<std::tuple<int64_t, int64_t, int, int, int64_t>, int> types;
  type_.resize(n);
  for (int i = 0; i < n; ++i) {
    const NodeSpec& s = cluster_->spec(i);
    auto key = std::make_tuple(s.cpu_milli, s.memory_mib, s.gpu_count, cluster_->model_id(i),
                               s.gpu_memory_mib);
    type_[i] = types.emplace(key, static_cast<int>(types.size())).first->second;
    if (std::find(models_.begin(), models_.end(), cluster_->model_id(i)) == models_.end()) {
      models_.push_back(cluster_->model_id(i));
    }
  }
  project_.assign(kMaxGpuModels + 1, 0);
  group_of_.assign(n, -1);
  member_pos_.assign(n, -1);
  summary_.total_gpu_milli = cluster_->total_gpu_milli();
  for (int i = 0; i < n; ++i) Insert(i);
  summary_.start_idle_nodes_by_gpus = summary_.idle_nodes_by_gpus;
  summary_.free_gpu_milli = cluster_->total_gpu_milli() - cluster_->allocated_gpu_milli();
  summary_.start_free_gpu_milli = summary_.free_gpu_milli;
  if (uses_context_) context_ = policy_->ContextKey(summary_);
}

bool Scheduler::IsIdle(int node) const {
  const NodeSpec& spec = cluster_->spec(node);
  const NodeState& st = cluster_->state(node);
  if (st.cpu_left != spec.cpu_milli) return false;
  for (int i = 0; i < spec.gpu_count; ++i) {
    if (st.gpu_free[i] != kMilliPerGpu) return false;
  }
  return true;
}

// Adds (sign +1) or removes (−1) the node's free GPU milli to or from its model's total.
void Scheduler::AddFreeGpus(int node, int sign) {
  const int m = cluster_->model_id(node);
  if (m < 0 || m >= kMaxGpuModels) return;
  const NodeState& st = cluster_->state(node);
  int64_t free = 0;
  for (int i = 0; i < cluster_->spec(node).gpu_count; ++i) free += st.gpu_free[i];
  summary_.free_gpu_milli_by_model[m] += sign * free;
}

// Recomputes the policy's context value. Cached scores stay: each is tagged with the
// Policy::ContextFor it was computed under (Evaluate).
void Scheduler::UpdateContext() {
  summary_.free_gpu_milli = cluster_->total_gpu_milli() - cluster_->allocated_gpu_milli();
  const int64_t key = policy_->ContextKey(summary_);
  if (key == context_) return;
  context_ = key;
  ++context_changes_;
}

void Scheduler::ProjectContext(const PodRequest& pod) {
  for (int m : models_) project_[m + 1] = policy_->ContextFor(context_, m, pod);
}

void Scheduler::Insert(int node) {
  Key key{type_[node], cluster_->state(node)};
  auto it = group_index_.find(key);
  int gid;
  if (it == group_index_.end()) {
    if (!free_groups_.empty()) {
      gid = free_groups_.back();
      free_groups_.pop_back();
    } else {
      gid = static_cast<int>(groups_.size());
      groups_.emplace_back();
      records_.emplace_back();
      memo_.emplace_back();
    }
    if (columns_) ResetColumns(gid);
    Group& g = groups_[gid];
    g.key = key;
    g.representative = node;
    g.ranks.clear();
    g.members.clear();
    g.model = cluster_->model_id(node);
    g.fit.clear();
    g.lines.clear();
    memo_[gid] = PolicyScratch{};
    records_[gid] =
        Record{FitSummary::Of(cluster_->spec(node).gpu_count, g.model, key.state), rank_[node], 0};
    g.live_pos = static_cast<int>(live_.size());
    live_.push_back(gid);
    group_index_.emplace(key, gid);
  } else {
    gid = it->second;
  }
  Group& g = groups_[gid];
  if (IsIdle(node)) ++summary_.idle_nodes_by_gpus[cluster_->spec(node).gpu_count];
  if (uses_context_) AddFreeGpus(node, +1);
  g.ranks.insert(rank_[node]);
  Record& record = records_[gid];
  record.min_rank = std::min(record.min_rank, rank_[node]);
  ++record.members;
  member_pos_[node] = static_cast<int>(g.members.size());
  g.members.push_back(node);
  group_of_[node] = gid;
  if (!failed_.empty()) TrackFailed(gid, +1);
}

void Scheduler::Remove(int node) {
  const int gid = group_of_[node];
  if (!failed_.empty()) TrackFailed(gid, -1);
  Group& g = groups_[gid];
  if (IsIdle(node)) --summary_.idle_nodes_by_gpus[cluster_->spec(node).gpu_count];
  if (uses_context_) AddFreeGpus(node, -1);
  g.ranks.erase(rank_[node]);
  Record& record = records_[gid];
  --record.members;
  if (record.min_rank == rank_[node] && !g.ranks.empty()) record.min_rank = *g.ranks.begin();
  const int pos = member_pos_[node];
  const int last = g.members.back();
  g.members[pos] = last;
  member_pos_[last] = pos;
  g.members.pop_back();
  group_of_[node] = -1;
  if (g.members.empty()) {
    const int lp = g.live_pos;
    live_[lp] = live_.back();
    groups_[live_[lp]].live_pos = lp;
    live_.pop_back();
    group_index_.erase(g.key);
    memo_[gid] = PolicyScratch{};
    records_[gid] = Record{};
    free_groups_.push_back(gid);
  } else if (g.representative == node) {
    g.representative = g.members.front();
  }
}

int Scheduler::ShapeId(const PodRequest& pod) {
  uint64_t h = Mix(static_cast<uint64_t>(pod.cpu_milli), static_cast<uint64_t>(pod.memory_mib));
  h = Mix(h, static_cast<uint64_t>(pod.gpu_count) << 32 | static_cast<uint32_t>(pod.gpu_milli));
  h = Mix(h, static_cast<uint64_t>(pod.gpu_memory_mib));
  h = Mix(h, pod.models);
  std::vector<int>& ids = shape_index_[h];
  for (int id : ids) {
    if (shapes_[id] == pod) return id;
  }
  const int id = static_cast<int>(shapes_.size());
  shapes_.push_back(pod);
  ids.push_back(id);
  if (columns_) scores_.resize(shapes_.size() * stride_, kUnknown);
  if (bounds_on_) bounds_.resize(scores_.size());
  return id;
}

uint32_t Scheduler::Classify(Group& g, const PodRequest& pod) {
  const int node = g.representative;
  const FitReason fit =
      CheckFit(cluster_->spec(node).gpu_count, cluster_->model_id(node), g.key.state, pod);
  uint32_t value = static_cast<uint32_t>(fit) + 1;
  if (fit == FitReason::kFits) {
    const size_t line = g.lines.size() / slots_;
    g.lines.resize(g.lines.size() + slots_);
    value |= static_cast<uint32_t>(line + 1) << 4;
  }
  return value;
}

// The cached score of `pod` on the group, computed if not cached; nullptr (and `*reason`)
// when the pod does not fit, which is known per shape whatever the context. With a context, a
// line holds kContextSlots entries, each tagged with the Policy::ContextFor of the group's
// model it was computed under; when none matches, an empty one is used, else the one computed
// longest ago is replaced. Without, one entry per line.
template <bool kContext>
[[gnu::always_inline]] inline const Scheduler::CacheEntry* Scheduler::Evaluate(
    Group& g, int shape, const PodRequest& pod, FitReason* reason) {
  if (g.fit.size() <= static_cast<size_t>(shape)) [[unlikely]] {
    g.fit.resize(shapes_.size());
  }
  uint32_t fit = g.fit[shape];
  if (fit == 0) [[unlikely]] {
    fit = g.fit[shape] = Classify(g, pod);
  }
  if ((fit & 15) != 1) {
    *reason = static_cast<FitReason>((fit & 15) - 1);
    return nullptr;
  }
  constexpr size_t kSlots = kContext ? kContextSlots : 1;
  CacheEntry* first = &g.lines[static_cast<size_t>((fit >> 4) - 1) * kSlots];
  if constexpr (!kContext) {
    if (!first->known) [[unlikely]] {
      Compute(g, *first, pod);
    }
    return first;
  } else {
    const int64_t context = project_[g.model + 1];
    for (size_t i = 0; i < kSlots && first[i].known; ++i) {
      if (first[i].context == context) return &first[i];
    }
    return Fill(g, first, context, pod);
  }
}

// Evaluate with a context, when no entry of the line holds `context`: computes it in an
// empty entry or in the one computed longest ago.
Scheduler::CacheEntry* Scheduler::Fill(Group& g, CacheEntry* first, int64_t context,
                                       const PodRequest& pod) {
  constexpr size_t kSlots = kContextSlots;
  size_t i = 0;
  while (i < kSlots && first[i].known) ++i;
  if (i == kSlots) {  // all taken: replace the oldest
    i = first->next;
    first->next = static_cast<uint8_t>((i + 1) % kSlots);
  }
  first[i].context = context;
  if (paired_bit_ == 0) {
    Compute(g, first[i], pod);
    return &first[i];
  }
  // Score both values of the policy's paired bit; keep the other one too, unless cached.
  // (Known entries are contiguous from the first: `i` is the first unknown one or all are.)
  const int64_t sibling = context ^ paired_bit_;
  size_t j = 0;
  for (; j < kSlots && (j == i || first[j].known); ++j) {
    if (j != i && first[j].context == sibling) {  // cached already
      Compute(g, first[i], pod);
      return &first[i];
    }
  }
  if (j == kSlots) {  // all taken: replace the oldest but the one just filled
    j = first->next;
    if (j == i) j = (j + 1) % kSlots;
    first->next = static_cast<uint8_t>((j + 1) % kSlots);
  }
  first[j].context = sibling;
  ComputePair(g, first[i], first[j], (context & paired_bit_) != 0, pod);
  return &first[i];
}

// Compute for both values of the paired bit: `e` under the current context with that bit
// `bit_set`, `sibling` under it flipped. The pod fits the group (Classify).
void Scheduler::ComputePair(Group& g, CacheEntry& e, CacheEntry& sibling, bool bit_set,
                            const PodRequest& pod) {
  e.known = 1;
  sibling.known = 1;
  if (policy_->mode() == ScoreMode::kUniformRandom) {
    Compute(g, e, pod);
    sibling.raw = e.raw;
    sibling.gpus = e.gpus;
    return;
  }
  const int node = g.representative;
  const NodeSpec& spec = cluster_->spec(node);
  NodeScore s[2];
  policy_->ScorePair(
      NodeView{spec, cluster_->model_id(node), g.key.state, context_, &memo_[&g - groups_.data()]},
      pod, s);
  e.raw = s[bit_set ? 1 : 0].score;
  e.gpus = s[bit_set ? 1 : 0].gpus;
  sibling.raw = s[bit_set ? 0 : 1].score;
  sibling.gpus = s[bit_set ? 0 : 1].gpus;
  if (!pod.IsCpuOnly() && (e.gpus == 0 || sibling.gpus == 0)) {
    const GpuSet fallback = DefaultGpuChoice(spec.gpu_count, g.key.state, pod);
    if (e.gpus == 0) e.gpus = fallback;
    if (sibling.gpus == 0) sibling.gpus = fallback;
  }
}

// The score of a pod that fits the group (Classify).
void Scheduler::Compute(Group& g, CacheEntry& e, const PodRequest& pod) {
  e.known = 1;
  e.raw = 0;
  e.gpus = 0;
  const int node = g.representative;
  const NodeSpec& spec = cluster_->spec(node);
  if (policy_->mode() != ScoreMode::kUniformRandom) {
    const NodeScore s = policy_->Score(NodeView{spec, cluster_->model_id(node), g.key.state,
                                                context_, &memo_[&g - groups_.data()]},
                                       pod);
    e.raw = s.score;
    e.gpus = s.gpus;
  }
  if (e.gpus == 0 && !pod.IsCpuOnly()) {
    e.gpus = DefaultGpuChoice(spec.gpu_count, g.key.state, pod);
  }
}

// Makes room for group id `gid` in every column (doubling their length when `gid` is past
// it) and marks its scores as not computed.
void Scheduler::ResetColumns(int gid) {
  const size_t id = static_cast<size_t>(gid);
  if (id >= stride_) {
    const size_t stride = std::max<size_t>({64, 2 * stride_, id + 1});
    const auto grow = [&](std::vector<int32_t>& column, int32_t fill) {
      std::vector<int32_t> wider(shapes_.size() * stride, fill);
      for (size_t s = 0; s < shapes_.size(); ++s) {
        std::copy_n(column.data() + s * stride_, stride_, wider.data() + s * stride);
      }
      column.swap(wider);
    };
    grow(scores_, kUnknown);
    if (bounds_on_) grow(bounds_, 0);
    stride_ = stride;
    return;
  }
  for (size_t s = 0; s < shapes_.size(); ++s) scores_[s * stride_ + id] = kUnknown;
}

int32_t Scheduler::ScoreOf(int gid, const PodRequest& pod) {
  CacheEntry e;
  Compute(groups_[gid], e, pod);
  return static_cast<int>(e.raw);
}

int32_t Scheduler::BoundOf(int gid, const PodRequest& pod) {
  Group& g = groups_[gid];
  const int node = g.representative;
  return policy_->ScoreBound(
      NodeView{cluster_->spec(node), g.model, g.key.state, context_, &memo_[gid]}, pod);
}

// The cached score of `pod` on group `gid` in `column` into *score, computed if not cached
// (or only bounded); false if the pod does not fit (only when !kExact: with an exact
// FitQuery the caller's MayFit decided). The sentinels are the smallest int32 values, so
// one comparison tells a cached score.
template <bool kExact>
[[gnu::always_inline]] inline bool Scheduler::ColumnScore(int gid, int32_t* column,
                                                          const PodRequest& pod, int32_t* score) {
  const int32_t cached = column[gid];
  if (cached > kLastSentinel) [[likely]] {
    *score = cached;
    return true;
  }
  if (!kExact && IsRejection(cached)) return false;
  if (!kExact && cached == kUnknown) {
    const Group& g = groups_[gid];
    const FitReason fit =
        CheckFit(cluster_->spec(g.representative).gpu_count, g.model, g.key.state, pod);
    if (fit != FitReason::kFits) {
      column[gid] = kRejected + static_cast<int32_t>(fit);
      return false;
    }
  }
  const int32_t s = ScoreOf(gid, pod);
  if (s > kLastSentinel) column[gid] = s;
  *score = s;
  return true;
}

// The choice of a kInteger policy without a context: the highest score, then the lowest
// rank, as one 64-bit key per group (score in the high half, the rank's complement in the
// low half). With bounds (kBound), a group whose score is not known gets its bound instead
// (cached where its score would be), and the pass keeps the kTop best bound keys of those
// beside the best known score. They are then scored, best bound first, while a bound beats
// the best score found; every other bound is at most the last of them, so if that one is
// beaten too the choice is made. Otherwise (when many bounds beat the known scores, as for a
// pod shape seen for the first time) a second pass collects every bound that beats the best
// score found and scores them from a heap, best first, until the next cannot beat it.
template <bool kExact, bool kBound>
int Scheduler::BestInColumn(int shape, const FitQuery& query, const PodRequest& pod, int* score) {
  const auto key_of = [](int32_t value, int32_t rank) {
    return static_cast<int64_t>(value) * (int64_t{1} << 32) +
           (int64_t{0xffffffff} - static_cast<int64_t>(rank));
  };
  int32_t* column = Column(shape);
  int32_t* bounds = kBound ? bounds_.data() + static_cast<size_t>(shape) * stride_ : nullptr;
  const Record* records = records_.data();
  const int n = static_cast<int>(records_.size());
  int64_t best_key = std::numeric_limits<int64_t>::min();
  int best = -1;
  constexpr int kTop = 4;
  std::array<std::pair<int64_t, int>, kTop> top;  // by key, descending
  top.fill({std::numeric_limits<int64_t>::min(), -1});
  for (int gid = 0; gid < n; ++gid) {
    const Record& r = records[gid];
    if (!query.MayFit(r.fit)) continue;
    int32_t s = column[gid];
    if (s <= kLastSentinel) [[unlikely]] {
      if constexpr (kBound) {
        if (!kExact && IsRejection(s)) continue;
        if (s == kUnknown) {
          if (!kExact) {
            const Group& g = groups_[gid];
            const FitReason fit =
                CheckFit(cluster_->spec(g.representative).gpu_count, g.model, g.key.state, pod);
            if (fit != FitReason::kFits) {
              column[gid] = kRejected + static_cast<int32_t>(fit);
              continue;
            }
          }
          bounds[gid] = BoundOf(gid, pod);
          column[gid] = kBounded;
        }
        const int64_t bound_key = key_of(bounds[gid], r.min_rank);
        if (bound_key > top[kTop - 1].first && bound_key > best_key) {
          int i = kTop - 1;
          for (; i > 0 && top[i - 1].first < bound_key; --i) top[i] = top[i - 1];
          top[i] = {bound_key, gid};
        }
        continue;
      } else if (!ColumnScore<kExact>(gid, column, pod, &s)) {
        continue;
      }
    }
    const int64_t key = key_of(s, r.min_rank);
    if (key > best_key) {
      best_key = key;
      best = gid;
    }
  }
  if constexpr (kBound) {
    const auto score_group = [&](int gid) {
      const int32_t s = ScoreOf(gid, pod);
      TESSERA_CHECK(s <= bounds[gid]);  // Policy::ScoreBound's contract
      if (s > kLastSentinel) column[gid] = s;
      const int64_t key = key_of(s, records[gid].min_rank);
      if (key > best_key) {
        best_key = key;
        best = gid;
      }
    };
    for (const auto& [bound_key, gid] : top) {
      if (bound_key <= best_key) break;
      score_group(gid);
    }
    if (top[kTop - 1].first > best_key) {  // bounds past the kTop may beat it: all of them
      candidates_.clear();
      for (int gid = 0; gid < n; ++gid) {
        if (column[gid] != kBounded || !query.MayFit(records[gid].fit)) continue;
        const int64_t bound_key = key_of(bounds[gid], records[gid].min_rank);
        if (bound_key > best_key) candidates_.emplace_back(bound_key, gid);
      }
      std::make_heap(candidates_.begin(), candidates_.end());
      while (!candidates_.empty() && candidates_.front().first > best_key) {
        std::pop_heap(candidates_.begin(), candidates_.end());
        const int gid = candidates_.back().second;
        candidates_.pop_back();
        score_group(gid);
      }
    }
  }
  if (best >= 0) *score = static_cast<int32_t>(best_key >> 32);
  return best;
}

FitReason Scheduler::ReasonOn(const FitQuery& query, int gid, const PodRequest& pod) const {
  if (query.exact()) return query.Reason(records_[gid].fit);
  const Group& g = groups_[gid];
  return CheckFit(cluster_->spec(g.representative).gpu_count, g.model, g.key.state, pod);
}

void Scheduler::TrackFailed(int gid, int sign) {
  for (size_t i = 0; i < failed_.size();) {
    Failed& f = failed_[i];
    const FitReason reason = ReasonOn(f.query, gid, shapes_[f.shape]);
    if (reason == FitReason::kFits) {  // it fits a node now: decide it again
      TESSERA_CHECK(sign > 0);
      f = failed_.back();
      failed_.pop_back();
      continue;
    }
    f.rejected[static_cast<int>(reason)] += sign;
    ++i;
  }
}

// Reasons are cached like scores: in the columns, or in Group::fit.
void Scheduler::CountRejections(int shape, const FitQuery& query, const PodRequest& pod,
                                Decision& d) {
  CountRejectionsOnce(shape, query, pod, d);
  if (failed_.size() < kMaxFailed) failed_.push_back(Failed{shape, query, d.rejected});
}

void Scheduler::CountRejectionsOnce(int shape, const FitQuery& query, const PodRequest& pod,
                                    Decision& d) {
  if (columns_) {
    int32_t* column = Column(shape);
    const int n = static_cast<int>(records_.size());
    for (int gid = 0; gid < n; ++gid) {
      const Record& r = records_[gid];
      if (r.members == 0) continue;  // a free group id
      int32_t v = column[gid];
      if (!IsRejection(v)) {
        TESSERA_CHECK(v == kUnknown);  // a score or a bound: it fits
        const Group& g = groups_[gid];
        const FitReason reason =
            query.exact()
                ? query.Reason(r.fit)
                : CheckFit(cluster_->spec(g.representative).gpu_count, g.model, g.key.state, pod);
        TESSERA_CHECK(reason != FitReason::kFits);
        v = column[gid] = kRejected + static_cast<int32_t>(reason);
      }
      d.rejected[v - kRejected] += r.members;
    }
    return;
  }
  for (int gid : live_) {
    Group& g = groups_[gid];
    if (g.fit.size() <= static_cast<size_t>(shape)) g.fit.resize(shapes_.size());
    uint32_t& fit = g.fit[shape];
    if (fit == 0) fit = Classify(g, pod);
    TESSERA_CHECK((fit & 15) != 1);
    d.rejected[(fit & 15) - 1] += records_[gid].members;
  }
}

// Looks up (or computes) the score of `pod` on every live group its summary does not rule
// out, and calls feasible(gid, group, entry) for each group where it fits.
template <bool kContext, typename Visit>
[[gnu::always_inline]] inline void Scheduler::ForEachFit(int shape, const FitQuery& query,
                                                         const PodRequest& pod, Visit&& feasible) {
  for (int gid : live_) {
    if (!query.MayFit(records_[gid].fit)) continue;
    Group& g = groups_[gid];
    FitReason reason = FitReason::kFits;
    const CacheEntry* e = Evaluate<kContext>(g, shape, pod, &reason);
    if (e == nullptr) continue;
    feasible(gid, g, *e);
  }
}

// Collects the feasible groups in scratch_.
template <bool kContext>
void Scheduler::ScoreGroups(int shape, const FitQuery& query, const PodRequest& pod,
                            int64_t& feasible_nodes, double& lo, double& hi) {
  ForEachFit<kContext>(shape, query, pod, [&](int gid, const Group& g, const CacheEntry& e) {
    scratch_.push_back(Feasible{gid, e.raw, e.gpus});
    feasible_nodes += static_cast<int64_t>(g.members.size());
    lo = std::min(lo, e.raw);
    hi = std::max(hi, e.raw);
  });
}

// ScoreGroups and the choice among the feasible groups in one pass, for ScoreMode::kInteger
// (the score is the raw value): the highest score, then the lowest rank. Sets `best` (group
// −1 if none fits) and d.score.
template <bool kContext>
void Scheduler::BestGroup(int shape, const FitQuery& query, const PodRequest& pod, Decision& d,
                          Feasible& best) {
  int best_score = std::numeric_limits<int>::min();
  int best_rank = std::numeric_limits<int>::max();
  ForEachFit<kContext>(shape, query, pod, [&](int gid, const Group&, const CacheEntry& e) {
    const int score = static_cast<int>(e.raw);
    if (score < best_score) return;
    const int rank = records_[gid].min_rank;
    if (score > best_score || rank < best_rank) {
      best_score = score;
      best_rank = rank;
      best = Feasible{gid, e.raw, e.gpus};
    }
  });
  if (best.group >= 0) d.score = best_score;
}

void Scheduler::Observe(const PodRequest& pod) {
  if (!uses_context_) return;
  summary_.seen_gpu_milli_by_count[std::clamp(pod.gpu_count, 0, kMaxGpusPerNode)] +=
      static_cast<int64_t>(pod.gpu_milli) * pod.gpu_count;
  ++summary_.seen_pods;
}

Decision Scheduler::Decide(const PodRequest& pod) {
  const int shape = ShapeId(pod);
  if (uses_context_) {
    Observe(pod);
    UpdateContext();
    ProjectContext(pod);
  }
  Decision d;
  const FitQuery query(pod);
  for (const Failed& f : failed_) {
    if (f.shape == shape) {  // fits no node still
      d.rejected = f.rejected;
      return d;
    }
  }
  const ScoreMode mode = policy_->mode();
  if (columns_) {
    int gid;
    if (bounds_on_) {
      gid = query.exact() ? BestInColumn<true, true>(shape, query, pod, &d.score)
                          : BestInColumn<false, true>(shape, query, pod, &d.score);
    } else {
      gid = query.exact() ? BestInColumn<true, false>(shape, query, pod, &d.score)
                          : BestInColumn<false, false>(shape, query, pod, &d.score);
    }
    if (gid < 0) {
      CountRejections(shape, query, pod, d);
      return d;
    }
    // The winner's GPUs: its score again, with them (Score is a pure function).
    CacheEntry e;
    Compute(groups_[gid], e, pod);
    return Finish(d, Feasible{gid, e.raw, e.gpus}, pod);
  }
  if (mode == ScoreMode::kInteger) {  // the best raw score wins: no list of feasible groups
    Feasible best{-1, 0, 0};
    if (uses_context_) {
      BestGroup<true>(shape, query, pod, d, best);
    } else {
      BestGroup<false>(shape, query, pod, d, best);
    }
    if (best.group < 0) {
      CountRejections(shape, query, pod, d);
      return d;
    }
    return Finish(d, best, pod);
  }
  scratch_.clear();
  int64_t feasible_nodes = 0;
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  if (uses_context_) {
    ScoreGroups<true>(shape, query, pod, feasible_nodes, lo, hi);
  } else {
    ScoreGroups<false>(shape, query, pod, feasible_nodes, lo, hi);
  }
  if (scratch_.empty()) {
    CountRejections(shape, query, pod, d);
    return d;
  }

  if (mode == ScoreMode::kUniformRandom) {
    int64_t k = static_cast<int64_t>(rng_.Below(static_cast<uint64_t>(feasible_nodes)));
    for (const Feasible& f : scratch_) {
      const int64_t size = static_cast<int64_t>(groups_[f.group].members.size());
      if (k < size) {
        const Group& g = groups_[f.group];
        d.node = g.members[k];
        d.gpus = f.gpus;
        if (pod.IsSharing()) {  // a GPU drawn uniformly among those with room
          const int gpu_count = cluster_->spec(d.node).gpu_count;
          int with_room = 0;
          for (int i = 0; i < gpu_count; ++i) with_room += GpuHasRoom(g.key.state, i, pod);
          int pick = static_cast<int>(rng_.Below(static_cast<uint64_t>(with_room)));
          for (int i = 0; i < gpu_count; ++i) {
            if (GpuHasRoom(g.key.state, i, pod) && pick-- == 0) d.gpus = GpuSet{1} << i;
          }
        }
        return d;
      }
      k -= size;
    }
    TESSERA_CHECK(false);
  }

  const Feasible* best = nullptr;
  int best_score = std::numeric_limits<int>::min();
  int best_rank = std::numeric_limits<int>::max();
  for (const Feasible& f : scratch_) {
    const int score = FinalScore(mode, f.raw, lo, hi);
    const int rank = records_[f.group].min_rank;
    if (score > best_score || (score == best_score && rank < best_rank)) {
      best_score = score;
      best_rank = rank;
      best = &f;
    }
  }
  d.score = best_score;
  return Finish(d, *best, pod);
}

std::vector<std::pair<int, int>> Scheduler::ScoreNodes(const PodRequest& pod,
                                                       const std::vector<int>& nodes) {
  const int shape = ShapeId(pod);
  if (uses_context_) {
    UpdateContext();
    ProjectContext(pod);
  }
  const FitQuery query(pod);
  std::vector<std::pair<int, double>> raw;
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  int32_t* column = columns_ ? Column(shape) : nullptr;
  for (int node : nodes) {
    TESSERA_CHECK(node >= 0 && node < cluster_->size());
    const int gid = group_of_[node];
    if (!query.MayFit(records_[gid].fit)) continue;
    double r = 0;
    if (columns_) {
      int32_t s;
      if (!(query.exact() ? ColumnScore<true>(gid, column, pod, &s)
                          : ColumnScore<false>(gid, column, pod, &s))) {
        continue;
      }
      r = s;
    } else {
      Group& g = groups_[gid];
      FitReason reason = FitReason::kFits;
      const CacheEntry* e = uses_context_ ? Evaluate<true>(g, shape, pod, &reason)
                                          : Evaluate<false>(g, shape, pod, &reason);
      if (e == nullptr) continue;
      r = e->raw;
    }
    raw.emplace_back(node, r);
    lo = std::min(lo, r);
    hi = std::max(hi, r);
  }
  const ScoreMode mode = policy_->mode();
  std::vector<std::pair<int, int>> out;
  out.reserve(raw.size());
  for (const auto& [node, r] : raw) {
    out.emplace_back(node, FinalScore(mode, r, lo, hi));
  }
  return out;
}

Decision Scheduler::Finish(Decision d, const Feasible& best, const PodRequest& pod) {
  const Group& g = groups_[best.group];
  const int rank = records_[best.group].min_rank;
  // The member with that rank: members are few per group on average; find it.
  for (int node : g.members) {
    if (rank_[node] == rank) {
      d.node = node;
      break;
    }
  }
  d.gpus = pod.IsCpuOnly() ? 0 : best.gpus;
  return d;
}

void Scheduler::Bind(int node, const PodRequest& pod, GpuSet gpus) {
  Remove(node);
  cluster_->Allocate(node, pod, gpus);
  Insert(node);
}

void Scheduler::Unbind(int node, const PodRequest& pod, GpuSet gpus) {
  Remove(node);
  cluster_->Release(node, pod, gpus);
  Insert(node);
}

}  // namespace tessera
