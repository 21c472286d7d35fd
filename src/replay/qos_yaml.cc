#include "replay/qos_yaml.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <exception>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "trace/yaml_marks.h"

namespace tessera {
namespace {

constexpr double kMaxSeconds = 1e9;
constexpr int64_t kMaxPriority = 1'000'000'000;

Error At(std::string_view file, const YAML::Node& node, const std::string& path,
         const std::string& what) {
  const int line = YamlLine(node);
  return Error{std::string(file) + ":" + std::to_string(line) + ": field '" + path + "': " + what};
}

// Checks that `node` is a mapping whose keys are all in `known` (no duplicates).
std::optional<Error> CheckMap(std::string_view file, const YAML::Node& node,
                              const std::string& path, const std::vector<std::string>& known) {
  if (!node.IsMap())
    return At(file, node, path.empty() ? "(top level)" : path,
              "expected a mapping, got " + YamlShown(node));
  std::set<std::string> seen;
  for (const auto& kv : node) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
    const std::string key_path = path.empty() ? key : path + "." + key;
    bool ok = false;
    for (const std::string& k : known) ok = ok || k == key;
    if (!ok) {
      std::string list;
      for (const std::string& k : known) list += " " + k;
      return At(file, kv.first, key_path, "unknown key (expected one of:" + list + ")");
    }
    if (!seen.insert(key).second) return At(file, kv.first, key_path, "duplicate key");
  }
  return std::nullopt;
}

std::optional<Error> Number(std::string_view file, const YAML::Node& n, const std::string& path,
                            double lo, double hi, double* out) {
  const std::string s = n.IsScalar() ? n.Scalar() : "";
  double x = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
  if (!n.IsScalar() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(x)) {
    return At(file, n, path, "expected a number, got " + YamlShown(n));
  }
  if (x < lo || x > hi) {
    return At(file, n, path,
              "must be in [" + std::to_string(static_cast<int64_t>(lo)) + ", " +
                  std::to_string(static_cast<int64_t>(hi)) + "], got " + s);
  }
  *out = x;
  return std::nullopt;
}

Result<QosClasses> Parse(const YAML::Node& root, std::string_view file) {
  if (!root.IsDefined() || root.IsNull())
    return Error{std::string(file) + ":1: field 'classes': missing (the file is empty)"};
  if (auto e = CheckMap(file, root, "", {"classes", "fallback"})) return *e;
  const YAML::Node list = root["classes"];
  if (!list) return At(file, root, "classes", "missing (required)");
  if (!list.IsSequence() || list.size() == 0)
    return At(file, list, "classes", "expected a non-empty list");
  QosClasses q;
  std::set<std::string> names;
  bool any_use_headroom = false;
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node c = list[i];
    const std::string path = "classes[" + std::to_string(i) + "]";
    if (auto e = CheckMap(
            file, c, path,
            {"name", "priority", "slo_wait_s", "preemptible", "grace_s", "use_headroom"})) {
      return *e;
    }
    QosClass k;
    if (!c["name"] || !c["name"].IsScalar() || c["name"].Scalar().empty()) {
      return At(file, c["name"] ? c["name"] : c, path + ".name", "missing or empty (required)");
    }
    k.name = c["name"].Scalar();
    if (!names.insert(k.name).second)
      return At(file, c["name"], path + ".name", "duplicate class '" + k.name + "'");
    if (!c["priority"]) return At(file, c, path + ".priority", "missing (required)");
    double priority = 0;
    if (auto e =
            Number(file, c["priority"], path + ".priority", -kMaxPriority, kMaxPriority, &priority))
      return *e;
    if (priority != std::floor(priority))
      return At(file, c["priority"], path + ".priority", "must be an integer");
    k.priority = static_cast<int>(priority);
    if (c["slo_wait_s"]) {
      if (auto e =
              Number(file, c["slo_wait_s"], path + ".slo_wait_s", 0, kMaxSeconds, &k.slo_wait_s))
        return *e;
    }
    if (c["grace_s"]) {
      if (auto e = Number(file, c["grace_s"], path + ".grace_s", 0, kMaxSeconds, &k.grace_s))
        return *e;
    }
    if (const YAML::Node p = c["preemptible"]) {
      const std::string s = p.IsScalar() ? p.Scalar() : "";
      if (s != "true" && s != "false")
        return At(file, p, path + ".preemptible", "expected true or false, got " + YamlShown(p));
      k.preemptible = s == "true";
    }
    if (const YAML::Node u = c["use_headroom"]) {
      const std::string s = u.IsScalar() ? u.Scalar() : "";
      if (s != "true" && s != "false")
        return At(file, u, path + ".use_headroom", "expected true or false, got " + YamlShown(u));
      k.use_headroom = s == "true";
      any_use_headroom = true;
    }
    q.classes.push_back(std::move(k));
  }
  // A file that gives no class use_headroom protects its highest-priority class.
  if (!any_use_headroom) {
    size_t top = 0;
    for (size_t i = 1; i < q.classes.size(); ++i) {
      if (q.classes[i].priority > q.classes[top].priority) top = i;
    }
    q.classes[top].use_headroom = true;
  }
  q.fallback = static_cast<int>(q.classes.size()) - 1;
  if (const YAML::Node f = root["fallback"]) {
    const std::string s = f.IsScalar() ? f.Scalar() : "";
    int found = -1;
    for (size_t i = 0; i < q.classes.size(); ++i) {
      if (q.classes[i].name == s) found = static_cast<int>(i);
    }
    if (found < 0) return At(file, f, "fallback", "names no class: " + YamlShown(f));
    q.fallback = found;
  }
  return q;
}

}  // namespace

Result<QosClasses> ParseQosClasses(std::string_view yaml, std::string_view file) {
  try {
    return Parse(YAML::Load(std::string(yaml)), file);
  } catch (const YAML::Exception& e) {
    const int line = e.mark.line >= 0 ? e.mark.line + 1 : 1;
    return Error{std::string(file) + ":" + std::to_string(line) + ": yaml syntax error: " + e.msg};
  } catch (const std::exception& e) {
    return Error{std::string(file) + ":1: cannot read the classes: " + e.what()};
  }
}

}  // namespace tessera
