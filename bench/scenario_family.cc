#include "scenario_family.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <set>
#include <sstream>

#include "util/rng.h"

namespace tessera {
namespace {

struct ModelInfo {
  const char* name;
  int64_t gpu_memory_mib;
  std::vector<int> gpus;  // GPUs per node this model comes in
};

const std::vector<ModelInfo>& Catalog() {
  static const std::vector<ModelInfo> catalog = {
      {"A100", 81920, {8, 4}},   {"H100", 81920, {8}},     {"V100", 32768, {8, 4}},
      {"A10", 24576, {4, 2, 1}}, {"T4", 16384, {4, 2, 1}}, {"P100", 16384, {4, 2}},
  };
  return catalog;
}

const ModelInfo& Model(const std::string& name) {
  for (const ModelInfo& m : Catalog()) {
    if (name == m.name) return m;
  }
  return Catalog().front();
}

class Draw {
 public:
  Draw(uint64_t seed, int index) : rng_(seed * 1'000'003 + static_cast<uint64_t>(index)) {}
  double U(double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(rng_.Next() >> 11) * 0x1.0p-53;
  }
  int Int(int lo, int hi) { return lo + static_cast<int>(rng_.Below(hi - lo + 1)); }
  bool Chance(double p) { return U(0, 1) < p; }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[rng_.Below(v.size())];
  }

