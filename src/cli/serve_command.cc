#include "cli/serve_command.h"

#include <pthread.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <iostream>
#include <memory>

#include "k8s/extender.h"
#include "k8s/http_server.h"
#include "util/file.h"

namespace tessera {

Result<HostPort> ParseHostPort(const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) {
    return Error{"--listen \"" + text + "\": expected HOST:PORT, e.g. 127.0.0.1:8888"};
  }
  HostPort hp;
  hp.host = text.substr(0, colon);
  if (hp.host.size() >= 2 && hp.host.front() == '[' && hp.host.back() == ']') {
    hp.host = hp.host.substr(1, hp.host.size() - 2);
  }
  if (hp.host.empty()) return Error{"--listen \"" + text + "\": empty host"};
  const std::string port = text.substr(colon + 1);
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), hp.port);
  if (port.empty() || ec != std::errc() || ptr != port.data() + port.size() || hp.port < 0 ||
      hp.port > 65535) {
    return Error{"--listen \"" + text + "\": port must be a number 0..65535"};
  }
  return hp;
}

void AddServeCommand(CLI::App& app, ServeOptions& o, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "Run as a kube-scheduler extender (HTTP): filter, prioritize and bind GPU pods with the "
      "chosen policy on a cluster model loaded at start from kubectl JSON. Stops gracefully on "
      "SIGTERM or SIGINT.");
  cmd->footer(
      "\nEndpoints: POST /filter /prioritize /bind /preempt (extender v1 JSON), GET /healthz\n"
      "/readyz /metrics (Prometheus text) /state (cluster model and assignments, JSON).\n"
      "\nExamples:\n"
      "  kubectl get nodes -o json > nodes.json; kubectl get pods -A -o json > pods.json\n"
      "  tessera serve --nodes nodes.json --pods pods.json --listen 0.0.0.0:8888\n"
      "  tessera serve --nodes nodes.json --listen 127.0.0.1:0   # a free port, printed\n"
      "\nThe first line on stdout is \"listening on HOST:PORT\". The model is not refreshed\n"
      "from the API server yet (no list/watch); see docs/EXTENDER.md.");
  cmd->add_option("--nodes", o.nodes_file,
                  "Nodes as `kubectl get nodes -o json` prints them (a v1 NodeList)")
      ->required();
  cmd->add_option("--pods", o.pods_file,
                  "Pods as `kubectl get pods -A -o json` prints them; those with spec.nodeName "
                  "are loaded as bound (GPUs from annotation tessera.io/gpu-indices, e.g. "
                  "\"0-3\", else the generic choice), and all of them form fgd's target workload");
  cmd->add_option("--policy", o.policy,
                  "Placement policy: tessera,fgd,bestfit,packing,clustering,dotprod,random,"
                  "k8s-default")
      ->capture_default_str();
  cmd->add_option("--listen", o.listen, "HOST:PORT to serve on (port 0 picks a free port)")
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "Seed of the random policy's draws")->capture_default_str();
  cmd->add_flag("--log-requests", o.log_requests,
                "Log one JSON line per request on stderr (debug level)");
  for (CLI::Option* opt : cmd->get_options()) {
    opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  cmd->callback([&o, &exit_code] { exit_code = RunServe(o); });
}

int RunServe(const ServeOptions& o) {
  Result<HostPort> hp = ParseHostPort(o.listen);
  if (!hp.ok()) {
    std::cerr << "tessera serve: " << hp.error().message << "\n";
    return 2;
  }
  Result<std::string> nodes = ReadFile(o.nodes_file);
  if (!nodes.ok()) {
    std::cerr << "tessera serve: " << nodes.error().message << "\n";
    return 2;
  }
  std::string pods;
  if (!o.pods_file.empty()) {
    Result<std::string> text = ReadFile(o.pods_file);
    if (!text.ok()) {
      std::cerr << "tessera serve: " << text.error().message << "\n";
      return 2;
    }
    pods = std::move(*text);
  }
  k8s::ExtenderOptions eo;
  eo.policy = o.policy;
  eo.seed = o.seed;
  Result<std::unique_ptr<k8s::Extender>> extender = k8s::Extender::FromJson(*nodes, pods, eo);
  if (!extender.ok()) {
    std::cerr << "tessera serve: " << extender.error().message << "\n";
    return 2;
  }

  // Block the stop signals in every thread (the server's threads inherit the mask); this
  // thread then waits for them with sigwait, outside any signal handler.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  k8s::HttpServerOptions so;
  so.host = hp->host;
  so.port = hp->port;
  so.log_requests = o.log_requests;
  k8s::HttpServer server(extender->get(), so);
  Status started = server.Start();
  if (!started.ok()) {
    std::cerr << "tessera serve: " << started.error().message << "\n";
    return 1;
  }
  std::cout << "listening on " << hp->host << ":" << server.port() << std::endl;
  int sig = 0;
  sigwait(&stop_signals, &sig);
  k8s::LogJson("info", "stopping", std::string("{\"signal\":") + std::to_string(sig) + "}");
  server.Stop();
  return 0;
}

}  // namespace tessera
