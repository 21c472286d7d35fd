#include "sched/scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sched/cycle.h"
#include "sched/gpu_choice.h"
#include "util/check.h"

namespace tessera {
namespace {

// The integer score that decides: raw as is, or min–max normalised over [lo, hi] to 0..100.
int FinalScore(ScoreMode mode, double raw, double lo, double hi) {
  if (mode == ScoreMode::kMinMax) {
    return hi > lo ? static_cast<int>(std::floor(100.0 * (raw - lo) / (hi - lo))) : 0;
  }
  return mode == ScoreMode::kInteger ? static_cast<int>(raw) : 0;
}

}  // namespace

Scheduler::Scheduler(Cluster* cluster, const Policy* policy, const std::vector<int>& node_order,
                     uint64_t seed)
    : cluster_(cluster),
      policy_(policy),
      rng_(seed),
      uses_context_(policy->UsesContext()),
      in_columns_(policy->mode() == ScoreMode::kInteger && !uses_context_),
      tagged_(policy->mode() == ScoreMode::kInteger && uses_context_),
      groups_(*cluster, node_order),
      shapes_(policy->ReadsPodMemory()),
      counts_(*cluster, uses_context_),
      context_(*policy, *cluster),
      cache_(*cluster, *policy, groups_, shapes_, context_),
      plain_(groups_, cache_, policy->HasScoreBound()),
      tagged_choice_(groups_, cache_, context_, uses_context_ ? policy->PairedContextBit() : 0) {
  for (int i = 0; i < cluster_->size(); ++i) Insert(i);
  counts_.MarkStart();
  if (uses_context_) context_.Start(counts_.summary());
}

void Scheduler::UpdateContext(const PodRequest& pod) {
  counts_.RefreshFree();
  context_.Update(counts_.summary());
  context_.Project(pod);
}

void Scheduler::Insert(int node) {
  bool created;
  const int gid = groups_.Insert(node, &created);
  if (created) {
    cache_.Reset(gid);
    if (in_columns_) plain_.columns().Widen(gid);
    if (tagged_) tagged_choice_.columns().Widen(gid);
  }
  if (tagged_) tagged_choice_.NoteChange(gid);
  counts_.Add(node, +1);
  if (!failed_.empty()) TrackFailed(gid, +1);
}

void Scheduler::Remove(int node) {
  const int gid = groups_.group_of(node);
  if (tagged_) tagged_choice_.NoteChange(gid);
  if (!failed_.empty()) TrackFailed(gid, -1);
  counts_.Add(node, -1);
  if (groups_.Remove(node)) {
    if (in_columns_) plain_.columns().Forget(gid);
    if (tagged_) tagged_choice_.columns().Forget(gid);
  }
}

int Scheduler::ShapeId(const PodRequest& pod) {
  const size_t known = shapes_.size();
  const int id = shapes_.Id(pod);
  if (shapes_.size() > known) {
    if (in_columns_) plain_.columns().AddShape();
    if (tagged_) tagged_choice_.AddShape();
  }
  return id;
}

void Scheduler::TrackFailed(int gid, int sign) {
  for (size_t i = 0; i < failed_.size();) {
    Failed& f = failed_[i];
    const FitReason reason = groups_.Reason(f.query, gid, shapes_.shape(f.shape));
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

// Reasons are cached like scores: in the columns, or in the score cache.
void Scheduler::CountRejections(int shape, const FitQuery& query, const PodRequest& pod,
                                Decision& d) {
  if (in_columns_ || tagged_) {
    ScoreColumns& columns = in_columns_ ? plain_.columns() : tagged_choice_.columns();
    columns.CountRejections(shape, groups_, query, pod, d.rejected);
  } else {
    for (int gid : groups_.live()) {
      const FitReason reason = cache_.Fit(gid, shape, pod);
      TESSERA_CHECK(reason != FitReason::kFits);
      d.rejected[static_cast<int>(reason)] += groups_.record(gid).members;
    }
  }
  if (failed_.size() < kMaxFailed) failed_.push_back(Failed{shape, query, d.rejected});
}

const ScoreCache::Entry* Scheduler::Lookup(int gid, int shape, const FitQuery& query,
                                           const PodRequest& pod) {
  FitReason reason = FitReason::kFits;
  const bool exact = query.ExactOn(groups_.record(gid).fit);
  return uses_context_ ? cache_.Evaluate<true>(gid, shape, pod, exact, &reason)
                       : cache_.Evaluate<false>(gid, shape, pod, exact, &reason);
}

// Looks up (or computes) the score of `pod` on every live group its record does not rule
// out, and collects the groups where it fits in scratch_.
template <bool kContext>
void Scheduler::ScoreGroups(int shape, const FitQuery& query, const PodRequest& pod,
                            int64_t& feasible_nodes, double& lo, double& hi) {
  for (int gid : groups_.live()) {
    const NodeGroups::Record& record = groups_.record(gid);
    if (!query.MayFit(record.fit)) continue;
    FitReason reason = FitReason::kFits;
    const ScoreCache::Entry* e =
        cache_.Evaluate<kContext>(gid, shape, pod, query.ExactOn(record.fit), &reason);
    if (e == nullptr) continue;
    scratch_.push_back(Feasible{gid, e->raw, e->gpus});
    feasible_nodes += record.members;
    lo = std::min(lo, e->raw);
    hi = std::max(hi, e->raw);
  }
}

void Scheduler::Observe(const PodRequest& pod) {
  if (!uses_context_) return;
  counts_.Observe(pod);
}

Decision Scheduler::Decide(const PodRequest& pod, bool observe) {
  const int shape = ShapeId(pod);
  if (uses_context_) {
    if (observe) Observe(pod);
    UpdateContext(pod);
  }
  Decision d;
  const FitQuery query(pod);
  for (const Failed& f : failed_) {
    if (f.shape == shape) {  // fits no node still
      d.rejected = f.rejected;
      return d;
    }
  }
  if (in_columns_ || tagged_) {
    const int gid = in_columns_ ? plain_.Best(shape, query, pod, &d.score)
                                : tagged_choice_.Best(shape, query, pod, &d.score);
    if (gid < 0) {
      CountRejections(shape, query, pod, d);
      return d;
    }
    if (in_columns_) {  // the winner's GPUs: its score again, with them (Score is pure)
      return Finish(d, gid, cache_.Score(gid, pod).gpus, pod);
    }
    FitReason reason = FitReason::kFits;  // the winner's GPUs: its line
    return Finish(d, gid, cache_.Evaluate<true>(gid, shape, pod, true, &reason)->gpus, pod);
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
  const ScoreMode mode = policy_->mode();
  if (mode == ScoreMode::kUniformRandom) return Draw(d, feasible_nodes, pod);
  const Feasible* best = nullptr;
  int best_score = std::numeric_limits<int>::min();
  int best_rank = std::numeric_limits<int>::max();
  for (const Feasible& f : scratch_) {
    const int score = FinalScore(mode, f.raw, lo, hi);
    const int rank = groups_.min_rank(f.group);
    if (PicksBefore(score, rank, best_score, best_rank)) {
      best_score = score;
      best_rank = rank;
      best = &f;
    }
  }
  d.score = best_score;
  return Finish(d, best->group, best->gpus, pod);
}

Decision Scheduler::Draw(Decision d, int64_t feasible_nodes, const PodRequest& pod) {
  int64_t k = static_cast<int64_t>(rng_.Below(static_cast<uint64_t>(feasible_nodes)));
  for (const Feasible& f : scratch_) {
    const NodeGroups::Group& g = groups_.group(f.group);
    const auto size = static_cast<int64_t>(g.members.size());
    if (k < size) {
      d.node = g.members[k];
      d.gpus = f.gpus;
      if (pod.IsSharing()) {  // a GPU drawn uniformly among those with room
        d.gpus = DrawSharedGpu(cluster_->spec(d.node).gpu_count, g.key.state, pod, rng_);
      }
      return d;
    }
    k -= size;
  }
  TESSERA_CHECK(false);
  return d;
}

std::vector<std::pair<int, int>> Scheduler::ScoreNodes(const PodRequest& pod,
                                                       const std::vector<int>& nodes) {
  const int shape = ShapeId(pod);
  if (uses_context_) UpdateContext(pod);
  const FitQuery query(pod);
  std::vector<std::pair<int, double>> raw;
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  // Context-tagged columns are read by TaggedChoice only; the score cache holds the same.
  for (int node : nodes) {
    TESSERA_CHECK(node >= 0 && node < cluster_->size());
    const int gid = groups_.group_of(node);
    if (!query.MayFit(groups_.record(gid).fit)) continue;
    double r = 0;
    if (in_columns_) {
      int32_t s;
      if (!plain_.Score(gid, shape, query, pod, &s)) continue;
      r = s;
    } else {
      const ScoreCache::Entry* e = Lookup(gid, shape, query, pod);
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
  if (uses_context_) UpdateContext(pod);
  const int gid = groups_.group_of(node);
  const FitQuery query(pod);
  if (!query.MayFit(groups_.record(gid).fit)) return 0;
  // The score cache holds the GPUs (the columns hold scores only).
  const ScoreCache::Entry* e = Lookup(gid, shape, query, pod);
  return e == nullptr ? 0 : e->gpus;
}

Decision Scheduler::Finish(Decision d, int group, GpuSet gpus, const PodRequest& pod) const {
  d.node = groups_.FirstMember(group);
  d.gpus = pod.IsCpuOnly() ? 0 : gpus;
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
