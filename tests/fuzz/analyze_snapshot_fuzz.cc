// Fuzzes the kubectl snapshots of `tessera analyze` (`kubectl get nodes,pods,pdb -A -o json`,
// docs/ANALYZE.md): ReadSnapshot, the model built from it (serve's file mode places the bound
// pods' GPUs) and the analysis, LP bound included, when the snapshot is small. Oracles: an
// error names the document; an accepted snapshot round-trips (its nodes and pods as kept,
// written back as one List, read to the same objects); the analysis' figures are consistent.
// (An input without nodes is an error about all documents, which names none.)

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/analyze.h"
#include "analyze/model.h"
#include "analyze/snapshot.h"
#include "fuzz/fuzz_util.h"

namespace {

// An object without the places it was read from (they name the document and the index).
tessera::k8s::Pod Unplaced(tessera::k8s::Pod pod) {
  pod.json_path.clear();
  for (tessera::k8s::Container& c : pod.containers) c.json_path.clear();
  return pod;
}
tessera::k8s::Node Unplaced(tessera::k8s::Node node) {
  node.json_path.clear();
  return node;
}

}  // namespace

namespace {

void FuzzOne(std::string_view input) {
  using namespace tessera::fuzz;  // NOLINT
  namespace analyze = tessera::analyze;
  const std::string text(input);
  tessera::Result<analyze::Snapshot> snap = analyze::ReadSnapshot({{"snap.json", text}});
  if (!snap.ok()) {
    // An error names the document, or says what the documents together lack.
    FUZZ_CHECK(snap.error().message.rfind("snap.json", 0) == 0 ||
                   snap.error().message.rfind("no Node objects in the input", 0) == 0,
               snap.error().message);
    return;
  }
  // Round-trip: the objects as kept, in one List, read back the same.
  nlohmann::json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", nlohmann::json::array()}};
  for (size_t i = 0; i < snap->node_items.size(); ++i) {
    nlohmann::json item = snap->node_items[i];
    item["kind"] = "Node";
    list["items"].push_back(std::move(item));
  }
  for (size_t i = 0; i < snap->pod_items.size(); ++i) {
    nlohmann::json item = snap->pod_items[i];
    item["kind"] = "Pod";
    list["items"].push_back(std::move(item));
  }
  tessera::Result<analyze::Snapshot> again =
      analyze::ReadSnapshot({{"again.json", list.dump(-1, ' ', false,
                                                      nlohmann::json::error_handler_t::replace)}});
  FUZZ_CHECK(again.ok(), again.error().message);
  FUZZ_CHECK(again->nodes.size() == snap->nodes.size(), Excerpt(text));
  for (size_t i = 0; i < snap->nodes.size(); ++i) {
    FUZZ_CHECK(Unplaced(again->nodes[i]) == Unplaced(snap->nodes[i]), Excerpt(text));
  }
  FUZZ_CHECK(again->pods.size() == snap->pods.size(), Excerpt(text));
  for (size_t i = 0; i < snap->pods.size(); ++i) {
    FUZZ_CHECK(Unplaced(again->pods[i].pod) == Unplaced(snap->pods[i].pod), Excerpt(text));
  }
  if (snap->nodes.size() > 32 || snap->pods.size() > 64) return;
  tessera::Result<std::unique_ptr<analyze::Model>> model = analyze::BuildModel(*snap);
  if (!model.ok()) {
    FUZZ_CHECK(!model.error().message.empty(), Excerpt(text));
    return;
  }
  tessera::Result<analyze::Analysis> a = analyze::Analyze(**model, analyze::AnalyzeOptions{});
  if (!a.ok()) return;
  for (const analyze::PoolReport& p : a->pools) {
    FUZZ_CHECK(p.allocated_milli >= 0 && p.free_milli >= 0 && p.stranded_milli >= 0, p.model);
    FUZZ_CHECK(p.allocated_milli + p.free_milli == int64_t{1000} * p.gpus,
               p.model + ": " + std::to_string(p.allocated_milli) + " + " +
                   std::to_string(p.free_milli) + " != " + std::to_string(p.gpus) + " GPUs");
  }
}

}  // namespace

TESSERA_FUZZ_TARGET((64 << 10), FuzzOne)
