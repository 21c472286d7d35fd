#include "offline/offline_bound.h"

#include <glpk.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

#include "model/cluster.h"
#include "sim/inflation.h"

namespace tessera {
namespace {

// Reduced costs below this (in milli-GPU) count as zero: GLPK's simplex works to ~1e-7.
constexpr double kPriceEpsilon = 1e-6;

struct NodeGroup {
  int representative = 0;  // a node index of this type in the empty cluster
  int64_t count = 0;
  int gpus = 0;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int64_t gpu_memory_mib = 0;
};

struct PodShape {
  PodRequest request;
  int64_t count = 0;
};

struct GlpkDeleter {
  void operator()(glp_prob* p) const { glp_delete_prob(p); }
};

// The rows and columns of one node type in the LP.
struct TypeRows {
  int cpu = 0, memory = 0, gpus = 0;
  int gpu_memory = 0;                // 0: no sharing pod with GPU memory fits this type
  std::vector<int32_t> share_milli;  // sharing milli values that fit this type, ascending
  std::vector<int> cover;            // row per share_milli value
};

class Lp {
 public:
  Lp() : p_(glp_create_prob()) { glp_set_obj_dir(p_.get(), GLP_MAX); }
  glp_prob* get() { return p_.get(); }

  int AddRow(double upper) {
    const int r = glp_add_rows(p_.get(), 1);
    glp_set_row_bnds(p_.get(), r, GLP_UP, 0.0, upper);
    return r;
  }
  // A column x ≥ 0 with objective `obj` and entries (row, value).
  int AddColumn(double obj, const std::vector<std::pair<int, double>>& entries) {
    const int c = glp_add_cols(p_.get(), 1);
    glp_set_col_bnds(p_.get(), c, GLP_LO, 0.0, 0.0);
    glp_set_obj_coef(p_.get(), c, obj);
    std::vector<int> ind(1, 0);  // GLPK arrays are 1-based
    std::vector<double> val(1, 0.0);
    for (const auto& [row, v] : entries) {
      if (v == 0) continue;
      ind.push_back(row);
      val.push_back(v);
    }
    glp_set_mat_col(p_.get(), c, static_cast<int>(ind.size()) - 1, ind.data(), val.data());
    return c;
  }

