#include "trace/scenario.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/gpu_catalog.h"
#include "model/resources.h"
#include "model/topology_text.h"
#include "trace/csv_reader.h"
#include "trace/topology_yaml.h"
#include "trace/yaml_marks.h"
#include "util/rng.h"

namespace tessera {
namespace {

constexpr int64_t kMaxScenarioPods = 10'000'000;
constexpr int64_t kMaxPoolCount = 1'000'000;
constexpr int64_t kMaxScenarioNodes = 10'000'000;
constexpr double kMaxShare = 1e12;
constexpr double kMaxRatePerHour = 1e7;
constexpr double kMaxHorizonHours = 24.0 * 366 * 10;

// Reads one scenario; the first error found is kept and every later step is skipped.
// Not thread-safe; one per parse.
class ScenarioParser {
 public:
  explicit ScenarioParser(std::string_view file) : file_(file) {}

  // "file:line: field 'path': what". Returns false so callers can `return Fail(...)`.
  bool Fail(int line, std::string_view path, std::string_view what) {
    if (!error_) {
      std::string m;
      m.append(file_).append(":").append(std::to_string(line)).append(": field '");
      m.append(path).append("': ").append(what);
      error_ = Error{std::move(m)};
    }
    return false;
  }
  bool Fail(const YAML::Node& at, std::string_view path, std::string_view what) {
    return Fail(YamlLine(at), path, what);
  }

  std::optional<Error>& error() { return error_; }

  // A mapping's entries, checked: a mapping, keys are strings, no duplicates, all known.
  class Map {
   public:
    const YAML::Node& node() const { return node_; }
    const std::string& path() const { return path_; }
    /// The value for `key`, or an undefined node.
    YAML::Node Get(std::string_view key) const {
      for (const Entry& e : entries_) {
        if (e.name == key) return e.value;
      }
      return YAML::Node(YAML::NodeType::Undefined);
    }
    /// The key node for `key` (for the line of a value that is null), or an undefined node.
    YAML::Node Key(std::string_view key) const {
      for (const Entry& e : entries_) {
        if (e.name == key) return e.key;
      }
      return YAML::Node(YAML::NodeType::Undefined);
    }
    std::string Path(std::string_view key) const {
      return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
    }

   private:
    friend class ScenarioParser;
    struct Entry {
      std::string name;
      YAML::Node key;
      YAML::Node value;
    };
    YAML::Node node_;
    std::string path_;
    std::vector<Entry> entries_;
  };

  bool ReadMap(const YAML::Node& node, const std::string& path,
               const std::vector<std::string_view>& known, Map* map) {
    map->node_ = node;
    map->path_ = path;
    if (!node.IsMap()) {
      return Fail(node, path.empty() ? "(top level)" : path,
                  "expected a mapping, got " + YamlShown(node));
    }
    for (const auto& kv : node) {
      const YAML::Node& key = kv.first;
      if (!key.IsScalar()) {
        return Fail(key, path.empty() ? "(top level)" : path, "a key must be a plain string");
      }
      const std::string& name = key.Scalar();
      const std::string key_path = path.empty() ? name : path + "." + name;
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        std::string what = "unknown key (expected one of:";
        for (std::string_view k : known) what.append(" ").append(k);
        return Fail(key, key_path, what + ")");
      }
      for (const Map::Entry& entry : map->entries_) {
        if (entry.name == name) return Fail(key, key_path, "duplicate key");
      }
      map->entries_.push_back(Map::Entry{name, key, kv.second});
    }
    return true;
  }

  // A present value (defined and not null), or std::nullopt; a missing required one fails.
  std::optional<YAML::Node> Value(const Map& map, std::string_view key, bool required) {
    YAML::Node v = map.Get(key);
    if (v.IsDefined() && !v.IsNull()) return v;
    if (required) {
      if (v.IsDefined())
        Fail(map.Key(key), map.Path(key), "has no value");
      else
        Fail(map.node(), map.Path(key), "missing (required)");
    }
    return std::nullopt;
  }

