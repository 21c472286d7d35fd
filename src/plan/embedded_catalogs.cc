// Catalogs compiled into the binary; each equals a file of tests/plan/testdata/ (checked by
// tests/plan/plan_test.cc), where the other example catalogs are.

#include "plan/embedded_catalogs.h"

namespace tessera {
namespace {

// tests/plan/testdata/peak-sale-one-type.yaml: 20..80 eight-GPU A100 nodes (the scenario's
// cluster is 40 of them), so that the example's search is a binary search over one count.
constexpr std::string_view kPeakSale =
    R"yaml(# One node type for the embedded peak-sale scenario: 20..80 eight-GPU A100 nodes.
# Compiled into tessera as the embedded catalog 'peak-sale' (src/plan/embedded_catalogs.cc;
# tests/plan/plan_test.cc keeps the two equal): `tessera plan` alone plans peak-sale on it.
node_types:
  - {name: a100x8, model: A100, gpus: 8, cpu_milli: 96000, memory_mib: 786432,
     cost_per_hour: 24.0, min_count: 20, max_count: 80, step: 4, count_today: 40}
)yaml";

}  // namespace

std::string_view EmbeddedCatalog(std::string_view name) {
  if (name == "peak-sale") return kPeakSale;
  return {};
}

std::vector<std::string> EmbeddedCatalogNames() { return {"peak-sale"}; }

}  // namespace tessera
