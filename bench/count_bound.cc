#include "count_bound.h"

#include <glpk.h>

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>

#include "model/cluster.h"

namespace tessera {
namespace {

constexpr size_t kMaxPatterns = 200000;

struct Type {
  int node = 0;  // a node of this type (for Cluster::Check)
  int count = 0;
  int gpus = 0;
  int64_t gpu_memory = 0;  // per GPU; 0 = not enforced
  int64_t cpu = 0, memory = 0;
};

struct Shape {
  PodRequest request;
  bool sharing = false;
  std::vector<int> arrived;  // per seed
};

struct Pattern {
  int type = 0;
  std::vector<std::pair<int, int>> counts;  // (shape, pods of it on the GPU)
  int64_t milli = 0;
};

// Every multiset of the sharing shapes `fit` (indices into shapes) that one GPU of `type` holds.
void Enumerate(const std::vector<Shape>& shapes, const std::vector<int>& fit, size_t from,
               int64_t milli_left, int64_t mem_left, bool mem_enforced, Pattern* current,
               std::vector<Pattern>* out, bool* overflow) {
  for (size_t i = from; i < fit.size() && !*overflow; ++i) {
    const PodRequest& r = shapes[fit[i]].request;
    if (r.gpu_milli > milli_left || (mem_enforced && r.gpu_memory_mib > mem_left)) continue;
    if (current->counts.empty() || current->counts.back().first != fit[i]) {
      current->counts.push_back({fit[i], 0});
    }
    ++current->counts.back().second;
    current->milli += r.gpu_milli;
    out->push_back(*current);
    if (out->size() > kMaxPatterns) *overflow = true;
    Enumerate(shapes, fit, i, milli_left - r.gpu_milli, mem_left - r.gpu_memory_mib, mem_enforced,
              current, out, overflow);
    current->milli -= r.gpu_milli;
    if (--current->counts.back().second == 0) current->counts.pop_back();
  }
}

struct LpDeleter {
  void operator()(glp_prob* p) const { glp_delete_prob(p); }
};

}  // namespace

CountBound PodCountBound(const std::vector<NodeSpec>& nodes, const std::vector<PodSpec>& pods,
                         const std::vector<std::vector<int>>& arrived, double min_placed_milli) {
  CountBound out;
  const Cluster empty(nodes);
  const size_t seeds = arrived.size();

  std::vector<Type> types;
  std::map<std::tuple<std::string, int, int64_t, int64_t, int64_t>, size_t> type_of;
  for (int n = 0; n < static_cast<int>(nodes.size()); ++n) {
    const NodeSpec& s = nodes[static_cast<size_t>(n)];
    if (s.gpu_count == 0) continue;
    const auto key =
        std::make_tuple(s.gpu_model, s.gpu_count, s.gpu_memory_mib, s.cpu_milli, s.memory_mib);
    auto [it, added] = type_of.emplace(key, types.size());
    if (added) types.push_back({n, 0, s.gpu_count, s.gpu_memory_mib, s.cpu_milli, s.memory_mib});
    ++types[it->second].count;
  }

  std::vector<Shape> shapes;
  int64_t cpu_only = 0;
  for (size_t s = 0; s < seeds; ++s) {
    for (int p : arrived[s]) {
      const PodRequest r = empty.MakeRequest(pods[static_cast<size_t>(p)]);
      if (r.IsCpuOnly()) {
        ++cpu_only;
        continue;
      }
      auto it = std::find_if(shapes.begin(), shapes.end(),
                             [&](const Shape& x) { return x.request == r; });
      if (it == shapes.end()) {
        shapes.push_back({r, r.IsSharing(), std::vector<int>(seeds, 0)});
        it = shapes.end() - 1;
      }
      ++it->arrived[s];
    }
  }
  std::vector<std::vector<bool>> fits(shapes.size(), std::vector<bool>(types.size()));
  for (size_t i = 0; i < shapes.size(); ++i) {
    for (size_t t = 0; t < types.size(); ++t) {
      fits[i][t] = empty.Check(types[t].node, shapes[i].request) == FitReason::kFits;
    }
  }
  std::vector<Pattern> patterns;
  for (size_t t = 0; t < types.size(); ++t) {
    std::vector<int> fit;
    for (size_t i = 0; i < shapes.size(); ++i) {
      if (shapes[i].sharing && fits[i][t]) fit.push_back(static_cast<int>(i));
    }
    Pattern current;
    current.type = static_cast<int>(t);
    bool overflow = false;
    Enumerate(shapes, fit, 0, kMilliPerGpu, types[t].gpu_memory, types[t].gpu_memory > 0, &current,
              &patterns, &overflow);
    if (overflow) {
      out.error = "more than " + std::to_string(kMaxPatterns) + " sharing patterns per GPU";
      return out;
    }
  }
  out.patterns = static_cast<int>(patterns.size());

  // Columns, per seed: whole[i,t] for whole-GPU shapes that fit t, then z[p] per pattern.
  std::unique_ptr<glp_prob, LpDeleter> lp(glp_create_prob());
  glp_set_obj_dir(lp.get(), GLP_MAX);
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0};
  const auto add = [&](int row, int col, double v) {
    ia.push_back(row);
    ja.push_back(col);
    ar.push_back(v);
  };
  const auto add_row = [&](int type, double lo, double hi) {
    const int r = glp_add_rows(lp.get(), 1);
    glp_set_row_bnds(lp.get(), r, type, lo, hi);
    return r;
  };
  const int floor_row = min_placed_milli >= 0 ? add_row(GLP_LO, min_placed_milli, 0) : 0;
  double arrived_total = static_cast<double>(cpu_only);
  for (size_t s = 0; s < seeds; ++s) {
    std::vector<int> shape_row(shapes.size());
    for (size_t i = 0; i < shapes.size(); ++i) {
      shape_row[i] = add_row(GLP_UP, 0, shapes[i].arrived[s]);
      arrived_total += shapes[i].arrived[s];
    }
    std::vector<int> gpu_row(types.size()), cpu_row(types.size()), mem_row(types.size()),
        big_row(types.size());
    for (size_t t = 0; t < types.size(); ++t) {
      const double n = types[t].count;
      gpu_row[t] = add_row(GLP_UP, 0, n * types[t].gpus);
      cpu_row[t] = add_row(GLP_UP, 0, n * static_cast<double>(types[t].cpu));
      mem_row[t] = add_row(GLP_UP, 0, n * static_cast<double>(types[t].memory));
      big_row[t] = add_row(GLP_UP, 0, n);
    }
    for (size_t i = 0; i < shapes.size(); ++i) {
      if (shapes[i].sharing) continue;
      const PodRequest& r = shapes[i].request;
      for (size_t t = 0; t < types.size(); ++t) {
        if (!fits[i][t]) continue;
        const int col = glp_add_cols(lp.get(), 1);
        glp_set_col_bnds(lp.get(), col, GLP_LO, 0, 0);
        glp_set_obj_coef(lp.get(), col, 1);
        add(shape_row[i], col, 1);
        add(gpu_row[t], col, r.gpu_count);
        add(cpu_row[t], col, static_cast<double>(r.cpu_milli));
        add(mem_row[t], col, static_cast<double>(r.memory_mib));
        if (2 * r.gpu_count > types[t].gpus) add(big_row[t], col, 1);
        if (floor_row != 0) add(floor_row, col, static_cast<double>(r.TotalGpuMilli()));
      }
    }
    for (const Pattern& p : patterns) {
      const size_t t = static_cast<size_t>(p.type);
      const int col = glp_add_cols(lp.get(), 1);
      glp_set_col_bnds(lp.get(), col, GLP_LO, 0, 0);
      double pods_on = 0, cpu = 0, mem = 0;
      for (const auto& [i, k] : p.counts) {
        const PodRequest& r = shapes[static_cast<size_t>(i)].request;
        add(shape_row[static_cast<size_t>(i)], col, k);
        pods_on += k;
        cpu += static_cast<double>(k * r.cpu_milli);
        mem += static_cast<double>(k * r.memory_mib);
      }
      glp_set_obj_coef(lp.get(), col, pods_on);
      add(gpu_row[t], col, 1);
      add(cpu_row[t], col, cpu);
      add(mem_row[t], col, mem);
      if (floor_row != 0) add(floor_row, col, static_cast<double>(p.milli));
    }
  }
  glp_load_matrix(lp.get(), static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = GLP_ON;
  if (glp_simplex(lp.get(), &parm) != 0 || glp_get_status(lp.get()) != GLP_OPT) {
    out.error =
        min_placed_milli >= 0 ? "no placement reaches the compute floor" : "the LP solver failed";
    return out;
  }
  const double placed = glp_get_obj_val(lp.get()) + static_cast<double>(cpu_only);
  out.ok = true;
  out.arrived_mean = arrived_total / static_cast<double>(seeds);
  out.refused_mean = (arrived_total - placed) / static_cast<double>(seeds);
  return out;
}

}  // namespace tessera
