#include "sched/tagged_choice.h"

#include <algorithm>
#include <functional>

namespace tessera {

// The tagged column entry of group `gid` holds nothing for `context` (nothing known, or a
// score under another context): the score cache answers, and the entries take the answer
// (with a paired bit, for both of its values where the cache has both). True with *score set
// if the pod fits the group; false for a rejection or a free group id.
bool TaggedChoice::TaggedMiss(int gid, int shape, int64_t context, const FitQuery& query,
                              const PodRequest& pod, int32_t* score) {
  const size_t per_shape = columns_.per_shape();
  int32_t* column = columns_.column(shape);
  int32_t* column_set = column + (per_shape == 2 ? columns_.stride() : 0);  // the bit set
  const NodeGroups::Record& r = groups_.record(gid);
  if (r.members == 0) return false;  // a free group id
  FitReason reason = FitReason::kFits;
  const ScoreCache::Entry* e = nullptr;
  const ScoreCache::Entry* line = nullptr;
  if (!query.MayFit(r.fit)) {
    reason = query.exact() ? query.Reason(r.fit) : groups_.Check(gid, pod);
  } else {
    e = cache_.EvaluateUnder(context, gid, shape, pod, query.ExactOn(r.fit), &reason, &line);
  }
  if (e == nullptr) {
    column[gid] = column_set[gid] = kRejected + static_cast<int32_t>(reason);
    return false;
  }
  *score = static_cast<int32_t>(e->raw);
  const bool bit_set = (context & paired_bit_) != 0;
  // The sibling: the score under the other value of the paired bit, if the line has it.
  int32_t sibling = kUnknown;
  if (per_shape == 2) {
    for (size_t i = 0; i < ScoreCache::kContextSlots && line[i].known; ++i) {
      if (line[i].context == (context ^ paired_bit_)) sibling = static_cast<int32_t>(line[i].raw);
    }
  }
  const auto keep = [](int32_t v) { return v > kLastSentinel ? v : kUnknown; };  // else not kept
  (bit_set ? column_set : column)[gid] = keep(*score);
  if (per_shape == 2) (bit_set ? column : column_set)[gid] = keep(sibling);
  columns_.tags(shape)[gid] = context & ~paired_bit_;
  return true;
}

// The best group (highest score, then lowest rank) for a pod of `shape` when every model
// projects the context `context`, or −1 if none fits. The shape's Kept (one per value of the
// paired bit) holds the best keys of the last full pass and a floor under every other group's
// key; while the context is the same, a decision looks only at them and at the groups changed
// since (change_log_): the others' keys cannot have changed. A full pass when nothing is kept,
// the context differs, too much changed, or every kept group changed.
int TaggedChoice::UniformBest(int shape, int64_t context, const FitQuery& query,
                              const PodRequest& pod, int* score) {
  const auto found = [score](const std::pair<int64_t, int>& top) {
    *score = static_cast<int>(top.first >> 32);
    return top.second;
  };
  const size_t per_shape = columns_.per_shape();
  const bool bit_set = (context & paired_bit_) != 0;
  int32_t* column = columns_.column(shape) + (bit_set && per_shape == 2 ? columns_.stride() : 0);
  int64_t* tags = columns_.tags(shape);
  const int32_t* min_rank = groups_.min_ranks();
  const int64_t tag = context & ~paired_bit_;
  // The key of group `gid`, or false if the pod does not fit it (or the id is free).
  const auto key_of = [&](int gid, int64_t* key) {
    int32_t score = column[gid];
    if (score <= kLastSentinel || tags[gid] != tag) [[unlikely]] {
      if (score != kUnknown && score <= kLastSentinel) return false;  // a rejection
      if (!TaggedMiss(gid, shape, context, query, pod, &score)) return false;
    }
    *key = ScoreColumns::KeyOf(score, min_rank[gid]);
    return true;
  };
  if (change_log_.size() > kLogLimit) {  // forget the log: every Kept starts over
    change_log_.clear();
    for (Kept& k : kept_) k.valid = false;
  }
  Kept& kept = kept_[static_cast<size_t>(shape) * per_shape + (bit_set && per_shape == 2)];
  const int n = groups_.ids();
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

// An entry of the shape's tagged column, by group id, is the group's score if its tag is the
// context the group's model projects now (ContextFor), a rejection whatever the tag; else the
// score cache answers (TaggedMiss) and the entry takes its answer. Free ids stay kUnknown.
// Where every model projects the same context, UniformBest decides from fewer groups.
int TaggedChoice::Best(int shape, const FitQuery& query, const PodRequest& pod, int* score) {
  int64_t uniform;
  if (context_.Uniform(&uniform)) return UniformBest(shape, uniform, query, pod, score);
  int best = -1;
  int best_score = std::numeric_limits<int>::min();
  int best_rank = std::numeric_limits<int>::max();
  const bool bit_set = (uniform & paired_bit_) != 0;  // the same for every model
  const int32_t* column =
      columns_.column(shape) + (bit_set && columns_.per_shape() == 2 ? columns_.stride() : 0);
  const int64_t* tags = columns_.tags(shape);
  const int32_t* min_rank = groups_.min_ranks();
  const NodeGroups::Record* records = groups_.records();
  const int64_t* by_model = context_.by_model();
  const int n = groups_.ids();
  for (int gid = 0; gid < n; ++gid) {
    int32_t s = column[gid];
    const int64_t context = by_model[records[gid].fit.model];
    if (s <= kLastSentinel || tags[gid] != (context & ~paired_bit_)) [[unlikely]] {
      if (s != kUnknown && s <= kLastSentinel) continue;  // a rejection
      if (!TaggedMiss(gid, shape, context, query, pod, &s)) continue;
    }
    if (s < best_score) continue;
    const int rank = min_rank[gid];
    if (s > best_score || rank < best_rank) {
      best_score = s;
      best_rank = rank;
      best = gid;
    }
  }
  if (best >= 0) *score = best_score;
  return best;
}

}  // namespace tessera
