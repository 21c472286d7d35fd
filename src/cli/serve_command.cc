#include "cli/serve_command.h"

#include <pthread.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "k8s/api/cluster_cache.h"
#include "k8s/api/kube_api.h"
#include "k8s/api/log.h"
#include "k8s/extender/extender.h"
#include "k8s/serve/http_server.h"
#include "k8s/serve/serve_config.h"
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
      "chosen policy. The cluster model comes from the Kubernetes API (list + watch, with "
      "--in-cluster or --kubeconfig; bind then writes the GPU assignment and the Binding "
      "through the API) or, offline, from kubectl JSON files (--nodes/--pods; bind only "
      "updates the model). Stops gracefully on SIGTERM or SIGINT.");
  cmd->footer(
      "\nEndpoints: POST /filter /prioritize /bind /preempt (extender v1 JSON), GET /healthz\n"
      "/readyz (ready once the model is loaded: after the initial lists in API mode)\n"
      "/metrics (Prometheus text) /state (cluster model and assignments, JSON).\n"
      "\nExactly one mode: --in-cluster, --kubeconfig PATH, or --nodes FILE [--pods FILE];\n"
      "the mode may also come from the config file (kubernetes.inCluster/kubeconfig).\n"
      "Precedence: defaults < --config file < command-line flags.\n"
      "\nConfig file (YAML; unknown keys and wrong types are errors naming file:line):\n"
      "  listen: 0.0.0.0:8888        # --listen\n"
      "  policy: fgd                 # --policy\n"
      "  seed: 42                    # --seed\n"
      "  logRequests: false          # --log-requests\n"
      "  spinMicroseconds: 250       # --spin-us\n"
      "  kubernetes:\n"
      "    inCluster: true           # --in-cluster\n"
      "    kubeconfig: /path/config  # --kubeconfig\n"
      "\nExamples:\n"
      "  tessera serve --in-cluster --listen 0.0.0.0:8888 --policy fgd\n"
      "  tessera serve --config /etc/tessera/tessera.yaml\n"
      "  tessera serve --kubeconfig ~/.kube/config --listen 127.0.0.1:0   # a free port, printed\n"
      "  kubectl get nodes -o json > nodes.json; kubectl get pods -A -o json > pods.json\n"
      "  tessera serve --nodes nodes.json --pods pods.json --listen 0.0.0.0:8888\n"
      "\nThe first line on stdout is \"listening on HOST:PORT\"; logs are JSON lines on stderr.\n"
      "See docs/EXTENDER.md.");
  cmd->add_option(
      "--config", o.config_file,
      "YAML configuration file (keys listen, policy, seed, logRequests, spinMicroseconds, "
      "kubernetes.inCluster, kubernetes.kubeconfig); flags override it");
  cmd->add_flag("--in-cluster", o.in_cluster,
                "API mode: reach the API server with the pod's service account "
                "($KUBERNETES_SERVICE_HOST/PORT, /var/run/secrets/kubernetes.io/serviceaccount)");
  cmd->add_option("--kubeconfig", o.kubeconfig,
                  "API mode: reach the API server as the current context of this kubeconfig "
                  "(token or client certificate; exec plugins are not supported)");
  cmd->add_option("--nodes", o.nodes_file,
                  "File mode: nodes as `kubectl get nodes -o json` prints them (a v1 NodeList)");
  cmd->add_option("--pods", o.pods_file,
                  "File mode: pods as `kubectl get pods -A -o json` prints them; those with "
                  "spec.nodeName are loaded as bound (GPUs from annotation tessera.io/gpu-indices, "
                  "e.g. \"0-3\", else the generic choice), and all of them form fgd's target "
                  "workload");
  cmd->add_option("--policy", o.policy,
                  "Placement policy: tessera,fgd,bestfit,packing,clustering,dotprod,random,"
                  "k8s-default")
      ->capture_default_str();
  cmd->add_option("--listen", o.listen, "HOST:PORT to serve on (port 0 picks a free port)")
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "Seed of the random policy's draws")->capture_default_str();
  cmd->add_flag("--log-requests", o.log_requests,
                "Log one JSON line per request on stderr (debug level)");
  cmd->add_option("--spin-us", o.spin_us,
                  "Microseconds a server thread keeps trying a socket read or the model's lock "
                  "before it sleeps (0: sleep at once). Spinning costs at most this much CPU per "
                  "wait and saves the wake-up of an idle (v)CPU, which decides the tail latency "
                  "on virtual machines")
      ->check(CLI::Range(0, k8s::kMaxSpinMicroseconds))
      ->capture_default_str();
  for (CLI::Option* opt : cmd->get_options()) {
    opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  cmd->callback([cmd, &o, &exit_code] {
    for (CLI::Option* opt : cmd->get_options()) {
      if (opt->count() > 0) o.given.insert(opt->get_name());
    }
    exit_code = RunServe(o);
  });
}

