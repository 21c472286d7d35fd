// Fuzzes the node catalog of `tessera plan` (--catalog, docs/PLAN.md): ParseNodeCatalog, then
// the counts and mixes the planner derives from it. Oracles: an error names the file; an
// accepted catalog has consistent ranges (min <= count_today <= max), its counts run from min
// to max, and a mix of its smallest counts has the nodes and GPUs it says.

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "plan/catalog.h"

namespace {

void FuzzOne(std::string_view text) {
  using namespace tessera::fuzz;  // NOLINT
  static const std::set<std::string> kModels = {"A100", "A10", "T4", "V100M16", "V100M32", "P100",
                                                "H100"};
  tessera::Result<tessera::NodeCatalog> catalog =
      tessera::ParseNodeCatalog(text, "catalog.yaml", kModels);
  if (!catalog.ok()) {
    FUZZ_CHECK(catalog.error().message.rfind("catalog.yaml", 0) == 0, catalog.error().message);
    return;
  }
  std::vector<int> counts;
  int64_t nodes = 0;
  for (const tessera::NodeType& t : catalog->types) {
    FUZZ_CHECK(t.min_count >= 0 && t.min_count <= t.max_count && t.step >= 1, t.name);
    FUZZ_CHECK(t.count_today >= 0 && t.count_today <= t.max_count, t.name);
    if (static_cast<int64_t>(t.max_count - t.min_count) / t.step > 100000) return;
    const std::vector<int> c = tessera::CountsOf(t);
    FUZZ_CHECK(!c.empty() && c.front() == t.min_count && c.back() == t.max_count, t.name);
    counts.push_back(t.min_count);
    nodes += t.min_count;
  }
  if (nodes > 10000) return;
  FUZZ_CHECK(static_cast<int64_t>(tessera::MixNodes(*catalog, counts).size()) == nodes,
             Excerpt(text));
  (void)tessera::MixName(*catalog, counts);
  FUZZ_CHECK(tessera::MixGpus(*catalog, counts) >= 0, Excerpt(text));
}

}  // namespace

TESSERA_FUZZ_TARGET((32 << 10), FuzzOne)