  /// An integer in [lo, hi]; absent → `*out` unchanged (fails if required).
  bool Int(const Map& map, std::string_view key, bool required, int64_t lo, int64_t hi,
           int64_t* out, bool* present = nullptr) {
    if (present) *present = false;
    std::optional<YAML::Node> v = Value(map, key, required);
    if (!v) return !required;
    const std::string path = map.Path(key);
    if (!v->IsScalar()) return Fail(*v, path, "expected an integer, got " + YamlShown(*v));
    const std::string& s = v->Scalar();
    int64_t x = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
    if (ec == std::errc::result_out_of_range) return Fail(*v, path, "out of range: '" + s + "'");
    if (ec != std::errc() || end != s.data() + s.size()) {
      return Fail(*v, path, "not an integer: '" + s + "'");
    }
    if (!CheckRange(*v, path, x, lo, hi)) return false;
    *out = x;
    if (present) *present = true;
    return true;
  }

  bool CheckRange(const YAML::Node& at, const std::string& path, int64_t x, int64_t lo,
                  int64_t hi) {
    if (x < lo) {
      if (lo == 0) return Fail(at, path, "must not be negative, got " + std::to_string(x));
      if (lo == 1) return Fail(at, path, "must be positive, got " + std::to_string(x));
      return Fail(at, path,
                  "must be at least " + std::to_string(lo) + ", got " + std::to_string(x));
    }
    if (x > hi) {
      return Fail(at, path, "must be at most " + std::to_string(hi) + ", got " + std::to_string(x));
    }
    return true;
  }

  bool Uint64(const Map& map, std::string_view key, uint64_t* out) {
    std::optional<YAML::Node> v = Value(map, key, false);
    if (!v) return true;
    const std::string path = map.Path(key);
    if (!v->IsScalar()) return Fail(*v, path, "expected an integer, got " + YamlShown(*v));
    const std::string& s = v->Scalar();
    if (s.starts_with("-")) return Fail(*v, path, "must not be negative, got " + s);
    uint64_t x = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
    if (ec == std::errc::result_out_of_range) return Fail(*v, path, "out of range: '" + s + "'");
    if (ec != std::errc() || end != s.data() + s.size()) {
      return Fail(*v, path, "not an integer: '" + s + "'");
    }
    *out = x;
    return true;
  }

  bool Double(const Map& map, std::string_view key, bool required, double* out) {
    std::optional<YAML::Node> v = Value(map, key, required);
    if (!v) return !required;
    const std::string path = map.Path(key);
    if (!v->IsScalar()) return Fail(*v, path, "expected a number, got " + YamlShown(*v));
    const std::string& s = v->Scalar();
    double x = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
    if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(x)) {
      return Fail(*v, path, "not a number: '" + s + "'");
    }
    *out = x;
    return true;
  }

  /// A string; `required` also rejects an empty one.
  bool String(const Map& map, std::string_view key, bool required, std::string* out) {
    std::optional<YAML::Node> v = Value(map, key, required);
    if (!v) return !required;
    const std::string path = map.Path(key);
    if (!v->IsScalar()) return Fail(*v, path, "expected a string, got " + YamlShown(*v));
    if (required && v->Scalar().empty()) return Fail(*v, path, "must not be empty");
    *out = v->Scalar();
    return true;
  }

  /// A required, non-empty list.
  std::optional<YAML::Node> List(const Map& map, std::string_view key, bool required) {
    std::optional<YAML::Node> v = Value(map, key, required);
    if (!v) return std::nullopt;
    const std::string path = map.Path(key);
    if (!v->IsSequence()) {
      Fail(*v, path, "expected a list, got " + YamlShown(*v));
      return std::nullopt;
    }
    if (v->size() == 0) {
      Fail(*v, path, "must not be empty");
      return std::nullopt;
    }
    return v;
  }

