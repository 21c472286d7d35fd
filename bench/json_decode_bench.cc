// tessera_json_decode_bench: the filter/prioritize body decode of the server's request path
// (names as views into the body), by each decoder on generated kube-scheduler bodies
// ({"Pod": a pending GPU pod, "Nodes": null, "NodeNames": [N names]}, N = 1213, 5000, 50000):
//   hand           a hand-written scanner for the outer object and NodeNames (eight bytes at a
//                  time), the Pod parsed and decoded with nlohmann: the baseline, below;
//   simdjson       DecodeExtenderArgsRef (src/k8s/extender/extender_protocol.cc): simdjson's
//                  On-Demand parser (Debian: libsimdjson-dev) for the outer object and
//                  NodeNames, the Pod as above; the body in a buffer with kExtenderBodyPadding
//                  spare bytes, as the server holds it;
//   simdjson_copy  the same on a body without that room: it is copied into a padded buffer;
//   hand_memo, simdjson_memo  the same as hand and simdjson with a NodeNamesMemo that
//                  remembers the body's NodeNames array (kube-scheduler sending one list again);
//   general        the nlohmann path every other body takes (a JSON tree of the whole body).
//
// Wall times (Google Benchmark; medians of interleaved repetitions):
//   build/bench/tessera_json_decode_bench --benchmark_repetitions=9
//       --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true
// Instructions per decode (callgrind counts only DecodeLoop; divide its Ir by COUNT), as
// bench/json_decode_counts.sh does for every decoder and size:
//   valgrind --tool=callgrind --toggle-collect='*DecodeLoop*'
//       build/bench/tessera_json_decode_bench --count DECODER NAMES COUNT
//
// Every run first checks that the baseline decodes the bodies as DecodeExtenderArgsRef does
// (tests/k8s/extender/extender_protocol_test.cc checks DecodeExtenderArgsRef itself); it exits
// 1 when they differ.
#include <benchmark/benchmark.h>
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
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

/// `s` in a buffer with kExtenderBodyPadding spare bytes after it, as the server holds a body
/// whose length it knows before reading it.
std::string Padded(const std::string& s) {
  std::string out;
  out.reserve(s.size() + kExtenderBodyPadding);
  out = s;
  return out;
}

// The baseline: a hand-written scanner -----------------------------------------------------------

using Json = nlohmann::json;

// The body kube-scheduler sends a nodeCacheCapable extender: exactly the keys "Pod", "Nodes"
// (null) and "NodeNames" (null or an array of printable-ASCII strings without escapes), each
// once. The Pod value is parsed and decoded as in the general path; NodeNames are views into
// the text. Anything else returns nullopt (the general path would decide). With a memo, an
// array it remembers is recognised with one memcmp where NodeNames' value starts.
struct FastArgs {
  Pod pod;
  std::optional<std::vector<std::string_view>> node_names;
  uint64_t names_id = 0;        ///< the NodeNamesMemo entry that matched, or 0
  std::string_view names_text;  ///< the array's text when it was scanned
};

using MemoEntries = std::array<std::shared_ptr<const NodeNamesMemo::Entry>, NodeNamesMemo::kSlots>;

// The bytes of `v` (eight, little-endian) that PlainString must look at: '"', '\\', below
// 0x20, 0x7f and above. Only the lowest flagged byte is exact (a borrow may flag bytes above
// it), which is all the scan needs.
inline uint64_t SpecialBytes(uint64_t v) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  const auto equal = [&](uint8_t b) {
    const uint64_t x = v ^ (kOnes * b);
    return (x - kOnes) & ~x & kHigh;
  };
  const uint64_t below_space = (v - kOnes * 0x20) & ~v & kHigh;
  return equal('"') | equal('\\') | equal(0x7f) | below_space | (v & kHigh);
}

class FastArgsScanner {
 public:
  explicit FastArgsScanner(std::string_view text, const MemoEntries* memo = nullptr)
      : s_(text), memo_(memo) {}