namespace {

/// Defaults < config file < flags. Errors name the file and line, or the conflicting flags.
Result<ServeOptions> Resolve(const ServeOptions& flags) {
  ServeOptions o = flags;
  if (!flags.config_file.empty()) {
    Result<std::string> text = ReadFile(flags.config_file);
    if (!text.ok()) return text.error();
    k8s::ServeConfig c;
    c.listen = o.listen;
    c.policy = o.policy;
    c.seed = o.seed;
    c.log_requests = o.log_requests;
    c.spin_us = o.spin_us;
    Status s = k8s::ParseServeConfig(*text, flags.config_file, &c);
    if (!s.ok()) return s.error();
    const auto from_file = [&](const char* flag) { return flags.given.count(flag) == 0; };
    if (from_file("--listen")) o.listen = c.listen;
    if (from_file("--policy")) o.policy = c.policy;
    if (from_file("--seed")) o.seed = c.seed;
    if (from_file("--log-requests")) o.log_requests = c.log_requests;
    if (from_file("--spin-us")) o.spin_us = c.spin_us;
    // A mode given on the command line replaces the file's mode.
    const bool flag_mode = flags.given.count("--in-cluster") || flags.given.count("--kubeconfig") ||
                           flags.given.count("--nodes");
    if (!flag_mode) {
      o.in_cluster = c.in_cluster;
      o.kubeconfig = c.kubeconfig;
    }
  }
  const int modes =
      (o.in_cluster ? 1 : 0) + (o.kubeconfig.empty() ? 0 : 1) + (o.nodes_file.empty() ? 0 : 1);
  if (modes != 1) {
    return Error{std::string(modes == 0 ? "no cluster source" : "more than one cluster source") +
                 ": give exactly one of --in-cluster, --kubeconfig PATH or --nodes FILE (or "
                 "kubernetes.inCluster / kubernetes.kubeconfig in the config file)"};
  }
  if (!o.pods_file.empty() && o.nodes_file.empty()) {
    return Error{"--pods needs --nodes (file mode); in API mode pods come from the API"};
  }
  return o;
}

/// Blocks SIGTERM/SIGINT in every thread (the server's threads inherit the mask) and returns
/// them, for sigwait outside any signal handler.
sigset_t BlockStopSignals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  return stop_signals;
}

}  // namespace

int RunServe(const ServeOptions& flags) {
  Result<ServeOptions> resolved = Resolve(flags);
  if (!resolved.ok()) {
    std::cerr << "tessera serve: " << resolved.error().message << "\n";
    return 2;
  }
  const ServeOptions& o = *resolved;
  Result<HostPort> hp = ParseHostPort(o.listen);
  if (!hp.ok()) {
    std::cerr << "tessera serve: " << hp.error().message << "\n";
    return 2;
  }
  k8s::ExtenderOptions eo;
  eo.policy = o.policy;
  eo.seed = o.seed;
  eo.spin_us = o.spin_us;

  std::unique_ptr<k8s::HttpKubeApi> api;
  std::unique_ptr<k8s::Extender> extender;
  std::string mode;
  if (o.nodes_file.empty()) {
    Result<k8s::KubeApiConfig> kc =
        o.in_cluster ? k8s::InClusterConfig() : k8s::KubeconfigConfig(o.kubeconfig);
    if (!kc.ok()) {
      std::cerr << "tessera serve: " << kc.error().message << "\n";
      return 2;
    }
    Result<std::unique_ptr<k8s::HttpKubeApi>> client = k8s::HttpKubeApi::Create(*kc);
    if (!client.ok()) {
      std::cerr << "tessera serve: " << client.error().message << "\n";
      return 2;
    }
    api = std::move(*client);
    k8s::LiveOptions lo;
    lo.api = api.get();
    Result<std::unique_ptr<k8s::Extender>> e = k8s::Extender::Create(eo, lo);
    if (!e.ok()) {
      std::cerr << "tessera serve: " << e.error().message << "\n";
      return 2;
    }
    extender = std::move(*e);
    mode = o.in_cluster ? "in-cluster" : "kubeconfig";
  } else {
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
    Result<std::unique_ptr<k8s::Extender>> e = k8s::Extender::FromJson(*nodes, pods, eo);
    if (!e.ok()) {
      std::cerr << "tessera serve: " << e.error().message << "\n";
      return 2;
    }
    extender = std::move(*e);
    mode = "files";
    for (const std::string& w : extender->warnings()) {
      nlohmann::json f;
      f["warning"] = w;
      k8s::LogJson("warn", "pod not applied as given", f.dump());
    }
  }

  sigset_t stop_signals = BlockStopSignals();
  k8s::HttpServerOptions so;
  so.host = hp->host;
  so.port = hp->port;
  so.log_requests = o.log_requests;
  so.socket.spin_us = o.spin_us;
  k8s::HttpServer server(extender.get(), so);
  Status started = server.Start();
  if (!started.ok()) {
    std::cerr << "tessera serve: " << started.error().message << "\n";
    return 1;
  }
  nlohmann::json f;
  f["mode"] = mode;
  f["policy"] = o.policy;
  if (api != nullptr) f["api_server"] = api->config().server;
  if (!o.config_file.empty()) f["config"] = o.config_file;
  k8s::LogJson("info", "start", f.dump());
  std::cout << "listening on " << hp->host << ":" << server.port() << std::endl;
  std::unique_ptr<k8s::ClusterCache> cache;
  if (api != nullptr) {
    k8s::ClusterCacheOptions cache_options;
    cache_options.watch_disruption_budgets = true;  // preempt's NumPDBViolations
    cache = std::make_unique<k8s::ClusterCache>(api.get(), extender.get(), cache_options);
    cache->Start();
  }
  int sig = 0;
  sigwait(&stop_signals, &sig);
  k8s::LogJson("info", "stopping", std::string("{\"signal\":") + std::to_string(sig) + "}");
  server.Stop();  // in-flight binds finish first
  if (cache != nullptr) cache->Stop();
  return 0;
}

}  // namespace tessera
