#include "k8s/api/kube_api.h"

#include <httplib.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <cstdlib>
#include <utility>

#include "k8s/api/json_util.h"
#include "util/file.h"

namespace tessera::k8s {
namespace {

constexpr size_t kBodyExcerpt = 300;
constexpr size_t kMaxListBodyBytes = size_t{1} << 30;

/// Percent-encodes everything but RFC 3986's unreserved characters.
std::string Escape(std::string_view s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

/// The message of a Kubernetes Status body, else the body itself, cut short.
std::string BodyExcerpt(const std::string& body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("message") && j["message"].is_string()) {
    return QuoteForError(j["message"].get<std::string>(), kBodyExcerpt);
  }
  return QuoteForError(body, kBodyExcerpt);
}

ApiStatus Failure(std::string_view method, const std::string& url, int status,
                  std::string_view what) {
  ApiStatus s;
  s.http_status = status;
  s.error = std::string(method) + " " + url + ": " + std::string(what);
  return s;
}

/// httplib's transport error in words a person can act on.
std::string Why(httplib::Error e) {
  switch (e) {
    case httplib::Error::Connection:
      return "cannot connect";
    case httplib::Error::ConnectionTimeout:
      return "connect timed out";
    case httplib::Error::Read:
      return "read failed or timed out";
    case httplib::Error::Write:
      return "write failed";
    case httplib::Error::SSLConnection:
      return "TLS handshake failed";
    case httplib::Error::SSLLoadingCerts:
      return "cannot load the CA or client certificates";
    case httplib::Error::SSLServerVerification:
      return "server certificate not trusted (wrong CA?)";
    case httplib::Error::Canceled:
      return "canceled";
    default:
      return httplib::to_string(e);
  }
}

/// Checks an httplib result: a transport error, or any status but 2xx.
ApiStatus Check(std::string_view method, const std::string& url, const httplib::Result& res) {
  if (!res) return Failure(method, url, 0, "no response: " + Why(res.error()));
  if (res->status < 200 || res->status > 299) {
    return Failure(method, url, res->status,
                   "HTTP " + std::to_string(res->status) + ": " + BodyExcerpt(res->body));
  }
  ApiStatus ok;
  ok.http_status = res->status;
  return ok;
}

/// Writes `data` to a private temporary file; its path is appended to `files`.
Status WriteTemp(const std::string& data, std::string_view what, std::vector<std::string>* files) {
  char name[] = "/tmp/tessera-kube-XXXXXX";
  const int fd = mkstemp(name);
  if (fd < 0) return Error{"cannot create a temporary file for " + std::string(what)};
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n <= 0) {
      close(fd);
      unlink(name);
      return Error{"cannot write a temporary file for " + std::string(what)};
    }
    done += static_cast<size_t>(n);
  }
  close(fd);
  files->push_back(name);
  return {};
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

Result<std::string> DecodeBase64(std::string_view text) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  bool padding = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      padding = true;
      continue;
    }
    int v = -1;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    if (c >= '0' && c <= '9') v = c - '0' + 52;
    if (c == '+') v = 62;
    if (c == '/') v = 63;
    if (v < 0 || padding) {
      return Error{"bad base64 at character " + std::to_string(i) + " " +
                   QuoteForError(std::string_view(&text[i], 1))};
    }
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  if (bits >= 6) return Error{"bad base64: truncated"};
  return out;
}

std::string PodPath(const std::string& namespace_name, const std::string& name) {
  return "/api/v1/namespaces/" + Escape(namespace_name) + "/pods/" + Escape(name);
}

