// Fuzzes the API server's watch streams as `tessera serve` reads them: the input is event
// lines ({"type": ..., "object": {...}}, one per line, as the API server streams them); lines
// that start with "N " go to the watch of /api/v1/nodes, lines that start with "B " to the
// watch of PodDisruptionBudgets, the others to the watch of /api/v1/pods, which comes after
// the nodes'. The cluster listed first is the extender harnesses' seed cluster, so events
// change, delete and add to a real model. The ClusterCache's reflectors apply them to an
// Extender in API mode (fuzz_api.h). Oracles: no crash, leak or undefined behaviour; the model
// holds (no GPU over-allocated) and /state and the verbs' answers are well-formed.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_api.h"

namespace {

void FuzzOne(std::string_view text) {
  using namespace tessera::fuzz;  // NOLINT
  std::vector<std::string> nodes, pods, budgets;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.substr(0, 2) == "N ") {
      nodes.emplace_back(line.substr(2));
    } else if (line.substr(0, 2) == "B ") {
      budgets.emplace_back(line.substr(2));
    } else {
      pods.emplace_back(line);
    }
  }
  ScriptedApi api;
  api.SetList(kNodesPath, Cluster().nodes_json);
  api.SetList(kPodsPath, Cluster().pods_json);
  api.SetWatch(kNodesPath, nodes);
  api.SetWatch(kPodsPath, pods);
  api.SetWatch(kBudgetsPath, budgets);
  RunCache(&api);
}

}  // namespace

TESSERA_FUZZ_TARGET((64 << 10), FuzzOne)
