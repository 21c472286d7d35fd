// tessera_extender_bench: the extender's request path without HTTP, step by step (decode the
// body, filter or prioritize, encode the answer), on the inputs of bench/extender_load.sh
// (tessera_extender_inputs writes them; directory $TESSERA_LOAD_DIR, default /tmp/tessera-load).
// Each benchmark cycles through the pod shapes. Skips when the inputs are absent.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "k8s/extender/extender.h"
#include "k8s/extender/extender_protocol.h"
#include "util/file.h"

namespace tessera::k8s {
namespace {

std::string LoadDir() {
  const char* dir = std::getenv("TESSERA_LOAD_DIR");
  return dir != nullptr ? dir : "/tmp/tessera-load";
}

struct Inputs {
  std::unique_ptr<Extender> extender;
  std::vector<std::string> bodies;
  std::vector<ExtenderArgs> args;
};

// One set per cluster size, loaded once.
Inputs* Load(int nodes, benchmark::State& state) {
  static std::map<int, std::unique_ptr<Inputs>> cache;
  auto it = cache.find(nodes);
  if (it != cache.end()) return it->second.get();
  const std::string dir = LoadDir();
  const std::string tag = std::to_string(nodes);
  Result<std::string> node_json = ReadFile(dir + "/nodes-" + tag + ".json");
  Result<std::string> pod_json = ReadFile(dir + "/pods-" + tag + ".json");
  if (!node_json.ok() || !pod_json.ok()) {
    state.SkipWithError("inputs missing: run tessera_extender_inputs (bench/extender_load.sh)");
    return nullptr;
  }
  auto inputs = std::make_unique<Inputs>();
  Result<std::unique_ptr<Extender>> e = Extender::FromJson(*node_json, *pod_json, {});
  if (!e.ok()) {
    state.SkipWithError(e.error().message.c_str());
    return nullptr;
  }
  inputs->extender = std::move(*e);
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("filter-" + tag + "-", 0) != 0) continue;
    Result<std::string> body = ReadFile(entry.path().string());
    if (!body.ok()) continue;
    Result<ExtenderArgs> args = DecodeExtenderArgs(*body);
    if (!args.ok()) continue;
    inputs->bodies.push_back(std::move(*body));
    inputs->args.push_back(std::move(*args));
  }
  if (inputs->bodies.empty()) {
    state.SkipWithError("no filter bodies");
    return nullptr;
  }
  return cache.emplace(nodes, std::move(inputs)).first->second.get();
}

void BM_DecodeArgs(benchmark::State& state) {
  Inputs* in = Load(static_cast<int>(state.range(0)), state);
  if (in == nullptr) return;
  size_t i = 0;
  for (auto _ : state) {
    Result<ExtenderArgs> args = DecodeExtenderArgs(in->bodies[i++ % in->bodies.size()]);
    benchmark::DoNotOptimize(args);
  }
}

void BM_Filter(benchmark::State& state) {
  Inputs* in = Load(static_cast<int>(state.range(0)), state);
  if (in == nullptr) return;
  size_t i = 0;
  for (auto _ : state) {
    ExtenderFilterResult r = in->extender->Filter(in->args[i++ % in->args.size()]);
    benchmark::DoNotOptimize(r);
  }
}

void BM_EncodeFilterResult(benchmark::State& state) {
  Inputs* in = Load(static_cast<int>(state.range(0)), state);
  if (in == nullptr) return;
  std::vector<ExtenderFilterResult> results;
  for (const ExtenderArgs& a : in->args) results.push_back(in->extender->Filter(a));
  size_t i = 0;
  for (auto _ : state) {
    std::string body = EncodeExtenderFilterResult(results[i++ % results.size()]);
    benchmark::DoNotOptimize(body);
  }
}

void BM_Prioritize(benchmark::State& state) {
  Inputs* in = Load(static_cast<int>(state.range(0)), state);
  if (in == nullptr) return;
  size_t i = 0;
  for (auto _ : state) {
    HostPriorityList r = in->extender->Prioritize(in->args[i++ % in->args.size()]);
    benchmark::DoNotOptimize(r);
  }
}

void BM_FilterJson(benchmark::State& state) {
  Inputs* in = Load(static_cast<int>(state.range(0)), state);
  if (in == nullptr) return;
  size_t i = 0;
  for (auto _ : state) {
    std::string body = in->extender->FilterJson(in->args[i++ % in->args.size()]);
    benchmark::DoNotOptimize(body);
  }
}

// What the HTTP handlers do: decode, decide, encode.
void BM_FilterRequest(benchmark::State& state) {
  Inputs* in = Load(static_cast<int>(state.range(0)), state);
  if (in == nullptr) return;
  size_t i = 0;
  for (auto _ : state) {
    Result<ExtenderArgs> args = DecodeExtenderArgs(in->bodies[i++ % in->bodies.size()]);
    std::string body = in->extender->FilterJson(*args);
    benchmark::DoNotOptimize(body);
  }
}

void BM_PrioritizeRequest(benchmark::State& state) {
  Inputs* in = Load(static_cast<int>(state.range(0)), state);
  if (in == nullptr) return;
  size_t i = 0;
  for (auto _ : state) {
    Result<ExtenderArgs> args = DecodeExtenderArgs(in->bodies[i++ % in->bodies.size()]);
    std::string body = in->extender->PrioritizeJson(*args);
    benchmark::DoNotOptimize(body);
  }
}

// The server's path since names are views into the body (DecodeExtenderArgsRef).
void BM_DecodeArgsRef(benchmark::State& state) {
  Inputs* in = Load(static_cast<int>(state.range(0)), state);
  if (in == nullptr) return;
  size_t i = 0;
  for (auto _ : state) {
    ExtenderArgsRef args;
    Status s = DecodeExtenderArgsRef(in->bodies[i++ % in->bodies.size()], &args);
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(args.names.data());
  }
}

void BM_FilterRequestRef(benchmark::State& state) {
  Inputs* in = Load(static_cast<int>(state.range(0)), state);
  if (in == nullptr) return;
  size_t i = 0;
  for (auto _ : state) {
    ExtenderArgsRef args;
    (void)DecodeExtenderArgsRef(in->bodies[i++ % in->bodies.size()], &args);
    std::string body = in->extender->FilterJson(args);
    benchmark::DoNotOptimize(body);
  }
}

void BM_PrioritizeRequestRef(benchmark::State& state) {
  Inputs* in = Load(static_cast<int>(state.range(0)), state);
  if (in == nullptr) return;
  size_t i = 0;
  for (auto _ : state) {
    ExtenderArgsRef args;
    (void)DecodeExtenderArgsRef(in->bodies[i++ % in->bodies.size()], &args);
    std::string body = in->extender->PrioritizeJson(args);
    benchmark::DoNotOptimize(body);
  }
}

BENCHMARK(BM_DecodeArgs)->Arg(1213)->Arg(5000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Filter)->Arg(1213)->Arg(5000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EncodeFilterResult)->Arg(1213)->Arg(5000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FilterJson)->Arg(1213)->Arg(5000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Prioritize)->Arg(1213)->Arg(5000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FilterRequest)->Arg(1213)->Arg(5000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PrioritizeRequest)->Arg(1213)->Arg(5000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DecodeArgsRef)->Arg(1213)->Arg(5000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FilterRequestRef)->Arg(1213)->Arg(5000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PrioritizeRequestRef)->Arg(1213)->Arg(5000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace tessera::k8s

BENCHMARK_MAIN();
