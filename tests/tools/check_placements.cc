// tessera_check: an independent invariant checker for `tessera frag` output.
//
// It links nothing of the engine: it re-reads the node and pod lists and the outputs with its
// own minimal CSV code, replays placements.csv in submission order per (policy, seed), and
// verifies that
//   - no GPU (milli), CPU or memory is ever over-allocated on any node;
//   - every GPU pod got exactly its number of distinct, existing GPUs, with its milli;
//   - GPU-model constraints hold;
//   - the allocation in curve.csv at each arrival level equals the sum of the placements
//     submitted before the pod that crossed that level plus the share of that pod's placed
//     GPU that had arrived at the level (linear interpolation across the crossing pod), and
//     arrived % and unallocated % agree with the inputs; no level's allocation exceeds it.
// Usage: tessera_check NODES.csv PODS.csv PLACEMENTS.csv CURVE.csv
// Exit 0 and "OK ..." when all holds; exit 1 with the first violations otherwise.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  int Col(const std::string& name) const {
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return static_cast<int>(i);
    }
    std::fprintf(stderr, "missing column %s\n", name.c_str());
    std::exit(2);
  }
};

std::vector<std::string> Split(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  for (char c : line) {
    if (c == ',') {
      out.push_back(cell);
      cell.clear();
    } else if (c != '\r') {
      cell += c;
    }
  }
  out.push_back(cell);
  return out;
}

Table Read(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "cannot open %s\n", path.c_str());
    std::exit(2);
  }
  Table t;
  std::string line;
  std::getline(in, line);
  t.header = Split(line);
  while (std::getline(in, line)) {
    if (!line.empty()) t.rows.push_back(Split(line));
  }
  return t;
}

struct Node {
  int64_t cpu = 0, mem = 0;
  int gpus = 0;
  std::string model;
  int64_t cpu_used = 0, mem_used = 0;
  std::vector<int64_t> gpu_used;
};
struct Pod {
  int64_t cpu, mem;
  int gpus;
  int64_t milli;
  std::set<std::string> models;
};

