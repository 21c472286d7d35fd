#include "k8s/translate/node_topology.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "k8s/api/json_util.h"
#include "k8s/api/quantity.h"
#include "k8s/hami/register.h"
#include "k8s/hami/score.h"
#include "model/resources.h"
#include "model/topology_text.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;

// An array of arrays of GPU indices.
Result<std::vector<std::vector<int>>> ReadGroups(const Json& v, const std::string& path) {
  if (!v.is_array()) return TypeError(path, "array", v);
  std::vector<std::vector<int>> out;
  for (size_t d = 0; d < v.size(); ++d) {
    const std::string dpath = PathIndex(path, d);
    if (!v[d].is_array()) return TypeError(dpath, "array", v[d]);
    std::vector<int>& group = out.emplace_back();
    for (size_t k = 0; k < v[d].size(); ++k) {
      int64_t g = 0;
      if (!v[d][k].is_number()) return TypeError(PathIndex(dpath, k), "integer", v[d][k]);
      TESSERA_RETURN_IF_ERROR(ReadInt64(&v[d][k], PathIndex(dpath, k), 0, kMaxGpusPerNode - 1, &g));
      group.push_back(static_cast<int>(g));
    }
  }
  return out;
}

Result<TopologyPtr> FromOurAnnotation(std::string_view value, const std::string& path,
                                      int gpu_count) {
  Result<Json> parsed = ParseJson(value, kDefaultMaxBodyBytes, path);
  if (!parsed.ok()) return parsed.error();
  const Json& doc = *parsed;
  if (!doc.is_object()) return TypeError(path, "object", doc);
  TopologyGroups groups;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string field = PathKey(path, it.key());
    const Json& v = *it;
    if (it.key() == "nvlink") {
      TESSERA_ASSIGN_OR_RETURN(groups.nvlink, ReadGroups(v, field));
    } else if (it.key() == "numa") {
      TESSERA_ASSIGN_OR_RETURN(groups.numa, ReadGroups(v, field));
    } else if (it.key() == "numaCpu") {
      if (!v.is_array()) return TypeError(field, "array", v);
      for (size_t d = 0; d < v.size(); ++d) {
        const std::string dpath = PathIndex(field, d);
        int64_t milli = 0;
        if (v[d].is_string()) {
          Result<int64_t> m = QuantityToMilli(v[d].get_ref<const std::string&>());
          if (!m.ok()) return ErrorAt(dpath, m.error().message);
          milli = *m;
        } else if (v[d].is_number_integer()) {
          int64_t cores = 0;
          TESSERA_RETURN_IF_ERROR(ReadInt64(&v[d], dpath, 0, kMaxCpuMilli / 1000, &cores));
          milli = cores * 1000;
        } else {
          return TypeError(dpath, "quantity string or integer", v[d]);
        }
        if (milli < 0 || milli > kMaxCpuMilli) return ErrorAt(dpath, "CPU out of range");
        groups.numa_cpu_milli.push_back(milli);
      }
    } else if (it.key() == "links") {
      if (!v.is_array()) return TypeError(field, "array", v);
      for (size_t a = 0; a < v.size(); ++a) {
        const std::string rpath = PathIndex(field, a);
        if (!v[a].is_array()) return TypeError(rpath, "array", v[a]);
        std::vector<int64_t>& row = groups.links.emplace_back();
        for (size_t b = 0; b < v[a].size(); ++b) {
          int64_t s = 0;
          if (!v[a][b].is_number()) return TypeError(PathIndex(rpath, b), "integer", v[a][b]);
          TESSERA_RETURN_IF_ERROR(ReadInt64(&v[a][b], PathIndex(rpath, b), 0, kMaxLinkScore, &s));
          row.push_back(s);
        }
      }
    } else {
      return ErrorAt(field, "unknown field (known: nvlink, numa, numaCpu, links)");
    }
  }
  Result<GpuTopology> t = BuildTopology(gpu_count, groups);
  if (!t.ok()) {
    const std::string& m = t.error().message;
    // BuildTopology's paths are relative ("nvlink[1][0]: ..."); root them at the annotation.
    return Error{m.rfind("nvlink", 0) == 0 || m.rfind("numa", 0) == 0 || m.rfind("links", 0) == 0
                     ? path + "." + m
                     : path + ": " + m};
  }
  return std::make_shared<const GpuTopology>(*t);
}

