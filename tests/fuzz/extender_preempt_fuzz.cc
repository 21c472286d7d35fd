// Fuzzes the body of POST /preempt (kube-scheduler's ExtenderPreemptionArgs) through the
// server's route. Oracles: the answer parses as JSON, each key once, with the protocol's shape;
// it says what Extender::Preempt says and round-trips through its decoder; every victim it
// names is a pod the model has on that node or one the scheduler proposed there (kube-scheduler
// refuses a victim its own cache does not have on the node; it proposes only those); an equivalent body (the same JSON re-serialised)
// gets the same answer; preempt changes no allocation.

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "fuzz/fuzz_util.h"
#include "k8s/extender/extender_internal.h"

namespace tessera::fuzz {
namespace {

using k8s::HttpServer;

constexpr size_t kMaxBody = 64 << 10;

// The answer through the server's route, or "400" when refused.
std::string Answer(const HttpServer& server, std::string_view body) {
  const HttpServer::Response res = Post(server, "/preempt", body);
  return res.status == 400 ? "400" : res.body;
}

void FuzzOne(std::string_view body) {
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
    std::set<std::pair<std::string, std::string>> proposed = placed;
    for (const auto& [node, meta] : args->node_name_to_meta_victims.value_or(
             std::map<std::string, tessera::k8s::MetaVictims>{})) {
      for (const std::string& uid : meta.pod_uids) proposed.emplace(node, uid);
    }
    for (const auto& [node, victims] :
         args->node_name_to_victims.value_or(std::map<std::string, tessera::k8s::Victims>{})) {
      for (const tessera::k8s::Pod& pod : victims.pods) {
        proposed.emplace(node, tessera::k8s::PodUid(pod));
      }
    }
    for (const auto& [node, victims] : want.node_name_to_meta_victims) {
      FUZZ_CHECK(!victims.pod_uids.empty(), "a node without victims: " + answer);
      for (const std::string& uid : victims.pod_uids) {
        FUZZ_CHECK(proposed.count({node, uid}) == 1,
                   "victim " + uid + " is neither on " + node + " nor proposed there: " + answer);
      }
    }
  }
  FUZZ_CHECK(ModelOf(*ext) == model, "preempt changed the model: " + Excerpt(body));

  // Equivalent bodies: the same JSON, re-serialised.
  if (const std::optional<std::string> again = Reserialised(body)) {
    std::unique_ptr<tessera::k8s::Extender> ext2 = NewExtender();
    tessera::k8s::HttpServer server2(ext2.get(), tessera::k8s::HttpServerOptions{});
    const std::string other = Answer(server2, *again);
    FUZZ_CHECK(other == answer,
               Excerpt(body) + " vs " + Excerpt(*again) + ": " + answer + " != " + other);
  }
}

}  // namespace
}  // namespace tessera::fuzz

TESSERA_FUZZ_TARGET(tessera::fuzz::kMaxBody, tessera::fuzz::FuzzOne)
