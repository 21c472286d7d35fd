#include "k8s/serve/http_server.h"

#include <sys/socket.h>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <system_error>
#include <utility>

#include "k8s/api/json_util.h"
#include "k8s/api/log.h"

namespace tessera::k8s {
namespace {

constexpr const char* kJson = "application/json";
constexpr const char* kMetricsType = "text/plain; version=0.0.4; charset=utf-8";

std::string ErrorBody(const std::string& message) {
  return EncodeExtenderBindingResult(ExtenderBindingResult{message});
}

namespace http = boost::beast::http;

/// The largest request line + header block read (kube-scheduler sends well under 1 KiB).
constexpr uint32_t kHeaderLimit = 16 * 1024;
/// Bytes one read may take (Beast's most per read).
constexpr size_t kReadChunk = 64 * 1024;

void SetError(HttpServer::Response& res, int status, const std::string& message) {
  res.status = status;
  res.content_type = kJson;
  res.body = ErrorBody(message);
}

}  // namespace

HttpServer::HttpServer(Extender* extender, HttpServerOptions options)
    : extender_(extender), options_(std::move(options)) {
  Route();
}

HttpServer::~HttpServer() { Stop(); }

double HttpServer::Now() const {
  static const MonotonicClock monotonic;
  return (options_.clock != nullptr ? options_.clock : &monotonic)->NowSeconds();
}

void HttpServer::Route() {
  // Wraps a verb: times it and counts it in the extender's metrics.
  auto timed = [this](std::string verb, auto body) {
    return [this, verb = std::move(verb), body](const Request& req, Response& res) {
      const double start = Now();
      body(req, res);
      extender_->RecordRequest(verb, Now() - start);
    };
  };

  // Filter and prioritize: the same body, decoded with the names as views into req.body
  // (which outlives args, and has the padding to be parsed in place); an array of NodeNames
  // seen before is recognised, not read again.
  const auto candidates = [this](std::string (Extender::*answer)(const ExtenderArgsRef&)) {
    return [this, answer](const Request& req, Response& res) {
      ExtenderArgsRef args;
      const Status decoded = DecodeExtenderArgsRef(req.body, &args, options_.max_body_bytes,
                                                   &names_memo_, req.body.capacity());
      if (!decoded.ok()) return SetError(res, 400, decoded.error().message);
      res.body = (extender_->*answer)(args);
    };
  };
  const auto post = [this](std::string path, Handler h) {
    routes_.push_back({"POST", std::move(path), std::move(h)});
  };
  const auto get = [this](std::string path, Handler h) {
    routes_.push_back({"GET", std::move(path), std::move(h)});
  };
  const auto probes = [&] {
    get("/healthz", [](const Request&, Response& res) {
      res.content_type = "text/plain";
      res.body = "ok";
    });
    get("/readyz", [this](const Request&, Response& res) {
      // API mode: ready only once the cache's initial lists are in.
      res.content_type = "text/plain";
      if (ready_.load() && extender_->ready()) {
        res.body = "ready";
      } else {
        res.status = 503;
        res.body = "not ready: " + extender_->not_ready_reason();
      }
    });
  };
  const auto metrics = [&] {
    get("/metrics", [this](const Request&, Response& res) {
      res.content_type = kMetricsType;
      res.body = extender_->MetricsText();
    });
  };
  switch (options_.routes) {
    case HttpRoutes::kProbes:
      return probes();
    case HttpRoutes::kMetrics:
      return metrics();
    case HttpRoutes::kAll:
      break;
  }
  post("/filter", timed("filter", candidates(&Extender::FilterJson)));
  post("/prioritize", timed("prioritize", candidates(&Extender::PrioritizeJson)));
  post("/bind", timed("bind", [this](const Request& req, Response& res) {
         Result<ExtenderBindingArgs> args =
             DecodeExtenderBindingArgs(req.body, options_.max_body_bytes);
         if (!args.ok()) return SetError(res, 400, args.error().message);
         res.body = EncodeExtenderBindingResult(extender_->Bind(*args));
       }));
  post("/preempt", timed("preempt", [this](const Request& req, Response& res) {
         Result<ExtenderPreemptionArgs> args =
             DecodeExtenderPreemptionArgs(req.body, options_.max_body_bytes);
         if (!args.ok()) return SetError(res, 400, args.error().message);
         res.body = EncodeExtenderPreemptionResult(extender_->Preempt(*args));
       }));
  probes();
  metrics();
  get("/state", [this](const Request&, Response& res) { res.body = extender_->StateJson(); });
}

void HttpServer::Dispatch(const Request& req, Response& res) const {
  const RouteEntry* other_method = nullptr;
  for (const RouteEntry& r : routes_) {
    if (r.path != req.path) continue;
    if (r.method == req.method) return r.handler(req, res);
    other_method = &r;
  }
  if (other_method != nullptr) {
    res.allow = other_method->method;
    return SetError(res, 405,
                    "method " + std::string(req.method) + " not allowed on " +
                        std::string(req.path) + " (use " + other_method->method + ")");
  }
  SetError(res, 404, "no such path: " + std::string(req.path));
}

Status HttpServer::Start() {
  if (started_) return Error{"server already started"};
  started_ = true;
  Status bound = listener_.Bind(options_.host, options_.port);
  if (!bound.ok()) return bound;
  port_ = listener_.port();
  thread_ = std::thread([this] { AcceptLoop(); });
  ready_.store(true);
  nlohmann::json f;
  f["host"] = options_.host;
  f["port"] = port_;
  LogJson("info", "listening", f.dump());
  return {};
}

void HttpServer::Stop() {
  if (!thread_.joinable()) return;
  ready_.store(false);
  stop_.Signal();
  thread_.join();
  listener_.Close();
  // In-flight requests are answered; idle connections see the signal and close.
  std::unique_lock<std::mutex> lock(connections_mutex_);
  connections_done_.wait(lock, [this] { return connections_ == 0; });
  LogJson("info", "stopped");
}

void HttpServer::AcceptLoop() {
  for (;;) {
    const int fd = listener_.Accept(stop_);
    if (fd < 0) return;
    {
      std::lock_guard<std::mutex> lock(connections_mutex_);
      if (connections_ < options_.max_connections) {
        try {
          std::thread([this, fd] {
            ServeConnection(fd);
            // Notified under the lock: Stop cannot return (and destroy this server) before
            // the lock is released, and nothing of the server is touched after that.
            std::lock_guard<std::mutex> done(connections_mutex_);
            --connections_;
            connections_done_.notify_all();
          }).detach();
          ++connections_;
          continue;
        } catch (const std::system_error&) {
          // No thread to be had (process limits): answered like a full server.
        }
      }
    }
    // Over the limit: a best-effort 503 on the fresh socket (its buffer is empty), then close.
    static const std::string kBusy =
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
        "Connection: close\r\nContent-Length: " +
        std::to_string(ErrorBody("too many connections").size()) + "\r\n\r\n" +
        ErrorBody("too many connections");
    (void)!send(fd, kBusy.data(), kBusy.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    SpinSocket closing(fd, nullptr, options_.socket);
    closing.LingeringClose();
  }
}

void HttpServer::ServeConnection(int fd) {
  SpinSocket socket(fd, &stop_, options_.socket);
  if (options_.tls == nullptr) return ServeStream(socket, socket);
  TlsStream tls(&socket, *options_.tls);
  std::string why;
  if (!tls.Handshake(&why)) {
    // No answer on a connection that did not authenticate (nothing of it was read as HTTP).
    if (options_.log_requests) {
      nlohmann::json f;
      f["error"] = why;
      LogJson("debug", "TLS handshake failed", f.dump());
    }
    return;
  }
  ServeStream(tls, socket);
  tls.Shutdown();
}

template <class Stream>
void HttpServer::ServeStream(Stream& stream, SpinSocket& socket) {
  boost::beast::flat_buffer buffer;  // bytes read past one request stay for the next
  // Beast reads into the buffer's free capacity (at least 512 bytes, at most 64 KiB per read):
  // without room a 100 KB filter body took 200 reads.
  buffer.reserve(kReadChunk);
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(kHeaderLimit);
    parser.body_limit(options_.max_body_bytes);
    socket.set_idle(buffer.size() == 0);
    boost::system::error_code ec;
    http::read_header(stream, buffer, parser, ec);
    Response res;
    bool close_after = false;
    if (ec) {
      // A peer that closes, times out or is stopped between requests just goes.
      if (!parser.got_some() || ec == http::error::end_of_stream || ec == boost::asio::error::eof ||
          ec == boost::asio::error::timed_out) {
        return;
      }
      close_after = true;
      if (ec == http::error::header_limit) {
        SetError(res, 431, "request header block over " + std::to_string(kHeaderLimit) + " bytes");
      } else if (ec == http::error::body_limit) {
        SetError(res, 413, "request body over the size limit");
      } else {
        SetError(res, 400, "malformed HTTP request: " + ec.message());
      }
    } else {
      if (boost::beast::iequals(parser.get()[http::field::expect], "100-continue")) {
        http::response<http::empty_body> go_on{http::status::continue_, parser.get().version()};
        http::write(stream, go_on, ec);
        if (ec) return;
      }
      // Room past the body for the filter/prioritize parser to read ahead, so that the body is
      // parsed where it is (DecodeExtenderArgsRef's body_capacity). Reserved before Beast reads
      // the body: its own reserve of the content length then does nothing.
      if (const auto length = parser.content_length();
          length && *length <= options_.max_body_bytes) {
        parser.get().body().reserve(static_cast<size_t>(*length) + kExtenderBodyPadding);
      }
      http::read(stream, buffer, parser, ec);
      if (ec == http::error::body_limit) {
        SetError(res, 413, "request body over the size limit");
        close_after = true;
      } else if (ec == boost::asio::error::timed_out) {
        SetError(res, 408, "request body not received in time");
        close_after = true;
      } else if (ec) {
        return;  // the peer closed mid-body: nobody to answer
      }
    }
    const http::request<http::string_body>& message = parser.get();
    if (!close_after) {
      const std::string_view target(message.target().data(), message.target().size());
      const std::string_view path = target.substr(0, target.find('?'));
      Request req;
      req.method = std::string_view(message.method_string().data(), message.method_string().size());
      req.path = path;
      req.body = std::move(parser.get().body());
      Dispatch(req, res);
      if (options_.log_requests) {
        nlohmann::json f;
        f["method"] = std::string(req.method);
        f["path"] = std::string(req.path);
        f["status"] = res.status;
        f["request_bytes"] = req.body.size();
        f["response_bytes"] = res.body.size();
        LogJson("debug", "request", f.dump());
      }
    }
    const bool keep = !close_after && message.keep_alive() && !stop_.signalled();
    http::response<http::string_body> out{static_cast<http::status>(res.status),
                                          message.version() == 10 ? 10u : 11u};
    out.set(http::field::content_type, res.content_type);
    if (!res.allow.empty()) out.set(http::field::allow, res.allow);
    out.keep_alive(keep);
    out.body() = std::move(res.body);
    out.prepare_payload();
    http::write(stream, out, ec);
    if (!ec && close_after) socket.LingeringClose();  // so that the client reads the error
    if (ec || !keep) return;
  }
}

}  // namespace tessera::k8s
