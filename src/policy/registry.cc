#include <functional>
#include <utility>

#include "policy/builtin.h"
#include "policy/policy.h"
#include "policy/tessera_policy.h"

namespace tessera {
namespace {

using Factory = std::unique_ptr<Policy> (*)(const PolicyContext&);

std::unique_ptr<Policy> MakeDefaultTesseraPolicy(const PolicyContext& context) {
  return MakeTesseraPolicy(context, TesseraParams{});
}

const std::vector<std::pair<std::string, Factory>>& Registry() {
  static const std::vector<std::pair<std::string, Factory>> registry = {
      {"tessera", &MakeDefaultTesseraPolicy}, {"fgd", &MakeFgdPolicy},
      {"bestfit", &MakeBestFitPolicy},        {"packing", &MakePackingPolicy},
      {"clustering", &MakeClusteringPolicy},  {"dotprod", &MakeDotProdPolicy},
      {"random", &MakeRandomPolicy},          {"k8s-default", &MakeK8sDefaultPolicy},
      {"mem-bestfit", &MakeMemBestFitPolicy}, {"hami-binpack", &MakeHamiBinpackPolicy},
      {"hami-spread", &MakeHamiSpreadPolicy}, {"hami-topology", &MakeHamiTopologyPolicy},
  };
  return registry;
}

}  // namespace

std::unique_ptr<Policy> MakePolicy(std::string_view name, const PolicyContext& context) {
  for (const auto& [n, factory] : Registry()) {
    if (n == name) return factory(context);
  }
  return nullptr;
}

const std::vector<std::string>& PolicyNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& entry : Registry()) v.push_back(entry.first);
    return v;
  }();
  return names;
}

const std::vector<std::string>& DefaultPolicyNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    // Not the comparison policies: mem-bestfit, hami-binpack, hami-spread (GPU memory,
    // docs/GPU_MEMORY.md) and hami-topology (docs/TOPOLOGY.md).
    for (const std::string& n : PolicyNames()) {
      if (n != "mem-bestfit" && n != "hami-binpack" && n != "hami-spread" && n != "hami-topology") {
        v.push_back(n);
      }
    }
    return v;
  }();
  return names;
}

}  // namespace tessera
