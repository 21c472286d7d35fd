// Fuzzes the body of POST /filter and POST /prioritize (kube-scheduler's ExtenderArgs), as the
// server reads it: the simdjson fast path, the nlohmann general path, the NodeNames memo.
// Oracles:
//  - differential: DecodeExtenderArgs (fast path first) and DecodeExtenderArgsGeneral (the
//    reference) accept the same bodies with the same result or the same error;
//    DecodeExtenderArgsRef names the same candidates;
//  - every answer parses as JSON, each key once, with the protocol's shape (fuzz_util.h);
//  - the server's answers (FilterJson, PrioritizeJson, by both decoders, and through
//    HttpServer::Dispatch) say what Filter and Prioritize say; the filter answer written on a
//    fresh thread is the same;
//  - equivalent bodies (the same JSON re-serialised: other whitespace, key order, escapes) get
//    the same answers;
//  - neither verb changes the cluster model.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <thread>

#include "fuzz/fuzz_util.h"

namespace tessera::fuzz {
namespace {

using k8s::DecodeExtenderArgs;
using k8s::DecodeExtenderArgsGeneral;
using k8s::DecodeExtenderArgsRef;
using k8s::ExtenderArgs;
using k8s::ExtenderArgsRef;
using k8s::ExtenderFilterResult;
using k8s::HttpServer;

// Bodies are answered by a cluster of six nodes: a larger one only slows the run.
constexpr size_t kMaxBody = 64 << 10;

struct Answers {
  std::string filter;
  std::string prioritize;
};

// Both verbs through the server's route, as a connection would get them ("400 " and the
// error answer when refused).
Answers ThroughServer(const HttpServer& server, std::string_view body) {
  Answers a;
  for (const char* path : {"/filter", "/prioritize"}) {
    const HttpServer::Response res = Post(server, path, body);
    (path[1] == 'f' ? a.filter : a.prioritize) = (res.status == 400 ? "400 " : "") + res.body;
  }
  return a;
}

void CheckSameArgs(const ExtenderArgs& a, const ExtenderArgs& b, std::string_view body) {
  FUZZ_CHECK(a.pod == b.pod, "pods differ: " + Excerpt(body));
  FUZZ_CHECK(a.node_names == b.node_names, "names differ: " + Excerpt(body));
  FUZZ_CHECK(a.nodes == b.nodes, "nodes differ: " + Excerpt(body));
  FUZZ_CHECK(a.nodes_json == b.nodes_json, "nodes_json differ: " + Excerpt(body));
}

void FuzzOne(std::string_view body) {

  // Differential: the fast path against the reference.
  tessera::Result<ExtenderArgs> fast = DecodeExtenderArgs(body);
  tessera::Result<ExtenderArgs> general = DecodeExtenderArgsGeneral(body);
  FUZZ_CHECK(fast.ok() == general.ok(), "fast " + std::string(fast.ok() ? "accepts" : "refuses") +
                                            " what general does not: " + Excerpt(body));
  if (!fast.ok()) {
    FUZZ_CHECK(fast.error().message == general.error().message,
               fast.error().message + " != " + general.error().message);
  } else {
    CheckSameArgs(*fast, *general, body);
  }
  ExtenderArgsRef ref;
  const tessera::Status ref_status = DecodeExtenderArgsRef(body, &ref);
  FUZZ_CHECK(ref_status.ok() == general.ok(), Excerpt(body));
  if (!ref_status.ok()) {
    FUZZ_CHECK(ref_status.error().message == general.error().message, ref_status.error().message);
  } else {
    FUZZ_CHECK(ref.args.pod == general->pod, Excerpt(body));
    FUZZ_CHECK(std::vector<std::string>(ref.names.begin(), ref.names.end()) ==
                   general->CandidateNames(),
               Excerpt(body));
    FUZZ_CHECK(ref.has_node_names == general->node_names.has_value(), Excerpt(body));
  }
  // The memo: the same body three times (remembered on the second sighting, recognised on
  // the third) names the same candidates.
  {
    tessera::k8s::NodeNamesMemo memo;
    for (int i = 0; i < 3; ++i) {
      std::string copy(body);
      ExtenderArgsRef again;
      const tessera::Status s =
          DecodeExtenderArgsRef(copy, &again, tessera::k8s::kDefaultMaxExtenderBodyBytes, &memo,
                                copy.capacity());
      FUZZ_CHECK(s.ok() == ref_status.ok(), Excerpt(body));
      if (s.ok()) {
        FUZZ_CHECK(std::vector<std::string>(again.names.begin(), again.names.end()) ==
                       general->CandidateNames(),
                   "memo names differ: " + Excerpt(body));
      }
    }
  }

  // The answers, on a fresh extender (so that an input means the same every time).
  std::unique_ptr<tessera::k8s::Extender> ext = NewExtender();
  const std::string model = ModelOf(*ext);
  HttpServer server(ext.get(), tessera::k8s::HttpServerOptions{});
  const Answers answers = ThroughServer(server, body);
  if (general.ok()) {
    CheckFilterAnswer(answers.filter);
    CheckPrioritizeAnswer(answers.prioritize);
    // The server's writers say what the structs say.
    const ExtenderFilterResult want = ext->Filter(*general);
    CheckFilterAnswer(tessera::k8s::EncodeExtenderFilterResult(want));
    const std::string by_args = ext->FilterJson(*general);
    FUZZ_CHECK(by_args == answers.filter, by_args + " != " + answers.filter);
    std::string on_fresh_thread;
    std::thread([&] { on_fresh_thread = ext->FilterJson(ref); }).join();
    FUZZ_CHECK(on_fresh_thread == answers.filter, on_fresh_thread + " != " + answers.filter);
    tessera::Result<ExtenderFilterResult> decoded =
        tessera::k8s::DecodeExtenderFilterResult(answers.filter);
    FUZZ_CHECK(decoded.ok(), decoded.error().message);
    // The failure maps are the same JSON objects (the server's in request order).
    FUZZ_CHECK(*decoded == want, answers.filter + " != " +
                                     tessera::k8s::EncodeExtenderFilterResult(want));
    const std::string prioritize = tessera::k8s::EncodeHostPriorityList(ext->Prioritize(*general));
    FUZZ_CHECK(prioritize == answers.prioritize, prioritize + " != " + answers.prioritize);
    FUZZ_CHECK(ext->PrioritizeJson(ref) == answers.prioritize, Excerpt(body));
  }
  FUZZ_CHECK(ModelOf(*ext) == model, "filter/prioritize changed the model: " + Excerpt(body));

  // Equivalent bodies: the same JSON, re-serialised (sorted keys, no blanks, other escapes).
  if (const std::optional<std::string> again = Reserialised(body)) {
    std::unique_ptr<tessera::k8s::Extender> ext2 = NewExtender();
    HttpServer server2(ext2.get(), tessera::k8s::HttpServerOptions{});
    const Answers other = ThroughServer(server2, *again);
    // Error messages name byte offsets, which differ; the rest must be equal.
    if (answers.filter.rfind("400 ", 0) != 0 || other.filter.rfind("400 ", 0) != 0) {
      FUZZ_CHECK(other.filter == answers.filter, Excerpt(body) + " vs " + Excerpt(*again) +
                                                     ": " + answers.filter + " != " +
                                                     other.filter);
      FUZZ_CHECK(other.prioritize == answers.prioritize, Excerpt(*again));
    }
  }
}

}  // namespace
}  // namespace tessera::fuzz

TESSERA_FUZZ_TARGET(tessera::fuzz::kMaxBody, tessera::fuzz::FuzzOne)
