#include "trace/topology_yaml.h"

#include <charconv>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "model/resources.h"
#include "model/topology_text.h"
#include "trace/yaml_marks.h"

namespace tessera {
namespace {

// Reads one topology block; the first error is kept.
class Reader {
 public:
  explicit Reader(TopologyYamlError* error) : error_(error) {}

  bool Fail(const YAML::Node& at, const std::string& field, const std::string& what) {
    *error_ = TopologyYamlError{YamlLine(at), field, what};
    return false;
  }

  bool Int(const YAML::Node& v, const std::string& path, int64_t lo, int64_t hi, int64_t* out) {
    const std::string& t = v.IsScalar() ? v.Scalar() : std::string();
    int64_t x = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), x);
    if (!v.IsScalar() || ec != std::errc() || end != t.data() + t.size()) {
      return Fail(v, path, "expected an integer, got " + YamlShown(v));
    }
    if (x < lo || x > hi) {
      return Fail(v, path,
                  "must be in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " + t);
    }
    *out = x;
    return true;
  }

  bool Groups(const YAML::Node& node, const std::string& path, std::vector<std::vector<int>>* out) {
    if (!node.IsSequence()) return Fail(node, path, "expected a list of GPU index lists");
    for (size_t d = 0; d < node.size(); ++d) {
      const YAML::Node group = node[d];
      const std::string dpath = path + "[" + std::to_string(d) + "]";
      if (!group.IsSequence()) return Fail(group, dpath, "expected a list of GPU indices");
      std::vector<int>& gpus = out->emplace_back();
      for (size_t k = 0; k < group.size(); ++k) {
        int64_t g = 0;
        if (!Int(group[k], dpath + "[" + std::to_string(k) + "]", 0, kMaxGpusPerNode - 1, &g)) {
          return false;
        }
        gpus.push_back(static_cast<int>(g));
      }
    }
    return true;
  }

  bool Ints(const YAML::Node& node, const std::string& path, int64_t hi,
            std::vector<int64_t>* out) {
    if (!node.IsSequence()) return Fail(node, path, "expected a list of integers");
    for (size_t i = 0; i < node.size(); ++i) {
      int64_t x = 0;
      if (!Int(node[i], path + "[" + std::to_string(i) + "]", 0, hi, &x)) return false;
      out->push_back(x);
    }
    return true;
  }

 private:
  TopologyYamlError* error_;
};

}  // namespace

bool ReadTopologyYaml(const YAML::Node& node, const std::string& path, int gpus, TopologyPtr* out,
                      TopologyYamlError* error) {
  Reader r(error);
  TopologyGroups groups;
  YAML::Node values[5];  // by key, for the line of a BuildTopology error
  static constexpr const char* kKeys[5] = {"nvlink", "numa", "numa_cpu_milli", "links",
                                           "kubelet_policy"};
  if (node.IsScalar()) {
    Result<TopologyGroups> g = ParseCompactTopology(node.Scalar());
    if (!g.ok()) return r.Fail(node, path, g.error().message);
    groups = std::move(*g);
  } else if (node.IsMap()) {
    std::set<std::string> seen;
    for (const auto& kv : node) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
      const std::string kpath = path + "." + key;
      int k = 0;
      while (k < 5 && key != kKeys[k]) ++k;
      if (k == 5) {
        return r.Fail(kv.first, kpath,
                      "unknown key (expected one of: nvlink numa numa_cpu_milli links "
                      "kubelet_policy)");
      }
      if (!seen.insert(key).second) return r.Fail(kv.first, kpath, "duplicate key");
      const YAML::Node& v = kv.second;
      values[k] = v;
      if (v.IsNull()) continue;
      bool ok = true;
      switch (k) {
        case 0:
          ok = r.Groups(v, kpath, &groups.nvlink);
          break;
        case 1:
          ok = r.Groups(v, kpath, &groups.numa);
          break;
        case 2:
          ok = r.Ints(v, kpath, kMaxCpuMilli, &groups.numa_cpu_milli);
          break;
        case 3:
          if (!v.IsSequence()) return r.Fail(v, kpath, "expected a list of rows");
          for (size_t a = 0; a < v.size() && ok; ++a) {
            ok = r.Ints(v[a], kpath + "[" + std::to_string(a) + "]", kMaxLinkScore,
                        &groups.links.emplace_back());
          }
          break;
        default: {
          if (!v.IsScalar()) return r.Fail(v, kpath, "expected a string, got " + YamlShown(v));
          Result<KubeletTopologyPolicy> p = ParseKubeletPolicy(v.Scalar());
          if (!p.ok()) return r.Fail(v, kpath, p.error().message);
          groups.kubelet = *p;
        }
      }
      if (!ok) return false;
    }
  } else {
    return r.Fail(
        node, path,
        "expected a mapping (nvlink, numa, ...) or the compact text, got " + YamlShown(node));
  }
  Result<GpuTopology> t = BuildTopology(gpus, groups);
  if (!t.ok()) {
    // "nvlink[1][3]: GPU 9 ..." names a field below the block: point at it.
    const std::string& msg = t.error().message;
    const size_t colon = msg.find(": ");
    if (node.IsMap() && colon != std::string::npos) {
      const std::string field = msg.substr(0, colon);
      std::string key = field.substr(0, field.find('['));
      if (key == "numaCpu") key = "numa_cpu_milli";
      for (int k = 0; k < 5; ++k) {
        if (key != kKeys[k] || !values[k].IsDefined()) continue;
        return r.Fail(
            values[k],
            path + "." + key +
                field.substr(field.find('[') == std::string::npos ? field.size() : field.find('[')),
            msg.substr(colon + 2));
      }
    }
    return r.Fail(node, path, msg);
  }
  *out = std::make_shared<const GpuTopology>(*t);
  return true;
}

}  // namespace tessera