Result<KubeApiConfig> InClusterConfig(const std::string& secrets_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || *host == '\0' || port == nullptr || *port == '\0') {
    return Error{
        "in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set (is "
        "tessera running in a pod?)"};
  }
  KubeApiConfig c;
  std::string h = host;
  if (h.find(':') != std::string::npos) h = "[" + h + "]";  // IPv6 service address
  c.server = "https://" + h + ":" + port;
  c.token_file = secrets_dir + "/token";
  c.ca_file = secrets_dir + "/ca.crt";
  Result<std::string> token = ReadFile(c.token_file);
  if (!token.ok()) return Error{"in-cluster: " + token.error().message};
  Result<std::string> ca = ReadFile(c.ca_file);
  if (!ca.ok()) return Error{"in-cluster: " + ca.error().message};
  c.source = "in-cluster";
  return c;
}

Result<KubeApiConfig> KubeconfigConfig(const std::string& path) {
  const std::string where = "kubeconfig " + path;
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return Error{where + ": " + text.error().message};
  const std::string dir =
      path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
  const auto resolve = [&](const std::string& p) {
    return p.empty() || p[0] == '/' ? p : dir + "/" + p;
  };
  try {
    YAML::Node doc = YAML::Load(*text);
    if (!doc.IsMap()) return Error{where + ": expected a mapping at the top"};
    const std::string current =
        doc["current-context"] ? doc["current-context"].as<std::string>() : "";
    if (current.empty()) return Error{where + ": no current-context"};
    // Finds the entry named `name` in the list `key` and returns its `field` mapping.
    const auto find = [&](const char* key, const std::string& name, const char* field,
                          std::string* at) -> Result<YAML::Node> {
      YAML::Node list = doc[key];
      if (!list || !list.IsSequence()) return Error{where + ": no " + key + " list"};
      for (size_t i = 0; i < list.size(); ++i) {
        if (list[i]["name"] && list[i]["name"].as<std::string>() == name) {
          *at = where + ": " + key + "[" + std::to_string(i) + "] " + QuoteForError(name);
          YAML::Node f = list[i][field];
          if (!f || !f.IsMap()) return Error{*at + ": no " + field + " mapping"};
          return f;
        }
      }
      return Error{where + ": " + key + " has no entry named " + QuoteForError(name)};
    };
    std::string at;
    Result<YAML::Node> ctx = find("contexts", current, "context", &at);
    if (!ctx.ok()) return ctx.error();
    const std::string cluster_name = (*ctx)["cluster"] ? (*ctx)["cluster"].as<std::string>() : "";
    const std::string user_name = (*ctx)["user"] ? (*ctx)["user"].as<std::string>() : "";
    KubeApiConfig c;
    c.source = where;
    Result<YAML::Node> cluster = find("clusters", cluster_name, "cluster", &at);
    if (!cluster.ok()) return cluster.error();
    const YAML::Node& cl = *cluster;
    if (!cl["server"]) return Error{at + ": no server"};
    c.server = cl["server"].as<std::string>();
    if (cl["certificate-authority"])
      c.ca_file = resolve(cl["certificate-authority"].as<std::string>());
    if (cl["certificate-authority-data"]) {
      Result<std::string> d = DecodeBase64(cl["certificate-authority-data"].as<std::string>());
      if (!d.ok()) return Error{at + ": certificate-authority-data: " + d.error().message};
      c.ca_data = *d;
    }
    if (cl["insecure-skip-tls-verify"]) {
      c.insecure_skip_tls_verify = cl["insecure-skip-tls-verify"].as<bool>();
    }
    if (!user_name.empty()) {
      Result<YAML::Node> user = find("users", user_name, "user", &at);
      if (!user.ok()) return user.error();
      const YAML::Node& u = *user;
      if (u["exec"]) return Error{at + ": exec credential plugins are not supported"};
      if (u["auth-provider"]) return Error{at + ": auth-provider plugins are not supported"};
      if (u["token"]) c.token = u["token"].as<std::string>();
      if (u["tokenFile"]) c.token_file = resolve(u["tokenFile"].as<std::string>());
      if (u["client-certificate"]) {
        c.client_cert_file = resolve(u["client-certificate"].as<std::string>());
      }
      if (u["client-key"]) c.client_key_file = resolve(u["client-key"].as<std::string>());
      for (auto [key, out] : {std::pair{"client-certificate-data", &c.client_cert_data},
                              std::pair{"client-key-data", &c.client_key_data}}) {
        if (!u[key]) continue;
        Result<std::string> d = DecodeBase64(u[key].as<std::string>());
        if (!d.ok()) return Error{at + ": " + key + ": " + d.error().message};
        *out = *d;
      }
    }
    return c;
  } catch (const YAML::Exception& e) {
    return Error{where + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg};
  }
}

