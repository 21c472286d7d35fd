#include "policy/tessera_memory.h"

#include <algorithm>
#include <cmath>

namespace tessera {
namespace {

// Whether a GPU serves class c in two dimensions: both its free milli and its usable memory
// fit one pod of c.
bool Serves(const TargetClass& c, int32_t free, int32_t mem) {
  return free >= c.gpu_milli && MemoryMeasure::UsableMib(free, mem) >= c.gpu_memory_mib;
}

}  // namespace

MemoryMeasure::MemoryMeasure(const TargetWorkload* workload, const TesseraMeasure* stranding,
                             const TesseraParams& params)
    : workload_(workload), stranding_(stranding), memory_weight_(params.memory_weight) {
  for (const TargetClass& c : workload_->all_classes()) memory_ |= c.gpu_memory_mib > 0;
  for (const TargetClass& c : workload_->classes()) memory_ |= c.gpu_memory_mib > 0;
  // The memory-bound mode (docs/GPU_MEMORY.md), decided once from M and the cluster's mean
  // GPU memory; memory_bound_mode off applies it wherever memory is known.
  const double mean_mib = workload_->gpu_memory_mean_mib();
  if (memory_ && mean_mib > 0 && (!params.memory_bound_mode || MemoryBound(mean_mib))) {
    if (params.memory_hole_fill != 0)
      waste_ = HoleWaste::OfMemory(*workload_, params.hole_min_share);
    if (params.count_weight != 0) {
      BuildCountWeights(mean_mib, params.count_weight, params.count_shares_only);
    }
  }
}

// Whether M asks for a larger share of GPUs of `cap` MiB's memory than of their compute
// (whole-GPU pods take all of both).
bool MemoryMeasure::MemoryBound(double cap) const {
  double m = 0, u = 0;
  for (const TargetClass& c : workload_->gpu_classes()) {
    const bool whole = c.gpu_milli >= kMilliPerGpu;
    m += c.probability * c.gpu_count * (whole ? 1.0 : static_cast<double>(c.gpu_memory_mib) / cap);
    u += c.probability * c.gpu_count * (whole ? 1.0 : c.gpu_milli / 1000.0);
  }
  return m > u;
}

// count_weight_[k] = p_k · (s̄ / s_k)^count_weight, rescaled to the weighed classes' Σ p
// (the sharing classes; every class without count_shares_only), for M's GPU classes: s_k is
// the larger of a pod's milli and memory shares of a GPU of `cap` MiB (1 for a whole GPU)
// times its GPU count, s̄ their p-weighted mean. Unweighed classes keep p_k.
void MemoryMeasure::BuildCountWeights(double cap, double count_weight, bool shares_only) {
  const std::vector<TargetClass>& classes = workload_->gpu_classes();
  const auto weighed = [&](const TargetClass& c) {
    return !shares_only || c.gpu_milli < kMilliPerGpu;
  };
  const auto size_of = [&](const TargetClass& c) {
    const double share = c.gpu_milli >= kMilliPerGpu
                             ? 1.0
                             : std::max(c.gpu_milli / static_cast<double>(kMilliPerGpu),
                                        static_cast<double>(c.gpu_memory_mib) / cap);
    return c.gpu_count * share;
  };
  double mean = 0, psum = 0, wsum = 0;
  for (const TargetClass& c : classes) {
    if (!weighed(c)) continue;
    mean += c.probability * size_of(c);
    psum += c.probability;
  }
  if (psum <= 0) return;
  mean /= psum;
  count_weight_.resize(classes.size());
  for (size_t k = 0; k < classes.size(); ++k) {
    const TargetClass& c = classes[k];
    count_weight_[k] =
        weighed(c) ? c.probability * std::pow(mean / size_of(c), count_weight) : c.probability;
    if (weighed(c)) wsum += count_weight_[k];
  }
  for (size_t k = 0; k < classes.size(); ++k) {
    if (weighed(classes[k])) count_weight_[k] *= psum / wsum;
  }
}

MemoryMeasure::Served MemoryMeasure::Serve(const TargetClass& c, int model_id, int64_t cpu_left,
                                           const int32_t* free, const int32_t* mem, int g) {
  Served s;
  if (c.gpu_milli == 0 || c.gpu_count == 0 || model_id < 0 || ((c.models >> model_id) & 1) == 0 ||
      cpu_left < c.cpu_milli) {
    return s;
  }
  int serving = 0;
  for (int i = 0; i < g; ++i) {
    if (Serves(c, free[i], mem[i])) {
      ++serving;
      s.serving_milli += free[i];
    } else {
      s.other_milli += free[i];
      s.other_mib += UsableMib(free[i], mem[i]);
    }
  }
  s.hosts = serving >= c.gpu_count;
  return s;
}

double MemoryMeasure::Frag(int model_id, int64_t cpu_left, const int32_t* free, const int32_t* mem,
                           int g, int64_t mem_cap) const {
  int64_t r = 0;
  int64_t r_mib = 0;
  for (int i = 0; i < g; ++i) {
    r += free[i];
    r_mib += UsableMib(free[i], mem[i]);
  }
  if (r == 0) return 0;
  const double scale =
      memory_weight_ * kMilliPerGpu / static_cast<double>(std::max<int64_t>(1, mem_cap));
  const double all = static_cast<double>(r) + scale * static_cast<double>(r_mib);
  double frag = workload_->cpu_only_probability() * all;
  const std::vector<TargetClass>& classes = workload_->gpu_classes();
  for (size_t k = 0; k < classes.size(); ++k) {
    const TargetClass& c = classes[k];
    const Served s = Serve(c, model_id, cpu_left, free, mem, g);
    const double w = count_weight_.empty() ? c.probability : count_weight_[k];
    frag +=
        w * (s.hosts ? static_cast<double>(s.other_milli) + scale * static_cast<double>(s.other_mib)
                     : all);
  }
  return frag;
}

double MemoryMeasure::Stranded(int model_id, int64_t cpu_left, const int32_t* free,
                               const int32_t* mem, int g, size_t n_classes) const {
  int64_t r = 0;
  for (int i = 0; i < g; ++i) r += free[i];
  if (r == 0) return 0;
  double total = 0;
  for (size_t k = 0; k < n_classes; ++k) {
    const TargetClass& c = stranding_->classes()[k];
    const Served s = Serve(c, model_id, cpu_left, free, mem, g);
    double usable = 0;
    if (s.hosts) {
      usable = static_cast<double>(s.serving_milli);
      if (c.cpu_milli > 0) {
        usable = std::min(usable, static_cast<double>(cpu_left) / static_cast<double>(c.cpu_milli) *
                                      c.gpu_milli * c.gpu_count);
      }
    }
    total += stranding_->weights()[k] * (static_cast<double>(r) - usable);
  }
  return total;
}

}  // namespace tessera