  std::optional<FastArgs> Decode(size_t max_bytes) {
    if (s_.size() > max_bytes || !Eat('{')) return std::nullopt;
    std::string_view pod_text;
    bool seen_pod = false, seen_nodes = false, seen_names = false;
    FastArgs args;
    do {
      std::string_view key;
      if (!PlainString(&key) || !Eat(':')) return std::nullopt;
      if (key == "Pod" && !seen_pod) {
        seen_pod = true;
        if (!SkipValue(&pod_text)) return std::nullopt;
      } else if (key == "Nodes" && !seen_nodes) {
        seen_nodes = true;
        if (!Null()) return std::nullopt;
      } else if (key == "NodeNames" && !seen_names) {
        seen_names = true;
        if (!Null()) {
          std::vector<std::string_view> names;
          Ws();
          const size_t start = i_;
          if (Remembered(&names, &args.names_id)) {
            args.node_names = std::move(names);
          } else {
            if (!Names(&names)) return std::nullopt;
            args.node_names = std::move(names);
            args.names_text = s_.substr(start, i_ - start);
          }
        }
      } else {
        return std::nullopt;
      }
    } while (Eat(','));
    if (!Eat('}')) return std::nullopt;
    Ws();
    if (i_ != s_.size() || !seen_pod) return std::nullopt;
    Result<Json> pod = ParseJson(pod_text, max_bytes, "Pod");
    if (!pod.ok() || pod->is_null()) return std::nullopt;
    Result<Pod> decoded = DecodePod(*pod, "Pod");
    if (!decoded.ok()) return std::nullopt;
    args.pod = std::move(*decoded);
    return args;
  }

 private:
  /// Deeper values go to the general path, which enforces kMaxJsonDepth on the whole body.
  static constexpr int kMaxDepth = 256;

  void Ws() {
    while (i_ < s_.size() &&
           (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) {
      ++i_;
    }
  }
  bool Eat(char c) {
    Ws();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool Null() {
    Ws();
    if (s_.substr(i_, 4) != "null") return false;
    i_ += 4;
    return true;
  }
  // A string of printable ASCII without escapes.
  bool PlainString(std::string_view* out) {
    Ws();
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    const size_t start = ++i_;
    // Eight bytes at a time up to the first one that needs a look (a quote, a backslash, a
    // control or non-ASCII byte); the loop below decides on it.
    while (i_ + 8 <= s_.size()) {
      uint64_t v;
      std::memcpy(&v, s_.data() + i_, 8);
      const uint64_t special = SpecialBytes(v);
      if (special != 0) {
        i_ += static_cast<size_t>(std::countr_zero(special) / 8);
        break;
      }
      i_ += 8;
    }
    for (; i_ < s_.size(); ++i_) {
      const auto c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        *out = s_.substr(start, i_ - start);
        ++i_;
        return true;
      }
      if (c < 0x20 || c >= 0x7f || c == '\\') return false;
    }
    return false;
  }
  // An array the memo remembers, byte for byte, at i_: its names as views into s_. The scan
  // of those bytes would give the same names and end at the same ']' (it reads nothing
  // past it), so this is exact.
  bool Remembered(std::vector<std::string_view>* names, uint64_t* id) {
    if (memo_ == nullptr) return false;
    const std::string_view rest = s_.substr(i_);
    for (const auto& e : *memo_) {
      if (e == nullptr || e->text.size() > rest.size() ||
          std::memcmp(rest.data(), e->text.data(), e->text.size()) != 0) {
        continue;
      }
      const size_t n = e->at.size();
      names->resize(n);
      std::string_view* out = names->data();
      const uint32_t* at = e->at.data();
      const uint32_t* len = e->len.data();
      for (size_t k = 0; k < n; ++k) out[k] = std::string_view(rest.data() + at[k], len[k]);
      i_ += e->text.size();
      *id = e->id;
      return true;
    }
    return false;
  }
  bool Names(std::vector<std::string_view>* names) {
    if (!Eat('[')) return false;
    if (Eat(']')) return true;
    // A name is ~20 bytes of text with its quotes and comma: one allocation for the list.
    names->reserve((s_.size() - i_) / 16 + 1);
    do {
      std::string_view name;
      if (!PlainString(&name)) return false;
      names->emplace_back(name);
    } while (Eat(','));
    return Eat(']');
  }
  // The extent of one value (an object, array, string or scalar token); its content is
  // checked later by the real parser.
  bool SkipValue(std::string_view* out) {
    Ws();
    const size_t start = i_;
    int depth = 0;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '"') {
        for (++i_; i_ < s_.size() && s_[i_] != '"'; ++i_) {
          if (s_[i_] == '\\') ++i_;
        }
        if (i_ >= s_.size()) return false;
        ++i_;
      } else if (c == '{' || c == '[') {
        if (++depth > kMaxDepth) return false;
        ++i_;
      } else if (c == '}' || c == ']') {
        if (depth == 0) break;
        --depth;
        ++i_;
      } else if (depth == 0 && (c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t')) {
        break;
      } else {
        ++i_;
      }
      if (depth == 0 && (c == '"' || c == '}' || c == ']')) break;
    }
    if (depth != 0 || i_ == start) return false;
    *out = s_.substr(start, i_ - start);
    return true;
  }

