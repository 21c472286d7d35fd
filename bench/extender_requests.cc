// tessera_extender_requests: runs the server's filter and prioritize path (decode the body,
// answer it) on the inputs of bench/extender_load.sh, without HTTP, for instruction counts:
//
//   valgrind --tool=callgrind --toggle-collect='*RunRequests*'
//       build/bench/tessera_extender_requests /tmp/tessera-load 5000 filter 25 [fgd [H]]
//
// H > 0 keeps a static headroom of H GPUs for LS (the default classes): the bodies' pods carry
// no class and priority 0, so they are BE, held to it, and filter checks each node against it.
// Loads nodes-N.json and pods-N.json, answers WARMUP requests (the pod shapes in turn) to fill
// the caches, then COUNT requests inside RunRequests (the only function callgrind collects).
// Divide the Ir of RunRequests by COUNT. Prints the answer bytes, so that runs can be checked
// to answer the same ($TESSERA_ANSWERS=FILE writes the warm-up answers there).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "k8s/extender/extender.h"
#include "k8s/extender/extender_protocol.h"
#include "util/file.h"

namespace tessera::k8s {
namespace {

/// Where the warm-up answers go ($TESSERA_ANSWERS: a file), to compare builds.
FILE* dump = nullptr;

/// The server's memo of NodeNames arrays (HttpServer holds one).
NodeNamesMemo memo;

/// One request as the server's handler does it.
[[gnu::noinline]] size_t Answer(Extender& extender, const std::string& body, bool prioritize) {
  ExtenderArgsRef args;
  if (!DecodeExtenderArgsRef(body, &args, kDefaultMaxExtenderBodyBytes, &memo, body.capacity())
           .ok()) {
    std::abort();
  }
  const std::string answer = prioritize ? extender.PrioritizeJson(args) : extender.FilterJson(args);
  if (dump != nullptr) std::fwrite(answer.data(), 1, answer.size(), dump);
  return answer.size();
}

[[gnu::noinline]] size_t RunRequests(Extender& extender, const std::vector<std::string>& bodies,
                                     bool prioritize, int count) {
  size_t bytes = 0;
  for (int i = 0; i < count; ++i) bytes += Answer(extender, bodies[i % bodies.size()], prioritize);
  return bytes;
}

int Main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s DIR NODES filter|prioritize COUNT [POLICY [HEADROOM_GPUS]]\n",
                 argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const std::string tag = argv[2];
  const bool prioritize = std::string(argv[3]) == "prioritize";
  const int count = std::atoi(argv[4]);
  ExtenderOptions options;
  if (argc > 5) options.policy = argv[5];
  if (argc > 6 && std::atoi(argv[6]) > 0) {
    options.headroom.mode = HeadroomOptions::Mode::kStatic;
    options.headroom.gpus = std::atoi(argv[6]);
  }
  Result<std::string> nodes = ReadFile(dir + "/nodes-" + tag + ".json");
  Result<std::string> pods = ReadFile(dir + "/pods-" + tag + ".json");
  if (!nodes.ok() || !pods.ok()) {
    std::fprintf(stderr, "inputs missing in %s (run bench/extender_load.sh)\n", dir.c_str());
    return 1;
  }
  Result<std::unique_ptr<Extender>> extender = Extender::FromJson(*nodes, *pods, options);
  if (!extender.ok()) {
    std::fprintf(stderr, "%s\n", extender.error().message.c_str());
    return 1;
  }
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("filter-" + tag + "-", 0) == 0) names.push_back(entry.path().string());
  }
  std::sort(names.begin(), names.end());
  std::vector<std::string> bodies;
  for (const std::string& path : names) {
    Result<std::string> body = ReadFile(path);
    if (!body.ok()) continue;
    // With room for the parser to read ahead, as the server holds a body.
    std::string padded;
    padded.reserve(body->size() + kExtenderBodyPadding);
    padded = *body;
    bodies.push_back(std::move(padded));
  }
  if (bodies.empty()) return 1;
  if (const char* path = std::getenv("TESSERA_ANSWERS")) dump = std::fopen(path, "wb");
  size_t warm = 0;  // not collected: outside RunRequests
  for (size_t i = 0; i < 2 * bodies.size(); ++i) {
    warm += Answer(**extender, bodies[i % bodies.size()], prioritize);
  }
  if (dump != nullptr) std::fclose(dump);
  dump = nullptr;
  const size_t bytes = RunRequests(**extender, bodies, prioritize, count);
  std::printf("%zu bodies; warm-up answers %zu bytes; %d requests answered %zu bytes\n",
              bodies.size(), warm, count, bytes);
  return 0;
}

}  // namespace
}  // namespace tessera::k8s

int main(int argc, char** argv) { return tessera::k8s::Main(argc, argv); }