 private:
  Rng rng_;
};

struct PoolDraw {
  std::string model;
  int gpus = 0;
  double cores_per_gpu = 0;
  double weight = 0;  // share of the fleet's GPUs
};

struct ClassDraw {
  int gpu_count = 0;  // 0: CPU-only
  int32_t milli = 0;  // per GPU
  double cores = 0;   // whole pod
  double share = 0;   // of the pods, any scale
  std::string spec;   // allowed models, '|'-joined; empty = any
};

ClassDraw Share(int32_t milli, double cores, double share, std::string spec = {}) {
  return ClassDraw{1, milli, cores, share, std::move(spec)};
}
ClassDraw Whole(int gpus, double cores, double share, std::string spec = {}) {
  return ClassDraw{gpus, 1000, cores, share, std::move(spec)};
}
ClassDraw CpuOnly(double cores, double share) { return ClassDraw{0, 0, cores, share, {}}; }

const std::vector<int32_t> kShareSizes = {100, 150, 200, 250, 300, 330,
                                          400, 500, 600, 700, 750, 800};

// A random model and node size from the catalog.
PoolDraw RandomPool(Draw& d, double lo_cores, double hi_cores) {
  const ModelInfo& m = d.Pick(Catalog());
  return PoolDraw{m.name, d.Pick(m.gpus), d.U(lo_cores, hi_cores), d.U(0.2, 1.0)};
}

// A random class of a random kind; `cores_per_gpu` is the fleet's typical ratio.
ClassDraw RandomClass(Draw& d, double cores_per_gpu) {
  const int kind = d.Int(0, 9);
  if (kind <= 3) return Share(d.Pick(kShareSizes), d.U(1, 8), d.U(5, 30));
  if (kind <= 5) return Whole(1, d.U(0.3, 1.2) * cores_per_gpu, d.U(5, 30));
  if (kind == 6) return Whole(2, 2 * d.U(0.3, 1.2) * cores_per_gpu, d.U(2, 15));
  if (kind == 7) return Whole(4, 4 * d.U(0.3, 1.1) * cores_per_gpu, d.U(1, 6));
  if (kind == 8) return Whole(8, 8 * d.U(0.3, 1.0) * cores_per_gpu, d.U(0.5, 4));
  return CpuOnly(d.U(1, 16), d.U(2, 15));
}

void Inference(Draw& d, std::vector<PoolDraw>& pools, std::vector<ClassDraw>& classes) {
  pools = {{"A100", 8, d.U(12, 16), d.U(0.3, 0.5)},
           {"A10", 4, d.U(8, 16), d.U(0.2, 0.4)},
           {"T4", 2, d.U(8, 16), d.U(0.2, 0.4)}};
  classes = {Share(250, d.U(2, 4), d.U(15, 30)),
             Share(500, d.U(2, 8), d.U(15, 30)),
             Whole(1, d.U(4, 12), d.U(20, 35)),
             Whole(2, d.U(8, 24), d.U(5, 15)),
             Whole(4, d.U(16, 48), d.U(1, 4)),
             Whole(8, d.U(32, 96), d.U(1, 3), d.Chance(0.6) ? "A100" : "")};
  if (d.Chance(0.3)) classes.push_back(Share(d.Pick(kShareSizes), d.U(1, 4), d.U(3, 10), "T4"));
}

void ShareHeavy(Draw& d, std::vector<PoolDraw>& pools, std::vector<ClassDraw>& classes) {
  pools = {{"V100", 8, d.U(8, 12), d.U(0.5, 0.8)},
           {"T4", d.Chance(0.5) ? 2 : 4, d.U(8, 16), d.U(0.2, 0.5)}};
  const int sizes = d.Int(2, 4);
  for (int i = 0; i < sizes; ++i)
    classes.push_back(Share(d.Pick(kShareSizes), d.U(1, 6), d.U(10, 30)));
  classes.push_back(Whole(1, d.U(4, 10), d.U(5, 15)));
  classes.push_back(Whole(8, d.U(32, 80), d.U(0.5, 3)));
  if (d.Chance(0.5)) classes.push_back(Whole(2, d.U(8, 20), d.U(2, 8)));
}

void Training(Draw& d, std::vector<PoolDraw>& pools, std::vector<ClassDraw>& classes) {
  pools = {{d.Chance(0.5) ? "A100" : "H100", 8, d.U(10, 16), d.U(0.5, 0.8)},
           {d.Chance(0.5) ? "V100" : "A10", 4, d.U(8, 16), d.U(0.2, 0.5)}};
  const double c = d.U(4, 12);
  classes = {Whole(1, c * d.U(0.5, 1.2), d.U(20, 40)), Whole(2, 2 * c * d.U(0.5, 1.2), d.U(10, 20)),
             Whole(4, 4 * c * d.U(0.5, 1.1), d.U(5, 15)),
             Whole(8, 8 * c * d.U(0.5, 1.0), d.U(2, 8))};
  if (d.Chance(0.7)) classes.push_back(Share(500, d.U(2, 6), d.U(0, 15)));
  if (d.Chance(0.5)) classes.push_back(Share(250, d.U(1, 4), d.U(0, 10)));
}

void CpuHeavy(Draw& d, std::vector<PoolDraw>& pools, std::vector<ClassDraw>& classes) {
  pools = {RandomPool(d, 4, 8), RandomPool(d, 4, 8)};
  const double c = (pools[0].cores_per_gpu + pools[1].cores_per_gpu) / 2;
  classes = {Share(d.Pick(kShareSizes), d.U(2, 8), d.U(10, 25)),
             Share(d.Pick(kShareSizes), d.U(1, 6), d.U(10, 25)),
             Whole(1, c * d.U(1.0, 1.8), d.U(10, 30)), Whole(2, 2 * c * d.U(0.8, 1.5), d.U(3, 10)),
             CpuOnly(d.U(2, 16), d.U(3, 12))};
  if (d.Chance(0.5)) classes.push_back(Whole(8, 8 * c * d.U(0.8, 1.0), d.U(0.5, 3)));
}

void Constrained(Draw& d, std::vector<PoolDraw>& pools, std::vector<ClassDraw>& classes) {
  std::vector<ModelInfo> models = Catalog();
  const int n = d.Int(3, 4);
  for (int i = 0; i < n; ++i) {
    const size_t k = static_cast<size_t>(d.Int(0, static_cast<int>(models.size()) - 1));
    pools.push_back({models[k].name, d.Pick(models[k].gpus), d.U(8, 16), d.U(0.2, 1.0)});
    models.erase(models.begin() + static_cast<std::ptrdiff_t>(k));
  }
  const int count = d.Int(4, 7);
  for (int i = 0; i < count; ++i) {
    ClassDraw c = RandomClass(d, 10);
    if (c.gpu_count > 0 && d.Chance(0.5)) {
      c.spec = d.Pick(pools).model;
      if (d.Chance(0.4)) {
        const std::string other = d.Pick(pools).model;
        if (other != c.spec) c.spec += "|" + other;
      }
    }
    classes.push_back(c);
  }
}

void Mixed(Draw& d, std::vector<PoolDraw>& pools, std::vector<ClassDraw>& classes) {
  const int n = d.Int(1, 4);
  for (int i = 0; i < n; ++i) pools.push_back(RandomPool(d, 6, 16));
  double c = 0;
  for (const PoolDraw& p : pools) c += p.cores_per_gpu / n;
  const int count = d.Int(3, 8);
  for (int i = 0; i < count; ++i) {
    ClassDraw k = RandomClass(d, c);
    if (k.gpu_count > 0 && d.Chance(0.25)) k.spec = d.Pick(pools).model;
    classes.push_back(k);
  }
}

bool Allows(const std::string& spec, const std::string& model) {
  if (spec.empty()) return true;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, '|')) {
    if (item == model) return true;
  }
  return false;
}

