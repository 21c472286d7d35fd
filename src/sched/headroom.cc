#include "sched/headroom.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

#include "model/cluster.h"
#include "model/fit.h"
#include "model/resources.h"
#include "util/percentile.h"

namespace tessera {
namespace {

// The model ids >= n.
ModelMask IdsFrom(size_t n) { return n >= static_cast<size_t>(kMaxGpuModels) ? 0 : kAnyModel << n; }

}  // namespace

Headroom::Headroom(const HeadroomOptions& options, const Clock* clock)
    : options_(options), clock_(clock) {
  target_ = active() ? options_.gpus : 0;
}

void Headroom::SetCluster(const Cluster& cluster) {
  capacity_gpus_ = cluster.total_gpus();
  const std::vector<std::string>& models = cluster.models();
  std::vector<int64_t> gpus(models.size(), 0);  // by model id
  for (int n = 0; n < cluster.size(); ++n) {
    const int m = cluster.model_id(n);
    if (m >= 0) gpus[static_cast<size_t>(m)] += cluster.spec(n).gpu_count;
  }
  // The times protected demand last could use each model, and the set that counts, carried
  // over by name (a model new to the cluster counts until the next bucket boundary says
  // otherwise, as models the cluster lacked did).
  std::vector<double> last(models.size(), -1e300);
  ModelMask counted = protected_models_ == kAnyModel ? kAnyModel : IdsFrom(models.size());
  for (size_t i = 0; i < models.size(); ++i) {
    const auto it = std::find(model_names_.begin(), model_names_.end(), models[i]);
    const auto old = static_cast<size_t>(it - model_names_.begin());
    if (it == model_names_.end()) {
      if (i < static_cast<size_t>(kMaxGpuModels)) counted |= ModelMask{1} << i;
      continue;
    }
    if (old < model_last_.size()) last[i] = model_last_[old];
    if (i < static_cast<size_t>(kMaxGpuModels) && old < static_cast<size_t>(kMaxGpuModels) &&
        (protected_models_ >> old & 1) != 0) {
      counted |= ModelMask{1} << i;
    }
  }
  model_names_ = models;
  model_last_ = std::move(last);
  protected_models_ = counted;
  model_targets_.assign(models.size(), 0);
  some_model_target_ = false;
  if (!active()) return;
  for (const auto& [name, floor] : options_.model_gpus) {
    const auto it = std::find(models.begin(), models.end(), name);
    if (it == models.end()) continue;  // kept, matches no node of this cluster
    const auto id = static_cast<size_t>(it - models.begin());
    model_targets_[id] = std::clamp<int64_t>(floor, 0, gpus[id]);
    some_model_target_ = some_model_target_ || model_targets_[id] > 0;
  }
}

bool Headroom::UpdateModels(double t) {
  const ModelMask old = protected_models_;
  ModelMask m = kAnyModel;
  if (active() && protected_last_ > t - options_.window_s) {
    m = 0;
    for (size_t i = 0; i < model_last_.size() && i < static_cast<size_t>(kMaxGpuModels); ++i) {
      if (model_last_[i] > t - options_.window_s) m |= ModelMask{1} << i;
    }
    // Models the cluster does not have yet stay protected: a node of a new model counts until
    // the next update says otherwise.
    m |= IdsFrom(model_last_.size());
  }
  protected_models_ = m;
  return old != m;
}

bool Headroom::Holds(int priority, bool preemptible) const {
  if (!active() || priority >= options_.min_priority) return false;
  return preemptible || options_.hold_non_preemptible;
}

bool Headroom::Set(int64_t gpus) {
  const int64_t old = target_;
  target_ = std::min(gpus, capacity_gpus_);
  return target_ < old;
}

// kBacklog: ceil(factor · the highest backlog of the last window), at least the floor.
int64_t Headroom::BacklogTarget(double t) {
  const HeadroomOptions& h = options_;
  while (!peaks_.empty() && peaks_.front().first < t - h.window_s) peaks_.pop_front();
  const double peak = peaks_.empty() ? 0.0 : peaks_.front().second;
  return std::max<int64_t>(h.gpus,
                           static_cast<int64_t>(std::ceil(h.factor * peak / kMilliPerGpu - 1e-9)));
}

bool Headroom::Update(bool* shrank) {
  *shrank = false;
  const HeadroomOptions& h = options_;
  if (!active()) return false;
  const int64_t bucket = static_cast<int64_t>(std::floor(now() / h.bucket_s));
  if (bucket == bucket_) return false;
  bucket_ = bucket;
  // Peaks and protected models age out as of the bucket's boundary, so that H is the same
  // whether the clock is read at the boundary (the replay's ticks) or later (serve reads it per
  // request). A change of the models that count may let held pods go where they could not (a
  // model that stops counting frees its nodes; one that starts counting adds its idle GPUs),
  // as a shrink does.
  const double boundary = static_cast<double>(bucket) * h.bucket_s;
  const bool models_changed = UpdateModels(boundary);
  const bool restricted = protected_models_ != kAnyModel;
  if (h.mode == HeadroomOptions::Mode::kStatic) {
    *shrank = models_changed;
    next_tick_ = restricted ? (bucket + 1) * h.bucket_s : -1;
    return true;
  }
  if (h.mode == HeadroomOptions::Mode::kBacklog) {
    *shrank = Set(BacklogTarget(boundary)) || models_changed;
    next_tick_ = peaks_.empty() && !restricted ? -1 : (bucket + 1) * h.bucket_s;
    return true;
  }
  const int64_t width = std::max<int64_t>(1, static_cast<int64_t>(h.window_s / h.bucket_s));
  while (!demand_.empty() && demand_.front().first < bucket - width) demand_.pop_front();
  std::vector<double> per_bucket(static_cast<size_t>(width), 0.0);
  for (const auto& [b, milli] : demand_) {
    if (b >= bucket - width && b < bucket) per_bucket[b - (bucket - width)] += milli;
  }
  std::sort(per_bucket.begin(), per_bucket.end());
  const double q = Percentile(per_bucket, h.quantile * 100.0);
  *shrank = Set(std::max<int64_t>(h.gpus,
                                  static_cast<int64_t>(std::ceil(h.factor * q / kMilliPerGpu)))) ||
            models_changed;
  next_tick_ = demand_.empty() && !restricted ? -1 : (bucket + 1) * h.bucket_s;
  return true;
}

void Headroom::NoteRelease(int gpus, int priority) {
  if (options_.mode != HeadroomOptions::Mode::kBacklog || gpus <= 0) return;
  if (priority >= options_.min_priority) {
    held_milli_ = std::max(0.0, held_milli_ - static_cast<double>(gpus) * kMilliPerGpu);
  }
  releases_.emplace_back(now(), static_cast<double>(gpus) * kMilliPerGpu);
  released_milli_ += releases_.back().second;
}

bool Headroom::NoteDemand(int priority, int64_t gpu_milli, ModelMask models) {
  const HeadroomOptions& h = options_;
  if (!active() || priority < h.min_priority) return false;
  const double t = now();
  // Its models count toward H from now on. They join the set here and leave it only at a
  // bucket boundary (Update), so that the set never shrinks between two ticks.
  protected_last_ = t;
  for (size_t i = 0; i < model_last_.size() && i < static_cast<size_t>(kMaxGpuModels); ++i) {
    if ((models >> i & 1) != 0) model_last_[i] = t;
  }
  const bool models_changed = (protected_models_ | models) != protected_models_;
  protected_models_ |= models;
  if (h.mode == HeadroomOptions::Mode::kBacklog) {
    while (!releases_.empty() && releases_.front().first <= t - h.window_s) {
      released_milli_ -= releases_.front().second;
      releases_.pop_front();
    }
    const double rate = std::max(0.0, released_milli_) / h.window_s;  // milli-GPU per second
    while (!arrivals_.empty() && arrivals_.front().first <= t - h.window_s) {
      arrived_milli_ -= arrivals_.front().second;
      arrivals_.pop_front();
    }
    if (gpu_milli > 0) {
      arrivals_.emplace_back(t, static_cast<double>(gpu_milli));
      arrived_milli_ += static_cast<double>(gpu_milli);
      held_milli_ += static_cast<double>(gpu_milli);
    }
    backlog_ = std::max(0.0, backlog_ - rate * (t - backlog_t_)) + static_cast<double>(gpu_milli);
    backlog_ = std::min(backlog_, std::max(0.0, arrived_milli_));
    backlog_ = std::min(backlog_, held_milli_);
    if (capacity_gpus_ != INT64_MAX) {
      backlog_ = std::min(backlog_, static_cast<double>(capacity_gpus_) * kMilliPerGpu);
    }
    backlog_t_ = t;
    while (!peaks_.empty() && peaks_.back().second <= backlog_) peaks_.pop_back();
    peaks_.emplace_back(t, backlog_);
    return Set(BacklogTarget(t)) || models_changed;
  }
  if (h.mode != HeadroomOptions::Mode::kForecast) return models_changed;
  const int64_t bucket = static_cast<int64_t>(std::floor(t / h.bucket_s));
  if (demand_.empty() || demand_.back().first != bucket) demand_.emplace_back(bucket, 0.0);
  demand_.back().second += static_cast<double>(gpu_milli);
  return models_changed;
}

int64_t Headroom::at_risk_target() const {
  return static_cast<int64_t>(std::ceil(options_.yield_keep * static_cast<double>(target_) - 1e-9));
}

int64_t CountIdleGpus(const Cluster& cluster, std::vector<int64_t>* by_model) {
  if (by_model != nullptr) by_model->assign(cluster.models().size(), 0);
  int64_t idle = 0;
  for (int n = 0; n < cluster.size(); ++n) {
    const int k = IdleGpus(cluster.state(n), cluster.spec(n).gpu_count);
    idle += k;
    if (by_model != nullptr && cluster.model_id(n) >= 0) {
      (*by_model)[static_cast<size_t>(cluster.model_id(n))] += k;
    }
  }
  return idle;
}

HeadroomIdle HeadroomIdleOf(const Headroom& headroom, const Cluster& cluster, int node,
                            int64_t idle, const std::vector<int64_t>& by_model) {
  const int m = cluster.model_id(node);
  const bool known = m >= 0 && static_cast<size_t>(m) < by_model.size();
  HeadroomIdle h{idle, m, known ? by_model[static_cast<size_t>(m)] : 0};
  h.counts = headroom.Protects(m);
  if (!headroom.ProtectsEveryModel()) {
    h.cluster = 0;
    for (size_t i = 0; i < by_model.size(); ++i) {
      if (headroom.Protects(static_cast<int>(i))) h.cluster += by_model[i];
    }
  }
  return h;
}

bool HeldMayUse(const Headroom& headroom, const HeadroomIdle& idle, const NodeState& state,
                int gpu_count, const PodRequest& request, Headroom::Shortfall* why) {
  // A whole-GPU pod takes its count; a share none where a used GPU has room, else one.
  Headroom::Shortfall s = Headroom::Shortfall::kNone;
  if (request.gpu_count > 0 && !request.IsSharing()) {
    s = headroom.Short(idle, request.gpu_count);
  } else if (request.gpu_count > 0 && TightestUsedGpuWithRoom(state, gpu_count, request) < 0) {
    s = headroom.Short(idle, 1);
  }
  if (why != nullptr) *why = s;
  return s == Headroom::Shortfall::kNone;
}

bool PlaceHeld(const Headroom& headroom, const HeadroomIdle& idle, const NodeState& state,
               int gpu_count, const PodRequest& request, GpuSet* gpus, Headroom::Shortfall* why) {
  if (why != nullptr) *why = Headroom::Shortfall::kNone;
  const Headroom::Shortfall s = headroom.Short(idle, IdleGpusTaken(state, *gpus));
  if (s == Headroom::Shortfall::kNone) return true;
  const int used = request.IsSharing() ? TightestUsedGpuWithRoom(state, gpu_count, request) : -1;
  if (used < 0) {
    if (why != nullptr) *why = s;
    return false;
  }
  *gpus = GpuSet{1} << used;
  return true;
}

}  // namespace tessera
