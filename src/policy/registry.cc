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

struct Entry {
  std::string name;
  Factory factory;
  /// In `--policy all` (DefaultPolicyNames); the GPU-memory and topology comparison policies
  /// (docs/GPU_MEMORY.md, docs/TOPOLOGY.md) are run by name only.
  bool in_all;
};

const std::vector<Entry>& Registry() {
  static const std::vector<Entry> registry = {
      {"tessera", &MakeDefaultTesseraPolicy, true},
      {"fgd", &MakeFgdPolicy, true},
      {"bestfit", &MakeBestFitPolicy, true},
      {"packing", &MakePackingPolicy, true},
      {"clustering", &MakeClusteringPolicy, true},
      {"dotprod", &MakeDotProdPolicy, true},
      {"random", &MakeRandomPolicy, true},
      {"k8s-default", &MakeK8sDefaultPolicy, true},
      {"mem-bestfit", &MakeMemBestFitPolicy, false},
      {"hami-binpack", &MakeHamiBinpackPolicy, false},
      {"hami-spread", &MakeHamiSpreadPolicy, false},
      {"hami-topology", &MakeHamiTopologyPolicy, false},
  };
  return registry;
}

}  // namespace

std::unique_ptr<Policy> MakePolicy(std::string_view name, const PolicyContext& context) {
  for (const Entry& e : Registry()) {
    if (e.name == name) return e.factory(context);
  }
  return nullptr;
}

const std::vector<std::string>& PolicyNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Entry& e : Registry()) v.push_back(e.name);
    return v;
  }();
  return names;
}

const std::vector<std::string>& DefaultPolicyNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Entry& e : Registry()) {
      if (e.in_all) v.push_back(e.name);
    }
    return v;
  }();
  return names;
}

}  // namespace tessera