 private:
  std::unique_ptr<glp_prob, GlpkDeleter> p_;
};

// Pattern columns of type t: `copies[i]` pods of milli share_milli[i] on one GPU.
std::vector<std::pair<int, double>> PatternEntries(const TypeRows& rows, const NodeGroup& type,
                                                   const std::vector<int>& copies) {
  std::vector<std::pair<int, double>> e;
  e.emplace_back(rows.gpus, 1.0);
  for (size_t i = 0; i < copies.size(); ++i) {
    if (copies[i] > 0) e.emplace_back(rows.cover[i], -static_cast<double>(copies[i]));
  }
  if (rows.gpu_memory > 0) {
    e.emplace_back(rows.gpu_memory, -static_cast<double>(type.gpu_memory_mib));
  }
  return e;
}

// The most valuable sharing pattern for row duals `value[i]` per copy of share_milli[i]: an
// unbounded knapsack of capacity 1000 milli. Returns its value; `copies` gets the pattern.
double BestPattern(const std::vector<int32_t>& milli, const std::vector<double>& value,
                   std::vector<int>* copies) {
  std::vector<double> best(kMilliPerGpu + 1, 0.0);
  std::vector<int> take(kMilliPerGpu + 1, -1);  // item added last at this capacity, -1: none
  for (int c = 1; c <= kMilliPerGpu; ++c) {
    best[c] = best[c - 1];
    take[c] = -2;  // inherit from c - 1
    for (size_t i = 0; i < milli.size(); ++i) {
      if (milli[i] <= c && value[i] > 0 && best[c - milli[i]] + value[i] > best[c]) {
        best[c] = best[c - milli[i]] + value[i];
        take[c] = static_cast<int>(i);
      }
    }
  }
  copies->assign(milli.size(), 0);
  for (int c = kMilliPerGpu; c > 0;) {
    if (take[c] == -2) {
      --c;
    } else if (take[c] >= 0) {
      ++(*copies)[take[c]];
      c -= milli[take[c]];
    } else {
      break;
    }
  }
  return best[kMilliPerGpu];
}

}  // namespace

std::vector<int> ArrivedPods(const std::vector<PodSpec>& pods, int64_t capacity_milli,
                             uint64_t seed, double max_arrival_pct, double arrival_pct) {
  const std::vector<std::pair<int, int>> seq =
      InflatedSequence(pods, capacity_milli, seed, max_arrival_pct);
  std::vector<int> out;
  const double capacity = static_cast<double>(capacity_milli);
  int64_t arrived = 0;
  if (arrival_pct * capacity <= 0) return out;  // level 0: recorded before any pod
  for (const auto& [pod, clone] : seq) {
    out.push_back(pod);
    const PodSpec& p = pods[pod];
    if (p.gpu_count > 0) arrived += p.TotalGpuMilli();
    if (static_cast<double>(arrived) * 100.0 >= arrival_pct * capacity) break;
  }
  return out;
}

Result<OfflineBound> ComputeOfflineBound(const std::vector<NodeSpec>& nodes,
                                         const std::vector<PodSpec>& pods,
                                         const std::vector<int>& arrived,
                                         const OfflineBoundOptions& options) {
  if (!(options.min_sharing_placed >= 0 && options.min_sharing_placed <= 1)) {
    char share[32];
    std::snprintf(share, sizeof(share), "%g", options.min_sharing_placed);
    return Error{std::string("offline bound: the share of sharing pods to place must be within "
                             "0-1, not ") +
                 share};
  }
  const Cluster cluster(nodes);
  OfflineBound out;
  out.capacity_milli = cluster.total_gpu_milli();
  out.pods = static_cast<int>(arrived.size());

  // Node types (GPU nodes only: CPU-only pods are left out, so other nodes host nothing).
  std::vector<NodeGroup> types;
  {
    std::map<std::tuple<int, int, int64_t, int64_t, int64_t>, int> index;
    for (int n = 0; n < cluster.size(); ++n) {
      const NodeSpec& s = cluster.spec(n);
      if (s.gpu_count == 0) continue;
      const auto key = std::make_tuple(cluster.model_id(n), s.gpu_count, s.cpu_milli, s.memory_mib,
                                       s.gpu_memory_mib);
      auto [it, fresh] = index.emplace(key, static_cast<int>(types.size()));
      if (fresh) {
        types.push_back(NodeGroup{n, 0, s.gpu_count, s.cpu_milli, s.memory_mib, s.gpu_memory_mib});
      }
      ++types[it->second].count;
    }
  }
  // Pod shapes.
  std::vector<PodShape> shapes;
  {
    std::map<std::tuple<int64_t, int64_t, int32_t, int32_t, int64_t, ModelMask>, int> index;
    for (int i : arrived) {
      const PodRequest r = cluster.MakeRequest(pods[i]);
      out.arrived_milli += r.TotalGpuMilli();
      if (r.IsCpuOnly()) continue;
      if (!r.IsSharing() && r.gpu_milli != kMilliPerGpu) {
        return Error{"offline bound: pod '" + pods[i].name +
                     "' asks for several GPUs of less than 1000 milli each (not supported)"};
      }
      const auto key = std::make_tuple(r.cpu_milli, r.memory_mib, r.gpu_count, r.gpu_milli,
                                       r.gpu_memory_mib, r.models);
      auto [it, fresh] = index.emplace(key, static_cast<int>(shapes.size()));
      if (fresh) shapes.push_back(PodShape{r, 0});
      ++shapes[it->second].count;
    }
  }
  out.node_types = static_cast<int>(types.size());
  out.pod_shapes = static_cast<int>(shapes.size());

  Lp lp;
  std::vector<std::pair<int, int>> pod_columns;  // (column of x[s,t], s)
  std::vector<int> shape_row(shapes.size());
  for (size_t s = 0; s < shapes.size(); ++s) {
    shape_row[s] = lp.AddRow(static_cast<double>(shapes[s].count));
  }
  std::vector<TypeRows> rows(types.size());
  for (size_t t = 0; t < types.size(); ++t) {
    const NodeGroup& type = types[t];
    TypeRows& r = rows[t];
    const double n = static_cast<double>(type.count);
    r.cpu = lp.AddRow(n * static_cast<double>(type.cpu_milli));
    r.memory = lp.AddRow(n * static_cast<double>(type.memory_mib));
    r.gpus = lp.AddRow(n * type.gpus);
    // Pods that fit, and the per-node cuts: two pods that each need more than half of a
    // node's CPU (memory, GPUs) never share a node, so at most N_t of each kind.
    std::vector<int> fit;
    bool big_cpu = false, big_memory = false, big_gpus = false, share_gpu_memory = false;
    for (size_t s = 0; s < shapes.size(); ++s) {
      const PodRequest& q = shapes[s].request;
      if (CheckFit(type.gpus, cluster.model_id(type.representative),
                   cluster.state(type.representative), q,
                   cluster.topology(type.representative)) != FitReason::kFits) {
        continue;
      }
      fit.push_back(static_cast<int>(s));
      big_cpu |= 2 * q.cpu_milli > type.cpu_milli;
      big_memory |= 2 * q.memory_mib > type.memory_mib;
      big_gpus |= !q.IsSharing() && 2 * q.gpu_count > type.gpus;
      if (q.IsSharing()) {
        r.share_milli.push_back(q.gpu_milli);
        share_gpu_memory |= q.gpu_memory_mib > 0;
      }
    }
    std::sort(r.share_milli.begin(), r.share_milli.end());
    r.share_milli.erase(std::unique(r.share_milli.begin(), r.share_milli.end()),
                        r.share_milli.end());
    for (size_t i = 0; i < r.share_milli.size(); ++i) r.cover.push_back(lp.AddRow(0.0));
    if (share_gpu_memory) r.gpu_memory = lp.AddRow(0.0);
    const int cut_cpu = big_cpu ? lp.AddRow(n) : 0;
    const int cut_memory = big_memory ? lp.AddRow(n) : 0;
    const int cut_gpus = big_gpus ? lp.AddRow(n) : 0;

    for (int s : fit) {
      const PodRequest& q = shapes[s].request;
      std::vector<std::pair<int, double>> e;
      e.emplace_back(shape_row[s], 1.0);
      e.emplace_back(r.cpu, static_cast<double>(q.cpu_milli));
      e.emplace_back(r.memory, static_cast<double>(q.memory_mib));
      if (q.IsSharing()) {
        const size_t i = std::lower_bound(r.share_milli.begin(), r.share_milli.end(), q.gpu_milli) -
                         r.share_milli.begin();
        e.emplace_back(r.cover[i], 1.0);
        if (r.gpu_memory > 0) e.emplace_back(r.gpu_memory, static_cast<double>(q.gpu_memory_mib));
      } else {
        e.emplace_back(r.gpus, static_cast<double>(q.gpu_count));
        if (cut_gpus > 0 && 2 * q.gpu_count > type.gpus) e.emplace_back(cut_gpus, 1.0);
      }
      if (cut_cpu > 0 && 2 * q.cpu_milli > type.cpu_milli) e.emplace_back(cut_cpu, 1.0);
      if (cut_memory > 0 && 2 * q.memory_mib > type.memory_mib) e.emplace_back(cut_memory, 1.0);
      pod_columns.emplace_back(lp.AddColumn(static_cast<double>(q.TotalGpuMilli()), e), s);
    }
    // Starting patterns: as many copies of one milli value as fit a GPU.
    for (size_t i = 0; i < r.share_milli.size(); ++i) {
      std::vector<int> copies(r.share_milli.size(), 0);
      copies[i] = kMilliPerGpu / r.share_milli[i];
      lp.AddColumn(0.0, PatternEntries(r, type, copies));
      ++out.patterns;
    }
  }

  // The what-if: sharing shapes that fit some type get a lower bound on their row.
  if (options.min_sharing_placed > 0) {
    std::vector<bool> fits(shapes.size(), false);
    for (const auto& [column, s] : pod_columns) fits[s] = true;
    for (size_t s = 0; s < shapes.size(); ++s) {
      if (!fits[s] || !shapes[s].request.IsSharing()) continue;
      const double n = static_cast<double>(shapes[s].count);
      if (options.min_sharing_placed >= 1) {
        glp_set_row_bnds(lp.get(), shape_row[s], GLP_FX, n, n);
      } else {
        glp_set_row_bnds(lp.get(), shape_row[s], GLP_DB, options.min_sharing_placed * n, n);
      }
    }
  }

  std::map<std::pair<int, int32_t>, OfflineClass> classes;  // by (gpu_count, gpu_milli)
  for (const PodShape& shape : shapes) {
    OfflineClass& c = classes[{shape.request.gpu_count, shape.request.gpu_milli}];
    c.gpu_count = shape.request.gpu_count;
    c.gpu_milli = shape.request.gpu_milli;
    c.arrived += shape.count;
  }
  if (glp_get_num_cols(lp.get()) == 0) {  // nothing can be placed at all
    for (const auto& [key, c] : classes) out.classes.push_back(c);
    out.max_placed_milli = 0;
    out.unallocated_pct = out.capacity_milli > 0 ? 100.0 : 0.0;
    return out;
  }

  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = GLP_OFF;  // keep the basis between rounds, and the duals
  double lagrangian = 0;
  for (;;) {
    ++out.rounds;
    if (const int rc = glp_simplex(lp.get(), &parm); rc != 0) {
      return Error{"offline bound: GLPK simplex failed (code " + std::to_string(rc) + ")"};
    }
    if (glp_get_status(lp.get()) == GLP_NOFEAS && options.min_sharing_placed > 0) {
      char share[32];
      std::snprintf(share, sizeof(share), "%g", options.min_sharing_placed * 100);
      return Error{std::string("offline bound: no placement places ") + share +
                   " % of the pods of every GPU-sharing shape (the cluster cannot hold them)"};
    }
    if (glp_get_status(lp.get()) != GLP_OPT) {
      return Error{"offline bound: GLPK found no optimum (status " +
                   std::to_string(glp_get_status(lp.get())) + ")"};
    }
    // Pricing: per type, the sharing pattern with the largest reduced cost
    // d = Σ_v copies_v · π(cover_v) + gpu_memory · π(gpu memory row) − π(GPU row).
    bool added = false;
    lagrangian = 0;
    for (size_t t = 0; t < types.size(); ++t) {
      const TypeRows& r = rows[t];
      if (r.share_milli.empty()) continue;
      std::vector<double> value(r.share_milli.size());
      for (size_t i = 0; i < value.size(); ++i) value[i] = glp_get_row_dual(lp.get(), r.cover[i]);
      std::vector<int> copies;
      double d = BestPattern(r.share_milli, value, &copies) - glp_get_row_dual(lp.get(), r.gpus);
      if (r.gpu_memory > 0) {
        d +=
            static_cast<double>(types[t].gpu_memory_mib) * glp_get_row_dual(lp.get(), r.gpu_memory);
      }
      if (d <= kPriceEpsilon) continue;
      // No feasible solution uses more than N_t·G_t pattern GPUs of type t, so the LP over all
      // patterns is at most this LP's value plus Σ_t N_t·G_t·max(0, d_t) (Lagrangian bound).
      lagrangian += d * static_cast<double>(types[t].count * types[t].gpus);
      if (out.rounds < options.max_rounds) {
        lp.AddColumn(0.0, PatternEntries(r, types[t], copies));
        ++out.patterns;
        added = true;
      }
    }
    if (!added) break;
  }
  out.converged = lagrangian == 0;
  for (const auto& [column, s] : pod_columns) {
    classes[{shapes[s].request.gpu_count, shapes[s].request.gpu_milli}].placed +=
        glp_get_col_prim(lp.get(), column);
  }
  for (const auto& [key, c] : classes) out.classes.push_back(c);
  const double capacity = static_cast<double>(out.capacity_milli);
  out.max_placed_milli = std::min(glp_get_obj_val(lp.get()) + lagrangian, capacity);
  out.unallocated_pct = capacity > 0 ? 100.0 - 100.0 * out.max_placed_milli / capacity : 0.0;
  return out;
}

}  // namespace tessera