  bool ReadPool(const YAML::Node& node, const std::string& path, NodePool* pool) {
    Map m;
    if (!ReadMap(node, path,
                 {"name", "model", "gpus", "gpu_memory_mib", "cpu_milli", "memory_mib", "count",
                  "topology"},
                 &m)) {
      return false;
    }
    int64_t gpus = 0, count = 0;
    bool has_gpu_memory = false;
    if (!String(m, "name", true, &pool->name) || !String(m, "model", false, &pool->model) ||
        !Int(m, "gpus", false, 0, kMaxGpusPerNode, &gpus) ||
        !Int(m, "gpu_memory_mib", false, 0, kMaxGpuMemoryMib, &pool->gpu_memory_mib,
             &has_gpu_memory) ||
        !Int(m, "cpu_milli", true, 1, kMaxCpuMilli, &pool->cpu_milli) ||
        !Int(m, "memory_mib", true, 1, kMaxMemoryMib, &pool->memory_mib) ||
        !Int(m, "count", true, 1, kMaxPoolCount, &count)) {
      return false;
    }
    pool->gpus = static_cast<int>(gpus);
    pool->count = static_cast<int>(count);
    if (gpus > 0 && pool->model.empty()) {
      return Fail(m.node(), m.Path("model"),
                  "missing (required for a pool with " + std::to_string(gpus) + " GPUs)");
    }
    if (gpus == 0 && !pool->model.empty()) {
      return Fail(m.Get("model"), m.Path("model"), "set, but the pool has no GPUs (gpus is 0)");
    }
    if (gpus == 0 && has_gpu_memory && pool->gpu_memory_mib > 0) {
      return Fail(m.Get("gpu_memory_mib"), m.Path("gpu_memory_mib"),
                  "set, but the pool has no GPUs (gpus is 0)");
    }
    pool->model = CanonicalGpuModel(pool->model);
    if (!has_gpu_memory && gpus > 0) pool->gpu_memory_mib = KnownGpuMemoryMib(pool->model);
    if (std::optional<YAML::Node> t = Value(m, "topology", false)) {
      if (gpus == 0)
        return Fail(*t, m.Path("topology"), "set, but the pool has no GPUs (gpus is 0)");
      TopologyYamlError e;
      if (!ReadTopologyYaml(*t, m.Path("topology"), pool->gpus, &pool->topology, &e)) {
        return Fail(e.line, e.field, e.what);
      }
    }
    return true;
  }

  bool ReadClass(const YAML::Node& node, const std::string& path, PodClass* c) {
    Map m;
    if (!ReadMap(node, path,
                 {"name", "cpu_milli", "memory_mib", "gpu_count", "gpu_milli", "gpu_memory_mib",
                  "models", "qos", "share", "arrival", "duration", "topology"},
                 &m)) {
      return false;
    }
    int64_t gpu_count = 0, gpu_milli = 0;
    bool has_milli = false;
    c->qos = "BE";
    if (!String(m, "name", true, &c->name) ||
        !Int(m, "cpu_milli", true, 0, kMaxCpuMilli, &c->cpu_milli) ||
        !Int(m, "memory_mib", false, 0, kMaxMemoryMib, &c->memory_mib) ||
        !Int(m, "gpu_count", false, 0, kMaxGpusPerNode, &gpu_count) ||
        !Int(m, "gpu_milli", false, 0, kMilliPerGpu, &gpu_milli, &has_milli) ||
        !Int(m, "gpu_memory_mib", false, 0, kMaxGpuMemoryMib, &c->gpu_memory_mib) ||
        !String(m, "qos", false, &c->qos) || !Double(m, "share", true, &c->share)) {
      return false;
    }
    if (std::optional<YAML::Node> t = Value(m, "topology", false)) {
      if (!t->IsScalar()) {
        return Fail(*t, m.Path("topology"), "expected required|preferred[:nvlink|:numa]");
      }
      Result<TopologyRequest> r = ParseTopologyRequest(t->Scalar());
      if (!r.ok()) return Fail(*t, m.Path("topology"), r.error().message);
      c->topology = *r;
    }
    if (std::optional<YAML::Node> a = Value(m, "arrival", false)) {
      c->has_arrival = true;
      if (!ReadArrival(*a, m.Path("arrival"), &c->arrival)) return false;
    }
    if (std::optional<YAML::Node> d = Value(m, "duration", false)) {
      if (!c->has_arrival)
        return Fail(*d, m.Path("duration"), "set, but the class has no 'arrival'");
      if (!ReadDuration(*d, m.Path("duration"), &c->duration)) return false;
    }
    if (!(c->share > 0) || c->share > kMaxShare) {
      return Fail(m.Get("share"), m.Path("share"),
                  "must be a positive fraction, got '" + m.Get("share").Scalar() + "'");
    }
    c->gpu_count = static_cast<int>(gpu_count);
    const std::string milli_path = m.Path("gpu_milli");
    if (gpu_count == 0) {
      if (gpu_milli != 0) {
        return Fail(m.Get("gpu_milli"), milli_path, "set, but gpu_count is 0 (a CPU-only class)");
      }
      if (c->gpu_memory_mib != 0) {
        return Fail(m.Get("gpu_memory_mib"), m.Path("gpu_memory_mib"),
                    "set, but gpu_count is 0 (a CPU-only class)");
      }
    } else {
      if (!has_milli) gpu_milli = kMilliPerGpu;
      if (gpu_milli == 0) return Fail(m.Get("gpu_milli"), milli_path, "must be 1..1000, got 0");
      if (gpu_count > 1 && gpu_milli != kMilliPerGpu) {
        return Fail(m.Get("gpu_milli"), milli_path,
                    "must be 1000 for a multi-GPU class (gpu_count " + std::to_string(gpu_count) +
                        "), got " + std::to_string(gpu_milli));
      }
    }
    c->gpu_milli = static_cast<int32_t>(gpu_milli);
    // models: a list of model names, kept as "A|B".
    if (std::optional<YAML::Node> models = Value(m, "models", false)) {
      const std::string models_path = m.Path("models");
      if (!models->IsSequence()) {
        return Fail(*models, models_path,
                    "expected a list of GPU models, got " + YamlShown(*models));
      }
      if (gpu_count == 0 && models->size() > 0) {
        return Fail(*models, models_path, "set, but gpu_count is 0 (a CPU-only class)");
      }
      for (size_t i = 0; i < models->size(); ++i) {
        const YAML::Node model = (*models)[i];
        const std::string model_path = models_path + "[" + std::to_string(i) + "]";
        if (!model.IsScalar() || model.Scalar().empty()) {
          return Fail(model, model_path, "expected a GPU model name, got " + YamlShown(model));
        }
        if (model.Scalar().find('|') != std::string::npos) {
          return Fail(model, model_path, "one model per entry ('|' is not allowed)");
        }
        if (!c->gpu_spec.empty()) c->gpu_spec.push_back('|');
        c->gpu_spec.append(CanonicalGpuModel(model.Scalar()));
      }
    }
    return true;
  }

