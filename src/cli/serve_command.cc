#include "cli/serve_command.h"

#include <pthread.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <tuple>
#include <vector>

#include "analyze/snapshot.h"
#include "k8s/api/cluster_cache.h"
#include "k8s/api/kube_api.h"
#include "k8s/api/log.h"
#include "k8s/extender/extender.h"
#include "k8s/serve/http_server.h"
#include "k8s/serve/serve_config.h"
#include "k8s/serve/tls.h"
#include "trace/csv_reader.h"
#include "util/file.h"

namespace tessera {

Result<HostPort> ParseHostPort(const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) {
    return Error{"\"" + text + "\": expected HOST:PORT, e.g. 127.0.0.1:8888"};
  }
  HostPort hp;
  hp.host = text.substr(0, colon);
  if (hp.host.size() >= 2 && hp.host.front() == '[' && hp.host.back() == ']') {
    hp.host = hp.host.substr(1, hp.host.size() - 2);
  }
  if (hp.host.empty()) return Error{"\"" + text + "\": empty host"};
  const std::string port = text.substr(colon + 1);
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), hp.port);
  if (port.empty() || ec != std::errc() || ptr != port.data() + port.size() || hp.port < 0 ||
      hp.port > 65535) {
    return Error{"\"" + text + "\": port must be a number 0..65535"};
  }
  return hp;
}

