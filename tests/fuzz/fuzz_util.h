#pragma once

// What the libFuzzer harnesses of tests/fuzz/ share: a check that stops the run with a message
// (a wrong answer is a finding, as a crash is), a JSON reader that refuses a key given twice in
// one object, the shape checks of the extender's answers, and the small cluster the extender
// harnesses answer from (the kubectl-made fixtures of tests/k8s/testdata/ and two plain nodes).
// Header-only, for test code; nothing here is thread-safe unless it says so.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "k8s/extender/extender.h"
#include "k8s/extender/extender_protocol.h"
#include "k8s/serve/http_server.h"

#ifndef TESSERA_SOURCE_DIR
#error "TESSERA_SOURCE_DIR must name the repository (tests/fuzz/CMakeLists.txt sets it)"
#endif

namespace tessera::fuzz {

/// Stops the run: libFuzzer saves the input as a crash artifact.
[[noreturn]] inline void Fail(const char* file, int line, const std::string& what) {
  std::fprintf(stderr, "%s:%d: FUZZ CHECK FAILED: %s\n", file, line, what.c_str());
  std::abort();
}

#define FUZZ_CHECK(cond, what)                                                   \
  do {                                                                           \
    if (!(cond)) ::tessera::fuzz::Fail(__FILE__, __LINE__, std::string(#cond ": ") + (what)); \
  } while (false)

/// Defines libFuzzer's entry point: an input over `max_bytes` is not run (and not kept in the
/// corpus), the others are handed to `run` (void(std::string_view)) as text.
#define TESSERA_FUZZ_TARGET(max_bytes, run)                                  \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { \
    if (size > (max_bytes)) return -1;                                      \
    run(std::string_view(reinterpret_cast<const char*>(data), size));       \
    return 0;                                                               \
  }

/// A short, printable excerpt of `s` for messages.
inline std::string Excerpt(std::string_view s, size_t max = 400) {
  std::string out;
  for (char c : s.substr(0, max)) {
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  if (s.size() > max) out += "...";
  return out;
}

/// Parses `text` as strict JSON and refuses an object that names a key twice. nullopt and
/// *why on failure.
inline std::optional<nlohmann::json> ParseUniqueKeys(std::string_view text, std::string* why) {
  struct Sax : nlohmann::json_sax<nlohmann::json> {
    std::vector<std::set<std::string>> keys;
    std::string duplicate;
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override {
      keys.emplace_back();
      return true;
    }
    bool key(string_t& k) override {
      if (!keys.back().insert(k).second) {
        duplicate = k;
        return false;
      }
      return true;
    }
    bool end_object() override {
      keys.pop_back();
      return true;
    }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool parse_error(std::size_t at, const std::string&, const nlohmann::detail::exception& e) override {
      duplicate.clear();
      (void)at;
      (void)e;
      return false;
    }
  } sax;
  const bool ok = nlohmann::json::sax_parse(text, &sax);
  if (!ok) {
    *why = sax.duplicate.empty() ? "not valid JSON" : "key \"" + sax.duplicate + "\" twice";
    return std::nullopt;
  }
  return nlohmann::json::parse(text);
}

/// Checks that `obj` is an object with exactly the keys `keys`.
inline void CheckKeys(const nlohmann::json& obj, const std::set<std::string>& keys,
                      const std::string& what) {
  FUZZ_CHECK(obj.is_object(), what + ": not an object: " + Excerpt(obj.dump()));
  std::set<std::string> got;
  for (const auto& [k, v] : obj.items()) got.insert(k);
  FUZZ_CHECK(got == keys, what + ": other keys: " + Excerpt(obj.dump()));
}

/// An object whose values are all strings (FailedNodes, FailedAndUnresolvableNodes).
inline void CheckStringMap(const nlohmann::json& m, const std::string& what) {
  FUZZ_CHECK(m.is_object(), what + " is not an object");
  for (const auto& [k, v] : m.items()) FUZZ_CHECK(v.is_string(), what + "[" + k + "]");
}

/// Parses an answer, each key once, or stops the run.
inline nlohmann::json ParseAnswer(std::string_view text, const std::string& what) {
  std::string why;
  std::optional<nlohmann::json> j = ParseUniqueKeys(text, &why);
  FUZZ_CHECK(j.has_value(), what + ": " + why + ": " + Excerpt(text));
  return std::move(*j);
}

/// The filter answer: {"Nodes": null | {"metadata": {}, "items": [objects]}, "NodeNames":
/// [strings], "FailedNodes": {name: string}, "FailedAndUnresolvableNodes": {name: string},
/// "Error": string}; with an Error, no node passes.
inline nlohmann::json CheckFilterAnswer(std::string_view text) {
  nlohmann::json j = ParseAnswer(text, "filter answer");
  CheckKeys(j, {"Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error"},
            "filter answer");
  const nlohmann::json& nodes = j["Nodes"];
  if (!nodes.is_null()) {
    CheckKeys(nodes, {"metadata", "items"}, "filter answer Nodes");
    FUZZ_CHECK(nodes["items"].is_array(), Excerpt(text));
    for (const nlohmann::json& n : nodes["items"]) FUZZ_CHECK(n.is_object(), Excerpt(text));
  }
  FUZZ_CHECK(j["NodeNames"].is_array(), Excerpt(text));
  for (const nlohmann::json& n : j["NodeNames"]) FUZZ_CHECK(n.is_string(), Excerpt(text));
  CheckStringMap(j["FailedNodes"], "FailedNodes");
  CheckStringMap(j["FailedAndUnresolvableNodes"], "FailedAndUnresolvableNodes");
  FUZZ_CHECK(j["Error"].is_string(), Excerpt(text));
  if (!j["Error"].get<std::string>().empty()) {
    FUZZ_CHECK(j["NodeNames"].empty(), "names passed beside an error: " + Excerpt(text));
  }
  return j;
}

/// The prioritize answer: [{"Host": string, "Score": 0..10}].
inline nlohmann::json CheckPrioritizeAnswer(std::string_view text) {
  nlohmann::json j = ParseAnswer(text, "prioritize answer");
  FUZZ_CHECK(j.is_array(), Excerpt(text));
  for (const nlohmann::json& e : j) {
    CheckKeys(e, {"Host", "Score"}, "prioritize entry");
    FUZZ_CHECK(e["Host"].is_string(), Excerpt(text));
    FUZZ_CHECK(e["Score"].is_number_integer(), Excerpt(text));
    const int64_t score = e["Score"].get<int64_t>();
    FUZZ_CHECK(score >= 0 && score <= 10, Excerpt(text));
  }
  return j;
}

/// The preempt answer: {"NodeNameToMetaVictims": {node: {"Pods": [{"UID": string}],
/// "NumPDBViolations": integer}}}.
inline nlohmann::json CheckPreemptAnswer(std::string_view text) {
  nlohmann::json j = ParseAnswer(text, "preempt answer");
  CheckKeys(j, {"NodeNameToMetaVictims"}, "preempt answer");
  FUZZ_CHECK(j["NodeNameToMetaVictims"].is_object(), Excerpt(text));
  for (const auto& [node, v] : j["NodeNameToMetaVictims"].items()) {
    CheckKeys(v, {"Pods", "NumPDBViolations"}, "MetaVictims of " + node);
    FUZZ_CHECK(v["NumPDBViolations"].is_number_integer(), Excerpt(text));
    FUZZ_CHECK(v["Pods"].is_array(), Excerpt(text));
    for (const nlohmann::json& p : v["Pods"]) {
      CheckKeys(p, {"UID"}, "MetaPod");
      FUZZ_CHECK(p["UID"].is_string(), Excerpt(text));
    }
  }
  return j;
}

/// The bind answer and every error answer: {"Error": string}.
inline nlohmann::json CheckErrorAnswer(std::string_view text) {
  nlohmann::json j = ParseAnswer(text, "answer");
  CheckKeys(j, {"Error"}, "answer");
  FUZZ_CHECK(j["Error"].is_string(), Excerpt(text));
  return j;
}

/// POST `body` to `path` through the server's route, as a connection would; the status is 200
/// or 400, and a 400's body is {"Error": string}.
inline k8s::HttpServer::Response Post(const k8s::HttpServer& server, const char* path,
                                      std::string_view body) {
  k8s::HttpServer::Request req{"POST", path, std::string(body)};
  k8s::HttpServer::Response res;
  server.Dispatch(req, res);
  FUZZ_CHECK(res.status == 200 || res.status == 400, path + (": " + std::to_string(res.status)));
  if (res.status == 400) CheckErrorAnswer(res.body);
  return res;
}

/// The same JSON document as `body`, written another way (nlohmann's dump: keys sorted, no
/// blanks, its own escapes), when that is another text: nullopt when it is the same text, or
/// when `body` is not one document for every reader (not JSON, a key twice, invalid UTF-8).
inline std::optional<std::string> Reserialised(std::string_view body) {
  std::string why;
  std::optional<nlohmann::json> doc = ParseUniqueKeys(body, &why);
  if (!doc.has_value()) return std::nullopt;
  std::string again;
  try {
    again = doc->dump();
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // invalid UTF-8 in a string
  }
  if (again == body) return std::nullopt;
  return again;
}

/// A file of the repository, or stops the run.
inline std::string SourceFile(const std::string& path) {
  std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/" + path, std::ios::binary);
  if (!in) Fail(__FILE__, __LINE__, "cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The cluster the extender harnesses answer from, as kubectl JSON: the node fixtures of
/// tests/k8s/testdata/ (a cordoned Tessera node, three HAMi nodes) and two plain nodes n1, n2
/// with four A10 each; pods bound there (with and without GPU indices, low and high priority,
/// one that ended) and the running fixture pod on gpu-node-1.
struct SeedCluster {
  std::string nodes_json;
  std::string pods_json;
};

inline const SeedCluster& Cluster() {
  static const SeedCluster* cluster = [] {
    const auto node = [](const std::string& name) {
      return R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name +
             R"(","labels":{"tessera.io/gpu-model":"A10","tessera.io/gpu-memory":"24576"}},)"
             R"("status":{"allocatable":{"cpu":"32","memory":"128Gi","tessera.io/gpu":"4"}}})";
    };
    const auto pod = [](const std::string& uid, const std::string& node, int priority,
                        const std::string& milli, const std::string& indices,
                        const std::string& phase) {
      std::string annotations =
          indices.empty() ? "{}" : R"({"tessera.io/gpu-indices":")" + indices + R"("})";
      return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p-)" + uid +
             R"(","namespace":"ml","uid":")" + uid + R"(","labels":{"app":"batch"},)" +
             R"("annotations":)" + annotations + R"(},"spec":{"nodeName":")" + node +
             R"(","priority":)" + std::to_string(priority) +
             R"(,"containers":[{"name":"c","resources":{"limits":{"cpu":"2","memory":"4Gi",)" +
             R"("tessera.io/gpu":"1","tessera.io/gpu-milli":")" + milli + R"("}}}]},)" +
             R"("status":{"phase":")" + phase + R"("}})";
    };
    auto* c = new SeedCluster;
    c->nodes_json = R"({"apiVersion":"v1","kind":"List","items":[)" +
                    SourceFile("tests/k8s/testdata/node_tessera.json") + "," +
                    SourceFile("tests/k8s/testdata/node_hami.json") + "," +
                    SourceFile("tests/k8s/testdata/node_hami_json.json") + "," +
                    SourceFile("tests/k8s/testdata/node_hami_score.json") + "," + node("n1") +
                    "," + node("n2") + "]}";
    c->pods_json = R"({"apiVersion":"v1","kind":"List","items":[)" +
                   SourceFile("tests/k8s/testdata/pod_running.json") + "," +
                   pod("b1", "n1", 0, "1000", "0", "Running") + "," +
                   pod("b2", "n1", 0, "500", "1", "Running") + "," +
                   pod("b3", "n1", 1000, "1000", "", "Running") + "," +
                   pod("b4", "n2", -5, "300", "", "Running") + "," +
                   pod("b5", "n2", 0, "1000", "2", "Succeeded") + "]}";
    return c;
  }();
  return *cluster;
}

/// A new Extender in file mode on Cluster(), or stops the run.
inline std::unique_ptr<k8s::Extender> NewExtender(const k8s::ExtenderOptions& options = {}) {
  Result<std::unique_ptr<k8s::Extender>> e =
      k8s::Extender::FromJson(Cluster().nodes_json, Cluster().pods_json, options);
  if (!e.ok()) Fail(__FILE__, __LINE__, "seed cluster: " + e.error().message);
  return std::move(*e);
}

/// What an answer may not change: the nodes (capacity, allocations, blocked) and the pods
/// placed on them, as /state shows them.
inline std::string ModelOf(const k8s::Extender& e) {
  nlohmann::json state = nlohmann::json::parse(e.StateJson());
  nlohmann::json model = {{"nodes", state["nodes"]},
                          {"assignments", state["assignments"]},
                          {"unaccounted", state["unaccounted"]},
                          {"allocated", e.gpu_allocated_milli()},
                          {"bound", e.bound_pods()}};
  return model.dump();
}

}  // namespace tessera::fuzz