  /// A number in [lo, hi].
  bool Bounded(const Map& map, std::string_view key, bool required, double lo, double hi,
               double* out) {
    const YAML::Node v = map.Get(key);
    if (!v.IsDefined() || v.IsNull()) return Double(map, key, required, out);  // absent
    if (!Double(map, key, required, out)) return false;
    if (*out < lo || *out > hi) {
      char buf[160];
      std::snprintf(buf, sizeof(buf), "must be in [%g, %g], got %g", lo, hi, *out);
      return Fail(map.Get(key), map.Path(key), buf);
    }
    return true;
  }

  bool ReadArrival(const YAML::Node& node, const std::string& path, ArrivalProcess* a) {
    Map m;
    if (!ReadMap(node, path, {"rate_per_h", "profile", "bursts"}, &m)) return false;
    if (!Bounded(m, "rate_per_h", true, 0, kMaxRatePerHour, &a->rate_per_h)) return false;
    if (std::optional<YAML::Node> p = Value(m, "profile", false)) {
      if (!p->IsSequence() || p->size() != 24) {
        return Fail(*p, m.Path("profile"), "expected a list of 24 hourly multipliers");
      }
      for (size_t i = 0; i < 24; ++i) {
        const YAML::Node v = (*p)[i];
        double x = -1;
        const std::string& t = v.IsScalar() ? v.Scalar() : std::string();
        const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), x);
        if (!v.IsScalar() || ec != std::errc() || end != t.data() + t.size() || !(x >= 0) ||
            x > 1e6) {
          return Fail(v, m.Path("profile") + "[" + std::to_string(i) + "]",
                      "expected a multiplier in [0, 1e6], got " + YamlShown(v));
        }
        a->profile.push_back(x);
      }
    }
    if (std::optional<YAML::Node> b = List(m, "bursts", false)) {
      for (size_t i = 0; i < b->size(); ++i) {
        Map bm;
        const std::string bp = m.Path("bursts") + "[" + std::to_string(i) + "]";
        RateBurst burst;
        if (!ReadMap((*b)[i], bp, {"start_h", "duration_h", "rate_per_h"}, &bm) ||
            !Bounded(bm, "start_h", true, 0, kMaxHorizonHours, &burst.start_h) ||
            !Bounded(bm, "duration_h", true, 1e-6, kMaxHorizonHours, &burst.duration_h) ||
            !Bounded(bm, "rate_per_h", true, 0, kMaxRatePerHour, &burst.rate_per_h)) {
          return false;
        }
        a->bursts.push_back(burst);
      }
    } else if (error_) {
      return false;
    }
    return true;
  }

  bool ReadDuration(const YAML::Node& node, const std::string& path, DurationDist* d) {
    Map m;
    if (!ReadMap(node, path, {"dist", "mean_s", "sigma"}, &m)) return false;
    std::string dist = "exponential";
    if (!String(m, "dist", false, &dist)) return false;
    if (dist == "fixed") {
      d->kind = DurationDist::Kind::kFixed;
    } else if (dist == "exponential") {
      d->kind = DurationDist::Kind::kExponential;
    } else if (dist == "lognormal") {
      d->kind = DurationDist::Kind::kLognormal;
    } else {
      return Fail(m.Get("dist"), m.Path("dist"),
                  "unknown distribution '" + dist + "' (expected fixed, exponential, lognormal)");
    }
    return Bounded(m, "mean_s", true, 1e-3, 1e9, &d->mean_s) &&
           Bounded(m, "sigma", false, 0, 10, &d->sigma);
  }

  bool ReadScenario(const YAML::Node& root, Scenario* s) {
    if (!root.IsDefined() || root.IsNull()) return Fail(1, "name", "missing (the file is empty)");
    Map m;
    if (!ReadMap(root, "", {"name", "description", "pods", "seed", "horizon_h", "nodes", "classes"},
                 &m)) {
      return false;
    }
    int64_t pods = 0;
    if (!String(m, "name", true, &s->name) || !String(m, "description", false, &s->description) ||
        !Int(m, "pods", true, 1, kMaxScenarioPods, &pods) || !Uint64(m, "seed", &s->seed) ||
        !Bounded(m, "horizon_h", false, 1e-6, kMaxHorizonHours, &s->horizon_h)) {
      return false;
    }
    s->pods = static_cast<int>(pods);

    std::optional<YAML::Node> nodes = List(m, "nodes", true);
    if (!nodes) return false;
    std::unordered_map<std::string, size_t> pool_names;
    int64_t total_nodes = 0;
    for (size_t i = 0; i < nodes->size(); ++i) {
      const std::string path = "nodes[" + std::to_string(i) + "]";
      NodePool pool;
      const YAML::Node item = (*nodes)[i];
      if (!ReadPool(item, path, &pool)) return false;
      auto [it, inserted] = pool_names.emplace(pool.name, i);
      if (!inserted) {
        return Fail(item["name"], path + ".name",
                    "duplicate pool name '" + pool.name + "' (also nodes[" +
                        std::to_string(it->second) + "])");
      }
      total_nodes += pool.count;
      if (total_nodes > kMaxScenarioNodes) {
        return Fail(item["count"], path + ".count",
                    "too many nodes in all (at most " + std::to_string(kMaxScenarioNodes) + ")");
      }
      s->nodes.push_back(std::move(pool));
    }

    std::optional<YAML::Node> classes = List(m, "classes", true);
    if (!classes) return false;
    std::unordered_map<std::string, size_t> class_names;
    double total_expected = 0;
    for (size_t i = 0; i < classes->size(); ++i) {
      const std::string path = "classes[" + std::to_string(i) + "]";
      PodClass c;
      const YAML::Node item = (*classes)[i];
      if (!ReadClass(item, path, &c)) return false;
      auto [it, inserted] = class_names.emplace(c.name, i);
      if (!inserted) {
        return Fail(item["name"], path + ".name",
                    "duplicate class name '" + c.name + "' (also classes[" +
                        std::to_string(it->second) + "])");
      }
      if (c.has_arrival) {
        if (s->horizon_h <= 0) {
          return Fail(item["arrival"], path + ".arrival",
                      "needs the top-level 'horizon_h' (the length of the timeline)");
        }
        double peak = 0;
        for (double x : c.arrival.profile) peak = std::max(peak, x);
        double expected =
            c.arrival.rate_per_h * (c.arrival.profile.empty() ? 1 : peak) * s->horizon_h;
        for (const RateBurst& b : c.arrival.bursts) expected += b.rate_per_h * b.duration_h;
        total_expected += expected;
        if (total_expected > static_cast<double>(kMaxScenarioPods)) {
          return Fail(item["arrival"], path + ".arrival",
                      "too many arrivals over the horizon (at most " +
                          std::to_string(kMaxScenarioPods) + " in all)");
        }
      }
      s->classes.push_back(std::move(c));
    }
    return true;
  }

 private:
  std::string_view file_;
  std::optional<Error> error_;
};

