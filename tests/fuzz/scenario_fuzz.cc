// Fuzzes the scenario YAML (`tessera frag|replay --scenario`, docs/SCENARIOS.md): ParseScenario,
// then the nodes and pods it generates when it is small enough to run (a scenario may ask for
// millions of pods; generating them is not the reader's fault). Oracles: an error names the
// file ("scenario.yaml:..."); an accepted scenario generates what it says (pool counts, pods).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_util.h"
#include "trace/scenario.h"

namespace {

void FuzzOne(std::string_view text) {
  using namespace tessera::fuzz;  // NOLINT
  tessera::Result<tessera::Scenario> s = tessera::ParseScenario(text, "scenario.yaml");
  if (!s.ok()) {
    FUZZ_CHECK(s.error().message.rfind("scenario.yaml", 0) == 0, s.error().message);
    return;
  }
  int64_t nodes = 0;
  for (const tessera::NodePool& pool : s->nodes) {
    FUZZ_CHECK(pool.count >= 0, pool.name);
    nodes += pool.count;
  }
  FUZZ_CHECK(s->pods >= 0, std::to_string(s->pods));
  if (nodes > 10000 || s->pods > 10000) return;
  FUZZ_CHECK(static_cast<int64_t>(tessera::ScenarioNodes(*s).size()) == nodes, Excerpt(text));
  if (!s->classes.empty()) {
    FUZZ_CHECK(static_cast<int>(tessera::ScenarioPods(*s).size()) == s->pods, Excerpt(text));
  }
}

}  // namespace

TESSERA_FUZZ_TARGET((32 << 10), FuzzOne)