int errors = 0;
void Fail(const std::string& what) {
  if (++errors <= 20) std::fprintf(stderr, "VIOLATION: %s\n", what.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s NODES.csv PODS.csv PLACEMENTS.csv CURVE.csv\n", argv[0]);
    return 2;
  }
  const Table nodes_t = Read(argv[1]);
  const Table pods_t = Read(argv[2]);
  const Table place_t = Read(argv[3]);
  const Table curve_t = Read(argv[4]);

  std::unordered_map<std::string, Node> base_nodes;
  int64_t capacity = 0;
  {
    const int sn = nodes_t.Col("sn"), cpu = nodes_t.Col("cpu_milli"),
              mem = nodes_t.Col("memory_mib"), gpu = nodes_t.Col("gpu"),
              model = nodes_t.Col("model");
    for (const auto& r : nodes_t.rows) {
      Node n;
      n.cpu = std::stoll(r[cpu]);
      n.mem = std::stoll(r[mem]);
      n.gpus = std::stoi(r[gpu]);
      n.model = r[model];
      n.gpu_used.assign(n.gpus, 0);
      capacity += 1000LL * n.gpus;
      base_nodes[r[sn]] = n;
    }
  }
  std::unordered_map<std::string, Pod> pods;
  {
    const int name = pods_t.Col("name"), cpu = pods_t.Col("cpu_milli"),
              mem = pods_t.Col("memory_mib"), ng = pods_t.Col("num_gpu"),
              milli = pods_t.Col("gpu_milli");
    int spec = -1;
    for (size_t i = 0; i < pods_t.header.size(); ++i) {
      if (pods_t.header[i] == "gpu_spec") spec = static_cast<int>(i);
    }
    for (const auto& r : pods_t.rows) {
      Pod p{std::stoll(r[cpu]), std::stoll(r[mem]), std::stoi(r[ng]), std::stoll(r[milli]), {}};
      if (p.gpus == 0) p.milli = 0;
      if (spec >= 0 && spec < static_cast<int>(r.size())) {
        std::stringstream ss(r[spec]);
        std::string m;
        while (std::getline(ss, m, '|')) {
          if (!m.empty()) p.models.insert(m);
        }
      }
      pods[r[name]] = p;
    }
  }

  // Replay placements per (policy, seed) in seq order; remember allocation after each seq.
  struct Run {
    std::unordered_map<std::string, Node> nodes;
    std::vector<int64_t> arrived_after;    // by seq
    std::vector<int64_t> allocated_after;  // by seq
  };
  std::map<std::pair<std::string, std::string>, Run> runs;
  const int c_policy = place_t.Col("policy"), c_seed = place_t.Col("seed"),
            c_seq = place_t.Col("seq"), c_pod = place_t.Col("pod"), c_node = place_t.Col("node"),
            c_gpus = place_t.Col("gpus"), c_milli = place_t.Col("milli_per_gpu"),
            c_status = place_t.Col("status");
  int64_t checked = 0;
  for (const auto& r : place_t.rows) {
    const std::string where =
        r[c_policy] + " seed " + r[c_seed] + " seq " + r[c_seq] + " pod " + r[c_pod];
    Run& run = runs[{r[c_policy], r[c_seed]}];
    if (run.nodes.empty()) run.nodes = base_nodes;
    const size_t seq = std::stoul(r[c_seq]);
    if (seq != run.arrived_after.size()) Fail(where + ": placements out of order");
    std::string base = r[c_pod].substr(0, r[c_pod].find('~'));
    auto pit = pods.find(base);
    if (pit == pods.end()) {
      Fail(where + ": pod not in the pod list");
      continue;
    }
    const Pod& p = pit->second;
    const int64_t before_arrived = run.arrived_after.empty() ? 0 : run.arrived_after.back();
    const int64_t before_alloc = run.allocated_after.empty() ? 0 : run.allocated_after.back();
    run.arrived_after.push_back(before_arrived + p.gpus * p.milli);
    int64_t alloc = before_alloc;
    if (r[c_status] == "OK") {
      auto nit = run.nodes.find(r[c_node]);
      if (nit == run.nodes.end()) {
        Fail(where + ": unknown node " + r[c_node]);
      } else {
        Node& n = nit->second;
        n.cpu_used += p.cpu;
        n.mem_used += p.mem;
        if (n.cpu_used > n.cpu) Fail(where + ": CPU over-allocated on " + r[c_node]);
        if (n.mem_used > n.mem) Fail(where + ": memory over-allocated on " + r[c_node]);
        std::set<int> idx;
        if (!r[c_gpus].empty()) {
          std::stringstream ss(r[c_gpus]);
          std::string g;
          while (std::getline(ss, g, '-')) idx.insert(std::stoi(g));
        }
        if (static_cast<int>(idx.size()) != p.gpus)
          Fail(where + ": wrong number of GPUs " + r[c_gpus]);
        if (p.gpus > 0 && std::stoll(r[c_milli]) != p.milli) Fail(where + ": wrong milli per GPU");
        if (p.gpus > 0 && !p.models.empty() && !p.models.count(n.model)) {
          Fail(where + ": GPU model " + n.model + " not allowed");
        }
        for (int g : idx) {
          if (g < 0 || g >= n.gpus) {
            Fail(where + ": GPU index out of range");
            continue;
          }
          n.gpu_used[g] += p.milli;
          if (n.gpu_used[g] > 1000)
            Fail(where + ": GPU " + std::to_string(g) + " over-allocated on " + r[c_node]);
        }
        alloc += p.gpus * p.milli;
      }
    } else if (r[c_status].rfind("FAILED", 0) != 0) {
      Fail(where + ": bad status " + r[c_status]);
    }
    run.allocated_after.push_back(alloc);
    ++checked;
  }

  // curve.csv against the replay.
  const int k_policy = curve_t.Col("policy"), k_seed = curve_t.Col("seed"),
            k_level = curve_t.Col("arrival_pct"), k_arrived = curve_t.Col("arrived_pct"),
            k_alloc = curve_t.Col("allocated_milli"), k_unalloc = curve_t.Col("unallocated_pct");
  int64_t curve_rows = 0;
  for (const auto& r : curve_t.rows) {
    auto it = runs.find({r[k_policy], r[k_seed]});
    if (it == runs.end()) {
      Fail("curve row for a run without placements: " + r[k_policy] + " " + r[k_seed]);
      continue;
    }
    const Run& run = it->second;
    const double level = std::stod(r[k_level]);
    double alloc = 0, arrived = 0;
    if (level > 0 && !run.arrived_after.empty()) {
      size_t s = 0;
      while (s < run.arrived_after.size() && run.arrived_after[s] * 100.0 < level * capacity) ++s;
      if (s == run.arrived_after.size()) {  // never reached: the final state
        alloc = static_cast<double>(run.allocated_after.back());
        arrived = static_cast<double>(run.arrived_after.back());
      } else {
        const double a0 = s == 0 ? 0 : static_cast<double>(run.arrived_after[s - 1]);
        const double c0 = s == 0 ? 0 : static_cast<double>(run.allocated_after[s - 1]);
        const double a1 = static_cast<double>(run.arrived_after[s]);
        const double c1 = static_cast<double>(run.allocated_after[s]);
        const double t = a1 > a0 ? (level * capacity / 100.0 - a0) / (a1 - a0) : 1.0;
        alloc = c0 + t * (c1 - c0);
        arrived = a0 + t * (a1 - a0);
      }
    }
    const std::string where = "curve " + r[k_policy] + " seed " + r[k_seed] + " @" + r[k_level];
    if (std::fabs(std::stod(r[k_alloc]) - alloc) > 1e-6 * std::max(1.0, alloc)) {
      Fail(where + ": allocated_milli " + r[k_alloc] + " but placements give " +
           std::to_string(alloc));
    }
    if (std::stod(r[k_alloc]) > level * capacity / 100.0 + 1e-6) {
      Fail(where + ": allocated_milli " + r[k_alloc] + " exceeds the arrived workload");
    }
    if (std::fabs(std::stod(r[k_arrived]) - 100.0 * arrived / capacity) > 1e-3)
      Fail(where + ": arrived_pct");
    if (std::fabs(std::stod(r[k_unalloc]) - (100.0 - 100.0 * alloc / capacity)) > 1e-3) {
      Fail(where + ": unallocated_pct");
    }
    ++curve_rows;
  }
  if (errors > 0) {
    std::fprintf(stderr, "FAILED: %d violation(s)\n", errors);
    return 1;
  }
  std::printf("OK: %zu runs, %lld placements, %lld curve rows checked\n", runs.size(),
              static_cast<long long>(checked), static_cast<long long>(curve_rows));
  return 0;
}