// "<prefix>-<index>", the index zero-padded to `width` digits.
std::string IndexedName(const std::string& prefix, int64_t index, int width) {
  char digits[32];
  std::snprintf(digits, sizeof(digits), "%0*lld", width, static_cast<long long>(index));
  return prefix + "-" + digits;
}

}  // namespace

Result<Scenario> ParseScenario(std::string_view yaml, std::string_view file) {
  ScenarioParser parser(file);
  Scenario scenario;
  try {
    const YAML::Node root = YAML::Load(std::string(yaml));
    if (!parser.ReadScenario(root, &scenario)) return *parser.error();
  } catch (const YAML::Exception& e) {
    const int line = e.mark.line >= 0 ? e.mark.line + 1 : 1;
    return Error{std::string(file) + ":" + std::to_string(line) + ": yaml syntax error: " + e.msg};
  } catch (const std::exception& e) {
    return Error{std::string(file) + ":1: cannot read the scenario: " + e.what()};
  }
  return scenario;
}

std::vector<NodeSpec> ScenarioNodes(const Scenario& scenario) {
  std::vector<NodeSpec> nodes;
  for (const NodePool& pool : scenario.nodes) {
    for (int i = 0; i < pool.count; ++i) {
      NodeSpec n;
      n.name = IndexedName(pool.name, i, 4);
      n.cpu_milli = pool.cpu_milli;
      n.memory_mib = pool.memory_mib;
      n.gpu_count = pool.gpus;
      if (pool.gpus > 0) {
        n.gpu_model = pool.model;
        n.gpu_memory_mib = pool.gpu_memory_mib;
        n.topology = pool.topology;  // one shared object per pool
      }
      nodes.push_back(std::move(n));
    }
  }
  return nodes;
}

