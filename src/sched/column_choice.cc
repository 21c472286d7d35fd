#include "sched/column_choice.h"

#include <algorithm>
#include <array>
#include <limits>

#include "util/check.h"

namespace tessera {

// Resolves a kUnknown entry of a live group: its rejection (the reason, or false for a free
// id), else its bound (kBound, when it has a column value) or its score. *uncached is set to
// a score that has no column value (it was not stored), else left alone.
template <bool kExact, bool kBound>
bool ColumnChoice::Resolve(int gid, int32_t* column, const FitQuery& query, const PodRequest& pod,
                           int64_t* uncached) {
  const NodeGroups::Record& r = groups_.record(gid);
  if (r.members == 0) return false;  // a free group id: left kUnknown
  FitReason fit = FitReason::kFits;
  if (!query.MayFit(r.fit)) {
    fit = kExact ? query.Reason(r.fit) : groups_.Check(gid, pod);
  } else if (!kExact || !query.ExactOn(r.fit)) {
    fit = groups_.Check(gid, pod);
  }
  if (fit != FitReason::kFits) {
    column[gid] = kRejected + static_cast<int32_t>(fit);
    return false;
  }
  if constexpr (kBound) {
    const int32_t b = cache_.Bound(gid, pod);
    if (ScoreColumns::Storable(b)) {
      column[gid] = ScoreColumns::Encode(b, true);
      return true;
    }
  }
  const auto s = static_cast<int32_t>(cache_.Score(gid, pod).raw);
  if (ScoreColumns::Storable(s)) {
    column[gid] = ScoreColumns::Encode(s, false);
    return true;
  }
  *uncached = std::max(*uncached, ScoreColumns::KeyOf(s, groups_.min_rank(gid)));
  return false;
}

// The integer score of `pod` on group `gid` (a live group it fits, whose entry holds a bound
// or a score), stored in its entry if it fits there.
int32_t ColumnChoice::Exact(int gid, int32_t* column, const PodRequest& pod) {
  const int32_t e = column[gid];
  if ((e & 1) == 0) return e >> 1;
  const auto s = static_cast<int32_t>(cache_.Score(gid, pod).raw);
  TESSERA_CHECK(s <= (e >> 1));  // Policy::ScoreBound's contract
  if (ScoreColumns::Storable(s)) column[gid] = ScoreColumns::Encode(s, false);
  return s;
}

template <bool kExact>
[[gnu::always_inline]] inline bool ColumnChoice::ColumnScore(int gid, int32_t* column,
                                                             const FitQuery& query,
                                                             const PodRequest& pod,
                                                             int32_t* score) {
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

bool ColumnChoice::Score(int gid, int shape, const FitQuery& query, const PodRequest& pod,
                         int32_t* score) {
  int32_t* column = columns_.column(shape);
  return query.exact() ? ColumnScore<true>(gid, column, query, pod, score)
                       : ColumnScore<false>(gid, column, query, pod, score);
}

int ColumnChoice::Best(int shape, const FitQuery& query, const PodRequest& pod, int* score) {
  if (bounds_) {
    return query.exact() ? BestInColumn<true, true>(shape, query, pod, score)
                         : BestInColumn<false, true>(shape, query, pod, score);
  }
  return query.exact() ? BestInColumn<true, false>(shape, query, pod, score)
                       : BestInColumn<false, false>(shape, query, pod, score);
}

// The highest score, then the lowest rank. Every entry of the column is a key, KeyOf(its
// value, the group's lowest rank), where the value is a score or (kBound) an upper bound of
// it; the pass keeps the kTop largest keys. Taken largest first, a score wins (no other value
// exceeds it) and a bound is replaced by the score, until a key cannot beat the best score
// found; if the kTop run out before that, a second pass collects every key that can and
// takes them from a heap the same way.
template <bool kExact, bool kBound>
int ColumnChoice::BestInColumn(int shape, const FitQuery& query, const PodRequest& pod,
                               int* score) {
  int32_t* column = columns_.column(shape);
  const int32_t* min_rank = groups_.min_ranks();
  const int n = groups_.ids();
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
    const int64_t key = ScoreColumns::KeyOf(column[gid] >> 1, min_rank[gid]);
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
    const int64_t exact = ScoreColumns::KeyOf(Exact(gid, column, pod), min_rank[gid]);
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
      const int64_t key = ScoreColumns::KeyOf(e >> 1, min_rank[gid]);
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

}  // namespace tessera
