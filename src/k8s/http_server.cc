#include "k8s/http_server.h"

#include <httplib.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <utility>

#include "k8s/json_util.h"

namespace tessera::k8s {
namespace {

constexpr const char* kJson = "application/json";
constexpr const char* kMetricsType = "text/plain; version=0.0.4; charset=utf-8";

std::string ErrorBody(const std::string& message) {
  return EncodeExtenderBindingResult(ExtenderBindingResult{message});
}

/// res.set_content(body, kJson) without copying the body (a filter answer is ~200 KB at
/// 5000 nodes).
void SetJson(httplib::Response& res, std::string&& body) {
  res.body = std::move(body);
  res.headers.erase("Content-Type");
  res.set_header("Content-Type", kJson);
}

/// Requests one connection may carry: kube-scheduler keeps its connection to the extender
/// open, and httplib's default (5) closed it every fifth request.
constexpr size_t kKeepAliveMaxRequests = 100000;

}  // namespace

void LogJson(std::string_view level, std::string_view msg, std::string_view fields_json) {
  static std::mutex log_mutex;
  nlohmann::ordered_json j;
  j["level"] = std::string(level);
  j["msg"] = std::string(msg);
  if (!fields_json.empty()) {
    nlohmann::json fields = nlohmann::json::parse(fields_json, nullptr, false);
    if (fields.is_object()) {
      for (auto it = fields.begin(); it != fields.end(); ++it) j[it.key()] = it.value();
    }
  }
  const std::string line = DumpJson(j) + "\n";
  std::lock_guard<std::mutex> lock(log_mutex);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

HttpServer::HttpServer(Extender* extender, HttpServerOptions options)
    : extender_(extender),
      options_(std::move(options)),
      server_(std::make_unique<httplib::Server>()) {
  Route();
}

HttpServer::~HttpServer() { Stop(); }

double HttpServer::Now() const {
  if (options_.now_seconds) return options_.now_seconds();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void HttpServer::Route() {
  httplib::Server& s = *server_;
  s.set_payload_max_length(options_.max_body_bytes);
  s.set_tcp_nodelay(true);  // small JSON answers: no Nagle delay
  s.set_keep_alive_max_count(kKeepAliveMaxRequests);
  s.set_error_handler(
      httplib::Server::HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        std::string message = "HTTP status " + std::to_string(res.status);
        if (res.status == 413) message = "request body over the size limit";
        res.set_content(ErrorBody(message), kJson);
        return httplib::Server::HandlerResponse::Handled;
      }));
  if (options_.log_requests) {
    s.set_logger([](const httplib::Request& req, const httplib::Response& res) {
      nlohmann::json f;
      f["method"] = req.method;
      f["path"] = req.path;
      f["status"] = res.status;
      f["request_bytes"] = req.body.size();
      f["response_bytes"] = res.body.size();
      LogJson("debug", "request", f.dump());
    });
  }

  // Wraps a verb: times it and counts it in the extender's metrics.
  auto timed = [this](std::string verb, auto body) {
    return
        [this, verb = std::move(verb), body](const httplib::Request& req, httplib::Response& res) {
          const double start = Now();
          body(req, res);
          extender_->RecordRequest(verb, Now() - start);
        };
  };

  // Filter and prioritize: the same body, decoded with the names as views into req.body
  // (which outlives args); an array of NodeNames seen before is recognised, not scanned.
  const auto candidates = [this](std::string (Extender::*answer)(const ExtenderArgsRef&)) {
    return [this, answer](const httplib::Request& req, httplib::Response& res) {
      ExtenderArgsRef args;
      const Status decoded =
          DecodeExtenderArgsRef(req.body, &args, options_.max_body_bytes, &names_memo_);
      if (!decoded.ok()) {
        res.status = 400;
        res.set_content(ErrorBody(decoded.error().message), kJson);
        return;
      }
      SetJson(res, (extender_->*answer)(args));
    };
  };
  s.Post("/filter", timed("filter", candidates(&Extender::FilterJson)));
  s.Post("/prioritize", timed("prioritize", candidates(&Extender::PrioritizeJson)));
  s.Post("/bind", timed("bind", [this](const httplib::Request& req, httplib::Response& res) {
           Result<ExtenderBindingArgs> args =
               DecodeExtenderBindingArgs(req.body, options_.max_body_bytes);
           if (!args.ok()) {
             res.status = 400;
             res.set_content(ErrorBody(args.error().message), kJson);
             return;
           }
           res.set_content(EncodeExtenderBindingResult(extender_->Bind(*args)), kJson);
         }));
  s.Post("/preempt", timed("preempt", [this](const httplib::Request& req, httplib::Response& res) {
           Result<ExtenderPreemptionArgs> args =
               DecodeExtenderPreemptionArgs(req.body, options_.max_body_bytes);
           if (!args.ok()) {
             res.status = 400;
             res.set_content(ErrorBody(args.error().message), kJson);
             return;
           }
           res.set_content(EncodeExtenderPreemptionResult(extender_->Preempt(*args)), kJson);
         }));
  s.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok", "text/plain");
  });
  s.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
    // API mode: ready only once the cache's initial lists are in.
    if (ready_.load() && extender_->ready()) {
      res.set_content("ready", "text/plain");
    } else {
      res.status = 503;
      res.set_content("not ready", "text/plain");
    }
  });
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(extender_->MetricsText(), kMetricsType);
  });
  s.Get("/state", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(extender_->StateJson(), kJson);
  });
}

Status HttpServer::Start() {
  if (started_) return Error{"server already started"};
  started_ = true;
  const std::string addr = options_.host + ":" + std::to_string(options_.port);
  if (options_.port == 0) {
    port_ = server_->bind_to_any_port(options_.host);
    if (port_ <= 0) {
      port_ = 0;
      return Error{"cannot bind " + addr};
    }
  } else {
    if (!server_->bind_to_port(options_.host, options_.port)) return Error{"cannot bind " + addr};
    port_ = options_.port;
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // Stop must not run before the accept loop is up (httplib would miss it).
  for (int i = 0; i < 5000 && !server_->is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
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
  server_->stop();
  thread_.join();  // the thread pool finishes in-flight requests before listen returns
  LogJson("info", "stopped");
}

}  // namespace tessera::k8s