Result<std::unique_ptr<HttpKubeApi>> HttpKubeApi::Create(KubeApiConfig config) {
  std::unique_ptr<HttpKubeApi> api(new HttpKubeApi(std::move(config)));
  KubeApiConfig& c = api->config_;
  const std::string& s = c.server;
  const size_t scheme_end = s.find("://");
  if (scheme_end == std::string::npos ||
      (s.compare(0, scheme_end, "http") != 0 && s.compare(0, scheme_end, "https") != 0)) {
    return Error{c.source + ": server " + QuoteForError(s) + ": expected http(s)://HOST[:PORT]"};
  }
  const size_t path_start = s.find('/', scheme_end + 3);
  api->scheme_host_port_ = s.substr(0, path_start);
  if (path_start != std::string::npos) {
    api->base_path_ = s.substr(path_start);
    while (!api->base_path_.empty() && api->base_path_.back() == '/') api->base_path_.pop_back();
  }
  if (!c.ca_data.empty()) {
    TESSERA_RETURN_IF_ERROR(WriteTemp(c.ca_data, "the CA data", &api->temp_files_));
    c.ca_file = api->temp_files_.back();
  }
  if (!c.client_cert_data.empty()) {
    TESSERA_RETURN_IF_ERROR(
        WriteTemp(c.client_cert_data, "the client certificate", &api->temp_files_));
    c.client_cert_file = api->temp_files_.back();
  }
  if (!c.client_key_data.empty()) {
    TESSERA_RETURN_IF_ERROR(WriteTemp(c.client_key_data, "the client key", &api->temp_files_));
    c.client_key_file = api->temp_files_.back();
  }
  if (c.client_cert_file.empty() != c.client_key_file.empty()) {
    return Error{c.source + ": a client certificate needs both the certificate and the key"};
  }
  if (!api->NewClient(1)->is_valid()) {
    return Error{c.source + ": cannot set up a client for " + QuoteForError(s) +
                 " (unreadable client certificate or key?)"};
  }
  return api;
}

HttpKubeApi::~HttpKubeApi() {
  for (const std::string& f : temp_files_) unlink(f.c_str());
}

std::string HttpKubeApi::Url(const std::string& path_and_query) const {
  return scheme_host_port_ + base_path_ + path_and_query;
}

std::unique_ptr<httplib::Client> HttpKubeApi::NewClient(int read_timeout_seconds) const {
  auto cli = config_.client_cert_file.empty()
                 ? std::make_unique<httplib::Client>(scheme_host_port_)
                 : std::make_unique<httplib::Client>(scheme_host_port_, config_.client_cert_file,
                                                     config_.client_key_file);
  if (!config_.ca_file.empty()) cli->set_ca_cert_path(config_.ca_file);
  cli->enable_server_certificate_verification(!config_.insecure_skip_tls_verify);
  cli->set_connection_timeout(config_.connect_timeout_seconds, 0);
  cli->set_read_timeout(read_timeout_seconds, 0);
  cli->set_keep_alive(false);
  std::string token = config_.token;
  if (!config_.token_file.empty()) {
    Result<std::string> t = ReadFile(config_.token_file);
    if (t.ok()) token = Trim(*t);  // a failed re-read keeps the configured token
  }
  if (!token.empty()) cli->set_bearer_token_auth(token);
  return cli;
}

