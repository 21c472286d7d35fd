// Fuzzes the API server's list answers as `tessera serve` reads them: the input is the body of
// GET /api/v1/nodes, of GET /api/v1/pods and of GET /apis/policy/v1/poddisruptionbudgets at
// once (a List whose items the node, pod and budget readers each try), read by DecodeListPage
// and applied by the ClusterCache's reflectors to an Extender in API mode (fuzz_api.h).
// Oracles: besides no crash, leak or undefined behaviour, the model it builds holds (no GPU
// over-allocated, /state and the verbs' answers well-formed).

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_api.h"
#include "k8s/api/json_util.h"

namespace {

void FuzzOne(std::string_view input) {
  using namespace tessera::fuzz;  // NOLINT
  const std::string body(input);
  // The decoder alone: a page it accepts keeps every item.
  tessera::k8s::ListPage page;
  const tessera::Status s = tessera::k8s::DecodeListPage(body, &page);
  if (s.ok()) {
    const nlohmann::json doc = nlohmann::json::parse(body);
    const nlohmann::json* items = tessera::k8s::FindField(doc, "items");
    FUZZ_CHECK(page.items.size() == (items != nullptr && items->is_array() ? items->size() : 0),
               Excerpt(body));
  } else {
    FUZZ_CHECK(!s.error().message.empty(), Excerpt(body));
  }
  ScriptedApi api;
  api.SetList(kNodesPath, body);
  api.SetList(kPodsPath, body);
  api.SetList(kBudgetsPath, body);
  RunCache(&api);
}

}  // namespace

TESSERA_FUZZ_TARGET((64 << 10), FuzzOne)
