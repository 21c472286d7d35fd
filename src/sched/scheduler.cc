#include "sched/scheduler.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <tuple>

#include "sched/cycle.h"
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

// Whether a policy's GPU choice can be used: not 0 (the generic choice) and, on a node with a
// topology, meeting what the pod's topology requires there (a topology-blind policy's choice
// may not; the generic choice then takes its place).
inline bool Usable(const GpuTopology* topology, int gpu_count, const PodRequest& pod, GpuSet gpus) {
  if (gpus == 0) return false;
  return topology == nullptr ||
         MeetsRequired(*topology, gpu_count, EffectiveNeed(*topology, pod), gpus);
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
      columns_(policy->mode() == ScoreMode::kInteger),
      tagged_(columns_ && uses_context_),
      per_shape_(tagged_ && paired_bit_ != 0 ? 2 : 1),
      bounds_on_(columns_ && !tagged_ && policy->HasScoreBound()) {
  const int n = cluster_->size();
  TESSERA_CHECK(static_cast<int>(node_order.size()) == n);
  rank_.assign(n, -1);
  for (int r = 0; r < n; ++r) {
    TESSERA_CHECK(node_order[r] >= 0 && node_order[r] < n && rank_[node_order[r]] < 0);
    rank_[node_order[r]] = r;
  }
  // Capacity types: nodes with equal capacity, model and topology are interchangeable for
  // policies (topologies are interned by value in the Cluster: equal ids, equal topologies).
  std::map<std::tuple<int64_t, int64_t, int, int, int64_t, int>, int> types;
  type_.resize(n);
  for (int i = 0; i < n; ++i) {
    const NodeSpec& s = cluster_->spec(i);
    auto key = std::make_tuple(s.cpu_milli, s.memory_mib, s.gpu_count, cluster_->model_id(i),
                               s.gpu_memory_mib, cluster_->topology_id(i));
    const auto [it, added] = types.emplace(key, static_cast<int>(types.size()));
    type_[i] = it->second;
    if (added) type_node_.push_back(i);
    if (std::find(models_.begin(), models_.end(), cluster_->model_id(i)) == models_.end()) {
      models_.push_back(cluster_->model_id(i));
    }
  }
  project_.assign(kMaxGpuModels + 1, 0);
  group_of_.assign(n, -1);
  member_pos_.assign(n, -1);
  summary_.total_gpu_milli = cluster_->total_gpu_milli();
  idle_gpus_by_model_.assign(cluster_->models().size(), 0);
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

// Adds (sign +1) or removes (−1) the node's whole idle GPUs to or from the running counts.
void Scheduler::CountIdleGpusOf(int node, int sign) {
  const int k = sign * IdleGpus(cluster_->state(node), cluster_->spec(node).gpu_count);
  idle_gpus_ += k;
  const int m = cluster_->model_id(node);
  if (m >= 0) idle_gpus_by_model_[static_cast<size_t>(m)] += k;
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
      stamp_.emplace_back(0);
      records_.emplace_back();
      min_rank_.emplace_back();
      memo_.emplace_back();
      if (columns_ && static_cast<size_t>(gid) >= stride_) WidenColumns(gid);
    }
    Group& g = groups_[gid];
    g.key = key;
    g.representative = node;
    g.ranks.clear();
    g.members.clear();
    g.model = cluster_->model_id(node);
    g.fit.clear();
    g.lines.clear();
    g.line_of.clear();
    memo_[gid] = PolicyScratch{};
    const int gpu_count = cluster_->spec(node).gpu_count;
    records_[gid] = Record{FitSummary::Of(gpu_count, g.model, key.state,
                                          TopologyBits(cluster_->topology(node), gpu_count)),
                           0};
    min_rank_[gid] = rank_[node];
    g.live_pos = static_cast<int>(live_.size());
    live_.push_back(gid);
    group_index_.emplace(key, gid);
  } else {
    gid = it->second;
  }
  Group& g = groups_[gid];
  if (tagged_) change_log_.push_back(gid);
  if (IsIdle(node)) ++summary_.idle_nodes_by_gpus[cluster_->spec(node).gpu_count];
  CountIdleGpusOf(node, +1);
  if (uses_context_) AddFreeGpus(node, +1);
  g.ranks.insert(rank_[node]);
  min_rank_[gid] = std::min(min_rank_[gid], rank_[node]);
  ++records_[gid].members;
  member_pos_[node] = static_cast<int>(g.members.size());
  g.members.push_back(node);
  group_of_[node] = gid;
  if (!failed_.empty()) TrackFailed(gid, +1);
}

