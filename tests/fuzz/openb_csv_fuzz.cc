// Fuzzes the openb CSV readers (`tessera frag --nodes/--pods`, serve's --workload): the input
// is read both as a node list and as a pod list. Oracles: an error names the file and line
// ("nodes.csv:3: ..."); what is accepted is within the documented ranges.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_util.h"
#include "trace/csv_reader.h"

namespace {

void FuzzOne(std::string_view text) {
  using namespace tessera::fuzz;  // NOLINT
  tessera::Result<std::vector<tessera::NodeSpec>> nodes = tessera::ReadNodeCsv(text, "nodes.csv");
  if (!nodes.ok()) {
    FUZZ_CHECK(nodes.error().message.rfind("nodes.csv", 0) == 0, nodes.error().message);
  } else {
    FUZZ_CHECK(!nodes->empty(), Excerpt(text));
    for (const tessera::NodeSpec& n : *nodes) {
      FUZZ_CHECK(n.gpu_count >= 0 && n.gpu_count <= tessera::kMaxGpusPerNode, n.name);
      FUZZ_CHECK(n.cpu_milli >= 0 && n.memory_mib >= 0, n.name);
    }
  }
  tessera::Result<std::vector<tessera::PodSpec>> pods = tessera::ReadPodCsv(text, "pods.csv");
  if (!pods.ok()) {
    FUZZ_CHECK(pods.error().message.rfind("pods.csv", 0) == 0, pods.error().message);
  } else {
    for (const tessera::PodSpec& p : *pods) {
      FUZZ_CHECK(p.gpu_count >= 0 && p.cpu_milli >= 0 && p.memory_mib >= 0, p.name);
      if (p.gpu_count == 0) FUZZ_CHECK(p.gpu_milli == 0, p.name);
      if (p.gpu_count == 1) FUZZ_CHECK(p.gpu_milli >= 1 && p.gpu_milli <= 1000, p.name);
      if (p.gpu_count > 1) FUZZ_CHECK(p.gpu_milli == 1000, p.name);
    }
  }
}

}  // namespace

TESSERA_FUZZ_TARGET((64 << 10), FuzzOne)