  std::string_view s_;
  const MemoEntries* memo_;
  size_t i_ = 0;
};

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

/// The baseline takes `body` and decodes it as DecodeExtenderArgsRef does (which must take it
/// on its fast path: the names point into the body).
bool CheckOne(const std::string& body) {
  ExtenderArgsRef ref;
  const Status s = DecodeExtenderArgsRef(body, &ref);
  std::optional<FastArgs> hand = FastArgsScanner(body).Decode(kDefaultMaxExtenderBodyBytes);
  std::string why;
  if (!s.ok()) {
    why = "DecodeExtenderArgsRef failed: " + s.error().message;
  } else if (ref.args.node_names.has_value()) {
    why = "DecodeExtenderArgsRef took the general path";
  } else if (!hand) {
    why = "the baseline declined";
  } else if (hand->node_names.has_value() != ref.has_node_names ||
             (hand->node_names && *hand->node_names != ref.names) ||
             !SamePod(hand->pod, ref.args.pod)) {
    why = "different results";
  }
  if (why.empty()) return true;
  const size_t tail = std::min<size_t>(body.size(), 120);
  std::fprintf(stderr, "check failed (%s) on the body ending %s\n", why.c_str(),
               body.substr(body.size() - tail).c_str());
  return false;
}

bool CheckAll() {
  const std::string p = "{\"Pod\":" + PodJson();
  bool ok = true;
  for (const std::string& b :
       {FilterBody(1213), FilterBody(5000), FilterBody(50000),
        p + ",\"Nodes\":null,\"NodeNames\":[]}", p + ",\"Nodes\":null,\"NodeNames\":null}",
        " {\"NodeNames\" : [ \"n1\" , \"n2\" ]\n,\t\"Pod\" :" + PodJson() +
            ", \"Nodes\" : null }\n"}) {
    ok = CheckOne(b) && ok;
  }
  return ok;
}

// The decoders, for the benchmarks and the callgrind loop --------------------------------------

enum class Decoder { kHand, kHandMemo, kSimdjson, kSimdjsonCopy, kSimdjsonMemo, kGeneral };

constexpr std::pair<std::string_view, Decoder> kDecoders[] = {
    {"hand", Decoder::kHand},
    {"hand_memo", Decoder::kHandMemo},
    {"simdjson", Decoder::kSimdjson},
    {"simdjson_copy", Decoder::kSimdjsonCopy},
    {"simdjson_memo", Decoder::kSimdjsonMemo},
    {"general", Decoder::kGeneral},
};

struct Body {
  std::string text;     ///< with "Pod", padded (capacity >= size + kExtenderBodyPadding)
  std::string general;  ///< with "pOd": DecodeExtenderArgsRef takes the general path
  std::unique_ptr<NodeNamesMemo> memo;  ///< remembers text's NodeNames array
};

