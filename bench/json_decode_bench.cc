// tessera_json_decode_bench: the filter/prioritize body decode of the server's request path
// (names as views into the body), by three decoders on generated kube-scheduler bodies
// ({"Pod": a pending GPU pod, "Nodes": null, "NodeNames": [N names]}, N = 1213, 5000, 50000):
//   hand      DecodeExtenderArgsRef without a memo: the hand-written scanner for NodeNames, the
//             Pod parsed and decoded with nlohmann (src/k8s/extender/extender_protocol.cc);
//   simdjson  simdjson's On-Demand parser (Debian: libsimdjson-dev) for the outer object and
//             NodeNames, the Pod as the hand path does it; the body already in a buffer with
//             SIMDJSON_PADDING spare bytes;
//   simdjson_copy  the same, counting the copy of the body into a simdjson::padded_string;
//   general   the nlohmann path every other body takes (a JSON tree of the whole body).
//
// Wall times (Google Benchmark; medians of interleaved repetitions):
//   build/bench/tessera_json_decode_bench --benchmark_repetitions=9
//       --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true
// Instructions per decode (callgrind counts only DecodeLoop; divide its Ir by COUNT):
//   valgrind --tool=callgrind --toggle-collect='*DecodeLoop*'
//       build/bench/tessera_json_decode_bench --count DECODER NAMES COUNT
//
// Every run first checks that the simdjson decoder gives what DecodeExtenderArgsRef gives, on
// the benchmark's bodies and on bodies with escapes, non-ASCII names and malformed JSON (where
// it must decline, so that the general path decides); it exits 1 when they differ.
#include <benchmark/benchmark.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "k8s/api/json_util.h"
#include "k8s/api/objects.h"
#include "k8s/extender/extender_protocol.h"

