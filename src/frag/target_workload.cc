#include "frag/target_workload.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace tessera {

TargetWorkload TargetWorkload::FromPods(const std::vector<PodSpec>& pods, double coverage) {
  using Key = std::tuple<int64_t, int32_t, int32_t, std::string, int64_t>;
  std::map<Key, int64_t> counts;
  for (const PodSpec& p : pods) {
    const bool cpu_only = p.gpu_count == 0 || p.gpu_milli == 0;
    counts[Key{p.cpu_milli, cpu_only ? 0 : p.gpu_milli, cpu_only ? 0 : p.gpu_count,
               cpu_only ? std::string() : p.gpu_spec, cpu_only ? 0 : p.gpu_memory_mib}]++;
  }
  std::vector<TargetClass> all;
  all.reserve(counts.size());
  for (const auto& [key, count] : counts) {
    TargetClass c;
    std::tie(c.cpu_milli, c.gpu_milli, c.gpu_count, c.gpu_spec, c.gpu_memory_mib) = key;
    c.count = count;
    all.push_back(std::move(c));
  }
  std::sort(all.begin(), all.end(), [](const TargetClass& a, const TargetClass& b) {
    return std::tie(a.count, a.cpu_milli, a.gpu_milli, a.gpu_count, a.gpu_spec, a.gpu_memory_mib) >
           std::tie(b.count, b.cpu_milli, b.gpu_milli, b.gpu_count, b.gpu_spec, b.gpu_memory_mib);
  });
  const double total = static_cast<double>(pods.size());
  double covered = 0;
  size_t taken = 0;
  while (taken < all.size() && covered < coverage * total) {
    covered += static_cast<double>(all[taken].count);
    ++taken;
  }
  for (TargetClass& c : all) c.probability = static_cast<double>(c.count) / covered;
  std::vector<TargetClass> top(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(taken));
  TargetWorkload w = FromClasses(std::move(top));
  w.all_classes_ = std::move(all);
  return w;
}

TargetWorkload TargetWorkload::FromClasses(std::vector<TargetClass> classes) {
  TargetWorkload w;
  w.classes_ = std::move(classes);
  for (const TargetClass& c : w.classes_) {
    if (c.gpu_milli == 0 || c.gpu_count == 0) {
      w.cpu_only_probability_ += c.probability;
    } else {
      w.gpu_classes_.push_back(c);
      if (c.gpu_memory_mib != 0) w.any_gpu_memory_ = true;
    }
  }
  return w;
}

int64_t TargetWorkload::GpusOfModels(ModelMask models) const {
  int64_t total = 0;
  for (size_t m = 0; m < gpus_by_model_.size(); ++m) {
    if ((models >> m) & 1) total += gpus_by_model_[m];
  }
  return total;
}

void TargetWorkload::Resolve(const Cluster& cluster) {
  gpus_by_model_.assign(cluster.models().size(), 0);
  double mib = 0, gpus = 0;
  for (int n = 0; n < cluster.size(); ++n) {
    const NodeSpec& spec = cluster.spec(n);
    if (cluster.model_id(n) >= 0) gpus_by_model_[cluster.model_id(n)] += spec.gpu_count;
    if (spec.gpu_memory_mib > 0) {
      mib += static_cast<double>(spec.gpu_memory_mib) * spec.gpu_count;
      gpus += spec.gpu_count;
    }
  }
  gpu_memory_mean_mib_ = gpus > 0 ? mib / gpus : 0;
  for (TargetClass& c : classes_) c.models = cluster.ResolveModels(c.gpu_spec);
  for (TargetClass& c : all_classes_) c.models = cluster.ResolveModels(c.gpu_spec);
  for (TargetClass& c : gpu_classes_) c.models = cluster.ResolveModels(c.gpu_spec);
}