void Scheduler::Remove(int node) {
  const int gid = group_of_[node];
  if (tagged_) change_log_.push_back(gid);
  if (!failed_.empty()) TrackFailed(gid, -1);
  Group& g = groups_[gid];
  if (IsIdle(node)) --summary_.idle_nodes_by_gpus[cluster_->spec(node).gpu_count];
  CountIdleGpusOf(node, -1);
  if (uses_context_) AddFreeGpus(node, -1);
  g.ranks.erase(rank_[node]);
  --records_[gid].members;
  if (min_rank_[gid] == rank_[node] && !g.ranks.empty()) min_rank_[gid] = *g.ranks.begin();
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
    if (columns_) ForgetColumns(gid);
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
  // Its score shape: a shape seen before that the policy scores alike, else a new one.
  int score_shape = static_cast<int>(score_shapes_.size());
  if (!policy_->ReadsPodMemory()) {
    for (size_t s = 0; s < score_shapes_.size(); ++s) {
      PodRequest other = score_shapes_[s];
      other.memory_mib = pod.memory_mib;
      if (other == pod) {
        score_shape = static_cast<int>(s);
        break;
      }
    }
  }
  if (score_shape == static_cast<int>(score_shapes_.size())) score_shapes_.push_back(pod);
  score_shape_.push_back(score_shape);
  if (columns_) scores_.resize(shapes_.size() * per_shape_ * stride_, kUnknown);
  if (tagged_) {
    tags_.resize(shapes_.size() * stride_, 0);
    kept_.resize(shapes_.size() * per_shape_);
  }
  return id;
}