void AddServeCommand(CLI::App& app, ServeOptions& o, int& exit_code) {
  k8s::ServeConfig& c = o.settings;
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "Run as a kube-scheduler extender (HTTP): filter, prioritize, preempt and bind GPU pods "
      "with the chosen policy. The cluster model comes from the Kubernetes API (list + watch, "
      "with --in-cluster or --kubeconfig; bind then writes the Binding, GPU annotations "
      "included, through the API) or, offline, from kubectl JSON files (--nodes/--pods; bind "
      "only updates the model). In API mode nothing is answered until the model is in sync "
      "with the API. Stops gracefully on SIGTERM or SIGINT.");
  cmd->footer(
      "\nEndpoints: POST /filter /prioritize /bind /preempt (extender v1 JSON), GET /healthz\n"
      "/readyz (ready once in sync with the API), /metrics (Prometheus text), /state (model,\n"
      "assignments and what is counted without being known, JSON). --probe-listen adds a\n"
      "listener with /healthz and /readyz only, for the kubelet when --listen is loopback;\n"
      "--metrics-listen one with /metrics only, for Prometheus.\n"
      "\nSecurity: bind only places a pod on a node this extender's filter passed for it\n"
      "(--bind-requires-filter-seconds). For a remote extender, --tls-cert-file/--tls-key-file\n"
      "make --listen speak TLS and --tls-client-ca-file requires a client certificate (as\n"
      "kube-scheduler's extender tlsConfig sends one); a client without one gets no answer.\n"
      "\nExactly one mode: --in-cluster, --kubeconfig PATH, or --nodes FILE [--pods FILE];\n"
      "the mode may also come from the config file (kubernetes.inCluster/kubeconfig).\n"
      "Precedence: defaults < --config file < command-line flags.\n"
      "\nConfig file (YAML; unknown keys and wrong types are errors naming file:line):\n"
      "  listen: 127.0.0.1:8888         # --listen\n"
      "  probeListen: 0.0.0.0:8889      # --probe-listen\n"
      "  metricsListen: 0.0.0.0:8890    # --metrics-listen\n"
      "  policy: fgd                    # --policy\n"
      "  seed: 42                       # --seed\n"
      "  logRequests: false             # --log-requests\n"
      "  spinMicroseconds: 250          # --spin-us\n"
      "  bindRequiresFilterSeconds: 600 # --bind-requires-filter-seconds\n"
      "  tls:\n"
      "    certFile: /tls/tls.crt       # --tls-cert-file\n"
      "    keyFile: /tls/tls.key        # --tls-key-file\n"
      "    clientCAFile: /tls/ca.crt    # --tls-client-ca-file\n"
      "  kubernetes:\n"
      "    inCluster: true              # --in-cluster\n"
      "    kubeconfig: /path/config     # --kubeconfig\n"
      "    readNodeBeforeBind: true     # --read-node-before-bind\n"
      "  classes:                       # SLO classes of the metrics (default: these four)\n"
      "    - {name: LS, priority: 1000, sloWaitSeconds: 1, preemptible: false, "
      "useHeadroom: true}\n"
      "    - {name: Guaranteed, priority: 900, sloWaitSeconds: 10, preemptible: false}\n"
      "    - {name: Burstable, priority: 500, sloWaitSeconds: 60}\n"
      "    - {name: BE, priority: 0}\n"
      "  schedulerNames: [tessera-scheduler]  # pending pods of these count in the GPU queue\n"
      "  headroom: {mode: backlog, gpus: 2, windowSeconds: 3600}  # idle GPUs kept for the\n"
      "                                 # useHeadroom classes (mode none|static|forecast|backlog)\n"
      "  topology: {pools: [{selector: {matchLabels: {pool: a100}}, kubeletPolicy: "
      "single-numa-node}]}\n"
      "  workload: history.csv          # --workload\n"
      "  preemption: evict              # --preemption (evict|verb|off)\n"
      "\nExamples:\n"
      "  tessera serve --in-cluster --listen 127.0.0.1:8888 --probe-listen 0.0.0.0:8889 \\\n"
      "    --metrics-listen 0.0.0.0:8890\n"
      "  tessera serve --config /etc/tessera/tessera.yaml\n"
      "  tessera serve --kubeconfig ~/.kube/config --listen 127.0.0.1:0   # a free port, printed\n"
      "  kubectl get nodes -o json > nodes.json; kubectl get pods -A -o json > pods.json\n"
      "  tessera serve --nodes nodes.json --pods pods.json --listen 127.0.0.1:8888\n"
      "  kubectl get nodes,pods,pdb -A -o json > snap.json; tessera serve --nodes snap.json\n"
      "\nThe first line on stdout is \"listening on HOST:PORT\"; logs are JSON lines on stderr.\n"
      "See docs/EXTENDER.md, docs/EXTENDER_CONFIG.md and docs/DEPLOY.md.");
  cmd->add_option("--config", o.config_file,
                  "YAML configuration file (keys as in the list below); flags override it");
  cmd->add_flag("--in-cluster", c.in_cluster,
                "API mode: reach the API server with the pod's service account "
                "($KUBERNETES_SERVICE_HOST/PORT, /var/run/secrets/kubernetes.io/serviceaccount)");
  cmd->add_option("--kubeconfig", c.kubeconfig,
                  "API mode: reach the API server as the current context of this kubeconfig "
                  "(token or client certificate; exec plugins are not supported)");
  cmd->add_option("--nodes", o.nodes_file,
                  "File mode: nodes as `kubectl get nodes -o json` prints them (a NodeList), or "
                  "a List with nodes, pods and PodDisruptionBudgets as `kubectl get "
                  "nodes,pods,pdb -A -o json` prints it (its pods and budgets are read too). A "
                  "file without Node objects (a PodList) is an error");
  cmd->add_option("--pods", o.pods_file,
                  "File mode: pods (and PodDisruptionBudgets) as `kubectl get pods -A -o json` "
                  "prints them; those bound to a node occupy it as in API mode (GPUs from "
                  "annotation tessera.io/gpu-indices, e.g. \"0-3\", else the generic choice; "
                  "what cannot be applied as given is logged), and all of them form fgd's "
                  "target workload. A Node object here is an error");
  cmd->add_option("--policy", c.policy,
                  "Placement policy: tessera,fgd,bestfit,packing,clustering,dotprod,random,"
                  "k8s-default")
      ->capture_default_str();
  cmd->add_option("--listen", c.listen,
                  "HOST:PORT to serve on (port 0 picks a free port). Keep it on loopback "
                  "when kube-scheduler runs in the same pod (deploy/)")
      ->capture_default_str();
  cmd->add_option("--probe-listen", c.probe_listen,
                  "HOST:PORT of a second listener with only /healthz and /readyz (none when "
                  "empty)");
  cmd->add_option("--metrics-listen", c.metrics_listen,
                  "HOST:PORT of a listener with only /metrics, for Prometheus (none when "
                  "empty)");
  cmd->add_option("--seed", c.seed, "Seed of the random policy's draws")->capture_default_str();
  cmd->add_flag("--log-requests", c.log_requests,
                "Log one JSON line per request on stderr (debug level)");
  cmd->add_option("--spin-us", c.spin_us,
                  "Microseconds a server thread keeps trying a socket read or the model's lock "
                  "before it sleeps (0: sleep at once). Spinning costs at most this much CPU per "
                  "wait and saves the wake-up of an idle (v)CPU, which decides the tail latency "
                  "on virtual machines")
      ->check(CLI::Range(0, k8s::kMaxSpinMicroseconds))
      ->capture_default_str();
  cmd->add_option("--bind-requires-filter-seconds", c.filter_pass_seconds,
                  "Bind a pod only to a node this extender's filter passed for it at most this "
                  "many seconds before (0: no such check)")
      ->capture_default_str();
  cmd->add_option("--tls-cert-file", c.tls_cert_file, "PEM certificate: --listen speaks TLS");
  cmd->add_option("--tls-key-file", c.tls_key_file, "PEM private key of --tls-cert-file");
  cmd->add_option("--tls-client-ca-file", c.tls_client_ca_file,
                  "PEM CA: every client must present a certificate it signed");
  cmd->add_option("--workload", c.workload_file,
                  "Pod CSV (the trace's columns, e.g. what `tessera record` writes) whose request "
                  "mix is the fgd and tessera policies' target workload M; default: the bound "
                  "pods' mix, rebuilt with the model");
  cmd->add_option("--preemption", c.preemption,
                  "Who evicts the victims of a GPU pod that fits no node: evict (this extender, "
                  "writing what kube-scheduler's preemption writes; kube-scheduler's own "
                  "preemption cannot see GPU resources it ignores), verb (kube-scheduler's "
                  "PostFilter through the preempt verb) or off")
      ->check(CLI::IsMember({"evict", "verb", "off"}))
      ->capture_default_str();
  cmd->add_option("--read-node-before-bind", c.read_node_before_bind,
                  "API mode: read the node's pods from the API before each bind, so that binds "
                  "the watch has not delivered yet are counted (true/false)")
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
    k8s::ServeConfig file;  // the defaults, then what the file says
    Status s = k8s::ParseServeConfig(*text, flags.config_file, &file);
    if (!s.ok()) return s.error();
    k8s::ServeConfig& c = o.settings;
    const auto from_file = [&](const char* flag) { return flags.given.count(flag) == 0; };
    if (from_file("--listen")) c.listen = file.listen;
    if (from_file("--probe-listen")) c.probe_listen = file.probe_listen;
    if (from_file("--metrics-listen")) c.metrics_listen = file.metrics_listen;
    if (from_file("--policy")) c.policy = file.policy;
    if (from_file("--seed")) c.seed = file.seed;
    if (from_file("--log-requests")) c.log_requests = file.log_requests;
    if (from_file("--spin-us")) c.spin_us = file.spin_us;
    if (from_file("--bind-requires-filter-seconds")) {
      c.filter_pass_seconds = file.filter_pass_seconds;
    }
    if (from_file("--tls-cert-file")) c.tls_cert_file = file.tls_cert_file;
    if (from_file("--tls-key-file")) c.tls_key_file = file.tls_key_file;
    if (from_file("--tls-client-ca-file")) c.tls_client_ca_file = file.tls_client_ca_file;
    if (from_file("--read-node-before-bind")) {
      c.read_node_before_bind = file.read_node_before_bind;
    }
    c.classes = file.classes;  // no flags: the file's classes, headroom and scheduler names
    c.headroom = file.headroom;
    c.scheduler_names = file.scheduler_names;
    c.topology_pools = file.topology_pools;
    if (from_file("--workload")) c.workload_file = file.workload_file;
    if (from_file("--preemption")) c.preemption = file.preemption;
    // A mode given on the command line replaces the file's mode.
    const bool flag_mode = flags.given.count("--in-cluster") || flags.given.count("--kubeconfig") ||
                           flags.given.count("--nodes");
    if (!flag_mode) {
      c.in_cluster = file.in_cluster;
      c.kubeconfig = file.kubeconfig;
    }
  }
  const k8s::ServeConfig& c = o.settings;
  const int modes =
      (c.in_cluster ? 1 : 0) + (c.kubeconfig.empty() ? 0 : 1) + (o.nodes_file.empty() ? 0 : 1);
  if (modes != 1) {
    return Error{std::string(modes == 0 ? "no cluster source" : "more than one cluster source") +
                 ": give exactly one of --in-cluster, --kubeconfig PATH or --nodes FILE (or "
                 "kubernetes.inCluster / kubernetes.kubeconfig in the config file)"};
  }
  if (!o.pods_file.empty() && o.nodes_file.empty()) {
    return Error{"--pods needs --nodes (file mode); in API mode pods come from the API"};
  }
  if (c.tls_cert_file.empty() != c.tls_key_file.empty()) {
    return Error{"TLS needs both --tls-cert-file and --tls-key-file (tls.certFile, tls.keyFile)"};
  }
  if (!c.tls_client_ca_file.empty() && c.tls_cert_file.empty()) {
    return Error{"--tls-client-ca-file needs --tls-cert-file and --tls-key-file"};
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
    std::cerr << "tessera serve: error: " << resolved.error().message << "\n";
    return 2;
  }
  const ServeOptions& o = *resolved;
  const k8s::ServeConfig& c = o.settings;
  Result<HostPort> hp = ParseHostPort(c.listen);
  if (!hp.ok()) {
    std::cerr << "tessera serve: error: --listen " << hp.error().message << "\n";
    return 2;
  }
  // The listeners beside --listen: what each serves, and where (none when its flag is empty).
  struct SideListener {
    const char* flag;
    const char* what;  // the stdout line: "<what> on HOST:PORT"
    k8s::HttpRoutes routes;
    HostPort address;
    std::unique_ptr<k8s::HttpServer> server;
  };
  std::vector<SideListener> side;
  for (const auto& [flag, what, routes, text] :
       {std::tuple{"--probe-listen", "probes", k8s::HttpRoutes::kProbes, &c.probe_listen},
        std::tuple{"--metrics-listen", "metrics", k8s::HttpRoutes::kMetrics, &c.metrics_listen}}) {
    if (text->empty()) continue;
    Result<HostPort> p = ParseHostPort(*text);
    if (!p.ok()) {
      std::cerr << "tessera serve: error: " << flag << " " << p.error().message << "\n";
      return 2;
    }
    side.push_back({flag, what, routes, *p, nullptr});
  }
  std::shared_ptr<k8s::TlsContext> tls;
  if (!c.tls_cert_file.empty()) {
    Result<std::shared_ptr<k8s::TlsContext>> t =
        k8s::TlsContext::Create({c.tls_cert_file, c.tls_key_file, c.tls_client_ca_file});
    if (!t.ok()) {
      std::cerr << "tessera serve: " << t.error().message << "\n";
      return 2;
    }
    tls = std::move(*t);
  }
  k8s::ExtenderOptions eo = k8s::ToExtenderOptions(c);
  if (!c.workload_file.empty()) {
    Result<std::string> text = ReadFile(c.workload_file);
    Result<std::vector<PodSpec>> pods =
        text.ok() ? ReadPodCsv(*text, c.workload_file) : Result<std::vector<PodSpec>>(text.error());
    if (!pods.ok()) {
      std::cerr << "tessera serve: error: --workload: " << pods.error().message << "\n";
      return 2;
    }
    if (pods->empty()) {
      std::cerr << "tessera serve: error: --workload: " << c.workload_file << ": no pods\n";
      return 2;
    }
    eo.workload = std::move(*pods);
  }

  std::unique_ptr<k8s::HttpKubeApi> api;
  std::unique_ptr<k8s::Extender> extender;
  std::string mode;
  if (o.nodes_file.empty()) {
    Result<k8s::KubeApiConfig> kc =
        c.in_cluster ? k8s::InClusterConfig() : k8s::KubeconfigConfig(c.kubeconfig);
    if (!kc.ok()) {
      std::cerr << "tessera serve: error: " << kc.error().message << "\n";
      return 2;
    }
    Result<std::unique_ptr<k8s::HttpKubeApi>> client = k8s::HttpKubeApi::Create(*kc);
    if (!client.ok()) {
      std::cerr << "tessera serve: error: " << client.error().message << "\n";
      return 2;
    }
    api = std::move(*client);
    k8s::LiveOptions lo;
    lo.api = api.get();
    lo.read_node_before_bind = c.read_node_before_bind;
    Result<std::unique_ptr<k8s::Extender>> e = k8s::Extender::Create(eo, lo);
    if (!e.ok()) {
      std::cerr << "tessera serve: error: " << e.error().message << "\n";
      return 2;
    }
    extender = std::move(*e);
    mode = c.in_cluster ? "in-cluster" : "kubeconfig";
  } else {
    // The files are read as analyze reads its snapshot, each for what its flag promises.
    std::vector<analyze::SnapshotText> docs;
    for (const auto& [file, role, flag] :
         {std::tuple{o.nodes_file, analyze::DocumentRole::kNodes, "--nodes"},
          std::tuple{o.pods_file, analyze::DocumentRole::kPods, "--pods"}}) {
      if (file.empty()) continue;
      Result<std::string> text = ReadFile(file);
      if (!text.ok()) {
        std::cerr << "tessera serve: error: " << text.error().message << "\n";
        return 2;
      }
      docs.push_back({file, std::move(*text), role, flag});
    }
    Result<analyze::Snapshot> snapshot = analyze::ReadSnapshot(docs);
    if (!snapshot.ok()) {
      std::cerr << "tessera serve: error: " << snapshot.error().message << "\n";
      return 2;
    }
    Result<std::unique_ptr<k8s::Extender>> e = analyze::MakeFileExtender(*snapshot, eo);
    if (!e.ok()) {
      std::cerr << "tessera serve: error: " << e.error().message << "\n";
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

  // A peer that closes a connection we write to is an error on that connection, not the end
  // of the server: the API client's TLS writes go through OpenSSL's socket BIO (write(2)),
  // which raises SIGPIPE (the server's own sockets send with MSG_NOSIGNAL).
  signal(SIGPIPE, SIG_IGN);
  sigset_t stop_signals = BlockStopSignals();
  k8s::HttpServerOptions so;
  so.host = hp->host;
  so.port = hp->port;
  so.log_requests = c.log_requests;
  so.socket.spin_us = c.spin_us;
  so.tls = tls;
  k8s::HttpServer server(extender.get(), so);
  Status started = server.Start();
  if (!started.ok()) {
    std::cerr << "tessera serve: error: " << started.error().message << "\n";
    return 1;
  }
  for (SideListener& l : side) {
    k8s::HttpServerOptions lo;
    lo.host = l.address.host;
    lo.port = l.address.port;
    lo.socket.spin_us = 0;  // a probe or a scrape every few seconds: no spinning
    lo.routes = l.routes;
    l.server = std::make_unique<k8s::HttpServer>(extender.get(), lo);
    Status s = l.server->Start();
    if (!s.ok()) {
      std::cerr << "tessera serve: error: " << l.flag << ": " << s.error().message << "\n";
      return 1;
    }
  }
  nlohmann::json f;
  f["mode"] = mode;
  f["policy"] = c.policy;
  f["tls"] = tls == nullptr                       ? "off"
             : tls->requires_client_certificate() ? "client certificates"
                                                  : "server only";
  if (api != nullptr) f["api_server"] = api->config().server;
  if (!o.config_file.empty()) f["config"] = o.config_file;
  k8s::LogJson("info", "start", f.dump());
  std::cout << "listening on " << hp->host << ":" << server.port() << std::endl;
  for (const SideListener& l : side) {
    std::cout << l.what << " on " << l.address.host << ":" << l.server->port() << std::endl;
  }
  std::unique_ptr<k8s::ClusterCache> cache;
  if (api != nullptr) {
    k8s::ClusterCacheOptions cache_options;
    cache_options.watch_disruption_budgets = true;  // preempt's NumPDBViolations
    cache_options.metrics = extender->metrics_registry();
    cache = std::make_unique<k8s::ClusterCache>(api.get(), extender.get(), cache_options);
    cache->Start();
  }
  int sig = 0;
  sigwait(&stop_signals, &sig);
  k8s::LogJson("info", "stopping", std::string("{\"signal\":") + std::to_string(sig) + "}");
  for (SideListener& l : side) l.server->Stop();
  server.Stop();  // in-flight binds finish first
  if (cache != nullptr) cache->Stop();
  return 0;
}

}  // namespace tessera
