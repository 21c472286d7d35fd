#include "policy/tessera_measure.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <utility>

namespace tessera {
namespace {

bool SameClass(const TargetClass& a, const TargetClass& b) {
  return a.cpu_milli == b.cpu_milli && a.gpu_milli == b.gpu_milli && a.gpu_count == b.gpu_count &&
         a.gpu_spec == b.gpu_spec;
}

}  // namespace

TesseraMeasure::TesseraMeasure(const TargetWorkload* workload, const TesseraParams& params)
    : workload_(workload),
      cpu_stranding_(params.cpu_stranding),
      reference_(params.reference_measure) {
  classes_ = workload_->classes();
  m_size_ = classes_.size();
  if (params.multi_gpu_classes) {
    for (const TargetClass& c : workload_->all_classes()) {
      const bool in_m = std::any_of(classes_.begin(), classes_.end(),
                                    [&](const TargetClass& m) { return SameClass(m, c); });
      if (c.gpu_count > 1 && !in_m) classes_.push_back(c);
    }
  }
  BuildPrimary(params.demand_weight, params.demand_coverage);
  const double all_gpus = static_cast<double>(workload_->GpusOfModels(kAnyModel));
  for (const TargetClass& c : classes_) {
    double w = c.probability;
    const double allowed = static_cast<double>(workload_->GpusOfModels(c.models));
    if (c.gpu_count > 0 && allowed > 0) w *= std::pow(all_gpus / allowed, params.scarcity);
    if (c.gpu_count > 1) w *= 1.0 + params.multi_gpu_weight * (c.gpu_count - 1);
    weights_.push_back(w);
  }
  BuildTables();
}

// F_n(M) and S_n (over the first n_classes of classes_: M, or all) of one node state: what a
// class needs of the GPUs (how many have ≥ its milli free, and the free milli on the others)
// depends only on its GPU milli, so it is counted once per distinct milli; the classes are
// then summed per bucket of equal (milli, GPU count) with prefix sums over CPU requests
// (BuildTables), not one by one. The same values as NodeFragmentation and
// ReferenceStranded up to the rounding of the sums' order; the scores are compared with
// reference_measure's in tests/policy/tessera_policy_test.cc.
// On a node with a topology (`topo`, MeasuredTopology), the plain loops with the topology.
TesseraMeasures TesseraMeasure::Measure(int model_id, int64_t cpu_left, const int32_t* gpu_free,
                                        int g, bool idle, size_t n_classes,
                                        const GpuTopology* topo) const {
  if (reference_ || thresholds_.empty() || thresholds_.size() > kMaxThresholds ||
      (n_classes != m_size_ && n_classes < classes_.size()) || topo != nullptr) {
    return ReferenceMeasure(model_id, cpu_left, gpu_free, g, idle, n_classes, topo);
  }
  TesseraMeasures m;
  // fitting[j]: GPUs with ≥ thresholds_[j] free; too_small[j]: the free milli on the others.
  // With p(f) the number of thresholds ≤ f (thresholds_ ascends), a GPU with f free fits
  // exactly the thresholds j < p(f): count the GPUs by p, then sum up.
  const size_t nt = thresholds_.size();
  std::array<int, kMaxThresholds + 1> by_p;
  std::array<int64_t, kMaxThresholds + 1> free_by_p;
  std::fill_n(by_p.begin(), nt + 1, 0);
  std::fill_n(free_by_p.begin(), nt + 1, 0);
  int64_t free_total = 0;
  for (int i = 0; i < g; ++i) {
    const int32_t f = gpu_free[i];
    const size_t p = f >= 0 && f <= kMilliPerGpu ? p_of_[f] : (f < 0 ? 0 : nt);
    ++by_p[p];
    free_by_p[p] += f;
    free_total += f;
  }
  if (free_total == 0) return m;
  const double r = static_cast<double>(free_total);
  std::array<int, kMaxThresholds> fitting;
  std::array<int64_t, kMaxThresholds> too_small;
  int above = g - by_p[0];
  int64_t below = free_by_p[0];
  for (size_t j = 0; j < nt; ++j) {
    fitting[j] = above;
    too_small[j] = below;
    above -= by_p[j + 1];
    below += free_by_p[j + 1];
  }
  // F_n(M) = Σ_m p_m · (too_small if m fits, else r) = r · Σ p − Σ_fitting p_m · (r − too_small),
  // where the classes that fit are, per (threshold, GPU count) of the node's model with
  // enough GPUs fitting, those whose CPU request is at most cpu_left: a prefix of the bucket.
  // The same as TargetWorkload::NodeFragmentation up to the order of the sums (the scores
  // are compared with reference_measure's in tests/policy/tessera_policy_test.cc).
  const bool known_model = model_id >= 0 && model_id < kMaxGpuModels;
  const auto frag_over = [&](double weight, const ModelBuckets& tables) {
    double frag = r * weight;
    if (known_model) {
      for (const Bucket& b : tables[model_id]) {
        if (fitting[b.threshold] < b.gpu_count) continue;
        frag -=
            b.weight_sum[b.AtMost(cpu_left)] * (r - static_cast<double>(too_small[b.threshold]));
      }
    }
    return frag;
  };
  if (primary_ == workload_) {
    m.frag = frag_over(frag_weight_, frag_buckets_);
    m.frag_p = m.frag;
  } else {  // both workloads in one pass over frag_pair_buckets_ (the same sums)
    m.frag = r * frag_weight_;
    m.frag_p = r * frag_p_weight_;
    if (known_model) {
      for (const Bucket& b : frag_pair_buckets_[model_id]) {
        if (fitting[b.threshold] < b.gpu_count) continue;
        const size_t e = b.AtMost(cpu_left);
        const double gap = r - static_cast<double>(too_small[b.threshold]);
        m.frag -= b.weight_sum[e] * gap;
        m.frag_p -= b.weight_sum_p[e] * gap;
      }
    }
  }
  if (!cpu_stranding_ || idle) return m;
  // S_n(m) = r − min(U, cpu_left / cpu_m · milli_m · n_m) for a class that fits, with U the
  // free milli on the GPUs with ≥ milli_m free, else r. In a bucket sorted by CPU request,
  // the classes up to cpu_left · milli · n / U are held by U, the rest by CPU.
  const double cpu = static_cast<double>(cpu_left);
  auto usable = [&](const std::vector<Bucket>& buckets) {
    double sum = 0;
    for (const Bucket& b : buckets) {
      if (fitting[b.threshold] < b.gpu_count) continue;
      const size_t e = b.AtMost(cpu_left);
      if (e == 0) continue;
      const double u = static_cast<double>(free_total - too_small[b.threshold]);
      const double split = cpu * b.gpu_request / u;  // u > 0: a fitting GPU has ≥ milli free
      size_t s = 0;  // the classes with CPU request ≤ split, among the first e
      if (split >= static_cast<double>(b.cpu[e - 1])) {
        s = e;
      } else {
        while (static_cast<double>(b.cpu[s]) <= split) ++s;
      }
      sum += u * b.weight_sum[s] +
             cpu * b.gpu_request * (b.weight_per_cpu_sum[e] - b.weight_per_cpu_sum[s]);
    }
    return sum;
  };
  m.stranded_m = r * strand_m_weight_ - (known_model ? usable(strand_m_buckets_[model_id]) : 0);
  m.stranded = m.stranded_m;
  if (n_classes > m_size_) {
    m.stranded += r * strand_x_weight_ - (known_model ? usable(strand_x_buckets_[model_id]) : 0);
  }
  return m;
}

// The plain per-class loops (reference_measure). With `topo`, the topology enters the
// stranding term only: a multi-GPU class can use only the GPUs of an aligned set there
// (ReferenceStranded), while the FGD term stays the published, topology-blind F_n(M).
// Measured on the 24 openb lists with 2×4-island 8-GPU nodes and every multi-GPU pod
// `required` (docs/TOPOLOGY.md): the topology in both terms left up to 0.04 pp more GPUs
// unallocated than this on 5 lists and the same on the others.
TesseraMeasures TesseraMeasure::ReferenceMeasure(int model_id, int64_t cpu_left,
                                                 const int32_t* gpu_free, int g, bool idle,
                                                 size_t n_classes, const GpuTopology* topo) const {
  TesseraMeasures m;
  m.frag = primary_->NodeFragmentation(model_id, cpu_left, gpu_free, g);
  m.frag_p = primary_ == workload_ ? m.frag
                                   : workload_->NodeFragmentation(model_id, cpu_left, gpu_free, g);
  if (cpu_stranding_ && !idle) {
    m.stranded = ReferenceStranded(model_id, cpu_left, gpu_free, g, n_classes, topo);
    m.stranded_m =
        ReferenceStranded(model_id, cpu_left, gpu_free, g, std::min(n_classes, m_size_), topo);
  }
  return m;
}

// S_n in milli-GPU (weighted; see the header).
// Over the first n_classes of classes_ (M first, then the multi-GPU classes).
// With `topo`, a multi-GPU class uses only the GPUs of an aligned set (AlignedUsable).
double TesseraMeasure::ReferenceStranded(int model_id, int64_t cpu_left, const int32_t* gpu_free,
                                         int g, size_t n_classes, const GpuTopology* topo) const {
  int64_t idle = 0;
  for (int i = 0; i < g; ++i) idle += gpu_free[i];
  if (idle == 0) return 0;
  const double r = static_cast<double>(idle);
  double total = 0;
  for (size_t k = 0; k < n_classes; ++k) {
    const TargetClass& c = classes_[k];
    if (c.gpu_milli == 0 || c.gpu_count == 0 || model_id < 0 || ((c.models >> model_id) & 1) == 0 ||
        cpu_left < c.cpu_milli) {
      total += weights_[k] * r;
      continue;
    }
    int fitting = 0;
    int64_t too_small = 0;
    for (int i = 0; i < g; ++i) {
      if (gpu_free[i] >= c.gpu_milli) {
        ++fitting;
      } else {
        too_small += gpu_free[i];
      }
    }
    if (fitting < c.gpu_count) {
      total += weights_[k] * r;
      continue;
    }
    double usable = static_cast<double>(idle - too_small);
    if (topo != nullptr && c.gpu_count >= 2) {
      GpuSet fits = 0;
      for (int i = 0; i < g; ++i) {
        if (gpu_free[i] >= c.gpu_milli) fits |= GpuSet{1} << i;
      }
      const GpuSet aligned = AlignedUsable(*topo, g, fits, c.gpu_count);
      if (aligned == 0) {
        total += weights_[k] * r;
        continue;
      }
      int64_t in_aligned = 0;
      for (GpuSet a = aligned; a != 0; a &= a - 1) in_aligned += gpu_free[std::countr_zero(a)];
      usable = static_cast<double>(in_aligned);
    }
    if (c.cpu_milli > 0) {
      usable = std::min(usable, static_cast<double>(cpu_left) / static_cast<double>(c.cpu_milli) *
                                    c.gpu_milli * c.gpu_count);
    }
    total += weights_[k] * (r - usable);
  }
  return total;
}

void TesseraMeasure::BuildTables() {
  for (const std::vector<TargetClass>* list :
       {static_cast<const std::vector<TargetClass>*>(&classes_), &primary_->gpu_classes(),
        &workload_->gpu_classes()}) {
    for (const TargetClass& c : *list) {
      if (c.gpu_milli != 0 && c.gpu_count != 0) thresholds_.push_back(c.gpu_milli);
    }
  }
  std::sort(thresholds_.begin(), thresholds_.end());
  thresholds_.erase(std::unique(thresholds_.begin(), thresholds_.end()), thresholds_.end());
  for (int32_t f = 0; f <= kMilliPerGpu; ++f) {
    p_of_[f] = static_cast<uint8_t>(std::min<ptrdiff_t>(
        255, std::upper_bound(thresholds_.begin(), thresholds_.end(), f) - thresholds_.begin()));
  }
  // Adds class c with `weight` to the buckets of every model it may use.
  auto add = [&](ModelBuckets& tables, const TargetClass& c, double weight) {
    if (c.gpu_milli == 0 || c.gpu_count == 0) return;  // uses no GPU: always r
    const int t =
        static_cast<int>(std::lower_bound(thresholds_.begin(), thresholds_.end(), c.gpu_milli) -
                         thresholds_.begin());
    for (int k = 0; k < kMaxGpuModels; ++k) {
      if (((c.models >> k) & 1) == 0) continue;
      std::vector<Bucket>& buckets = tables[k];
      auto it = std::find_if(buckets.begin(), buckets.end(), [&](const Bucket& b) {
        return b.threshold == t && b.gpu_count == c.gpu_count;
      });
      if (it == buckets.end()) {
        buckets.push_back(Bucket{
            t, c.gpu_count, static_cast<double>(c.gpu_milli) * c.gpu_count, {}, {0}, {0}, {}});
        it = buckets.end() - 1;
      }
      it->cpu.push_back(c.cpu_milli);
      it->weight_sum.push_back(weight);  // sorted and summed below
      it->weight_per_cpu_sum.push_back(c.cpu_milli > 0 ? weight / static_cast<double>(c.cpu_milli)
                                                       : 0.0);
    }
  };
  frag_weight_ = primary_->cpu_only_probability();
  for (const TargetClass& c : primary_->gpu_classes()) {
    frag_weight_ += c.probability;
    add(frag_buckets_, c, c.probability);
  }
  for (size_t k = 0; k < classes_.size(); ++k) {
    (k < m_size_ ? strand_m_weight_ : strand_x_weight_) += weights_[k];
    add(k < m_size_ ? strand_m_buckets_ : strand_x_buckets_, classes_[k], weights_[k]);
  }
  if (primary_ != workload_) {
    frag_p_weight_ = workload_->cpu_only_probability();
    for (const TargetClass& c : workload_->gpu_classes()) {
      frag_p_weight_ += c.probability;
      add(frag_p_buckets_, c, c.probability);
    }
  }
  for (ModelBuckets* tables :
       {&frag_buckets_, &frag_p_buckets_, &strand_m_buckets_, &strand_x_buckets_}) {
    for (std::vector<Bucket>& buckets : *tables) {
      for (Bucket& b : buckets) {
        // Entry i + 1 holds class i's values until here: sort by CPU, then sum up.
        std::vector<size_t> order(b.cpu.size());
        for (size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(),
                         [&](size_t x, size_t y) { return b.cpu[x] < b.cpu[y]; });
        Bucket sorted{b.threshold, b.gpu_count, b.gpu_request, {}, {0}, {0}, {}};
        for (size_t i : order) {
          sorted.cpu.push_back(b.cpu[i]);
          sorted.weight_sum.push_back(sorted.weight_sum.back() + b.weight_sum[i + 1]);
          sorted.weight_per_cpu_sum.push_back(sorted.weight_per_cpu_sum.back() +
                                              b.weight_per_cpu_sum[i + 1]);
        }
        b = std::move(sorted);
      }
    }
  }
  if (primary_ != workload_) BuildPairTables();
}

// frag_pair_buckets_: F_n's two workloads in one table, so that Measure counts the fitting
// GPUs and the classes within the CPU left once for both. Both tables' buckets are put in
// (GPU milli, GPU count) order first, so that a bucket present in one only (a zero in the
// other's sums) keeps each sum's order; a merged bucket's CPU requests are the two sorted
// lists merged, and its prefix sums are each table's own, copied: the same values.
void TesseraMeasure::BuildPairTables() {
  const auto by_key = [](const Bucket& a, const Bucket& b) {
    return std::pair(a.threshold, a.gpu_count) < std::pair(b.threshold, b.gpu_count);
  };
  for (int k = 0; k < kMaxGpuModels; ++k) {
    std::vector<Bucket>& a = frag_buckets_[k];
    std::vector<Bucket>& b = frag_p_buckets_[k];
    std::sort(a.begin(), a.end(), by_key);
    std::sort(b.begin(), b.end(), by_key);
    std::vector<Bucket>& out = frag_pair_buckets_[k];
    size_t i = 0, j = 0;
    while (i < a.size() || j < b.size()) {
      const Bucket* x = i < a.size() && (j == b.size() || !by_key(b[j], a[i])) ? &a[i] : nullptr;
      const Bucket* y = j < b.size() && (i == a.size() || !by_key(a[i], b[j])) ? &b[j] : nullptr;
      const Bucket& key = x != nullptr ? *x : *y;
      Bucket m{key.threshold, key.gpu_count, key.gpu_request, {}, {0}, {0}, {0}};
      const size_t nx = x != nullptr ? x->cpu.size() : 0;
      const size_t ny = y != nullptr ? y->cpu.size() : 0;
      size_t p = 0, q = 0;
      while (p < nx || q < ny) {
        if (p < nx && (q == ny || x->cpu[p] <= y->cpu[q])) {
          m.cpu.push_back(x->cpu[p++]);
        } else {
          m.cpu.push_back(y->cpu[q++]);
        }
        m.weight_sum.push_back(x != nullptr ? x->weight_sum[p] : 0.0);
        m.weight_sum_p.push_back(y != nullptr ? y->weight_sum[q] : 0.0);
      }
      out.push_back(std::move(m));
      i += x != nullptr;
      j += y != nullptr;
    }
  }
}

// The workload of FGD's term F_n: M itself, or (demand_weight > 0) the list's classes
// weighed by their GPU request as well as their count (docs/POLICIES.md, "Demand-weighted M").
void TesseraMeasure::BuildPrimary(double demand_weight, double demand_coverage) {
  primary_ = workload_;
  if (demand_weight <= 0 || workload_->all_classes().empty()) return;
  std::vector<TargetClass> all = workload_->all_classes();
  // A class's demand per pod: its GPU request in milli (0 for CPU-only pods).
  const auto demand = [](const TargetClass& c) {
    return static_cast<double>(c.gpu_milli) * c.gpu_count;
  };
  double pods = 0, request = 0;
  for (const TargetClass& c : all) {
    pods += static_cast<double>(c.count);
    request += static_cast<double>(c.count) * demand(c);
  }
  if (pods <= 0 || request <= 0) return;
  const double beta = std::min(1.0, demand_weight);
  for (TargetClass& c : all) {
    const double n = static_cast<double>(c.count);
    c.probability = (1 - beta) * n / pods + beta * n * demand(c) / request;
  }
  std::stable_sort(all.begin(), all.end(), [](const TargetClass& a, const TargetClass& b) {
    return a.probability > b.probability;
  });
  double covered = 0;
  size_t taken = 0;
  while (taken < all.size() && covered < demand_coverage) {
    covered += all[taken].probability;
    ++taken;
  }
  all.resize(taken);
  for (TargetClass& c : all) c.probability /= covered;
  own_primary_ = TargetWorkload::FromClasses(std::move(all));
  primary_ = &own_primary_;
}

}  // namespace tessera
