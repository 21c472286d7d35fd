// Fuzzes the journal of `tessera record` (record.journal, read back by every resumed run and by
// the folding into openb lists; docs/RECORD.md). Oracles: an error names the file and line;
// an accepted journal round-trips (its state written back as lines parses to the same
// state); the openb node and pod lists folded from it are read back by the CSV readers
// (`tessera frag`, `replay`, serve's --workload) with the same rows.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_util.h"
#include "k8s/record/record_log.h"
#include "trace/csv_reader.h"

namespace {

void FuzzOne(std::string_view text) {
  using namespace tessera::fuzz;  // NOLINT
  using tessera::k8s::JournalState;
  tessera::Result<JournalState> state = tessera::k8s::ParseJournal(text, "record.journal");
  if (!state.ok()) {
    FUZZ_CHECK(state.error().message.rfind("record.journal", 0) == 0, state.error().message);
    return;
  }
  FUZZ_CHECK(state->valid_bytes <= text.size(), Excerpt(text));
  // Written back line by line after a start line, the records parse to the same pods and
  // nodes.
  std::string lines =
      R"({"kind":"start","format":"tessera-record/1","at":0,"server":"s","resumed":false})"
      "\n";
  for (const auto& [sn, node] : state->nodes) lines += tessera::k8s::NodeLine(node) + "\n";
  for (const auto& [uid, pod] : state->pods) lines += tessera::k8s::PodLine(pod) + "\n";
  tessera::Result<JournalState> again = tessera::k8s::ParseJournal(lines, "again.journal");
  FUZZ_CHECK(again.ok(), again.error().message + "\n" + Excerpt(lines));
  FUZZ_CHECK(again->pods == state->pods, Excerpt(lines));
  FUZZ_CHECK(again->nodes == state->nodes, Excerpt(lines));
  // The folded openb lists are read back with a row per node and pod.
  if (!state->nodes.empty()) {
    const std::string csv = tessera::k8s::NodeListCsv(*state);
    tessera::Result<std::vector<tessera::NodeSpec>> nodes = tessera::ReadNodeCsv(csv, "node_list.csv");
    FUZZ_CHECK(nodes.ok(), nodes.error().message + "\n" + Excerpt(csv));
    FUZZ_CHECK(nodes->size() == state->nodes.size(), Excerpt(csv));
  }
  if (!state->pods.empty()) {
    const std::string csv = tessera::k8s::PodListCsv(*state, state->last_time);
    tessera::Result<std::vector<tessera::PodSpec>> pods = tessera::ReadPodCsv(csv, "pod_list.csv");
    FUZZ_CHECK(pods.ok(), pods.error().message + "\n" + Excerpt(csv));
    FUZZ_CHECK(pods->size() == state->pods.size(), Excerpt(csv));
  }
}

}  // namespace

TESSERA_FUZZ_TARGET((64 << 10), FuzzOne)
