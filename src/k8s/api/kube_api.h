#pragma once

// The subset of the Kubernetes REST API that `tessera serve` uses, behind a small interface:
// list a collection page by page (optionally by field selector), watch it from a
// resourceVersion, create a pod's binding (with the annotations the API server copies onto the
// pod), and what a preemption writes (a pod's status, a pod's deletion, an event). HttpKubeApi
// speaks it over cpp-httplib (http for tests, https with a CA and a bearer token or a client
// certificate in a cluster); the configuration comes from the in-cluster service account or
// from a kubeconfig file.

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace httplib {
class Client;
}

namespace tessera::k8s {

/// The longest watch event line accepted (a larger one ends the stream as malformed).
inline constexpr size_t kMaxWatchEventBytes = size_t{64} << 20;

/// The outcome of one API call. `error` is empty on success; otherwise it names the method,
/// the URL, the HTTP status and an excerpt of the body ("GET https://h/api/v1/pods?limit=500:
/// HTTP 403: pods is forbidden: ..."). `http_status` is 0 when no response came (connection
/// refused, TLS failure, a stream cut mid-way).
struct ApiStatus {
  int http_status = 0;
  std::string error;
  bool ok() const { return error.empty(); }
  /// The API server no longer has the requested resourceVersion (HTTP 410, or a watch ERROR
  /// event with code 410): the caller must list again.
  bool gone() const { return http_status == 410; }
};

/// One page of a list: its items (objects without kind/apiVersion, as the API sends them), the
/// list's metadata.resourceVersion and metadata.continue ("" on the last page).
struct ListPage {
  std::vector<nlohmann::json> items;
  std::string resource_version;
  std::string continue_token;
};

/// Decodes the body of a list answer (a v1 List: {"metadata": {"resourceVersion",
/// "continue"}, "items": [...]}) into *page. Errors name the place ("list: items: expected an
/// array", "list.metadata.continue: expected string, got number") or the byte offset of
/// malformed JSON. The items are kept as they are (decoded by their readers). Pure.
Status DecodeListPage(std::string_view body, ListPage* page);

/// What a List asks for.
struct ListOptions {
  int limit = 500;             ///< items per page; 0 asks for everything at once
  std::string continue_token;  ///< the previous page's metadata.continue ("" for the first)
  std::string field_selector;  ///< e.g. "spec.nodeName=n1" ("" = none)
};

/// The Kubernetes API as Tessera uses it. Paths are collection paths such as "/api/v1/nodes"
/// and "/api/v1/pods". Implementations are thread-safe: calls may run concurrently.
class KubeApi {
 public:
  virtual ~KubeApi() = default;
  /// GET path?limit=N[&continue=T][&fieldSelector=S]. A list without a resourceVersion is a
  /// consistent read: it reflects every write the API server acknowledged before it.
  virtual ApiStatus List(const std::string& path, const ListOptions& options, ListPage* page) = 0;
  /// GET path?watch=true&resourceVersion=RV&allowWatchBookmarks=true&timeoutSeconds=T and
  /// calls `on_open` (when set) once the server has answered 200, then `on_event` with each
  /// event line ({"type":..., "object":...}) as it arrives. Returns ok when the server ended
  /// the stream, when `on_event` returned false, or when CancelWatches was called; an error
  /// when the request failed or the stream was cut.
  virtual ApiStatus Watch(const std::string& path, const std::string& resource_version,
                          int timeout_seconds,
                          const std::function<bool(std::string_view line)>& on_event,
                          const std::function<void()>& on_open) = 0;
  /// Makes every Watch in progress return soon (at shutdown).
  virtual void CancelWatches() = 0;
  /// POST /api/v1/namespaces/NS/pods/NAME/binding with a v1 Binding to `node`: metadata.uid =
  /// `uid` when not empty (the API server checks it, so that a pod recreated under the same
  /// name is not bound), and metadata.annotations = `annotations`, which the API server copies
  /// onto the pod in the same write as spec.nodeName: the pod is never bound without them,
  /// and a failed Binding leaves nothing behind.
  virtual ApiStatus BindPod(const std::string& namespace_name, const std::string& name,
                            const std::string& uid, const std::string& node,
                            const std::map<std::string, std::string>& annotations) = 0;
  /// PATCH /api/v1/namespaces/NS/pods/NAME/status with a strategic merge patch `patch` (a JSON
  /// object such as {"status": {"nominatedNodeName": "n1"}}; conditions merge by type).
  virtual ApiStatus PatchPodStatus(const std::string& namespace_name, const std::string& name,
                                   const nlohmann::ordered_json& patch) = 0;
  /// DELETE /api/v1/namespaces/NS/pods/NAME with the precondition metadata.uid = `uid` (a pod
  /// re-created under the name is not deleted) and the pod's own grace period.
  virtual ApiStatus DeletePod(const std::string& namespace_name, const std::string& name,
                              const std::string& uid) = 0;
  /// POST /apis/events.k8s.io/v1/namespaces/NS/events with `event` (an events.k8s.io/v1 Event).
  virtual ApiStatus CreateEvent(const std::string& namespace_name,
                                const nlohmann::ordered_json& event) = 0;
};

/// How to reach the API server.
struct KubeApiConfig {
  /// "https://10.96.0.1:443", "http://127.0.0.1:8080"; a path after the authority is kept as
  /// a prefix of every request path (API servers behind a proxy).
  std::string server;
  std::string ca_file;  ///< PEM CA bundle that signs the server's certificate
  std::string ca_data;  ///< the same, inline (kubeconfig certificate-authority-data, decoded)
  std::string token;    ///< bearer token
  /// A file holding the bearer token, read again before each request (service account tokens
  /// are rotated by the kubelet).
  std::string token_file;
  std::string client_cert_file;  ///< PEM client certificate (with client_key_file)
  std::string client_cert_data;  ///< the same, inline (decoded)
  std::string client_key_file;
  std::string client_key_data;
  bool insecure_skip_tls_verify = false;
  int connect_timeout_seconds = 5;
  /// Read timeout of list, patch and bind calls. A watch waits up to its timeoutSeconds plus
  /// this before it counts the connection as dead.
  int read_timeout_seconds = 30;
  /// Where the config came from, for messages ("in-cluster", "kubeconfig /root/.kube/config").
  std::string source;
};

/// The in-cluster configuration: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT,
/// the service account's token and CA under `secrets_dir`
/// (/var/run/secrets/kubernetes.io/serviceaccount). Errors name the missing variable or file.
Result<KubeApiConfig> InClusterConfig(
    const std::string& secrets_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

/// The configuration of a kubeconfig file's current-context: the cluster's server,
/// certificate-authority(-data) and insecure-skip-tls-verify; the user's token, tokenFile,
/// client-certificate(-data) and client-key(-data). Relative paths are relative to the file's
/// folder. Errors name the file and the key ("kubeconfig /x: users[0] \"admin\": exec
/// credentials are not supported"); exec and auth-provider plugins are not supported.
Result<KubeApiConfig> KubeconfigConfig(const std::string& path);

/// Base64 (standard alphabet, padding optional, blanks ignored) → bytes.
Result<std::string> DecodeBase64(std::string_view text);

/// KubeApi over cpp-httplib. Each call opens its own connection (calls run concurrently);
/// inline certificate data is written to private temporary files, removed by the destructor.
class HttpKubeApi final : public KubeApi {
 public:
  static Result<std::unique_ptr<HttpKubeApi>> Create(KubeApiConfig config);
  ~HttpKubeApi() override;
  HttpKubeApi(const HttpKubeApi&) = delete;
  HttpKubeApi& operator=(const HttpKubeApi&) = delete;

  ApiStatus List(const std::string& path, const ListOptions& options, ListPage* page) override;
  ApiStatus Watch(const std::string& path, const std::string& resource_version, int timeout_seconds,
                  const std::function<bool(std::string_view line)>& on_event,
                  const std::function<void()>& on_open) override;
  void CancelWatches() override;
  ApiStatus BindPod(const std::string& namespace_name, const std::string& name,
                    const std::string& uid, const std::string& node,
                    const std::map<std::string, std::string>& annotations) override;
  ApiStatus PatchPodStatus(const std::string& namespace_name, const std::string& name,
                           const nlohmann::ordered_json& patch) override;
  ApiStatus DeletePod(const std::string& namespace_name, const std::string& name,
                      const std::string& uid) override;
  ApiStatus CreateEvent(const std::string& namespace_name,
                        const nlohmann::ordered_json& event) override;

  const KubeApiConfig& config() const { return config_; }

 private:
  explicit HttpKubeApi(KubeApiConfig config) : config_(std::move(config)) {}
  std::unique_ptr<httplib::Client> NewClient(int read_timeout_seconds) const;
  std::string Url(const std::string& path_and_query) const;

  KubeApiConfig config_;
  std::string scheme_host_port_;  // "https://h:443"
  std::string base_path_;         // "" or "/prefix"
  std::vector<std::string> temp_files_;
  std::mutex watch_mutex_;
  std::set<httplib::Client*> watches_;  // GUARDED_BY(watch_mutex_)
  bool cancelled_ = false;              // GUARDED_BY(watch_mutex_)
};

/// "/api/v1/namespaces/NS/pods/NAME" with NS and NAME percent-encoded where needed.
std::string PodPath(const std::string& namespace_name, const std::string& name);

}  // namespace tessera::k8s
