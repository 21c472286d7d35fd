#include "model/topology_text.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/resources.h"
#include "util/text.h"

namespace tessera {
namespace {

std::string Index(std::string_view path, size_t i) {
  return std::string(path) + "[" + std::to_string(i) + "]";
}

// Fills `domain_of` (GPU -> domain as listed) from one partition; -1 stays for GPUs in none.
Status ReadPartition(std::string_view name, int gpu_count,
                     const std::vector<std::vector<int>>& groups, std::vector<int>* domain_of) {
  domain_of->assign(static_cast<size_t>(gpu_count), -1);
  if (groups.size() > static_cast<size_t>(gpu_count)) {
    return ErrorAt(name, std::to_string(groups.size()) + " domains for " +
                             std::to_string(gpu_count) + " GPUs");
  }
  for (size_t d = 0; d < groups.size(); ++d) {
    if (groups[d].empty()) return ErrorAt(Index(name, d), "empty domain");
    for (size_t k = 0; k < groups[d].size(); ++k) {
      const int g = groups[d][k];
      const std::string path = Index(Index(name, d), k);
      if (g < 0 || g >= gpu_count) {
        return ErrorAt(path, "GPU " + std::to_string(g) + " is out of range 0.." +
                                 std::to_string(gpu_count - 1));
      }
      if ((*domain_of)[g] >= 0) {
        return ErrorAt(path, "GPU " + std::to_string(g) + " is already in " + std::string(name) +
                                 "[" + std::to_string((*domain_of)[g]) + "]");
      }
      (*domain_of)[g] = static_cast<int>(d);
    }
  }
  for (int g = 0; g < gpu_count; ++g) {
    if ((*domain_of)[g] < 0) return ErrorAt(name, "GPU " + std::to_string(g) + " is in no domain");
  }
  return Status();
}

// Renumbers listed domains densely in order of their lowest GPU; `order[listed] = dense`.
std::vector<int> Dense(const std::vector<int>& domain_of, size_t domains) {
  std::vector<int> order(domains, -1);
  int next = 0;
  for (int d : domain_of) {
    if (order[d] < 0) order[d] = next++;
  }
  return order;
}

bool ParseInt(std::string_view s, int* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (;;) {
    const size_t at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

}  // namespace

Result<GpuTopology> BuildTopology(int gpu_count, const TopologyGroups& groups) {
  if (gpu_count <= 0) return Error{"a topology needs a node with GPUs"};
  if (gpu_count > kMaxGpusPerNode) {
    return Error{std::to_string(gpu_count) + " GPUs, more than " + std::to_string(kMaxGpusPerNode)};
  }
  const size_t n = static_cast<size_t>(gpu_count);
  GpuTopology t;
  t.gpu_count = gpu_count;
  t.kubelet = groups.kubelet;

  std::vector<int> nvlink(n), numa(n, 0);
  if (groups.nvlink.empty()) {
    for (size_t g = 0; g < n; ++g) nvlink[g] = static_cast<int>(g);
  } else {
    TESSERA_RETURN_IF_ERROR(ReadPartition("nvlink", gpu_count, groups.nvlink, &nvlink));
    const std::vector<int> order = Dense(nvlink, groups.nvlink.size());
    for (int& d : nvlink) d = order[d];
  }
  size_t numa_domains = 1;
  if (!groups.numa.empty()) {
    TESSERA_RETURN_IF_ERROR(ReadPartition("numa", gpu_count, groups.numa, &numa));
    numa_domains = groups.numa.size();
  }
  const std::vector<int> numa_order = Dense(numa, numa_domains);
  if (!groups.numa_cpu_milli.empty()) {
    if (groups.numa_cpu_milli.size() != numa_domains) {
      return ErrorAt("numaCpu", std::to_string(groups.numa_cpu_milli.size()) + " values for " +
                                    std::to_string(numa_domains) + " NUMA nodes");
    }
    for (size_t d = 0; d < numa_domains; ++d) {
      const int64_t v = groups.numa_cpu_milli[d];
      if (v < 0 || v > kMaxCpuMilli) {
        return ErrorAt(Index("numaCpu", d), std::to_string(v) + " milli-CPU is out of range");
      }
      t.numa_cpu_milli[numa_order[d]] = v;
    }
  }
  for (size_t g = 0; g < n; ++g) {
    t.nvlink[g] = static_cast<uint8_t>(nvlink[g]);
    t.numa[g] = static_cast<uint8_t>(numa_order[numa[g]]);
  }

  if (groups.links.empty()) {
    for (size_t a = 0; a < n; ++a) {
      for (size_t b = 0; b < n; ++b) {
        if (a == b) continue;
        t.link[a][b] = t.nvlink[a] == t.nvlink[b] && !groups.nvlink.empty() ? kDerivedNvlinkScore
                       : t.numa[a] == t.numa[b]                             ? kDerivedSameNumaScore
                                                : kDerivedCrossNumaScore;
      }
    }
    return t;
  }
  if (groups.links.size() != n) {
    return ErrorAt("links", std::to_string(groups.links.size()) + " rows for " +
                                std::to_string(gpu_count) + " GPUs");
  }
  for (size_t a = 0; a < n; ++a) {
    if (groups.links[a].size() != n) {
      return ErrorAt(Index("links", a), std::to_string(groups.links[a].size()) + " columns for " +
                                            std::to_string(gpu_count) + " GPUs");
    }
    for (size_t b = 0; b < n; ++b) {
      const int64_t v = groups.links[a][b];
      const std::string path = Index(Index("links", a), b);
      if (v < 0 || v > kMaxLinkScore) {
        return ErrorAt(path,
                       std::to_string(v) + " is out of range 0.." + std::to_string(kMaxLinkScore));
      }
      if (a == b && v != 0) return ErrorAt(path, "the diagonal must be 0");
      if (groups.links[b].size() == n && groups.links[b][a] != v) {
        return ErrorAt(path, std::to_string(v) + " differs from " + Index(Index("links", b), a) +
                                 " " + std::to_string(groups.links[b][a]) +
                                 " (the matrix is symmetric)");
      }
      t.link[a][b] = static_cast<uint16_t>(v);
    }
  }
  return t;
}

Result<std::vector<std::vector<int>>> ParseGpuGroups(std::string_view text) {
  std::vector<std::vector<int>> out;
  const std::string_view all = TrimBlanks(text);
  if (all.empty()) return Error{"no GPU groups"};
  for (std::string_view group : Split(all, '/')) {
    std::vector<int>& gpus = out.emplace_back();
    group = TrimBlanks(group);
    if (group.empty()) return Error{"empty GPU group in \"" + std::string(all) + "\""};
    for (std::string_view item : Split(group, ',')) {
      item = TrimBlanks(item);
      const size_t dash = item.find('-');
      int lo = 0, hi = 0;
      if (dash == std::string_view::npos) {
        if (!ParseInt(item, &lo)) return Error{"bad GPU index \"" + std::string(item) + "\""};
        hi = lo;
      } else if (!ParseInt(TrimBlanks(item.substr(0, dash)), &lo) ||
                 !ParseInt(TrimBlanks(item.substr(dash + 1)), &hi) || hi < lo) {
        return Error{"bad GPU range \"" + std::string(item) + "\""};
      }
      if (hi >= kMaxGpusPerNode) {
        return Error{"GPU index " + std::to_string(hi) + " is beyond " +
                     std::to_string(kMaxGpusPerNode - 1)};
      }
      for (int g = lo; g <= hi; ++g) gpus.push_back(g);
    }
  }
  return out;
}

Result<TopologyGroups> ParseCompactTopology(std::string_view text) {
  TopologyGroups g;
  bool seen[3] = {false, false, false};
  for (std::string_view pair : Split(TrimBlanks(text), ';')) {
    pair = TrimBlanks(pair);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    if (eq == std::string_view::npos) {
      return Error{"\"" + std::string(pair) + "\" is not key=value"};
    }
    const std::string_view key = TrimBlanks(pair.substr(0, eq));
    const std::string_view value = TrimBlanks(pair.substr(eq + 1));
    const int k = key == "nvlink" ? 0 : key == "numa" ? 1 : key == "kubelet" ? 2 : -1;
    if (k < 0) {
      return Error{"unknown key \"" + std::string(key) + "\" (known: nvlink, numa, kubelet)"};
    }
    if (seen[k]) return Error{"key \"" + std::string(key) + "\" given twice"};
    seen[k] = true;
    if (k == 2) {
      Result<KubeletTopologyPolicy> p = ParseKubeletPolicy(value);
      if (!p.ok()) return ErrorAt(key, p.error().message);
      g.kubelet = *p;
      continue;
    }
    Result<std::vector<std::vector<int>>> groups = ParseGpuGroups(value);
    if (!groups.ok()) return ErrorAt(key, groups.error().message);
    (k == 0 ? g.nvlink : g.numa) = std::move(*groups);
  }
  return g;
}

std::string FormatCompactTopology(const GpuTopology& topology) {
  return "nvlink=" + FormatGpuGroups(topology, TopologyScope::kNvlink) +
         ";numa=" + FormatGpuGroups(topology, TopologyScope::kNuma) +
         ";kubelet=" + std::string(KubeletPolicyName(topology.kubelet));
}

std::string FormatGpuGroups(const GpuTopology& topology, TopologyScope scope) {
  const auto& of = scope == TopologyScope::kNuma ? topology.numa : topology.nvlink;
  std::string out;
  for (int d = 0;; ++d) {
    std::string group;
    for (int g = 0; g < topology.gpu_count; ++g) {
      if (of[g] != d) continue;
      int end = g;  // extend a run of consecutive members
      while (end + 1 < topology.gpu_count && of[end + 1] == d) ++end;
      if (!group.empty()) group += ',';
      group += end > g ? std::to_string(g) + "-" + std::to_string(end) : std::to_string(g);
      g = end;
    }
    if (group.empty()) return out;
    if (!out.empty()) out += '/';
    out += group;
  }
}

Result<TopologyRequest> ParseTopologyRequest(std::string_view text) {
  const std::string_view t = TrimBlanks(text);
  TopologyRequest r;
  if (t.empty() || t == "none") return r;
  const size_t colon = t.find(':');
  const std::string_view intent = t.substr(0, colon);
  if (intent == "required") {
    r.intent = TopologyIntent::kRequired;
  } else if (intent == "preferred") {
    r.intent = TopologyIntent::kPreferred;
  } else {
    return Error{"\"" + std::string(t) + "\" is not required|preferred[:nvlink|:numa] (or none)"};
  }
  if (colon != std::string_view::npos) {
    const std::string_view scope = t.substr(colon + 1);
    if (scope == "numa") {
      r.scope = TopologyScope::kNuma;
    } else if (scope != "nvlink") {
      return Error{"\"" + std::string(t) + "\": unknown scope \"" + std::string(scope) +
                   "\" (known: nvlink, numa)"};
    }
  }
  return r;
}

Result<KubeletTopologyPolicy> ParseKubeletPolicy(std::string_view text) {
  const std::string_view t = TrimBlanks(text);
  if (t == "none") return KubeletTopologyPolicy::kNone;
  if (t == "best-effort") return KubeletTopologyPolicy::kBestEffort;
  if (t == "restricted") return KubeletTopologyPolicy::kRestricted;
  if (t == "single-numa-node") return KubeletTopologyPolicy::kSingleNumaNode;
  return Error{"unknown kubelet topology policy \"" + std::string(t) +
               "\" (known: none, best-effort, restricted, single-numa-node)"};
}

std::string_view KubeletPolicyName(KubeletTopologyPolicy policy) {
  switch (policy) {
    case KubeletTopologyPolicy::kNone:
      return "none";
    case KubeletTopologyPolicy::kBestEffort:
      return "best-effort";
    case KubeletTopologyPolicy::kRestricted:
      return "restricted";
    case KubeletTopologyPolicy::kSingleNumaNode:
      return "single-numa-node";
  }
  return "none";
}

TopologyPtr WithKubeletPolicy(const TopologyPtr& topology, KubeletTopologyPolicy policy) {
  if (topology == nullptr || topology->kubelet == policy) return topology;
  auto copy = std::make_shared<GpuTopology>(*topology);
  copy->kubelet = policy;
  return copy;
}

TopologyPtr InternTopology(std::vector<TopologyPtr>* pool, const GpuTopology& topology) {
  for (const TopologyPtr& t : *pool) {
    if (*t == topology) return t;
  }
  pool->push_back(std::make_shared<const GpuTopology>(topology));
  return pool->back();
}

}  // namespace tessera
