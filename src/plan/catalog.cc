#include "plan/catalog.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <exception>
#include <optional>

#include "model/gpu_catalog.h"
#include "trace/topology_yaml.h"
#include "trace/yaml_marks.h"

namespace tessera {
namespace {

constexpr double kMaxMixes = 1e6;

constexpr int64_t kMaxCount = 100000;
constexpr int64_t kMaxGpus = 64;

// Reads one catalog; the first error is kept. One per parse; not thread-safe.
class CatalogParser {
 public:
  explicit CatalogParser(std::string_view file) : file_(file) {}

  std::optional<Error> error;

  bool Fail(const YAML::Node& at, const std::string& path, const std::string& what) {
    if (!error) {
      error = Error{file_ + ":" + std::to_string(YamlLine(at)) + ": " + path + ": " + what};
    }
    return false;
  }

  // Checks that `node` is a mapping with only `known` keys.
  bool Keys(const YAML::Node& node, const std::string& path,
            const std::vector<std::string>& known) {
    if (!node.IsMap()) return Fail(node, path, "expected a mapping");
    for (const auto& kv : node) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
      bool ok = false;
      for (const std::string& k : known) ok = ok || k == key;
      if (!ok) {
        std::string list;
        for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
        return Fail(kv.first, path + "." + key, "unknown key (known: " + list + ")");
      }
    }
    return true;
  }

  bool Int(const YAML::Node& map, const std::string& path, const char* key, bool required,
           int64_t lo, int64_t hi, int64_t* out) {
    const YAML::Node v = map[key];
    const std::string p = path + "." + key;
    if (!v.IsDefined() || v.IsNull()) {
      return required ? Fail(map, p, "missing (required)") : true;
    }
    if (!v.IsScalar()) return Fail(v, p, "expected an integer");
    const std::string& s = v.Scalar();
    int64_t x = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
    if (ec != std::errc() || end != s.data() + s.size()) {
      return Fail(v, p, "not an integer: '" + s + "'");
    }
    if (x < 0 && lo >= 0) return Fail(v, p, "must not be negative, got " + s);
    if (x < lo) return Fail(v, p, "must be at least " + std::to_string(lo) + ", got " + s);
    if (x > hi) return Fail(v, p, "must be at most " + std::to_string(hi) + ", got " + s);
    *out = x;
    return true;
  }

  bool Number(const YAML::Node& map, const std::string& path, const char* key, double* out) {
    const YAML::Node v = map[key];
    const std::string p = path + "." + key;
    if (!v.IsDefined() || v.IsNull()) return Fail(map, p, "missing (required)");
    if (!v.IsScalar()) return Fail(v, p, "expected a number");
    const std::string& s = v.Scalar();
    double x = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
    if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(x)) {
      return Fail(v, p, "not a number: '" + s + "'");
    }
    if (x < 0) return Fail(v, p, "must not be negative, got " + s);
    if (x > 1e9) return Fail(v, p, "at most 1e9, got " + s);
    *out = x;
    return true;
  }

  bool String(const YAML::Node& map, const std::string& path, const char* key, std::string* out) {
    const YAML::Node v = map[key];
    const std::string p = path + "." + key;
    if (!v.IsDefined() || v.IsNull()) return Fail(map, p, "missing (required)");
    if (!v.IsScalar() || v.Scalar().empty()) return Fail(v, p, "expected a non-empty string");
    *out = v.Scalar();
    return true;
  }

 private:
  std::string file_;
};

}  // namespace

