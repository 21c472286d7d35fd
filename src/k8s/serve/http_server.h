#pragma once

// The HTTP front of `tessera serve`: kube-scheduler's extender verbs plus health, metrics and
// state endpoints: HTTP/1.1 parsed and written by Boost.Beast over the sockets of
// k8s/http_socket.h, one thread per connection (see docs/EXTENDER.md, "tessera serve").

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "k8s/extender/extender.h"
#include "k8s/extender/extender_protocol.h"
#include "k8s/serve/http_socket.h"
#include "k8s/serve/tls.h"
#include "util/clock.h"
#include "util/result.h"

namespace tessera::k8s {

/// The routes a listener serves: all of them, or the one subset a second listener offers to
/// the pod network while the verbs stay on loopback.
enum class HttpRoutes {
  kAll,      ///< the verbs, /healthz, /readyz, /metrics and /state
  kProbes,   ///< GET /healthz and /readyz only: the kubelet's probes
  kMetrics,  ///< GET /metrics only: Prometheus
};

/// Options of an HttpServer.
struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 8888;  ///< 0 picks a free port (see HttpServer::port)
  size_t max_body_bytes = kDefaultMaxExtenderBodyBytes;  ///< larger bodies get 413
  bool log_requests = false;  ///< one JSON log line per request on stderr (debug level)
  /// Reads spin this long before they sleep, idle connections close after idle_timeout_ms,
  /// stalled ones after io_timeout_ms (SpinSocketOptions).
  SpinSocketOptions socket;
  size_t max_connections = 512;  ///< further connections get 503 and are closed
  /// Time for request durations (not owned); a MonotonicClock when null.
  const Clock* clock = nullptr;
  /// TLS on every connection when set (k8s/serve/tls.h): with a client CA, a client without a
  /// certificate it signed gets no answer at all (the handshake fails, nothing is read).
  std::shared_ptr<const TlsContext> tls;
  /// What this listener serves; every path outside the subset gets 404. kProbes is for the
  /// kubelet and kMetrics for Prometheus, both of which reach the pod but must not reach the
  /// verbs or /state.
  HttpRoutes routes = HttpRoutes::kAll;
};

/// Serves an Extender over HTTP:
///   POST /filter, /prioritize, /preempt, /bind (kube-scheduler extender v1 bodies),
///   GET /healthz ("ok"), /readyz ("ready" once started and Extender::ready()), /metrics
///   (Prometheus text 0.0.4),
///   GET /state (Extender::StateJson);
/// or, with options.routes kProbes or kMetrics, only /healthz and /readyz, or only /metrics.
/// A body that does not decode gets 400 with {"Error":"<message naming the JSON path>"} and
/// changes nothing; a body over the limit gets 413. Logs are JSON lines on stderr.
///
/// Start binds and serves, one thread per connection (keep-alive; requests on one connection
/// are answered in order); Stop stops accepting, lets in-flight requests finish (their answers
/// say `Connection: close`) and waits for every connection thread. Start and Stop are called
/// from one thread; the Extender must outlive the server. The handlers are thread-safe (the
/// Extender locks). Unknown paths get 404, known paths with another method 405, malformed
/// HTTP 400, header blocks over 16 KiB 431, a body that stalls for io_timeout_ms 408, more
/// than max_connections connections 503 — each with a JSON {"Error":...} body; after an error
/// the connection is closed (lingering, so that the client can read the answer).
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

  /// A decoded request and the answer a route fills in.
  struct Request {
    std::string_view method;
    std::string_view path;  ///< without the query
    std::string body;
  };
  struct Response {
    int status = 200;
    std::string content_type = "application/json";
    std::string body;
    std::string allow;  ///< the Allow header of a 405
  };
  using Handler = std::function<void(const Request&, Response&)>;

  /// Runs the route of (method, path), or answers 404/405: what a request read from a
  /// connection gets, without the connection (the connection's own answers — 413, 431, 408,
  /// malformed HTTP — are not here). Thread-safe; also for tests and fuzzing without sockets.
  void Dispatch(const Request& req, Response& res) const;

 private:
  struct RouteEntry {
    std::string method;
    std::string path;
    Handler handler;
  };
  void Route();
  double Now() const;
  void AcceptLoop();
  void ServeConnection(int fd);
  /// The request loop of one connection over `stream` (the socket, or TLS over it).
  template <class Stream>
  void ServeStream(Stream& stream, SpinSocket& socket);

  Extender* extender_;
  HttpServerOptions options_;
  std::vector<RouteEntry> routes_;
  NodeNamesMemo names_memo_;  ///< NodeNames arrays seen more than once (thread-safe)
  Listener listener_;
  StopSignal stop_;
  std::thread thread_;  ///< the accept loop
  std::mutex connections_mutex_;
  std::condition_variable connections_done_;
  size_t connections_ = 0;  ///< connection threads running (guarded by connections_mutex_)
  int port_ = 0;
  std::atomic<bool> ready_{false};
  bool started_ = false;
};

}  // namespace tessera::k8s