std::vector<PodSpec> ScenarioPods(const Scenario& scenario) {
  const size_t num_classes = scenario.classes.size();
  const int64_t total = std::max(scenario.pods, 0);
  std::vector<PodSpec> pods;
  if (num_classes == 0 || total == 0) return pods;

  // Largest-remainder apportionment of `total` pods by share; ties go to the earlier class.
  double share_sum = 0;
  for (const PodClass& c : scenario.classes) share_sum += std::max(c.share, 0.0);
  std::vector<int64_t> counts(num_classes, 0);
  std::vector<double> remainders(num_classes, 0);
  int64_t assigned = 0;
  for (size_t i = 0; i < num_classes; ++i) {
    const double share = share_sum > 0 ? std::max(scenario.classes[i].share, 0.0) / share_sum
                                       : 1.0 / static_cast<double>(num_classes);
    const double quota = share * static_cast<double>(total);
    counts[i] = static_cast<int64_t>(std::floor(quota));
    remainders[i] = quota - static_cast<double>(counts[i]);
    assigned += counts[i];
  }
  std::vector<size_t> order(num_classes);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return remainders[a] > remainders[b]; });
  // Floating-point rounding may leave the floors off by a pod or two either way.
  for (size_t k = 0; assigned < total; k = (k + 1) % num_classes, ++assigned) ++counts[order[k]];
  for (size_t k = num_classes; assigned > total; --assigned) {
    do {
      k = (k + num_classes - 1) % num_classes;
    } while (counts[order[k]] == 0);
    --counts[order[k]];
  }

  pods.reserve(static_cast<size_t>(total));
  for (size_t i = 0; i < num_classes; ++i) {
    const PodClass& c = scenario.classes[i];
    for (int64_t k = 0; k < counts[i]; ++k) {
      PodSpec p;
      p.name = IndexedName(c.name, k, 5);
      p.cpu_milli = c.cpu_milli;
      p.memory_mib = c.memory_mib;
      p.gpu_count = c.gpu_count;
      p.gpu_milli = c.gpu_count > 0 ? c.gpu_milli : 0;
      p.gpu_memory_mib = c.gpu_memory_mib;
      p.gpu_spec = c.gpu_spec;
      p.qos = c.qos;
      p.topology = c.topology;
      pods.push_back(std::move(p));
    }
  }
  Rng rng(scenario.seed);
  rng.Shuffle(pods);
  return pods;
}

}  // namespace tessera