int64_t Milli(double cores) { return std::max<int64_t>(100, std::llround(cores * 10) * 100); }

}  // namespace

std::vector<std::string> ScenarioFamilies() {
  return {"inference", "share-heavy", "training", "cpu-heavy", "constrained", "mixed"};
}

Scenario GenerateScenario(uint64_t seed, int index, int gpus) {
  Draw d(seed, index);
  const std::vector<std::string> families = ScenarioFamilies();
  const std::string& family = families[static_cast<size_t>(index) % families.size()];
  std::vector<PoolDraw> pools;
  std::vector<ClassDraw> classes;
  if (family == "inference") Inference(d, pools, classes);
  if (family == "share-heavy") ShareHeavy(d, pools, classes);
  if (family == "training") Training(d, pools, classes);
  if (family == "cpu-heavy") CpuHeavy(d, pools, classes);
  if (family == "constrained") Constrained(d, pools, classes);
  if (family == "mixed") Mixed(d, pools, classes);

  // A workload of CPU-only pods would never fill the GPUs: give it a whole-GPU class (which
  // every node can host).
  classes.push_back(Whole(1, d.U(1, 4), 0));

  Scenario s;
  s.name = family + "-" + std::to_string(index);
  s.seed = seed + static_cast<uint64_t>(index);
  double weights = 0;
  for (const PoolDraw& p : pools) weights += p.weight;
  int64_t capacity = 0;
  for (size_t i = 0; i < pools.size(); ++i) {
    const PoolDraw& p = pools[i];
    NodePool pool;
    pool.name = "pool" + std::to_string(i) + "-" + p.model + "x" + std::to_string(p.gpus);
    pool.model = p.model;
    pool.gpus = p.gpus;
    pool.gpu_memory_mib = Model(p.model).gpu_memory_mib;
    pool.cpu_milli = Milli(p.cores_per_gpu * p.gpus);
    pool.memory_mib = pool.cpu_milli / 1000 * 8192;
    pool.count = std::max(1, static_cast<int>(std::lround(gpus * p.weight / weights / p.gpus)));
    capacity += int64_t{pool.count} * pool.gpus * 1000;
    s.nodes.push_back(std::move(pool));
  }
  s.description = family + " fleet, " + std::to_string(capacity / 1000) + " GPUs";

  // Keep the classes some node can host: drop a model constraint no node with enough GPUs
  // meets, then the class if no node has the GPUs; cap the CPU at what such a node has.
  double request = 0, shares = 0;
  for (const ClassDraw& c : classes) {
    if (c.share <= 0 && (c.gpu_count != 1 || c.milli != 1000 || request > 0)) continue;
    ClassDraw k = c;
    int64_t cpu_cap = 0;
    for (int pass = 0; pass < 2 && cpu_cap == 0; ++pass) {
      if (pass == 1) k.spec.clear();
      for (const NodePool& p : s.nodes) {
        if (p.gpus >= k.gpu_count && (k.gpu_count == 0 || Allows(k.spec, p.model))) {
          cpu_cap = std::max(cpu_cap, p.cpu_milli);
        }
      }
    }
    if (cpu_cap == 0) continue;
    PodClass pc;
    pc.name = "c" + std::to_string(s.classes.size()) + "-" +
              (k.gpu_count == 0 ? std::string("cpu")
               : k.milli < 1000 ? "share" + std::to_string(k.milli)
                                : std::to_string(k.gpu_count) + "gpu") +
              (k.spec.empty() ? "" : "-" + k.spec);
    std::replace(pc.name.begin(), pc.name.end(), '|', '_');
    pc.cpu_milli = std::min(cpu_cap, Milli(k.cores));
    pc.memory_mib = pc.cpu_milli / 1000 * 4096;
    pc.gpu_count = k.gpu_count;
    pc.gpu_milli = k.gpu_count == 0 ? 0 : k.milli;
    pc.gpu_spec = k.gpu_count == 0 ? std::string() : k.spec;
    pc.qos = "BE";
    pc.share = k.share > 0 ? k.share : 10;
    request += pc.share * pc.gpu_count * pc.gpu_milli;
    shares += pc.share;
    s.classes.push_back(std::move(pc));
  }
  // The CPU the pods ask for when their GPU request equals the GPU capacity, as a share of
  // the cluster's CPU: at most `cpu_cap` (scaled down when over). A fleet that runs out of CPU
  // before it has placed half its GPUs measures how its CPU was sized, not where GPU pods go;
  // the cpu-heavy family comes close to the limit (70-100 %), the others stay under 90 %.
  double cpu_request = 0, cluster_cpu = 0;
  for (const PodClass& c : s.classes) cpu_request += c.share * static_cast<double>(c.cpu_milli);
  for (const NodePool& p : s.nodes) cluster_cpu += static_cast<double>(p.cpu_milli) * p.count;
  const double cpu_share = cpu_request / request * static_cast<double>(capacity) / cluster_cpu;
  const double cpu_cap = family == "cpu-heavy" ? d.U(0.7, 1.0) : 0.9;
  if (cpu_share > cpu_cap) {
    for (PodClass& c : s.classes) {
      c.cpu_milli = std::max<int64_t>(
          100, std::llround(static_cast<double>(c.cpu_milli) * cpu_cap / cpu_share / 100) * 100);
      c.memory_mib = std::max<int64_t>(1024, c.cpu_milli / 1000 * 4096);
    }
  }
  // About one cluster's worth of GPU request (the experiment clones pods up to its level).
  const double per_pod = request / shares;
  s.pods = std::max(50, static_cast<int>(std::lround(static_cast<double>(capacity) / per_pod)));
  return s;
}

