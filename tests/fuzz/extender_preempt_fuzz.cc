// Fuzzes the body of POST /preempt (kube-scheduler's ExtenderPreemptionArgs) through the
// server's route. Oracles: the answer parses as JSON, each key once, with the protocol's shape;
// it says what Extender::Preempt says and round-trips through its decoder; every victim it
// names is a pod the model has on that node; an equivalent body (the same JSON re-serialised)
// gets the same answer; preempt changes no allocation.

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "fuzz/fuzz_util.h"
#include "k8s/serve/http_server.h"

namespace tessera::fuzz {
namespace {

using k8s::HttpServer;

constexpr size_t kMaxBody = 64 << 10;

std::string Answer(HttpServer& server, std::string_view body) {
  HttpServer::Request req{"POST", "/preempt", std::string(body)};
  HttpServer::Response res;
  server.Dispatch(req, res);
  FUZZ_CHECK(res.status == 200 || res.status == 400, std::to_string(res.status));
  if (res.status == 400) {
    CheckErrorAnswer(res.body);
    return "400";
  }
  return res.body;
}

}  // namespace
}  // namespace tessera::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::fuzz;  // NOLINT
  if (size > kMaxBody) return -1;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  std::unique_ptr<tessera::k8s::Extender> ext = NewExtender();
  const std::string model = ModelOf(*ext);
  const nlohmann::json state = nlohmann::json::parse(ext->StateJson());
  std::set<std::pair<std::string, std::string>> placed;  // (node, uid)
  for (const nlohmann::json& a : state["assignments"]) {
    placed.emplace(a["node"].get<std::string>(), a["uid"].get<std::string>());
  }

  tessera::k8s::HttpServer server(ext.get(), tessera::k8s::HttpServerOptions{});
  const std::string answer = Answer(server, body);
  tessera::Result<tessera::k8s::ExtenderPreemptionArgs> args =
      tessera::k8s::DecodeExtenderPreemptionArgs(body);
  FUZZ_CHECK(args.ok() == (answer != "400"), Excerpt(body));
  if (args.ok()) {
    const nlohmann::json j = CheckPreemptAnswer(answer);
    const tessera::k8s::ExtenderPreemptionResult want = ext->Preempt(*args);
    const std::string encoded = tessera::k8s::EncodeExtenderPreemptionResult(want);
    FUZZ_CHECK(encoded == answer, encoded + " != " + answer);
    tessera::Result<tessera::k8s::ExtenderPreemptionResult> back =
        tessera::k8s::DecodeExtenderPreemptionResult(answer);
    FUZZ_CHECK(back.ok() && *back == want, answer);
    for (const auto& [node, victims] : want.node_name_to_meta_victims) {
      FUZZ_CHECK(!victims.pod_uids.empty(), "a node without victims: " + answer);
      for (const std::string& uid : victims.pod_uids) {
        FUZZ_CHECK(placed.count({node, uid}) == 1,
                   "victim " + uid + " is not on " + node + ": " + answer);
      }
    }
  }
  FUZZ_CHECK(ModelOf(*ext) == model, "preempt changed the model: " + Excerpt(body));

  std::string why;
  std::optional<nlohmann::json> doc = ParseUniqueKeys(body, &why);
  if (doc.has_value()) {
    std::string again;
    try {
      again = doc->dump();
    } catch (const nlohmann::json::exception&) {
      return 0;  // invalid UTF-8 in a string
    }
    if (again != body) {
      std::unique_ptr<tessera::k8s::Extender> ext2 = NewExtender();
      tessera::k8s::HttpServer server2(ext2.get(), tessera::k8s::HttpServerOptions{});
      const std::string other = Answer(server2, again);
      FUZZ_CHECK(other == answer, Excerpt(body) + " vs " + Excerpt(again) + ": " + answer +
                                      " != " + other);
    }
  }
  return 0;
}
