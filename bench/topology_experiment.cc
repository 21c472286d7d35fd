// tessera_topology_experiment: the topology experiment of docs/TOPOLOGY.md. The openb GPU
// nodes get a stated topology per node type, the multi-GPU pods of an openb pod list are
// marked `required` (one NVLink domain), and the inflation experiment of `tessera frag`
// (sim/inflation.h, RunInflation: the same arrival loop, to 130 %, read at 100 %) runs each
// column for each seed. Every placement of the pods that arrived by 100 % is then judged
// against the true topology. Prints, per pod list, a Markdown table (mean ± s.d. over the
// seeds), how often, seed by seed, `tessera` beats each other column, and whether the bar of
// docs/TOPOLOGY.md is met; then both tables for all lists together. Measures placement
// quality, not time (the wall time per list is printed for the record only).
//
// Topology per node type (GpuTopology, link scores on HAMi's scale):
//  - 8-GPU nodes: two 4-GPU NVLink islands (GPUs 0-3, 4-7), each on its own NUMA node;
//    link 100 per pair inside an island (one NVLink), 10 across (PCIe through the CPUs'
//    interconnect, HAMi's P2PLinkCrossCPU).
//  - nodes with fewer GPUs: one domain, one NUMA node, PCIe; link 20 per pair.
// Columns: tessera, fgd and hami-topology see the topology; "tessera-blind" and "fgd-blind"
// run on the same nodes with the topology stripped (they schedule blind) and are judged
// against the true topology afterwards. The pods are the same for all.
//
// Measures, over the pods that arrived by 100 % (the pod that crosses the level counts
// for the share of it that has arrived, as `tessera frag` counts it, in the GPU sums only):
//  - aligned: multi-GPU pods placed on GPUs that touch no more NVLink domains than the pod
//    needs (one, or two islands for an 8-GPU pod on a 2×4 node), as a share of the multi-GPU
//    pods placed; every multi-GPU pod here is `required`, so it is the required share too;
//    and the same over the placements where a split was possible (the node has more domains
//    than the pod needs: 2- and 4-GPU pods on the 2×4 nodes), which 8-GPU pods do not dilute;
//  - unallocated GPU % at 100 % arrival, as `tessera frag` reports it (RunResult::curve);
//  - rejected: pods a kubelet Topology Manager at `restricted` refuses: placed, but their GPUs
//    touch more NUMA nodes than the pod needs (the narrowest mask rule); their GPUs added back
//    give the unallocated GPU % after the rejections.
// The domain counting (MinDomains, Aligned) is written here, in the bench, against the
// topology itself, so that it judges the engine rather than reusing its code.
//
// Usage: tessera_topology_experiment [--data DIR] [--lists default,multigpu50,...]
//                                    [--seeds LO-HI] [--threads N] [--columns a,b,...]
// Defaults: the trace beside the repository, lists default,multigpu50, seeds 42-51, all
// cores, columns tessera,tessera-blind,fgd,fgd-blind,hami-topology (bench/topology.sh passes
// default and multigpu20 ... multigpu50).
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "frag/target_workload.h"
#include "model/cluster.h"
#include "model/topology.h"
#include "policy/policy.h"
#include "report/report.h"
#include "sim/inflation.h"
#include "trace/csv_reader.h"
#include "util/file.h"