Scenario GenerateSloScenario(uint64_t seed, int index, int gpus) {
  Draw d(seed ^ 0x510f4a11ULL, index);
  Scenario s;
  s.name = "slo-" + std::to_string(index);
  s.seed = seed * 7919 + static_cast<uint64_t>(index);
  s.pods = 1000;  // frag's pod count; the replay draws its pods from the arrivals
  s.horizon_h = d.Chance(0.5) ? 24 : 48;

  // The fleet: one to three pools of different node sizes.
  struct PoolKind {
    const char* model;
    int gpus;
    int64_t cpu_milli, memory_mib;
  };
  const std::vector<PoolKind> kinds = {{"A100", 8, 96000, 786432}, {"V100", 8, 64000, 524288},
                                       {"A10", 4, 64000, 262144},  {"T4", 2, 32000, 131072},
                                       {"T4", 1, 16000, 65536},    {"A10", 1, 16000, 65536}};
  std::vector<PoolKind> chosen;
  const int pools = d.Int(1, 3);
  while (static_cast<int>(chosen.size()) < pools) {
    const PoolKind& k = d.Pick(kinds);
    bool dup = false;
    for (const PoolKind& c : chosen) dup = dup || (c.model == k.model && c.gpus == k.gpus);
    if (!dup) chosen.push_back(k);
  }
  std::vector<double> weights;
  double wsum = 0;
  for (size_t i = 0; i < chosen.size(); ++i) wsum += weights.emplace_back(d.U(0.3, 1.0));
  int max_gpus = 0;
  int64_t total_gpus = 0;
  std::set<std::string> models;
  for (size_t i = 0; i < chosen.size(); ++i) {
    const PoolKind& k = chosen[i];
    NodePool p;
    p.name = std::string("p") + std::to_string(i) + "-" + k.model + "x" + std::to_string(k.gpus);
    std::transform(p.name.begin(), p.name.end(), p.name.begin(),
                   [](char c) { return static_cast<char>(std::tolower(c)); });
    p.model = k.model;
    p.gpus = k.gpus;
    p.gpu_memory_mib = Model(k.model).gpu_memory_mib;
    p.cpu_milli = k.cpu_milli;
    p.memory_mib = k.memory_mib;
    p.count = std::max(1, static_cast<int>(std::lround(gpus * weights[i] / wsum / k.gpus)));
    max_gpus = std::max(max_gpus, k.gpus);
    total_gpus += int64_t{p.count} * k.gpus;
    models.insert(k.model);
    s.nodes.push_back(p);
  }

  // The classes: two to four of the default ones, at least one with a wait SLO.
  std::vector<std::string> qos = {"LS", "Guaranteed", "Burstable", "BE"};
  std::vector<std::string> classes;
  const int n_classes = d.Int(2, 4);
  while (static_cast<int>(classes.size()) < n_classes) {
    const std::string& q = d.Pick(qos);
    if (std::find(classes.begin(), classes.end(), q) == classes.end()) classes.push_back(q);
  }
  if (classes.size() == 1 ||
      std::all_of(classes.begin(), classes.end(), [](const std::string& q) { return q == "BE"; })) {
    classes.push_back("LS");
  }
  std::sort(classes.begin(), classes.end(), [&](const std::string& a, const std::string& b) {
    return std::find(qos.begin(), qos.end(), a) < std::find(qos.begin(), qos.end(), b);
  });

  const double load = d.U(0.4, 1.1) * static_cast<double>(total_gpus);  // GPUs busy on average
  std::vector<double> load_weights;
  double lsum = 0;
  struct Kind {
    PodClass c;
    double gpus_per_pod = 0;
  };
  std::vector<Kind> pods;
  for (const std::string& q : classes) {
    const int kinds_of_class = d.Chance(0.4) ? 2 : 1;
    for (int k = 0; k < kinds_of_class; ++k) {
      PodClass c;
      c.name = q + "-" + std::to_string(k);
      std::transform(c.name.begin(), c.name.end(), c.name.begin(),
                     [](char ch) { return static_cast<char>(std::tolower(ch)); });
      c.qos = q;
      const bool service = q == "LS" || q == "Guaranteed";
      // GPU size: services mostly shares and single GPUs; jobs up to the largest node.
      const int size = d.Int(0, 9);
      if (size <= (service ? 4 : 1)) {
        c.gpu_count = 1;
        c.gpu_milli = d.Pick(std::vector<int32_t>{250, 500, 500, 750});
      } else if (size <= (service ? 8 : 5)) {
        c.gpu_count = 1;
        c.gpu_milli = 1000;
      } else {
        std::vector<int> sizes;
        for (int g : {2, 4, 8}) {
          if (g <= max_gpus) sizes.push_back(g);
        }
        c.gpu_count = sizes.empty() ? 1 : d.Pick(sizes);
        c.gpu_milli = 1000;
      }
      c.cpu_milli = static_cast<int64_t>(d.U(1, 4) * 1000) * c.gpu_count;
      c.memory_mib = int64_t{8192} * c.gpu_count;
      // Sometimes limited to one model that has nodes big enough.
      if (d.Chance(0.2)) {
        std::vector<std::string> fit;
        for (const NodePool& p : s.nodes) {
          if (p.gpus >= c.gpu_count) fit.push_back(p.model);
        }
        if (!fit.empty()) c.gpu_spec = d.Pick(fit);
      }
      c.share = 1;
      c.has_arrival = true;
      c.duration.kind = DurationDist::Kind::kLognormal;
      c.duration.sigma = d.U(0.3, 1.2);
      // Minutes to a day: log-uniform, services shorter-lived per pod than jobs on average.
      c.duration.mean_s = std::exp(d.U(std::log(300.0), std::log(service ? 6 * 3600.0 : 86400.0)));
      if (d.Chance(0.5)) {
        const double amp = d.U(0.3, 0.9);
        const double peak = d.U(0, 24);
        for (int h = 0; h < 24; ++h) {
          c.arrival.profile.push_back(1 + amp * std::cos((h - peak) * 2 * M_PI / 24));
        }
      }
      pods.push_back({c, c.gpu_count * c.gpu_milli / 1000.0});
      lsum += load_weights.emplace_back(d.U(0.2, 1.0));
    }
  }
  for (size_t i = 0; i < pods.size(); ++i) {
    PodClass& c = pods[i].c;
    const double class_load = load * load_weights[i] / lsum;  // GPUs busy on average
    c.arrival.rate_per_h = class_load / pods[i].gpus_per_pod / (c.duration.mean_s / 3600.0);
    if (c.qos == "LS" && d.Chance(0.3)) {
      RateBurst b;
      b.start_h = d.U(2, s.horizon_h - 6);
      b.duration_h = d.U(1, 3);
      b.rate_per_h = d.U(2, 4) * c.arrival.rate_per_h;
      c.arrival.bursts.push_back(b);
    }
    s.classes.push_back(c);
  }
  std::ostringstream desc;
  desc << "SLO family: " << total_gpus << " GPUs, offered load "
       << std::lround(100 * load / static_cast<double>(total_gpus)) << " %";
  s.description = desc.str();
  return s;
}

