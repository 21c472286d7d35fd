// Fuzzes the body of POST /bind (kube-scheduler's ExtenderBindingArgs) through the server's
// route, on an extender whose filter has passed two pending pods (uid f1: half a GPU, f2: two
// whole GPUs) on every node. Oracles: the answer is {"Error": string}, each key once; the
// decoder round-trips through the encoder; only a bind answered without an error changes the
// model, by at most that pod's GPUs, and the same bind again succeeds without changing it.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_util.h"

namespace tessera::fuzz {
namespace {

using k8s::HttpServer;

constexpr size_t kMaxBody = 16 << 10;

std::string PendingPod(const std::string& uid, int gpus, int milli) {
  return R"({"metadata":{"name":"p-)" + uid + R"(","namespace":"ml","uid":")" + uid +
         R"("},"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"1",)" +
         R"("tessera.io/gpu":")" + std::to_string(gpus) + R"(","tessera.io/gpu-milli":")" +
         std::to_string(milli) + R"("}}}]}})";
}

// The answer's JSON; *status gets the HTTP status.
nlohmann::json Answer(const HttpServer& server, const char* path, std::string_view body,
                      int* status) {
  const HttpServer::Response res = Post(server, path, body);
  *status = res.status;
  return res.status == 200 && path[1] == 'f' ? CheckFilterAnswer(res.body)
                                             : CheckErrorAnswer(res.body);
}

void FuzzOne(std::string_view body) {
  std::unique_ptr<tessera::k8s::Extender> ext = NewExtender();
  tessera::k8s::HttpServer server(ext.get(), tessera::k8s::HttpServerOptions{});
  int status = 0;
  for (const auto& [uid, gpus, milli] : {std::tuple{"f1", 1, 500}, std::tuple{"f2", 2, 1000}}) {
    const std::string filter = R"({"Pod":)" + PendingPod(uid, gpus, milli) +
                               R"(,"Nodes":null,"NodeNames":["a10-7","gpu-node-1","a10-hami-2",)"
                               R"("a100-hami-8","n1","n2"]})";
    Answer(server, "/filter", filter, &status);
    FUZZ_CHECK(status == 200, filter);
  }
  const std::string model = ModelOf(*ext);
  const int64_t allocated = ext->gpu_allocated_milli();
  const int bound = ext->bound_pods();

  const nlohmann::json answer = Answer(server, "/bind", body, &status);
  FUZZ_CHECK(status == 200 || status == 400, std::to_string(status));
  tessera::Result<tessera::k8s::ExtenderBindingArgs> args =
      tessera::k8s::DecodeExtenderBindingArgs(body);
  FUZZ_CHECK(args.ok() == (status == 200), Excerpt(body));
  if (args.ok()) {
    tessera::Result<tessera::k8s::ExtenderBindingArgs> back =
        tessera::k8s::DecodeExtenderBindingArgs(tessera::k8s::EncodeExtenderBindingArgs(*args));
    FUZZ_CHECK(back.ok() && *back == *args, Excerpt(body));
  }
  if (status != 200 || !answer["Error"].get<std::string>().empty()) {
    FUZZ_CHECK(ModelOf(*ext) == model, "a refused bind changed the model: " + Excerpt(body) +
                                           " -> " + answer.dump());
    return;
  }
  // Bound: one more pod, at most two whole GPUs more (f2's).
  FUZZ_CHECK(ext->bound_pods() == bound + 1, Excerpt(body));
  FUZZ_CHECK(ext->gpu_allocated_milli() > allocated &&
                 ext->gpu_allocated_milli() <= allocated + 2000,
             Excerpt(body));
  FUZZ_CHECK(args->pod_uid == "f1" || args->pod_uid == "f2", "bound " + args->pod_uid);
  FUZZ_CHECK(ext->gpu_allocated_milli() <= ext->gpu_capacity_milli(), Excerpt(body));
  // Idempotent per UID.
  const std::string after = ModelOf(*ext);
  const nlohmann::json again = Answer(server, "/bind", body, &status);
  FUZZ_CHECK(status == 200 && again["Error"] == "", again.dump());
  FUZZ_CHECK(ModelOf(*ext) == after, "a repeated bind changed the model");
}

}  // namespace
}  // namespace tessera::fuzz

TESSERA_FUZZ_TARGET(tessera::fuzz::kMaxBody, tessera::fuzz::FuzzOne)