uint32_t Scheduler::Classify(Group& g, int shape, const PodRequest& pod, bool fits) {
  const int node = g.representative;
  const FitReason fit = fits ? FitReason::kFits
                             : CheckFit(cluster_->spec(node).gpu_count, cluster_->model_id(node),
                                        g.key.state, pod, cluster_->topology(node));
  uint32_t value = static_cast<uint32_t>(fit) + 1;
  if (fit == FitReason::kFits) {
    const auto score_shape = static_cast<size_t>(score_shape_[shape]);
    if (g.line_of.size() <= score_shape) g.line_of.resize(score_shapes_.size());
    uint32_t& line = g.line_of[score_shape];
    if (line == 0) {
      line = static_cast<uint32_t>(g.lines.size() / slots_) + 1;
      g.lines.resize(g.lines.size() + slots_);
    }
    value |= line << 4;
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
    Group& g, int shape, const PodRequest& pod, bool fits, FitReason* reason) {
  if (g.fit.size() <= static_cast<size_t>(shape)) [[unlikely]] {
    g.fit.resize(shapes_.size());
  }
  uint32_t fit = g.fit[shape];
  if (fit == 0) [[unlikely]] {
    fit = g.fit[shape] = Classify(g, shape, pod, fits);
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
  if (!pod.IsCpuOnly()) {
    const GpuTopology* topology = cluster_->topology(node);
    const bool e_ok = Usable(topology, spec.gpu_count, pod, e.gpus);
    const bool sibling_ok = Usable(topology, spec.gpu_count, pod, sibling.gpus);
    if (!e_ok || !sibling_ok) {
      const GpuSet fallback = DefaultGpuChoice(spec.gpu_count, g.key.state, pod, topology);
      if (!e_ok) e.gpus = fallback;
      if (!sibling_ok) sibling.gpus = fallback;
    }
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
  if (!pod.IsCpuOnly()) {
    const GpuTopology* topology = cluster_->topology(node);
    if (!Usable(topology, spec.gpu_count, pod, e.gpus)) {
      e.gpus = DefaultGpuChoice(spec.gpu_count, g.key.state, pod, topology);
    }
  }
}

// Doubles the columns' length (or more) so that they have room for group id `gid`.
void Scheduler::WidenColumns(int gid) {
  const size_t stride = std::max<size_t>({64, 2 * stride_, static_cast<size_t>(gid) + 1});
  std::vector<int32_t> wider(shapes_.size() * per_shape_ * stride, kUnknown);
  for (size_t s = 0; s < shapes_.size() * per_shape_; ++s) {
    std::copy_n(scores_.data() + s * stride_, stride_, wider.data() + s * stride);
  }
  scores_.swap(wider);
  if (tagged_) {
    std::vector<int64_t> wider_tags(shapes_.size() * stride, 0);
    for (size_t s = 0; s < shapes_.size(); ++s) {
      std::copy_n(tags_.data() + s * stride_, stride_, wider_tags.data() + s * stride);
    }
    tags_.swap(wider_tags);
  }
  stride_ = stride;
}

// A group id is freed: nothing is known of its next group. (Entries of free ids stay
// kUnknown: the scan skips them by their record.)
void Scheduler::ForgetColumns(int gid) {
  for (size_t s = 0; s < shapes_.size() * per_shape_; ++s) scores_[s * stride_ + gid] = kUnknown;
}

int32_t Scheduler::ScoreOf(int gid, const PodRequest& pod) {
  CacheEntry e;
  Compute(groups_[gid], e, pod);
  return static_cast<int>(e.raw);
}

// The view's spec is the first node of the group's capacity type (the same capacity and
// model as every member; a small array, where the representative's spec is one more cache
// miss per group on large clusters).
int32_t Scheduler::BoundOf(int gid, const PodRequest& pod) {
  Group& g = groups_[gid];
  return policy_->ScoreBound(
      NodeView{cluster_->spec(type_node_[g.key.type]), g.model, g.key.state, context_, &memo_[gid]},
      pod);
}

// Resolves a kUnknown entry of a live group: its rejection (the reason, or false for a free
// id), else its bound (kBound, when it has a column value) or its score. *uncached is set to
// a score that has no column value (it was not stored), else left alone.
template <bool kExact, bool kBound>
bool Scheduler::Resolve(int gid, int32_t* column, const FitQuery& query, const PodRequest& pod,
                        int64_t* uncached) {
  const Record& r = records_[gid];
  if (r.members == 0) return false;  // a free group id: left kUnknown
  const Group& g = groups_[gid];
  FitReason fit = FitReason::kFits;
  if (!query.MayFit(r.fit)) {
    fit = kExact ? query.Reason(r.fit) : CheckOn(g, pod);
  } else if (!kExact || !query.ExactOn(r.fit)) {
    fit = CheckOn(g, pod);
  }
  if (fit != FitReason::kFits) {
    column[gid] = kRejected + static_cast<int32_t>(fit);
    return false;
  }
  if constexpr (kBound) {
    const int32_t b = BoundOf(gid, pod);
    if (Storable(b)) {
      column[gid] = Encode(b, true);
      return true;
    }
  }
  const int32_t s = ScoreOf(gid, pod);
  if (Storable(s)) {
    column[gid] = Encode(s, false);
    return true;
  }
  *uncached = std::max(*uncached, KeyOf(s, min_rank_[gid]));
  return false;
}

// The integer score of `pod` on group `gid` (a live group it fits, whose entry holds a bound
// or a score), stored in its entry if it fits there.
int32_t Scheduler::Exact(int gid, int32_t* column, const PodRequest& pod) {
  const int32_t e = column[gid];
  if ((e & 1) == 0) return e >> 1;
  const int32_t s = ScoreOf(gid, pod);
  TESSERA_CHECK(s <= (e >> 1));  // Policy::ScoreBound's contract
  if (Storable(s)) column[gid] = Encode(s, false);
  return s;
}

template <bool kExact>
[[gnu::always_inline]] inline bool Scheduler::ColumnScore(int gid, int32_t* column,
                                                          const FitQuery& query,
                                                          const PodRequest& pod, int32_t* score) {
  int32_t e = column[gid];
  if (e <= kLastSentinel) [[unlikely]] {
    if (e != kUnknown) return false;  // a rejection
    int64_t uncached = std::numeric_limits<int64_t>::min();
    if (!Resolve<kExact, false>(gid, column, query, pod, &uncached)) {
      if (uncached == std::numeric_limits<int64_t>::min()) return false;
      *score = static_cast<int32_t>(uncached >> 32);
      return true;
    }
  }
  *score = Exact(gid, column, pod);
  return true;
}

// The choice of a kInteger policy without a context: the highest score, then the lowest
// rank. Every entry of the column is a key, KeyOf(its value, the group's lowest rank), where
// the value is a score or (kBound) an upper bound of it; the pass keeps the kTop largest
// keys. Taken largest first, a score wins (no other value exceeds it) and a bound is replaced
// by the score, until a key cannot beat the best score found; if the kTop run out before
// that, a second pass collects every key that can and takes them from a heap the same way.
template <bool kExact, bool kBound>
int Scheduler::BestInColumn(int shape, const FitQuery& query, const PodRequest& pod, int* score) {
  int32_t* column = Column(shape);
  const int32_t* min_rank = min_rank_.data();
  const int n = static_cast<int>(records_.size());
  constexpr int64_t kNone = std::numeric_limits<int64_t>::min();
  int64_t best_key = kNone;  // of the scores found, and of those without a column value
  int best = -1;
  int64_t uncached = kNone;
  constexpr int kTop = 4;
  std::array<std::pair<int64_t, int>, kTop> top;  // (key, gid), by key, descending
  top.fill({kNone, -1});
  int64_t threshold = kNone;  // top[kTop - 1].first
  for (int gid = 0; gid < n; ++gid) {
    const int32_t e = column[gid];
    if (e <= kLastSentinel) [[unlikely]] {
      if (e != kUnknown) continue;  // a rejection
      const int64_t before = uncached;
      if (!Resolve<kExact, kBound>(gid, column, query, pod, &uncached)) {
        if (uncached != before) {
          best_key = uncached;
          best = gid;
        }
        continue;
      }
    }
    const int64_t key = KeyOf(column[gid] >> 1, min_rank[gid]);
    if (key > threshold) [[unlikely]] {
      int i = kTop - 1;
      for (; i > 0 && top[i - 1].first < key; --i) top[i] = top[i - 1];
      top[i] = {key, gid};
      threshold = top[kTop - 1].first;
    }
  }
  // Largest key first: a score is the best (every other key, hence score, is at most it);
  // a bound is scored. Returns false while the choice is not made.
  const auto take = [&](int64_t key, int gid) {
    if (key <= best_key) return true;
    if ((column[gid] & 1) == 0) {
      best_key = key;
      best = gid;
      return true;
    }
    const int64_t exact = KeyOf(Exact(gid, column, pod), min_rank[gid]);
    if (exact > best_key) {
      best_key = exact;
      best = gid;
    }
    return false;
  };
  bool done = false;
  for (const auto& [key, gid] : top) {
    if (gid < 0 || take(key, gid)) {
      done = true;
      break;
    }
  }
  if (!done && threshold > best_key) {  // keys past the kTop may beat it: all of them
    candidates_.clear();
    for (int gid = 0; gid < n; ++gid) {
      const int32_t e = column[gid];
      if (e <= kLastSentinel) continue;
      const int64_t key = KeyOf(e >> 1, min_rank[gid]);
      if (key > best_key) candidates_.emplace_back(key, gid);
    }
    std::make_heap(candidates_.begin(), candidates_.end());
    while (!candidates_.empty()) {
      std::pop_heap(candidates_.begin(), candidates_.end());
      const auto [key, gid] = candidates_.back();
      candidates_.pop_back();
      if (take(key, gid)) break;
    }
  }
  if (best >= 0) *score = static_cast<int32_t>(best_key >> 32);
  return best;
}

FitReason Scheduler::ReasonOn(const FitQuery& query, int gid, const PodRequest& pod) const {
  if (query.ExactOn(records_[gid].fit)) return query.Reason(records_[gid].fit);
  return CheckOn(groups_[gid], pod);
}

FitReason Scheduler::CheckOn(const Group& g, const PodRequest& pod) const {
  const int node = g.representative;
  return CheckFit(cluster_->spec(node).gpu_count, g.model, g.key.state, pod,
                  cluster_->topology(node));
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
        const FitReason reason =
            query.ExactOn(r.fit) ? query.Reason(r.fit) : CheckOn(groups_[gid], pod);
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
    if (fit == 0) fit = Classify(g, shape, pod, false);
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
    const FitSummary& summary = records_[gid].fit;
    if (!query.MayFit(summary)) continue;
    Group& g = groups_[gid];
    FitReason reason = FitReason::kFits;
    const CacheEntry* e = Evaluate<kContext>(g, shape, pod, query.ExactOn(summary), &reason);
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

// BestGroup's tagged column entry of group `gid` holds nothing for `context` (nothing known,
// or a score under another context): the group's line answers, and the entries take the
// answer (with a paired bit, for both of its values where the line has both). True with
// *score set if the pod fits the group; false for a rejection or a free group id.
bool Scheduler::TaggedMiss(int gid, int shape, int64_t context, const FitQuery& query,
                           const PodRequest& pod, int32_t* score) {
  int32_t* column = Column(shape);
  int32_t* column_set = column + (per_shape_ == 2 ? stride_ : 0);  // the paired bit set
  const Record& r = records_[gid];
  if (r.members == 0) return false;  // a free group id
  Group& g = groups_[gid];
  FitReason reason = FitReason::kFits;
  const CacheEntry* e = nullptr;
  if (!query.MayFit(r.fit)) {
    reason = query.exact() ? query.Reason(r.fit) : CheckOn(g, pod);
  } else {
    e = Evaluate<true>(g, shape, pod, query.ExactOn(r.fit), &reason);
  }
  if (e == nullptr) {
    column[gid] = column_set[gid] = kRejected + static_cast<int32_t>(reason);
    return false;
  }
  *score = static_cast<int32_t>(e->raw);
  const bool bit_set = (context & paired_bit_) != 0;
  // The sibling: the score under the other value of the paired bit, if the line has it.
  int32_t sibling = kUnknown;
  if (per_shape_ == 2) {
    const CacheEntry* first = &g.lines[static_cast<size_t>((g.fit[shape] >> 4) - 1) * slots_];
    for (size_t i = 0; i < slots_ && first[i].known; ++i) {
      if (first[i].context == (context ^ paired_bit_)) sibling = static_cast<int32_t>(first[i].raw);
    }
  }
  const auto keep = [](int32_t v) { return v > kLastSentinel ? v : kUnknown; };  // else not kept
  (bit_set ? column_set : column)[gid] = keep(*score);
  if (per_shape_ == 2) (bit_set ? column : column_set)[gid] = keep(sibling);
  tags_[static_cast<size_t>(shape) * stride_ + gid] = context & ~paired_bit_;
  return true;
}

// The best group (highest score, then lowest rank) for a pod of `shape` when every model
// projects the context `context` (tagged_ only), or −1 if none fits. The shape's Kept (one per
// value of the paired bit) holds the best keys of the last full pass and a floor under every
// other group's key; while the context is the same, a decision looks only at them and at the
// groups changed since (change_log_): the others' keys cannot have changed. A full pass when
// nothing is kept, the context differs, too much changed, or every kept group changed.
int Scheduler::UniformBest(int shape, int64_t context, const FitQuery& query, const PodRequest& pod,
                           int* score) {
  const auto found = [score](const std::pair<int64_t, int>& top) {
    *score = static_cast<int>(top.first >> 32);
    return top.second;
  };
  const bool bit_set = (context & paired_bit_) != 0;
  int32_t* column = Column(shape) + (bit_set && per_shape_ == 2 ? stride_ : 0);
  int64_t* tags = tags_.data() + static_cast<size_t>(shape) * stride_;
  const int64_t tag = context & ~paired_bit_;
  // The key of group `gid`, or false if the pod does not fit it (or the id is free).
  const auto key_of = [&](int gid, int64_t* key) {
    int32_t score = column[gid];
    if (score <= kLastSentinel || tags[gid] != tag) [[unlikely]] {
      if (score != kUnknown && score <= kLastSentinel) return false;  // a rejection
      if (!TaggedMiss(gid, shape, context, query, pod, &score)) return false;
    }
    *key = KeyOf(score, min_rank_[gid]);
    return true;
  };
  if (change_log_.size() > kLogLimit) {  // forget the log: every Kept starts over
    change_log_.clear();
    for (Kept& k : kept_) k.valid = false;
  }
  Kept& kept = kept_[static_cast<size_t>(shape) * per_shape_ + (bit_set && per_shape_ == 2)];
  const int n = static_cast<int>(records_.size());
  if (kept.valid && kept.context == context &&
      change_log_.size() - kept.log_pos <= static_cast<size_t>(n)) {
    if (++stamp_now_ == 0) {  // the stamps wrapped: none is current
      std::fill(stamp_.begin(), stamp_.end(), 0);
      stamp_now_ = 1;
    }
    changed_.clear();
    for (size_t i = kept.log_pos; i < change_log_.size(); ++i) {
      const int gid = change_log_[i];
      if (stamp_[gid] != stamp_now_) {
        stamp_[gid] = stamp_now_;
        changed_.push_back(gid);
      }
    }
    // The kept groups that did not change keep their keys; the changed ones are looked at.
    int count = 0;
    std::array<std::pair<int64_t, int>, 2 * kKept> list;
    for (int i = 0; i < kept.count; ++i) {
      if (stamp_[kept.top[i].second] != stamp_now_) list[count++] = kept.top[i];
    }
    for (int gid : changed_) {
      int64_t key;
      if (!key_of(gid, &key) || key < kept.floor) continue;  // under the floor: not kept
      if (count == static_cast<int>(list.size())) {          // full: keep the larger half
        std::sort(list.begin(), list.end(), std::greater<>());
        kept.floor = std::max(kept.floor, list[kKept].first + 1);
        count = kKept;
        if (key < kept.floor) continue;
      }
      list[count++] = {key, gid};
    }
    if (count > 0 || kept.floor == kNoKey) {
      std::sort(list.begin(), list.begin() + count, std::greater<>());
      if (count > kKept) {
        kept.floor = std::max(kept.floor, list[kKept].first + 1);
        count = kKept;
      }
      std::copy_n(list.begin(), count, kept.top.begin());
      kept.count = count;
      kept.log_pos = change_log_.size();
      return count > 0 ? found(kept.top[0]) : -1;
    }
  }
  // A full pass, keeping the kKept largest keys.
  int count = 0;
  for (int gid = 0; gid < n; ++gid) {
    int64_t key;
    if (!key_of(gid, &key)) continue;
    if (count == kKept && key <= kept.top[kKept - 1].first) continue;
    int i = count < kKept ? count++ : kKept - 1;
    for (; i > 0 && kept.top[i - 1].first < key; --i) kept.top[i] = kept.top[i - 1];
    kept.top[i] = {key, gid};
  }
  kept.valid = true;
  kept.context = context;
  kept.log_pos = change_log_.size();
  kept.count = count;
  kept.floor = count == kKept ? kept.top[kKept - 1].first : kNoKey;
  return count > 0 ? found(kept.top[0]) : -1;
}

// The choice of a ScoreMode::kInteger policy with a context (tagged_): the highest score,
// then the lowest rank, in one pass over the shape's tagged column or (UniformBest) fewer.
// Sets `best` (group −1 if none fits) and d.score.
void Scheduler::BestGroup(int shape, const FitQuery& query, const PodRequest& pod, Decision& d,
                          Feasible& best) {
  TESSERA_CHECK(tagged_);
  int best_score = std::numeric_limits<int>::min();
  int best_rank = std::numeric_limits<int>::max();
  // The shape's tagged column, by group id: an entry is the group's score if its tag is the
  // context the group's model projects now (ContextFor), a rejection whatever the tag; else
  // the group's line answers (TaggedMiss) and the entry takes its answer. Free ids stay
  // kUnknown. With a paired context bit, the shape has a column for each of its values, and
  // a tag is the context without it: a change of the bit alone needs no lookup in the lines.
  // Where every model projects the same context, UniformBest decides from fewer groups.
  const int64_t uniform = models_.empty() ? 0 : project_[models_.front() + 1];
  bool is_uniform = true;
  for (int m : models_) is_uniform = is_uniform && project_[m + 1] == uniform;
  if (is_uniform) {
    best.group = UniformBest(shape, uniform, query, pod, &best_score);
  } else {
    const bool bit_set = (uniform & paired_bit_) != 0;  // the same for every model
    const int32_t* column = Column(shape) + (bit_set && per_shape_ == 2 ? stride_ : 0);
    const int64_t* tags = tags_.data() + static_cast<size_t>(shape) * stride_;
    const int n = static_cast<int>(records_.size());
    for (int gid = 0; gid < n; ++gid) {
      int32_t score = column[gid];
      const int64_t context = project_[records_[gid].fit.model + 1];
      if (score <= kLastSentinel || tags[gid] != (context & ~paired_bit_)) [[unlikely]] {
        if (score != kUnknown && score <= kLastSentinel) continue;  // a rejection
        if (!TaggedMiss(gid, shape, context, query, pod, &score)) continue;
      }
      if (score < best_score) continue;
      const int rank = min_rank_[gid];
      if (score > best_score || rank < best_rank) {
        best_score = score;
        best_rank = rank;
        best.group = gid;
      }
    }
  }
  if (best.group < 0) return;
  FitReason reason = FitReason::kFits;  // the winner's GPUs: its line
  const CacheEntry* e = Evaluate<true>(groups_[best.group], shape, pod, true, &reason);
  best.raw = e->raw;
  best.gpus = e->gpus;
  d.score = best_score;
}

void Scheduler::Observe(const PodRequest& pod) {
  if (!uses_context_) return;
  summary_.seen_gpu_milli_by_count[std::clamp(pod.gpu_count, 0, kMaxGpusPerNode)] +=
      static_cast<int64_t>(pod.gpu_milli) * pod.gpu_count;
  ++summary_.seen_pods;
}

Decision Scheduler::Decide(const PodRequest& pod, bool observe) {
  const int shape = ShapeId(pod);
  if (uses_context_) {
    if (observe) Observe(pod);
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
  if (columns_ && !tagged_) {
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
    Feasible best{-1, 0, 0};          // without a context, the columns above decided
    BestGroup(shape, query, pod, d, best);
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
    const int rank = min_rank_[f.group];
    if (PicksBefore(score, rank, best_score, best_rank)) {
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
  // Context-tagged columns (tagged_) are read by BestGroup only; the lines hold the same.
  const bool scores_in_columns = columns_ && !tagged_;
  int32_t* column = scores_in_columns ? Column(shape) : nullptr;
  for (int node : nodes) {
    TESSERA_CHECK(node >= 0 && node < cluster_->size());
    const int gid = group_of_[node];
    if (!query.MayFit(records_[gid].fit)) continue;
    double r = 0;
    if (scores_in_columns) {
      int32_t s;
      if (!(query.exact() ? ColumnScore<true>(gid, column, query, pod, &s)
                          : ColumnScore<false>(gid, column, query, pod, &s))) {
        continue;
      }
      r = s;
    } else {
      Group& g = groups_[gid];
      FitReason reason = FitReason::kFits;
      const bool exact = query.ExactOn(records_[gid].fit);
      const CacheEntry* e = uses_context_ ? Evaluate<true>(g, shape, pod, exact, &reason)
                                          : Evaluate<false>(g, shape, pod, exact, &reason);
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

GpuSet Scheduler::ChooseGpus(int node, const PodRequest& pod) {
  TESSERA_CHECK(node >= 0 && node < cluster_->size());
  if (pod.IsCpuOnly()) return 0;
  const int shape = ShapeId(pod);
  if (uses_context_) {
    UpdateContext();
    ProjectContext(pod);
  }
  const int gid = group_of_[node];
  const FitQuery query(pod);
  if (!query.MayFit(records_[gid].fit)) return 0;
  // The group's line cache holds the GPUs (the columns hold scores only).
  Group& g = groups_[gid];
  FitReason reason = FitReason::kFits;
  const bool exact = query.ExactOn(records_[gid].fit);
  const CacheEntry* e = uses_context_ ? Evaluate<true>(g, shape, pod, exact, &reason)
                                      : Evaluate<false>(g, shape, pod, exact, &reason);
  return e == nullptr ? 0 : e->gpus;
}

Decision Scheduler::Finish(Decision d, const Feasible& best, const PodRequest& pod) {
  const Group& g = groups_[best.group];
  const int rank = min_rank_[best.group];
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