std::string ScenarioYaml(const Scenario& s) {
  std::ostringstream o;
  o << std::setprecision(17);
  std::string description;  // a double-quoted YAML scalar: the text may hold ": "
  for (char c : s.description) {
    if (c == '"' || c == '\\') description += '\\';
    description += c;
  }
  o << "name: " << s.name << "\ndescription: \"" << description << "\"\npods: " << s.pods
    << "\nseed: " << s.seed << "\n";
  if (s.horizon_h > 0) o << "horizon_h: " << s.horizon_h << "\n";
  o << "nodes:\n";
  for (const NodePool& p : s.nodes) {
    o << "  - {name: " << p.name << ", model: " << p.model << ", gpus: " << p.gpus
      << ", gpu_memory_mib: " << p.gpu_memory_mib << ", cpu_milli: " << p.cpu_milli
      << ", memory_mib: " << p.memory_mib << ", count: " << p.count << "}\n";
  }
  o << "classes:\n";
  for (const PodClass& c : s.classes) {
    o << "  - {name: " << c.name << ", cpu_milli: " << c.cpu_milli
      << ", memory_mib: " << c.memory_mib << ", gpu_count: " << c.gpu_count;
    if (c.gpu_count > 0) o << ", gpu_milli: " << c.gpu_milli;
    if (!c.gpu_spec.empty()) {
      o << ", models: [";
      std::stringstream ss(c.gpu_spec);
      std::string item;
      for (bool first = true; std::getline(ss, item, '|'); first = false) {
        o << (first ? "" : ", ") << item;
      }
      o << "]";
    }
    o << ", qos: " << c.qos << ", share: " << c.share;
    if (c.has_arrival) {
      o << ",\n     arrival: {rate_per_h: " << c.arrival.rate_per_h;
      if (!c.arrival.profile.empty()) {
        o << ", profile: [";
        for (size_t h = 0; h < c.arrival.profile.size(); ++h) {
          o << (h ? ", " : "") << c.arrival.profile[h];
        }
        o << "]";
      }
      if (!c.arrival.bursts.empty()) {
        o << ", bursts: [";
        for (size_t b = 0; b < c.arrival.bursts.size(); ++b) {
          const RateBurst& r = c.arrival.bursts[b];
          o << (b ? ", " : "") << "{start_h: " << r.start_h << ", duration_h: " << r.duration_h
            << ", rate_per_h: " << r.rate_per_h << "}";
        }
        o << "]";
      }
      static const char* kDist[] = {"fixed", "exponential", "lognormal"};
      o << "},\n     duration: {dist: " << kDist[static_cast<int>(c.duration.kind)]
        << ", mean_s: " << c.duration.mean_s;
      if (c.duration.kind == DurationDist::Kind::kLognormal) o << ", sigma: " << c.duration.sigma;
      o << "}";
    }
    o << "}\n";
  }
  return o.str();
}

}  // namespace tessera