ApiStatus HttpKubeApi::List(const std::string& path, const ListOptions& options, ListPage* page) {
  std::string query = path + "?limit=" + std::to_string(options.limit);
  if (!options.continue_token.empty()) query += "&continue=" + Escape(options.continue_token);
  if (!options.field_selector.empty()) query += "&fieldSelector=" + Escape(options.field_selector);
  const std::string url = Url(query);
  auto cli = NewClient(config_.read_timeout_seconds);
  httplib::Result res = cli->Get(base_path_ + query, {{"Accept", "application/json"}});
  ApiStatus status = Check("GET", url, res);
  if (!status.ok()) return status;
  Status decoded = DecodeListPage(res->body, page);
  if (!decoded.ok()) return Failure("GET", url, res->status, decoded.error().message);
  return status;
}

Status DecodeListPage(std::string_view body, ListPage* page) {
  Result<nlohmann::json> doc = ParseJson(body, kMaxListBodyBytes, "list");
  if (!doc.ok()) return doc.error();
  if (!doc->is_object()) return Error{"list: expected an object"};
  const nlohmann::json* items = FindField(*doc, "items");
  if (items != nullptr && !items->is_null() && !items->is_array()) {
    return Error{"list: items: expected an array"};
  }
  page->items.clear();
  if (items != nullptr && items->is_array()) {
    for (const nlohmann::json& item : *items) page->items.push_back(item);
  }
  page->resource_version.clear();
  page->continue_token.clear();
  if (const nlohmann::json* meta = FindField(*doc, "metadata"); meta && meta->is_object()) {
    TESSERA_RETURN_IF_ERROR(ReadString(FindField(*meta, "resourceVersion"),
                                       "list.metadata.resourceVersion", &page->resource_version));
    TESSERA_RETURN_IF_ERROR(
        ReadString(FindField(*meta, "continue"), "list.metadata.continue", &page->continue_token));
  }
  return Status();
}

ApiStatus HttpKubeApi::Watch(const std::string& path, const std::string& resource_version,
                             int timeout_seconds,
                             const std::function<bool(std::string_view line)>& on_event,
                             const std::function<void()>& on_open) {
  const std::string query =
      path + "?watch=true&allowWatchBookmarks=true&resourceVersion=" + Escape(resource_version) +
      "&timeoutSeconds=" + std::to_string(timeout_seconds);
  const std::string url = Url(query);
  auto cli = NewClient(timeout_seconds + config_.read_timeout_seconds);
  {
    std::lock_guard<std::mutex> lock(watch_mutex_);
    if (cancelled_) return {};
    watches_.insert(cli.get());
  }
  int status_code = 0;
  std::string buffer;      // the incomplete last line
  std::string error_body;  // the body of a failed request
  bool stopped = false;
  bool too_long = false;
  // CancelWatches stops the clients it knows; one that had not connected yet when it came is
  // stopped here, at the answer's headers or its next data.
  const auto is_cancelled = [&] {
    std::lock_guard<std::mutex> lock(watch_mutex_);
    return cancelled_;
  };
  httplib::Result res = cli->Get(
      base_path_ + query, {{"Accept", "application/json"}},
      [&](const httplib::Response& r) {
        if (is_cancelled()) return false;
        status_code = r.status;
        if (status_code == 200 && on_open) on_open();
        return true;
      },
      [&](const char* data, size_t n) {
        if (is_cancelled()) return false;
        if (status_code != 200) {
          if (error_body.size() < 4096) error_body.append(data, n);
          return true;
        }
        buffer.append(data, n);
        size_t start = 0;
        for (size_t nl = buffer.find('\n'); nl != std::string::npos;
             nl = buffer.find('\n', start)) {
          std::string_view line(buffer.data() + start, nl - start);
          start = nl + 1;
          if (line.find_first_not_of(" \r\t") == std::string_view::npos) continue;
          if (!on_event(line)) {
            stopped = true;
            return false;
          }
        }
        buffer.erase(0, start);
        if (buffer.size() > kMaxWatchEventBytes) {
          too_long = true;
          return false;
        }
        return true;
      });
  bool cancelled = false;
  {
    std::lock_guard<std::mutex> lock(watch_mutex_);
    watches_.erase(cli.get());
    cancelled = cancelled_;
  }
  if (stopped || cancelled) return {};
  if (too_long) return Failure("GET", url, 200, "watch event longer than 64 MiB");
  if (status_code != 0 && status_code != 200) {
    return Failure("GET", url, status_code,
                   "HTTP " + std::to_string(status_code) + ": " + BodyExcerpt(error_body));
  }
  if (!res) {
    return Failure("GET", url, status_code, "watch stream cut: " + Why(res.error()));
  }
  // A last event without its newline (the server closed right after it).
  if (buffer.find_first_not_of(" \r\t\n") != std::string::npos) on_event(buffer);
  ApiStatus ok;
  ok.http_status = 200;
  return ok;
}