namespace tessera {
namespace {

constexpr uint16_t kIslandLink = 100;  // one NVLink per pair (HAMi's SingleNVLINKLink)
constexpr uint16_t kCrossLink = 10;    // across the CPU sockets (HAMi's P2PLinkCrossCPU)
constexpr uint16_t kPcieLink = 20;     // PCIe under one CPU socket

// Two 4-GPU NVLink islands, each on its own NUMA node.
TopologyPtr TwoIslands() {
  auto t = std::make_shared<GpuTopology>();
  t->gpu_count = 8;
  for (int i = 0; i < 8; ++i) {
    t->nvlink[i] = static_cast<uint8_t>(i / 4);
    t->numa[i] = static_cast<uint8_t>(i / 4);
    for (int j = 0; j < 8; ++j) {
      if (i != j) t->link[i][j] = i / 4 == j / 4 ? kIslandLink : kCrossLink;
    }
  }
  return t;
}

// `g` GPUs on PCIe in one domain and one NUMA node.
TopologyPtr OneDomain(int g) {
  auto t = std::make_shared<GpuTopology>();
  t->gpu_count = g;
  for (int i = 0; i < g; ++i) {
    for (int j = 0; j < g; ++j) {
      if (i != j) t->link[i][j] = kPcieLink;
    }
  }
  return t;
}

// The stated topology of each node, one shared object per GPU count.
std::vector<NodeSpec> WithTopology(std::vector<NodeSpec> nodes) {
  std::map<int, TopologyPtr> by_count;
  for (NodeSpec& n : nodes) {
    if (n.gpu_count <= 0) continue;
    TopologyPtr& t = by_count[n.gpu_count];
    if (!t) t = n.gpu_count == 8 ? TwoIslands() : OneDomain(n.gpu_count);
    n.topology = t;
  }
  return nodes;
}

// The domain of GPU i at a scope.
int Domain(const GpuTopology& t, TopologyScope scope, int i) {
  return scope == TopologyScope::kNvlink ? t.nvlink[i] : t.numa[i];
}

// The fewest domains of `scope` whose sizes add up to at least k.
int MinDomains(const GpuTopology& t, TopologyScope scope, int k) {
  std::vector<int> size(kMaxGpusPerNode, 0);
  for (int i = 0; i < t.gpu_count; ++i) ++size[Domain(t, scope, i)];
  std::sort(size.begin(), size.end(), std::greater<>());
  int n = 0;
  for (int sum = 0; sum < k && n < static_cast<int>(size.size()) && size[n] > 0; ++n) {
    sum += size[n];
  }
  return n;
}

// Whether `gpus` touch no more domains of `scope` than MinDomains.
bool Aligned(const GpuTopology& t, TopologyScope scope, GpuSet gpus) {
  uint32_t touched = 0;
  for (int i = 0; i < t.gpu_count; ++i) {
    if (gpus & (GpuSet{1} << i)) touched |= uint32_t{1} << Domain(t, scope, i);
  }
  return std::popcount(touched) <= MinDomains(t, scope, std::popcount(gpus));
}

struct Column {
  std::string name;    ///< as printed
  std::string policy;  ///< the registered policy
  bool blind = false;  ///< schedules on the nodes without topology
};

const std::vector<Column>& AllColumns() {
  static const std::vector<Column> columns = {
      {"tessera", "tessera", false},
      {"tessera-blind", "tessera", true},
      {"fgd", "fgd", false},
      {"fgd-blind", "fgd", true},
      {"hami-topology", "hami-topology", false},
  };
  return columns;
}

// What one run gives at 100 % arrival.
struct Judged {
  double unallocated_pct = 0;
  int multi_placed = 0;
  int multi_aligned = 0;
  int multi_failed = 0;
  /// Multi-GPU pods placed on a node with more domains than they need (where a split is
  /// possible: 2- and 4-GPU pods on a 2×4 node), and those of them aligned.
  int open_placed = 0;
  int open_aligned = 0;
  int rejected = 0;
  double rejected_milli = 0;
  double after_pct = 0;  ///< unallocated % after the rejections
  double aligned_pct() const {
    return multi_placed > 0 ? 100.0 * multi_aligned / multi_placed : 100.0;
  }
  double open_aligned_pct() const {
    return open_placed > 0 ? 100.0 * open_aligned / open_placed : 100.0;
  }
};

Judged Judge(const RunResult& run, const std::vector<NodeSpec>& truth,
             const std::vector<PodSpec>& pods) {
  Judged j;
  j.unallocated_pct = run.curve[100].unallocated_pct;
  const double target = static_cast<double>(run.capacity_milli);  // 100 % of capacity
  double arrived = 0;
  for (const PlacementRecord& r : run.placements) {
    const PodSpec& p = pods[r.pod];
    const double milli = static_cast<double>(p.TotalGpuMilli());
    const double before = arrived;
    arrived += milli;
    if (before >= target) break;
    const double share = arrived <= target ? 1.0 : (target - before) / milli;
    const bool whole = share >= 1.0;
    const bool multi = p.gpu_count >= 2;
    if (r.node < 0) {
      if (multi && whole) ++j.multi_failed;
      continue;
    }
    if (!multi) continue;  // a single GPU or a share is aligned at every scope
    const GpuTopology* t = truth[r.node].topology.get();
    if (t == nullptr) continue;
    if (whole) {
      const bool aligned = Aligned(*t, TopologyScope::kNvlink, r.gpus);
      ++j.multi_placed;
      j.multi_aligned += aligned;
      if (MinDomains(*t, TopologyScope::kNvlink, p.gpu_count) <
          MinDomains(*t, TopologyScope::kNvlink, t->gpu_count)) {
        ++j.open_placed;
        j.open_aligned += aligned;
      }
    }
    if (!Aligned(*t, TopologyScope::kNuma, r.gpus)) {
      if (whole) ++j.rejected;
      j.rejected_milli += share * milli;
    }
  }
  j.after_pct = j.unallocated_pct + 100.0 * j.rejected_milli / target;
  return j;
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

int Main(int argc, char** argv) {
  std::string dir = TESSERA_DATA_DIR;
  std::vector<std::string> lists = {"default", "multigpu50"};
  uint64_t seed_lo = 42, seed_hi = 51;
  int threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  std::vector<Column> columns = AllColumns();
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--data") == 0 && has_value) {
      dir = argv[++i];
    } else if (std::strcmp(argv[i], "--lists") == 0 && has_value) {
      lists = SplitList(argv[++i]);
    } else if (std::strcmp(argv[i], "--seeds") == 0 && has_value) {
      const std::string s = argv[++i];
      char* end = nullptr;
      seed_lo = std::strtoull(s.c_str(), &end, 10);
      seed_hi = *end == '-' ? std::strtoull(end + 1, &end, 10) : seed_lo;
      if (*end != '\0' || seed_hi < seed_lo) {
        std::fprintf(stderr, "--seeds: expected N or LO-HI, got '%s'\n", s.c_str());
        return 2;
      }
    } else if (std::strcmp(argv[i], "--threads") == 0 && has_value) {
      threads = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--columns") == 0 && has_value) {
      columns.clear();
      for (const std::string& name : SplitList(argv[++i])) {
        const auto& all = AllColumns();
        auto it =
            std::find_if(all.begin(), all.end(), [&](const Column& c) { return c.name == name; });
        if (it == all.end()) {
          std::fprintf(stderr, "--columns: unknown column '%s'\n", name.c_str());
          return 2;
        }
        columns.push_back(*it);
      }
    } else {
      std::fprintf(stderr,
                   "usage: %s [--data DIR] [--lists default,multigpu50,...] [--seeds LO-HI] "
                   "[--threads N] [--columns tessera,tessera-blind,fgd,fgd-blind,hami-topology]\n",
                   argv[0]);
      return 2;
    }
  }
  if (columns.empty() || lists.empty()) {
    std::fprintf(stderr, "nothing to run\n");
    return 2;
  }
  const std::string node_file = dir + "/openb_node_list_gpu_node.csv";
  Result<std::string> node_text = ReadFile(node_file);
  if (!node_text) {
    std::fprintf(stderr, "%s\n", node_text.error().message.c_str());
    return 2;
  }
  Result<std::vector<NodeSpec>> blind = ReadNodeCsv(*node_text, node_file);
  if (!blind) {
    std::fprintf(stderr, "%s\n", blind.error().message.c_str());
    return 2;
  }
  for (NodeSpec& n : *blind) n.topology = nullptr;  // schedules blind
  const std::vector<NodeSpec> truth = WithTopology(*blind);
  std::vector<uint64_t> seeds;
  for (uint64_t s = seed_lo; s <= seed_hi; ++s) seeds.push_back(s);

