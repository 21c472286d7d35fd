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

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::fuzz;  // NOLINT
  if (size > (32 << 10)) return -1;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  tessera::Result<tessera::Scenario> s = tessera::ParseScenario(text, "scenario.yaml");
  if (!s.ok()) {
    FUZZ_CHECK(s.error().message.rfind("scenario.yaml", 0) == 0, s.error().message);
    return 0;
  }
  int64_t nodes = 0;
  for (const tessera::NodePool& pool : s->nodes) {
    FUZZ_CHECK(pool.count >= 0, pool.name);
    nodes += pool.count;
  }
  FUZZ_CHECK(s->pods >= 0, std::to_string(s->pods));
  if (nodes > 10000 || s->pods > 10000) return 0;
  FUZZ_CHECK(static_cast<int64_t>(tessera::ScenarioNodes(*s).size()) == nodes, Excerpt(text));
  if (!s->classes.empty()) {
    FUZZ_CHECK(static_cast<int>(tessera::ScenarioPods(*s).size()) == s->pods, Excerpt(text));
  }
  return 0;
}