void HttpKubeApi::CancelWatches() {
  std::lock_guard<std::mutex> lock(watch_mutex_);
  cancelled_ = true;
  for (httplib::Client* c : watches_) c->stop();
}

ApiStatus HttpKubeApi::BindPod(const std::string& namespace_name, const std::string& name,
                               const std::string& uid, const std::string& node,
                               const std::map<std::string, std::string>& annotations) {
  nlohmann::ordered_json b;
  b["apiVersion"] = "v1";
  b["kind"] = "Binding";
  b["metadata"]["name"] = name;
  b["metadata"]["namespace"] = namespace_name;
  if (!uid.empty()) b["metadata"]["uid"] = uid;
  if (!annotations.empty()) {
    nlohmann::ordered_json& a = b["metadata"]["annotations"];
    for (const auto& [k, v] : annotations) a[k] = v;
  }
  b["target"]["apiVersion"] = "v1";
  b["target"]["kind"] = "Node";
  b["target"]["name"] = node;
  const std::string path = PodPath(namespace_name, name) + "/binding";
  auto cli = NewClient(config_.read_timeout_seconds);
  httplib::Result res = cli->Post(base_path_ + path, {{"Accept", "application/json"}}, DumpJson(b),
                                  "application/json");
  return Check("POST", Url(path), res);
}

ApiStatus HttpKubeApi::PatchPodStatus(const std::string& namespace_name, const std::string& name,
                                      const nlohmann::ordered_json& patch) {
  const std::string path = PodPath(namespace_name, name) + "/status";
  auto cli = NewClient(config_.read_timeout_seconds);
  httplib::Result res = cli->Patch(base_path_ + path, {{"Accept", "application/json"}},
                                   DumpJson(patch), "application/strategic-merge-patch+json");
  return Check("PATCH", Url(path), res);
}

ApiStatus HttpKubeApi::DeletePod(const std::string& namespace_name, const std::string& name,
                                 const std::string& uid) {
  nlohmann::ordered_json options;
  options["apiVersion"] = "v1";
  options["kind"] = "DeleteOptions";
  if (!uid.empty()) options["preconditions"]["uid"] = uid;
  const std::string path = PodPath(namespace_name, name);
  auto cli = NewClient(config_.read_timeout_seconds);
  httplib::Result res = cli->Delete(base_path_ + path, {{"Accept", "application/json"}},
                                    DumpJson(options), "application/json");
  return Check("DELETE", Url(path), res);
}

ApiStatus HttpKubeApi::CreateEvent(const std::string& namespace_name,
                                   const nlohmann::ordered_json& event) {
  const std::string path = "/apis/events.k8s.io/v1/namespaces/" + namespace_name + "/events";
  auto cli = NewClient(config_.read_timeout_seconds);
  httplib::Result res = cli->Post(base_path_ + path, {{"Accept", "application/json"}},
                                  DumpJson(event), "application/json");
  return Check("POST", Url(path), res);
}

}  // namespace tessera::k8s