Result<NodeCatalog> ParseNodeCatalog(std::string_view yaml, std::string_view file,
                                     const std::set<std::string>& known_models) {
  NodeCatalog catalog;
  catalog.file = std::string(file);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return Error{std::string(file) + ":" + std::to_string(e.mark.line + 1) +
                 ": yaml syntax error: " + e.msg};
  }
  CatalogParser p(file);
  if (!root.IsMap()) {
    p.Fail(root, "(top level)", "expected a mapping with node_types");
    return *p.error;
  }
  if (!p.Keys(root, "(top level)", {"node_types"})) return *p.error;
  const YAML::Node list = root["node_types"];
  if (!list.IsDefined() || !list.IsSequence() || list.size() == 0) {
    p.Fail(list.IsDefined() ? list : root, "node_types", "expected a non-empty list");
    return *p.error;
  }
  std::set<std::string> names;
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node e = list[i];
    const std::string path = "node_types[" + std::to_string(i) + "]";
    NodeType t;
    t.line = YamlLine(e);
    int64_t gpus = 0, min_count = 0, max_count = 0, step = 1, today = 0;
    if (!p.Keys(e, path,
                {"name", "model", "gpus", "cpu_milli", "memory_mib", "gpu_memory_mib",
                 "cost_per_hour", "min_count", "max_count", "count_today", "step", "topology"}) ||
        !p.String(e, path, "name", &t.name) || !p.String(e, path, "model", &t.model) ||
        !p.Int(e, path, "gpus", true, 1, kMaxGpus, &gpus) ||
        !p.Int(e, path, "cpu_milli", true, 1, int64_t{1} << 40, &t.cpu_milli) ||
        !p.Int(e, path, "memory_mib", true, 1, int64_t{1} << 40, &t.memory_mib) ||
        !p.Int(e, path, "gpu_memory_mib", false, 0, int64_t{1} << 30, &t.gpu_memory_mib) ||
        !p.Number(e, path, "cost_per_hour", &t.cost_per_hour) ||
        !p.Int(e, path, "min_count", false, 0, kMaxCount, &min_count) ||
        !p.Int(e, path, "max_count", true, 0, kMaxCount, &max_count) ||
        !p.Int(e, path, "step", false, 1, kMaxCount, &step) ||
        !p.Int(e, path, "count_today", false, 0, kMaxCount, &today)) {
      return *p.error;
    }
    if (!names.insert(t.name).second) {
      p.Fail(e["name"], path + ".name", "duplicate node type '" + t.name + "'");
      return *p.error;
    }
    t.model = CanonicalGpuModel(t.model);  // "Tesla-T4" names the history's T4
    if (!known_models.contains(t.model)) {
      std::string list_text;
      for (const std::string& m : known_models) list_text += (list_text.empty() ? "" : ", ") + m;
      p.Fail(e["model"], path + ".model",
             "unknown GPU model '" + t.model + "' (known: " + list_text + ")");
      return *p.error;
    }
    if (min_count > max_count) {
      p.Fail(e["min_count"], path + ".min_count",
             "min_count " + std::to_string(min_count) + " is above max_count " +
                 std::to_string(max_count));
      return *p.error;
    }
    if (today > max_count) {
      p.Fail(e["count_today"], path + ".count_today",
             "count_today " + std::to_string(today) + " is above max_count " +
                 std::to_string(max_count));
      return *p.error;
    }
    t.gpus = static_cast<int>(gpus);
    if (const YAML::Node topology = e["topology"]; topology.IsDefined() && !topology.IsNull()) {
      TopologyYamlError te;
      if (!ReadTopologyYaml(topology, path + ".topology", t.gpus, &t.topology, &te)) {
        return Error{std::string(file) + ":" + std::to_string(te.line) + ": " + te.field + ": " +
                     te.what};
      }
    }
    t.min_count = static_cast<int>(min_count);
    t.max_count = static_cast<int>(max_count);
    t.step = static_cast<int>(step);
    t.count_today = static_cast<int>(today);
    if (t.gpu_memory_mib == 0) t.gpu_memory_mib = KnownGpuMemoryMib(t.model);
    catalog.types.push_back(std::move(t));
  }
  // The search may replay any mix of the types' counts: their product bounds its work.
  double mixes = 1;
  int64_t most_gpus = 0;
  for (const NodeType& t : catalog.types) {
    mixes *= static_cast<double>(CountsOf(t).size());
    most_gpus += static_cast<int64_t>(t.gpus) * t.max_count;
  }
  if (mixes > kMaxMixes) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "%.3g mixes of the types' counts, at most %.0f (raise step)",
                  mixes, kMaxMixes);
    p.Fail(list, "node_types", buf);
    return *p.error;
  }
  if (most_gpus == 0) {
    p.Fail(list, "node_types", "every max_count is 0: no mix has a GPU");
    return *p.error;
  }
  return catalog;
}

std::vector<int> CountsOf(const NodeType& type) {
  std::vector<int> out;
  for (int c = type.min_count; c < type.max_count; c += type.step) out.push_back(c);
  out.push_back(type.max_count);
  return out;
}

std::vector<NodeSpec> MixNodes(const NodeCatalog& catalog, const std::vector<int>& counts) {
  std::vector<NodeSpec> nodes;
  for (size_t t = 0; t < catalog.types.size(); ++t) {
    const NodeType& type = catalog.types[t];
    for (int i = 0; i < counts[t]; ++i) {
      char suffix[16];
      std::snprintf(suffix, sizeof suffix, "-%04d", i);
      NodeSpec n;
      n.name = type.name + suffix;
      n.cpu_milli = type.cpu_milli;
      n.memory_mib = type.memory_mib;
      n.gpu_count = type.gpus;
      n.gpu_model = type.model;
      n.gpu_memory_mib = type.gpu_memory_mib;
      n.topology = type.topology;  // one shared object per type
      nodes.push_back(std::move(n));
    }
  }
  return nodes;
}

int64_t MixGpus(const NodeCatalog& catalog, const std::vector<int>& counts) {
  int64_t g = 0;
  for (size_t t = 0; t < catalog.types.size(); ++t) g += int64_t{counts[t]} * catalog.types[t].gpus;
  return g;
}

double MixCost(const NodeCatalog& catalog, const std::vector<int>& counts) {
  double c = 0;
  for (size_t t = 0; t < catalog.types.size(); ++t) {
    c += counts[t] * catalog.types[t].cost_per_hour;
  }
  return c;
}

std::string MixName(const NodeCatalog& catalog, const std::vector<int>& counts) {
  std::string s;
  for (size_t t = 0; t < catalog.types.size(); ++t) {
    if (counts[t] == 0) continue;
    if (!s.empty()) s += " + ";
    s += std::to_string(counts[t]) + "*" + catalog.types[t].name;
  }
  return s.empty() ? "none" : s;
}

}  // namespace tessera