const Body& BodyOf(int names) {
  static std::vector<std::pair<int, Body>> cache;
  for (const auto& [n, b] : cache) {
    if (n == names) return b;
  }
  Body body{Padded(FilterBody(names)), FilterBody(names, "pOd"), std::make_unique<NodeNamesMemo>()};
  for (int sighting = 0; sighting < 2; ++sighting) {  // remembered on the second
    ExtenderArgsRef ref;
    if (!DecodeExtenderArgsRef(body.text, &ref, kDefaultMaxExtenderBodyBytes, body.memo.get())
             .ok()) {
      std::abort();
    }
  }
  cache.emplace_back(names, std::move(body));
  return cache.back().second;
}

/// The baseline as DecodeExtenderArgsRef used it.
void HandDecode(std::string_view body, const MemoEntries* memo, ExtenderArgsRef* out) {
  std::optional<FastArgs> fast = FastArgsScanner(body, memo).Decode(kDefaultMaxExtenderBodyBytes);
  if (!fast) std::abort();
  out->args.pod = std::move(fast->pod);
  out->has_node_names = fast->node_names.has_value();
  if (fast->node_names) out->names = std::move(*fast->node_names);
  out->names_id = fast->names_id;
}

/// One decode; returns the number of names (so that nothing is optimised away).
size_t DecodeOnce(Decoder d, const Body& body) {
  ExtenderArgsRef ref;
  Status s;
  switch (d) {
    case Decoder::kHand:
      HandDecode(body.text, nullptr, &ref);
      break;
    case Decoder::kHandMemo: {
      const MemoEntries entries = body.memo->Snapshot();
      HandDecode(body.text, &entries, &ref);
      if (ref.names_id == 0) std::abort();
      break;
    }
    case Decoder::kSimdjson:
      s = DecodeExtenderArgsRef(body.text, &ref, kDefaultMaxExtenderBodyBytes, nullptr,
                                body.text.capacity());
      break;
    case Decoder::kSimdjsonCopy:
      s = DecodeExtenderArgsRef(body.text, &ref);
      break;
    case Decoder::kSimdjsonMemo:
      s = DecodeExtenderArgsRef(body.text, &ref, kDefaultMaxExtenderBodyBytes, body.memo.get(),
                                body.text.capacity());
      if (ref.names_id == 0) std::abort();
      break;
    case Decoder::kGeneral:
      s = DecodeExtenderArgsRef(body.general, &ref);
      break;
  }
  if (!s.ok()) std::abort();
  return ref.names.size();
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

void RegisterBenchmarks() {
  for (const auto& [name, d] : kDecoders) {
    benchmark::RegisterBenchmark(("BM_Decode/" + std::string(name)).c_str(),
                                 [d = d](benchmark::State& state) { BM_Decode(state, d); })
        ->Arg(1213)
        ->Arg(5000)
        ->Arg(50000)
        ->Unit(benchmark::kMicrosecond);
  }
}

int Main(int argc, char** argv) {
  if (!CheckAll()) return 1;
  std::printf("checks passed; simdjson implementation: %s\n",
              simdjson::get_active_implementation()->name().c_str());
  if (argc >= 2 && std::string_view(argv[1]) == "--count") {
    if (argc != 5) {
      std::fprintf(stderr,
                   "usage: %s --count hand|hand_memo|simdjson|simdjson_copy|simdjson_memo|general "
                   "NAMES COUNT\n",
                   argv[0]);
      return 2;
    }
    const std::string_view name = argv[2];
    const auto it = std::find_if(std::begin(kDecoders), std::end(kDecoders),
                                 [&](const auto& e) { return e.first == name; });
    if (it == std::end(kDecoders)) {
      std::fprintf(stderr, "unknown decoder %s\n", argv[2]);
      return 2;
    }
    const Decoder d = it->second;
    const Body& body = BodyOf(std::atoi(argv[3]));
    const int count = std::atoi(argv[4]);
    DecodeOnce(d, body);  // warm-up, not collected: the parser's buffers, the allocator
    const size_t names = DecodeLoop(d, body, count);
    std::printf("%s: %d decodes of %zu bytes, %zu names\n", argv[2], count, body.text.size(),
                names);
    return 0;
  }
  RegisterBenchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace
}  // namespace tessera::k8s

int main(int argc, char** argv) { return tessera::k8s::Main(argc, argv); }
