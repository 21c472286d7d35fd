#pragma once

// The HTTP front of `tessera serve`: kube-scheduler's extender verbs plus health, metrics and
// state endpoints, over cpp-httplib (see docs/EXTENDER.md, "tessera serve").

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "k8s/extender.h"
#include "k8s/extender_protocol.h"
#include "util/result.h"

namespace httplib {
class Server;
}

namespace tessera::k8s {

/// Options of an HttpServer.
struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 8888;  ///< 0 picks a free port (see HttpServer::port)
  size_t max_body_bytes = kDefaultMaxExtenderBodyBytes;  ///< larger bodies get 413
  bool log_requests = false;  ///< one JSON log line per request on stderr (debug level)
  /// Monotonic time in seconds, for request durations; steady_clock when empty.
  std::function<double()> now_seconds;
};

/// Serves an Extender over HTTP:
///   POST /filter, /prioritize, /preempt, /bind (kube-scheduler extender v1 bodies),
///   GET /healthz ("ok"), /readyz ("ready" once started and Extender::ready()), /metrics
///   (Prometheus text 0.0.4),
///   GET /state (Extender::StateJson).
/// A body that does not decode gets 400 with {"Error":"<message naming the JSON path>"} and
/// changes nothing; a body over the limit gets 413. Logs are JSON lines on stderr.
///
/// Start binds and serves on a thread pool; Stop stops accepting, lets in-flight requests
/// finish and joins. Start and Stop are called from one thread; the Extender must outlive the
/// server. The handlers are thread-safe (the Extender locks).
class HttpServer {
 public:
  HttpServer(Extender* extender, HttpServerOptions options);
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  ~HttpServer();  ///< Stops if running.

  /// Binds host:port and starts serving in the background. Error if the address cannot be
  /// bound or the server was started before.
  Status Start();
  /// The bound port (the chosen one when options.port was 0); 0 before Start.
  int port() const { return port_; }
  /// Stops accepting, waits for in-flight requests, joins the serving thread. Idempotent.
  void Stop();

 private:
  void Route();
  double Now() const;

  Extender* extender_;
  HttpServerOptions options_;
  std::unique_ptr<httplib::Server> server_;
  NodeNamesMemo names_memo_;  ///< NodeNames arrays seen more than once (thread-safe)
  std::thread thread_;
  int port_ = 0;
  std::atomic<bool> ready_{false};
  bool started_ = false;
};

/// Writes one structured log line to stderr: {"level":..,"msg":..,<fields>}. `fields_json`
/// is a JSON object text whose members are appended (or empty). Thread-safe.
void LogJson(std::string_view level, std::string_view msg, std::string_view fields_json = "");

}  // namespace tessera::k8s
