// Fuzzes the files `tessera serve` and `tessera analyze|record` read to reach the API server:
// a kubeconfig (KubeconfigConfig: its current-context, cluster and user, base64 data) and the
// in-cluster service account's files (InClusterConfig: token and ca.crt), then the client set
// up from what they say (HttpKubeApi::Create: URL, inline certificates written to temporary
// files, no connection). The input is written as the kubeconfig and as the service account's
// token and CA. Oracles: errors name the file; an accepted config names a server.

#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>

#include "fuzz/fuzz_util.h"
#include "k8s/api/kube_api.h"

namespace {

// A folder of this process for the files, made once.
const std::string& Dir() {
  // Never freed: the exit handler below reads it after static objects are destroyed.
  static const std::string* const dir = [] {
    char name[] = "/tmp/tessera-fuzz-kubeconfig-XXXXXX";
    if (mkdtemp(name) == nullptr) std::abort();
    // Removed when the run ends (a crash leaves it, beside the crash's input).
    std::atexit([] {
      for (const char* file : {"/config", "/token", "/ca.crt"}) unlink((Dir() + file).c_str());
      rmdir(Dir().c_str());
    });
    return new std::string(name);
  }();
  return *dir;
}

void Write(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

// Files a fuzzed kubeconfig may name that the harness lets the client read: its own (a path
// such as /dev/zero would only test the operating system).
bool Ours(const std::string& path) { return path.empty() || path.rfind(Dir() + "/", 0) == 0; }

}  // namespace

namespace {

void FuzzOne(std::string_view text) {
  using namespace tessera::fuzz;  // NOLINT
  const std::string path = Dir() + "/config";
  Write(path, text);
  tessera::Result<tessera::k8s::KubeApiConfig> config = tessera::k8s::KubeconfigConfig(path);
  if (!config.ok()) {
    FUZZ_CHECK(config.error().message.rfind("kubeconfig " + path, 0) == 0,
               config.error().message);
  } else {
    FUZZ_CHECK(config->source == "kubeconfig " + path, config->source);
    if (Ours(config->ca_file) && Ours(config->token_file) && Ours(config->client_cert_file) &&
        Ours(config->client_key_file)) {
      tessera::Result<std::unique_ptr<tessera::k8s::HttpKubeApi>> api =
          tessera::k8s::HttpKubeApi::Create(*config);
      if (!api.ok()) FUZZ_CHECK(!api.error().message.empty(), Excerpt(text));
    }
  }
  // The service account: the input as its token and its CA.
  Write(Dir() + "/token", text);
  Write(Dir() + "/ca.crt", text);
  setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  tessera::Result<tessera::k8s::KubeApiConfig> in_cluster = tessera::k8s::InClusterConfig(Dir());
  FUZZ_CHECK(in_cluster.ok(), in_cluster.error().message);
  tessera::Result<std::unique_ptr<tessera::k8s::HttpKubeApi>> api =
      tessera::k8s::HttpKubeApi::Create(*in_cluster);
  FUZZ_CHECK(api.ok(), api.error().message);
  // Base64 as kubeconfig data: what decodes is at most 3/4 of the text.
  tessera::Result<std::string> decoded = tessera::k8s::DecodeBase64(text);
  if (decoded.ok()) FUZZ_CHECK(decoded->size() * 4 <= text.size() * 3 + 3, Excerpt(text));
}

}  // namespace

TESSERA_FUZZ_TARGET((32 << 10), FuzzOne)