  // The summary of every list (docs/TOPOLOGY.md's tables), printed after the last one.
  std::vector<std::string> summary, summary_seeds;
  char row[512];
  for (const std::string& list : lists) {
    const std::string file = dir + "/openb_pod_list_" + list + ".csv";
    Result<std::string> text = ReadFile(file);
    if (!text) {
      std::fprintf(stderr, "%s\n", text.error().message.c_str());
      return 2;
    }
    Result<std::vector<PodSpec>> read = ReadPodCsv(*text, file);
    if (!read) {
      std::fprintf(stderr, "%s\n", read.error().message.c_str());
      return 2;
    }
    std::vector<PodSpec> pods = std::move(*read);
    int shares = 0, singles = 0, multi = 0;
    std::map<int, int> by_count;
    for (PodSpec& p : pods) {
      if (p.gpu_count >= 2) {
        p.topology = TopologyRequest{TopologyIntent::kRequired, TopologyScope::kNvlink};
        ++multi;
        ++by_count[p.gpu_count];
      } else if (p.gpu_count == 1) {
        (p.gpu_milli < kMilliPerGpu ? shares : singles) += 1;
      }
    }
    TargetWorkload w_truth = TargetWorkload::FromPods(pods);
    w_truth.Resolve(Cluster(truth));
    TargetWorkload w_blind = TargetWorkload::FromPods(pods);
    w_blind.Resolve(Cluster(*blind));

    // Every (column, seed), on `threads` threads.
    const auto start = std::chrono::steady_clock::now();
    // One policy object per run (Policy: one thread per instance).
    auto make = [&](const Column& c) {
      PolicyContext ctx;
      ctx.workload = c.blind ? &w_blind : &w_truth;
      return MakePolicy(c.policy, ctx);
    };
    for (const Column& c : columns) {
      if (!make(c)) {
        std::fprintf(stderr, "unknown policy '%s'\n", c.policy.c_str());
        return 2;
      }
    }
    const size_t runs = columns.size() * seeds.size();
    std::vector<Judged> judged(runs);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        InflationOptions options;  // to 130 %, as `tessera frag` runs it
        options.record_placements = true;
        for (size_t k = static_cast<size_t>(t); k < runs; k += static_cast<size_t>(threads)) {
          const Column& c = columns[k / seeds.size()];
          const std::unique_ptr<Policy> policy = make(c);
          const RunResult r =
              RunInflation(c.blind ? *blind : truth, pods, c.blind ? w_blind : w_truth, *policy,
                           seeds[k % seeds.size()], options);
          judged[k] = Judge(r, truth, pods);
        }
      });
    }
    for (std::thread& t : pool) t.join();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    std::string counts;
    for (const auto& [g, n] : by_count) {
      counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " × " + std::to_string(g);
    }
    std::printf(
        "openb_pod_list_%s: %zu pods (%d shares, %d single GPUs, %d multi-GPU: %s GPUs, all "
        "`required` in one NVLink domain); %zu nodes, 8-GPU nodes as 2×4 NVLink islands; "
        "seeds %llu-%llu, at 100 %% arrival (mean ± s.d.; %zu runs, %.0f s wall):\n\n",
        list.c_str(), pods.size(), shares, singles, multi, counts.c_str(), truth.size(),
        static_cast<unsigned long long>(seed_lo), static_cast<unsigned long long>(seed_hi), runs,
        wall);
    std::printf(
        "| column | multi-GPU pods placed | aligned %% | where a split was possible: placed | "
        "aligned %% | multi-GPU pods refused | unallocated GPU %% | rejected by `restricted` | "
        "unallocated GPU %% after rejections |\n|---|---|---|---|---|---|---|---|---|\n");
    auto column_of = [&](size_t c, auto field) {
      std::vector<double> v;
      for (size_t s = 0; s < seeds.size(); ++s) v.push_back(field(judged[c * seeds.size() + s]));
      return MeanSd(v);
    };
    for (size_t c = 0; c < columns.size(); ++c) {
      const SummaryCell placed = column_of(c, [](const Judged& j) { return j.multi_placed; });
      const SummaryCell aligned = column_of(c, [](const Judged& j) { return j.aligned_pct(); });
      const SummaryCell open = column_of(c, [](const Judged& j) { return j.open_placed; });
      const SummaryCell open_aligned =
          column_of(c, [](const Judged& j) { return j.open_aligned_pct(); });
      const SummaryCell refused = column_of(c, [](const Judged& j) { return j.multi_failed; });
      const SummaryCell unalloc = column_of(c, [](const Judged& j) { return j.unallocated_pct; });
      const SummaryCell rejected = column_of(c, [](const Judged& j) { return j.rejected; });
      const SummaryCell after = column_of(c, [](const Judged& j) { return j.after_pct; });
      std::printf(
          "| %s | %.1f ± %.1f | %.2f ± %.2f | %.1f ± %.1f | %.2f ± %.2f | %.1f ± %.1f | %.2f ± "
          "%.2f | %.1f ± %.1f | %.2f ± %.2f |\n",
          columns[c].name.c_str(), placed.mean, placed.sd, aligned.mean, aligned.sd, open.mean,
          open.sd, open_aligned.mean, open_aligned.sd, refused.mean, refused.sd, unalloc.mean,
          unalloc.sd, rejected.mean, rejected.sd, after.mean, after.sd);
      std::snprintf(row, sizeof(row),
                    "| %s | %s | %.2f ± %.2f | %.2f ± %.2f | %.1f ± %.1f | %.2f ± %.2f | %.1f ± "
                    "%.1f | %.2f ± %.2f |",
                    list.c_str(), columns[c].name.c_str(), aligned.mean, aligned.sd,
                    open_aligned.mean, open_aligned.sd, refused.mean, refused.sd, unalloc.mean,
                    unalloc.sd, rejected.mean, rejected.sd, after.mean, after.sd);
      summary.push_back(row);
    }
    // Seed by seed: the first column against each other one.
    if (columns.size() > 1) {
      std::printf("\n%s against each column, seed by seed (of %zu seeds):\n\n",
                  columns[0].name.c_str(), seeds.size());
      std::printf(
          "| against | aligned higher / equal | unallocated lower / equal | rejected fewer / "
          "equal | unallocated after rejections lower / equal |\n|---|---|---|---|---|\n");
      for (size_t c = 1; c < columns.size(); ++c) {
        int ah = 0, ae = 0, ul = 0, ue = 0, rl = 0, re = 0, fl = 0, fe = 0;
        for (size_t s = 0; s < seeds.size(); ++s) {
          const Judged& a = judged[s];
          const Judged& b = judged[c * seeds.size() + s];
          ah += a.aligned_pct() > b.aligned_pct();
          ae += a.aligned_pct() == b.aligned_pct();
          ul += a.unallocated_pct < b.unallocated_pct;
          ue += a.unallocated_pct == b.unallocated_pct;
          rl += a.rejected < b.rejected;
          re += a.rejected == b.rejected;
          fl += a.after_pct < b.after_pct;
          fe += a.after_pct == b.after_pct;
        }
        std::printf("| %s | %d / %d | %d / %d | %d / %d | %d / %d |\n", columns[c].name.c_str(), ah,
                    ae, ul, ue, rl, re, fl, fe);
        std::snprintf(row, sizeof(row), "| %s | %s | %d / %d | %d / %d | %d / %d | %d / %d |",
                      list.c_str(), columns[c].name.c_str(), ah, ae, ul, ue, rl, re, fl, fe);
        summary_seeds.push_back(row);
      }
    }
    // The bar: tessera (with topology) places ≥ 99 % of the required pods in one domain and
    // leaves no more unallocated GPUs than fgd (means at 100 % arrival).
    size_t ti = columns.size(), fi = columns.size();
    for (size_t c = 0; c < columns.size(); ++c) {
      if (columns[c].name == "tessera") ti = c;
      if (columns[c].name == "fgd") fi = c;
    }
    if (ti < columns.size() && fi < columns.size()) {
      const SummaryCell ta = column_of(ti, [](const Judged& j) { return j.aligned_pct(); });
      const SummaryCell tu = column_of(ti, [](const Judged& j) { return j.unallocated_pct; });
      const SummaryCell fu = column_of(fi, [](const Judged& j) { return j.unallocated_pct; });
      std::printf(
          "\nbar: tessera aligned %.2f %% (≥ 99: %s); tessera unallocated %.2f %% against fgd "
          "%.2f %% (no more: %s)\n",
          ta.mean, ta.mean >= 99.0 ? "met" : "NOT met", tu.mean, fu.mean,
          tu.mean <= fu.mean ? "met" : "NOT met");
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  if (lists.size() > 1) {
    std::printf(
        "All lists, at 100 %% arrival (mean ± s.d. over seeds %llu-%llu):\n\n"
        "| pod list | column | multi-GPU aligned %% | where a split was possible: aligned %% | "
        "multi-GPU pods refused | unallocated GPU %% | rejected by `restricted` | unallocated "
        "after rejections %% |\n|---|---|---|---|---|---|---|---|\n",
        static_cast<unsigned long long>(seed_lo), static_cast<unsigned long long>(seed_hi));
    for (const std::string& r : summary) std::printf("%s\n", r.c_str());
    if (!summary_seeds.empty()) {
      std::printf(
          "\n%s against each column, seed by seed:\n\n| pod list | against | aligned higher / "
          "equal | unallocated lower / equal | rejected fewer / equal | unallocated after "
          "rejections lower / equal |\n|---|---|---|---|---|---|\n",
          columns[0].name.c_str());
      for (const std::string& r : summary_seeds) std::printf("%s\n", r.c_str());
    }
  }
  return 0;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) { return tessera::Main(argc, argv); }