namespace tessera::k8s {
namespace {

// Bodies ---------------------------------------------------------------------------------------

/// A pending pod as the API server sends it (1 GPU of a given model, requests = limits,
/// annotations and labels, defaulted fields), like bench/extender_load_inputs.cc's pods.
std::string PodJson() {
  using OJson = nlohmann::ordered_json;
  const OJson resources = {{"cpu", "11300m"},
                           {"memory", "49152Mi"},
                           {"tessera.io/gpu", "1"},
                           {"tessera.io/gpu-milli", "1000"}};
  const OJson pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", "train-7f9c6d5b8-x2k4q"},
        {"generateName", "train-7f9c6d5b8-"},
        {"namespace", "openb"},
        {"uid", "6d1c1f7e-3b0a-4c8e-9f1d-2a7b5c9e0f13"},
        {"resourceVersion", "48213377"},
        {"creationTimestamp", "2024-03-11T08:15:42Z"},
        {"labels", {{"app", "openb"}, {"pod-template-hash", "7f9c6d5b8"}, {"team", "vision"}}},
        {"annotations",
         {{"tessera.io/gpu-model", "V100M16|V100M32"},
          {"kubectl.kubernetes.io/restartedAt", "2024-03-11T08:15:40Z"},
          {"prometheus.io/scrape", "true"}}},
        {"ownerReferences",
         {{{"apiVersion", "apps/v1"},
           {"kind", "ReplicaSet"},
           {"name", "train-7f9c6d5b8"},
           {"uid", "0b8e2c4d-5a6f-4e1b-8c3d-9f7a1e2b3c4d"},
           {"controller", true},
           {"blockOwnerDeletion", true}}}}}},
      {"spec",
       {{"containers",
         {{{"name", "main"},
           {"image", "registry.example/openb:1"},
           {"args", {"--epochs", "90", "--batch-size", "256"}},
           {"env", {{{"name", "NCCL_DEBUG"}, {"value", "WARN"}}}},
           {"resources", {{"limits", resources}, {"requests", resources}}},
           {"volumeMounts",
            {{{"name", "kube-api-access-8xq2z"},
              {"readOnly", true},
              {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"}}}},
           {"terminationMessagePath", "/dev/termination-log"},
           {"terminationMessagePolicy", "File"},
           {"imagePullPolicy", "IfNotPresent"}}}},
        {"restartPolicy", "Always"},
        {"terminationGracePeriodSeconds", 30},
        {"dnsPolicy", "ClusterFirst"},
        {"serviceAccountName", "default"},
        {"securityContext", OJson::object()},
        {"schedulerName", "tessera-scheduler"},
        {"tolerations",
         {{{"key", "node.kubernetes.io/not-ready"},
           {"operator", "Exists"},
           {"effect", "NoExecute"},
           {"tolerationSeconds", 300}}}},
        {"priority", 0},
        {"enableServiceLinks", true},
        {"preemptionPolicy", "PreemptLowerPriority"}}},
      {"status", {{"phase", "Pending"}, {"qosClass", "Guaranteed"}}}};
  return pod.dump();
}

/// The trace's node names, replicated with a "-rK" suffix past the first 1213 (as
/// bench/extender_load_inputs.cc names the nodes of larger clusters).
std::string NodeName(int i) {
  constexpr int kBase = 1213;
  char base[32];
  std::snprintf(base, sizeof base, "openb-node-%04d", i % kBase);
  return i < kBase ? std::string(base) : std::string(base) + "-r" + std::to_string(i / kBase);
}

/// kube-scheduler's body for a nodeCacheCapable extender (Go's encoding/json: compact).
std::string FilterBody(int names, std::string_view pod_key = "Pod") {
  std::string out =
      "{\"" + std::string(pod_key) + "\":" + PodJson() + ",\"Nodes\":null,\"NodeNames\":[";
  for (int i = 0; i < names; ++i) {
    if (i > 0) out += ',';
    out += '"' + NodeName(i) + '"';
  }
  return out + "]}";
}

/// `s` in a buffer with SIMDJSON_PADDING spare bytes after it (as the server could hold a
/// body whose length it knows before reading it).
std::string Padded(const std::string& s) {
  std::string out;
  out.reserve(s.size() + simdjson::SIMDJSON_PADDING);
  out = s;
  return out;
}

// The simdjson On-Demand decoder ---------------------------------------------------------------

/// The nesting depth of `j` (0 for a scalar).
int Depth(const nlohmann::json& j) {
  if (!j.is_structured()) return 0;
  int depth = 0;
  for (const nlohmann::json& e : j) depth = std::max(depth, Depth(e));
  return depth + 1;
}

/// What the request path needs of a body: as ExtenderArgsRef, the names as views into it.
struct SimdArgs {
  Pod pod;
  bool has_node_names = false;
  std::vector<std::string_view> names;
};

/// The body kube-scheduler sends a nodeCacheCapable extender, with the hand scanner's
/// acceptance rule: exactly the keys "Pod", "Nodes" (null) and "NodeNames" (null or an array
/// of strings without escapes; simdjson has checked the whole body is UTF-8 and has no control
/// byte in a string), each once; the Pod parsed and decoded as the general path does. Anything
/// else returns false, and the general path decides.
bool DecodeSimd(simdjson::ondemand::parser& parser, simdjson::padded_string_view body,
                size_t max_bytes, SimdArgs* out) {
  namespace od = simdjson::ondemand;
  if (body.size() > max_bytes) return false;
  od::document doc;
  if (parser.iterate(body).get(doc) != simdjson::SUCCESS) return false;
  od::object obj;
  if (doc.get_object().get(obj) != simdjson::SUCCESS) return false;
  bool seen_pod = false, seen_nodes = false, seen_names = false;
  std::string_view pod_text;
  for (auto field_result : obj) {
    od::field field;
    if (std::move(field_result).get(field) != simdjson::SUCCESS) return false;
    const simdjson::ondemand::raw_json_string key = field.key();
    od::value value = field.value();
    if (!seen_pod && key.is_equal("Pod")) {
      seen_pod = true;
      // An object, its text as it is in the body (any other Pod goes to the general path).
      od::object pod;
      if (value.get_object().get(pod) != simdjson::SUCCESS ||
          pod.raw_json().get(pod_text) != simdjson::SUCCESS) {
        return false;
      }
    } else if (!seen_nodes && key.is_equal("Nodes")) {
      seen_nodes = true;
      bool null = false;
      if (value.is_null().get(null) != simdjson::SUCCESS || !null) return false;
    } else if (!seen_names && key.is_equal("NodeNames")) {
      seen_names = true;
      bool null = false;
      if (value.is_null().get(null) != simdjson::SUCCESS) return false;
      if (null) continue;
      od::array array;
      if (value.get_array().get(array) != simdjson::SUCCESS) return false;
      out->has_node_names = true;
      // A name is ~20 bytes of text with its quotes and comma: one allocation for the list.
      out->names.reserve(body.size() / 16 + 1);
      const char* first = nullptr;  // the first name's opening quote
      const char* last = nullptr;   // past the last name's closing quote
      for (auto element : array) {
        od::value v;
        if (std::move(element).get(v) != simdjson::SUCCESS) return false;
        // The token runs from its opening quote to the next structural character.
        std::string_view token = v.raw_json_token();
        while (!token.empty() && (token.back() == ' ' || token.back() == '\n' ||
                                  token.back() == '\r' || token.back() == '\t')) {
          token.remove_suffix(1);
        }
        if (token.size() < 2 || token.front() != '"' || token.back() != '"') return false;
        if (first == nullptr) first = token.data();
        last = token.data() + token.size();
        out->names.emplace_back(token.data() + 1, token.size() - 2);
      }
      // Between the names there are only commas and blanks (the iteration checked): a
      // backslash in this span is an escape in a name, which the general path decodes.
      if (first != nullptr && std::memchr(first, '\\', static_cast<size_t>(last - first))) {
        return false;
      }
    } else {
      return false;
    }
  }
  // Nothing after the object (On-Demand does not look past what it was asked for).
  if (doc.current_location().error() != simdjson::OUT_OF_BOUNDS || !seen_pod) return false;
  Result<nlohmann::json> pod = ParseJson(pod_text, max_bytes, "Pod");
  // The body nests one deeper than its Pod: the general path's limit is on the body.
  if (!pod.ok() || pod->is_null() || Depth(*pod) >= kMaxJsonDepth) return false;
  Result<Pod> decoded = DecodePod(*pod, "Pod");
  if (!decoded.ok()) return false;
  out->pod = std::move(*decoded);
  return true;
}

simdjson::ondemand::parser& Parser() {
  static thread_local simdjson::ondemand::parser parser;
  return parser;
}

// The checks -----------------------------------------------------------------------------------

bool SamePod(const Pod& a, const Pod& b) {
  if (a.containers.size() != b.containers.size()) return false;
  for (size_t i = 0; i < a.containers.size(); ++i) {
    if (a.containers[i].name != b.containers[i].name ||
        a.containers[i].requests != b.containers[i].requests ||
        a.containers[i].limits != b.containers[i].limits) {
      return false;
    }
  }
  return a.json_path == b.json_path && a.uid == b.uid && a.name == b.name &&
         a.namespace_name == b.namespace_name && a.resource_version == b.resource_version &&
         a.labels == b.labels && a.annotations == b.annotations && a.node_name == b.node_name &&
         a.scheduler_name == b.scheduler_name && a.priority == b.priority && a.phase == b.phase &&
         a.deleting == b.deleting && a.qos_class == b.qos_class && a.requests == b.requests;
}

/// Decodes `body` both ways. `accept`: whether the simdjson decoder must take it (else it must
/// decline, or agree). Returns false, with a message, when they disagree.
bool CheckOne(const std::string& body, bool accept) {
  ExtenderArgsRef ref;
  const Status s = DecodeExtenderArgsRef(body, &ref);
  const std::string padded = Padded(body);
  SimdArgs simd;
  const bool took = DecodeSimd(
      Parser(), simdjson::padded_string_view(padded.data(), padded.size(), padded.capacity()),
      kDefaultMaxExtenderBodyBytes, &simd);
  std::string why;
  if (took != accept) {
    why = took ? "simdjson took a body it should decline" : "simdjson declined";
  } else if (took && !s.ok()) {
    why = "simdjson took a body the general path rejects: " + s.error().message;
  } else if (took && (simd.has_node_names != ref.has_node_names || simd.names != ref.names ||
                      !SamePod(simd.pod, ref.args.pod))) {
    why = "different results";
  }
  if (why.empty()) return true;
  const size_t tail = std::min<size_t>(body.size(), 120);
  std::fprintf(stderr, "check failed (%s) on the body ending %s\n", why.c_str(),
               body.substr(body.size() - tail).c_str());
  return false;
}

bool CheckAll() {
  const std::string pod = PodJson();
  const std::string p = "{\"Pod\":" + pod;
  // Bodies the simdjson decoder must take (and decode as DecodeExtenderArgsRef does).
  std::vector<std::string> take = {
      FilterBody(1213),
      FilterBody(5000),
      FilterBody(50000),
      p + ",\"Nodes\":null,\"NodeNames\":[]}",
      p + ",\"Nodes\":null,\"NodeNames\":null}",
      p + ",\"NodeNames\":[\"n1\"]}",
      " {\"NodeNames\" : [ \"n1\" , \"n2\" ]\n,\t\"Pod\" :" + pod + ", \"Nodes\" : null }\n",
      p + ",\"NodeNames\":[\"\",\"n 1\",\"n\x7f\"]}",
      // Non-ASCII names (valid UTF-8): the hand scanner hands them to the general path; the
      // results must be the same.
      p + ",\"NodeNames\":[\"n\xc3\xa9ud-1\",\"\xe8\x8a\x82\xe7\x82\xb9\",\"\xf0\x9f\x9a\x80\"]}",
  };
  // Bodies it must decline: the general path decides them (escapes, other keys or spellings,
  // duplicates, wrong types, malformed JSON, invalid UTF-8, control bytes).
  std::vector<std::string> decline = {
      p + ",\"NodeNames\":[\"n\\u0031\",\"\\u003cx\\u003e\"]}",
      p + ",\"NodeNames\":[\"a\\\"b\"]}",
      p + ",\"NodeNames\":[\"n1\\\\\"]}",
      "{\"pOd\":" + pod + ",\"NodeNames\":[\"n1\"]}",
      "{\"P\\u006fd\":" + pod + ",\"NodeNames\":[\"n1\"]}",
      p + ",\"NodeNames\":[\"n1\"],\"Extra\":1}",
      p + ",\"NodeNames\":[\"n1\"],\"NodeNames\":[\"n2\"]}",
      p + ",\"Pod\":{\"metadata\":{\"name\":\"second\"}},\"NodeNames\":[\"n1\"]}",
      p + ",\"Nodes\":{\"items\":[]},\"NodeNames\":[\"n1\"]}",
      p + ",\"NodeNames\":[\"n1\",7]}",
      p + ",\"NodeNames\":[\"n1\" \"n2\"]}",
      p + ",\"NodeNames\":[\"n1\",]}",
      p + ",\"NodeNames\":[\"n1\"]",
      p + ",\"NodeNames\":[\"n1\"]} x",
      p + ",\"NodeNames\":[\"n1\"]}}",
      p + ",\"NodeNames\":\"n1\"}",
      p + ",\"Nodes\":nul,\"NodeNames\":[\"n1\"]}",
      p + " \"NodeNames\":[\"n1\"]}",
      p + ",\"NodeNames\":[\"n1\t\"]}",
      p + ",\"NodeNames\":[\"n\xff\"]}",
      p + ",\"NodeNames\":[\"n\xc3\"]}",
      "{\"Pod\":null,\"NodeNames\":[\"n1\"]}",
      "{\"Pod\":\"x\",\"NodeNames\":[\"n1\"]}",
      "{\"Pod\":[1,2,{\"a\":\"}\"}],\"NodeNames\":[\"n1\"]}",
      "{\"Pod\":{\"spec\":{\"priority\":\"high\"}},\"NodeNames\":[\"n1\"]}",
      "{\"Pod\":{\"metadata\":{\"name\":\"p\\ud800\"}},\"NodeNames\":[\"n1\"]}",
      "{\"Pod\":{\"metadata\":{\"name\":\"p\"]},\"NodeNames\":[\"n1\"]}",
      "{\"NodeNames\":[\"n1\"]}",
      "[]",
      "",
  };
  decline.push_back("{\"Pod\":" + std::string(600, '[') + std::string(600, ']') +
                    ",\"NodeNames\":[\"n1\"]}");
  // The deepest Pod the general path takes in a body, and one deeper.
  const auto deep = [](int arrays) {
    return "{\"Pod\":{\"metadata\":{\"name\":\"p\"},\"x\":" + std::string(arrays, '[') +
           std::string(arrays, ']') + "},\"NodeNames\":[\"n1\"]}";
  };
  take.push_back(deep(kMaxJsonDepth - 2));
  decline.push_back(deep(kMaxJsonDepth - 1));
  bool ok = true;
  for (const std::string& b : take) ok = CheckOne(b, true) && ok;
  for (const std::string& b : decline) ok = CheckOne(b, false) && ok;
  return ok;
}

// The decoders, for the benchmarks and the callgrind loop --------------------------------------

enum class Decoder { kHand, kSimdjson, kSimdjsonCopy, kGeneral };

struct Body {
  std::string text;     ///< with "Pod", padded (capacity >= size + SIMDJSON_PADDING)
  std::string general;  ///< with "pOd": DecodeExtenderArgsRef takes the general path
};

const Body& BodyOf(int names) {
  static std::vector<std::pair<int, Body>> cache;
  for (const auto& [n, b] : cache) {
    if (n == names) return b;
  }
  cache.emplace_back(names, Body{Padded(FilterBody(names)), FilterBody(names, "pOd")});
  return cache.back().second;
}

/// One decode; returns the number of names (so that nothing is optimised away).
size_t DecodeOnce(Decoder d, const Body& body) {
  switch (d) {
    case Decoder::kHand: {
      ExtenderArgsRef ref;
      if (!DecodeExtenderArgsRef(body.text, &ref).ok()) std::abort();
      return ref.names.size();
    }
    case Decoder::kSimdjson: {
      SimdArgs args;
      if (!DecodeSimd(Parser(),
                      simdjson::padded_string_view(body.text.data(), body.text.size(),
                                                   body.text.capacity()),
                      kDefaultMaxExtenderBodyBytes, &args)) {
        std::abort();
      }
      return args.names.size();
    }
    case Decoder::kSimdjsonCopy: {
      const simdjson::padded_string copy(body.text);
      SimdArgs args;
      if (!DecodeSimd(Parser(), copy, kDefaultMaxExtenderBodyBytes, &args)) std::abort();
      return args.names.size();
    }
    case Decoder::kGeneral: {
      ExtenderArgsRef ref;
      if (!DecodeExtenderArgsRef(body.general, &ref).ok()) std::abort();
      return ref.names.size();
    }
  }
  return 0;
}

[[gnu::noinline]] size_t DecodeLoop(Decoder d, const Body& body, int count) {
  size_t names = 0;
  for (int i = 0; i < count; ++i) names += DecodeOnce(d, body);
  return names;
}

void BM_Decode(benchmark::State& state, Decoder d) {
  const Body& body = BodyOf(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(DecodeOnce(d, body));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(body.text.size()));
}

BENCHMARK_CAPTURE(BM_Decode, hand, Decoder::kHand)
    ->Arg(1213)
    ->Arg(5000)
    ->Arg(50000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Decode, simdjson, Decoder::kSimdjson)
    ->Arg(1213)
    ->Arg(5000)
    ->Arg(50000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Decode, simdjson_copy, Decoder::kSimdjsonCopy)
    ->Arg(1213)
    ->Arg(5000)
    ->Arg(50000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Decode, general, Decoder::kGeneral)
    ->Arg(1213)
    ->Arg(5000)
    ->Arg(50000)
    ->Unit(benchmark::kMicrosecond);

int Main(int argc, char** argv) {
  if (!CheckAll()) return 1;
  std::printf("checks passed; simdjson implementation: %s\n",
              simdjson::get_active_implementation()->name().c_str());
  if (argc >= 2 && std::string_view(argv[1]) == "--count") {
    if (argc != 5) {
      std::fprintf(stderr, "usage: %s --count hand|simdjson|simdjson_copy|general NAMES COUNT\n",
                   argv[0]);
      return 2;
    }
    const std::string_view name = argv[2];
    Decoder d;
    if (name == "hand") {
      d = Decoder::kHand;
    } else if (name == "simdjson") {
      d = Decoder::kSimdjson;
    } else if (name == "simdjson_copy") {
      d = Decoder::kSimdjsonCopy;
    } else if (name == "general") {
      d = Decoder::kGeneral;
    } else {
      std::fprintf(stderr, "unknown decoder %s\n", argv[2]);
      return 2;
    }
    const Body& body = BodyOf(std::atoi(argv[3]));
    const int count = std::atoi(argv[4]);
    DecodeOnce(d, body);  // warm-up, not collected: the parser's buffers, the allocator
    const size_t names = DecodeLoop(d, body, count);
    std::printf("%s: %d decodes of %zu bytes, %zu names\n", argv[2], count, body.text.size(),
                names);
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace
}  // namespace tessera::k8s

int main(int argc, char** argv) { return tessera::k8s::Main(argc, argv); }
