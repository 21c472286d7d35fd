#include "replay/node_subset.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>

#include "util/rng.h"

namespace tessera {

std::vector<NodeSpec> SubsetNodes(const std::vector<NodeSpec>& nodes, int count, uint64_t seed) {
  if (count < 0) count = 0;
  if (static_cast<size_t>(count) >= nodes.size()) return nodes;
  // Groups by model, in order of first appearance.
  std::vector<std::string> models;
  std::vector<std::vector<int>> members;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string& m = nodes[i].gpu_model;
    auto it = std::find(models.begin(), models.end(), m);
    if (it == models.end()) {
      models.push_back(m);
      members.emplace_back();
      it = models.end() - 1;
    }
    members[it - models.begin()].push_back(static_cast<int>(i));
  }
  const size_t g = models.size();
  std::vector<int> take(g);
  std::vector<double> rem(g);
  int assigned = 0;
  for (size_t k = 0; k < g; ++k) {
    const double quota = static_cast<double>(count) * static_cast<double>(members[k].size()) /
                         static_cast<double>(nodes.size());
    take[k] = static_cast<int>(std::floor(quota));
    rem[k] = quota - take[k];
    assigned += take[k];
  }
  std::vector<size_t> order(g);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (rem[a] != rem[b]) return rem[a] > rem[b];
    return members[a].size() > members[b].size();
  });
  for (size_t k = 0; assigned < count; k = (k + 1) % g) {
    if (take[order[k]] < static_cast<int>(members[order[k]].size())) {
      ++take[order[k]];
      ++assigned;
    }
  }
  Rng rng(seed);
  std::vector<char> chosen(nodes.size(), 0);
  for (size_t k = 0; k < g; ++k) {
    std::vector<int> m = members[k];
    rng.Shuffle(m);
    for (int j = 0; j < take[k]; ++j) chosen[m[j]] = 1;
  }
  std::vector<NodeSpec> out;
  out.reserve(count);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (chosen[i]) out.push_back(nodes[i]);
  }
  return out;
}

}  // namespace tessera

namespace tessera {

std::vector<NodeSpec> ResizeNodes(const std::vector<NodeSpec>& nodes, int count, uint64_t seed) {
  if (nodes.empty() || count <= static_cast<int>(nodes.size())) {
    return SubsetNodes(nodes, count, seed);
  }
  std::vector<NodeSpec> out = nodes;
  const int size = static_cast<int>(nodes.size());
  for (int k = 1; static_cast<int>(out.size()) + size <= count; ++k) {
    for (NodeSpec n : nodes) {
      n.name += "~" + std::to_string(k);
      out.push_back(std::move(n));
    }
  }
  const int copies = static_cast<int>(out.size()) / size;
  for (NodeSpec n : SubsetNodes(nodes, count - static_cast<int>(out.size()), seed)) {
    n.name += "~" + std::to_string(copies);
    out.push_back(std::move(n));
  }
  return out;
}

}  // namespace tessera