template <bool kMemory, bool kTopology>
double TargetWorkload::Fragmentation(int model_id, int64_t cpu_left, const int32_t* gpu_free,
                                     int gpu_count, const int32_t* gpu_mem_free,
                                     const GpuTopology* topology) const {
  int64_t idle = 0;
  for (int i = 0; i < gpu_count; ++i) idle += gpu_free[i];
  if (idle == 0) return 0;
  const double r = static_cast<double>(idle);
  // CPU-only classes can use no GPU: all idle GPU is fragment to them.
  double frag = cpu_only_probability_ * r;
  for (const TargetClass& c : gpu_classes_) {
    if (model_id < 0 || ((c.models >> model_id) & 1) == 0 || cpu_left < c.cpu_milli) {
      frag += c.probability * r;
      continue;
    }
    // Whether GPU i can host the class: its free milli, and its free memory where both the
    // class and the caller have one.
    const auto hosts = [&](int i) {
      if constexpr (kMemory) {
        if (c.gpu_memory_mib != 0 && gpu_mem_free[i] < c.gpu_memory_mib) return false;
      }
      return gpu_free[i] >= c.gpu_milli;
    };
    int fitting = 0;
    int64_t too_small = 0;  // free milli of the GPUs that cannot host the class
    for (int i = 0; i < gpu_count; ++i) {
      if (hosts(i)) {
        ++fitting;
      } else {
        too_small += gpu_free[i];
      }
    }
    if constexpr (kTopology) {
      if (c.gpu_count >= 2 && fitting >= c.gpu_count) {
        // Only the GPUs of an aligned set that fits the class are usable to it.
        GpuSet fits = 0;
        for (int i = 0; i < gpu_count; ++i) {
          if (hosts(i)) fits |= GpuSet{1} << i;
        }
        const GpuSet usable = AlignedUsable(*topology, gpu_count, fits, c.gpu_count);
        if (usable != fits) {
          int64_t unusable = 0;
          for (int i = 0; i < gpu_count; ++i) {
            if (((usable >> i) & 1) == 0) unusable += gpu_free[i];
          }
          frag += c.probability * (usable == 0 ? r : static_cast<double>(unusable));
          continue;
        }
      }
    }
    frag += c.probability * (fitting >= c.gpu_count ? static_cast<double>(too_small) : r);
  }
  return frag;
}

template double TargetWorkload::Fragmentation<false, false>(int, int64_t, const int32_t*, int,
                                                            const int32_t*,
                                                            const GpuTopology*) const;
template double TargetWorkload::Fragmentation<true, false>(int, int64_t, const int32_t*, int,
                                                           const int32_t*,
                                                           const GpuTopology*) const;
template double TargetWorkload::Fragmentation<false, true>(int, int64_t, const int32_t*, int,
                                                           const int32_t*,
                                                           const GpuTopology*) const;
template double TargetWorkload::Fragmentation<true, true>(int, int64_t, const int32_t*, int,
                                                          const int32_t*, const GpuTopology*) const;

int64_t TargetWorkload::NodeStranded(int model_id, int64_t cpu_left, const int32_t* gpu_free,
                                     int gpu_count) const {
  if (gpu_classes_.empty()) return 0;
  // The smallest per-GPU share some class hostable on this node needs; a GPU with at least
  // that much free is usable.
  int32_t smallest = -1;
  for (const TargetClass& c : gpu_classes_) {
    if (model_id < 0 || ((c.models >> model_id) & 1) == 0 || cpu_left < c.cpu_milli) continue;
    int fitting = 0;
    for (int i = 0; i < gpu_count; ++i) fitting += gpu_free[i] >= c.gpu_milli ? 1 : 0;
    if (fitting < c.gpu_count) continue;
    if (smallest < 0 || c.gpu_milli < smallest) smallest = c.gpu_milli;
  }
  int64_t stranded = 0;
  for (int i = 0; i < gpu_count; ++i) {
    if (smallest < 0 || gpu_free[i] < smallest) stranded += gpu_free[i];
  }
  return stranded;
}

TargetWorkload::GpuStranding TargetWorkload::NodeGpuStranding(int model_id, const int32_t* gpu_free,
                                                              const int32_t* gpu_mem_free,
                                                              int gpu_count) const {
  GpuStranding out;
  for (int i = 0; i < gpu_count; ++i) {
    if (gpu_free[i] <= 0) continue;
    bool served = false, compute = false, memory = false;
    for (const TargetClass& c : gpu_classes_) {
      if (model_id < 0 || ((c.models >> model_id) & 1) == 0) continue;
      const bool milli_fits = gpu_free[i] >= c.gpu_milli;
      const bool mem_fits = gpu_mem_free[i] >= c.gpu_memory_mib;
      served = served || (milli_fits && mem_fits);
      compute = compute || milli_fits;
      memory = memory || (mem_fits && c.gpu_memory_mib > 0);
    }
    if (served) continue;
    out.compute_no_memory += compute ? 1 : 0;
    out.memory_no_compute += memory ? 1 : 0;
  }
  return out;
}

double TargetWorkload::ClusterFragmentation(const Cluster& cluster) const {
  double total = 0;
  for (int n = 0; n < cluster.size(); ++n) total += NodeFragmentation(cluster, n);
  return total;
}

}  // namespace tessera