Result<TopologyPtr> FromHami(const Node& node, std::string_view value, const std::string& ann,
                             int gpu_count) {
  const std::string path = PathKey(ann, kHamiScoreAnnotation);
  const std::string reg_path = PathKey(ann, kHamiRegisterAnnotation);
  auto reg = node.annotations.find(std::string(kHamiRegisterAnnotation));
  if (reg == node.annotations.end()) {
    return ErrorAt(path, "needs " + reg_path + " to map GPU UUIDs to indices");
  }
  Result<std::vector<HamiDevice>> devices = ParseHamiNodeRegister(reg->second);
  if (!devices.ok()) return ErrorAt(reg_path, devices.error().message);
  std::map<std::string, int, std::less<>> index;  // healthy UUID -> GPU index; -1 unhealthy
  std::vector<int32_t> numa;
  std::vector<std::string> uuids;
  for (const HamiDevice& d : *devices) {
    index[d.uuid] = d.healthy ? static_cast<int>(numa.size()) : -1;
    if (!d.healthy) continue;
    numa.push_back(d.numa);
    uuids.push_back(d.uuid);
  }
  if (static_cast<int>(numa.size()) != gpu_count) {
    return ErrorAt(reg_path, std::to_string(numa.size()) +
                                 " healthy GPUs registered, but the node has " +
                                 std::to_string(gpu_count));
  }
  Result<std::vector<HamiPairScore>> scores = ParseHamiNodeScore(value, path);
  if (!scores.ok()) return scores.error();
  constexpr int64_t kNone = -1;
  std::vector<std::vector<int64_t>> dir(numa.size(), std::vector<int64_t>(numa.size(), kNone));
  std::vector<bool> has_entry(numa.size(), false);
  for (size_t i = 0; i < scores->size(); ++i) {
    const HamiPairScore& s = (*scores)[i];
    const std::string epath = PathIndex(path, i);
    auto from = index.find(s.uuid);
    if (from == index.end()) {
      return ErrorAt(PathKey(epath, "uuid"),
                     "GPU " + QuoteForError(s.uuid) + " is not in " + reg_path);
    }
    if (from->second < 0) continue;  // an unhealthy GPU: not one of the node's GPUs
    has_entry[from->second] = true;
    for (const auto& [uuid, score] : s.scores) {
      auto to = index.find(uuid);
      if (to == index.end()) {
        return ErrorAt(PathKey(epath, "score") + "[" + QuoteForError(uuid, 256) + "]",
                       "GPU " + QuoteForError(uuid) + " is not in " + reg_path);
      }
      if (to->second < 0 || to->second == from->second) continue;
      dir[from->second][to->second] = score;
    }
  }
  const size_t n = numa.size();
  for (size_t g = 0; g < n; ++g) {
    if (!has_entry[g]) {
      return ErrorAt(
          path, "GPU " + std::to_string(g) + " (" + QuoteForError(uuids[g]) + ") has no entry");
    }
  }
  TopologyGroups groups;
  groups.links.assign(n, std::vector<int64_t>(n, 0));
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = a + 1; b < n; ++b) {
      int64_t ab = dir[a][b], ba = dir[b][a];
      if (ab == kNone && ba == kNone) {
        return ErrorAt(path, "no score between GPU " + std::to_string(a) + " and GPU " +
                                 std::to_string(b) + " in either direction");
      }
      const int64_t v = ab == kNone ? ba : ba == kNone ? ab : std::min(ab, ba);
      groups.links[a][b] = groups.links[b][a] = v;
    }
  }
  // NVLink domains: connected groups over pairs scoring >= 100 (one NVLink link or more).
  std::vector<int> domain(n, -1);
  for (size_t root = 0; root < n; ++root) {
    if (domain[root] >= 0) continue;
    const int d = static_cast<int>(groups.nvlink.size());
    std::vector<int>& members = groups.nvlink.emplace_back();
    std::vector<size_t> stack = {root};
    domain[root] = d;
    while (!stack.empty()) {
      const size_t g = stack.back();
      stack.pop_back();
      members.push_back(static_cast<int>(g));
      for (size_t o = 0; o < n; ++o) {
        if (domain[o] < 0 && groups.links[g][o] >= 100) {
          domain[o] = d;
          stack.push_back(o);
        }
      }
    }
  }
  std::map<int32_t, size_t> numa_group;
  for (size_t g = 0; g < n; ++g) {
    auto [it, fresh] = numa_group.try_emplace(numa[g], groups.numa.size());
    if (fresh) groups.numa.emplace_back();
    groups.numa[it->second].push_back(static_cast<int>(g));
  }
  Result<GpuTopology> t = BuildTopology(gpu_count, groups);
  if (!t.ok()) return ErrorAt(path, t.error().message);
  return std::make_shared<const GpuTopology>(*t);
}

}  // namespace

Result<TopologyPtr> NodeTopology(const Node& node, const NodeSpec& spec) {
  const std::string ann = PathKey(PathKey(node.json_path, "metadata"), "annotations");
  if (auto it = node.annotations.find(std::string(kGpuTopologyAnnotation));
      it != node.annotations.end()) {
    const std::string path = PathKey(ann, kGpuTopologyAnnotation);
    if (spec.gpu_count <= 0) return ErrorAt(path, "the node has no GPUs");
    return FromOurAnnotation(it->second, path, spec.gpu_count);
  }
  if (auto it = node.annotations.find(std::string(kHamiScoreAnnotation));
      it != node.annotations.end()) {
    if (spec.gpu_count <= 0) {
      return ErrorAt(PathKey(ann, kHamiScoreAnnotation), "the node has no GPUs");
    }
    return FromHami(node, it->second, ann, spec.gpu_count);
  }
  return TopologyPtr{};
}

}  // namespace tessera::k8s
