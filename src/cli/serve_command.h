#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "k8s/serve/serve_config.h"
#include "util/result.h"

namespace CLI {
class App;
}

namespace tessera {

/// Options of `tessera serve` (see its --help). Precedence: defaults < --config file < flags.
struct ServeOptions {
  std::string config_file;  ///< --config tessera.yaml (k8s/serve/serve_config.h)
  std::string nodes_file;   ///< file mode: `kubectl get nodes -o json`
  std::string pods_file;    ///< file mode, optional: `kubectl get pods -A -o json`
  /// Everything the config file can set too (listen, policy, the mode, TLS, ...), as flags.
  k8s::ServeConfig settings;
  /// The flags given on the command line ("--policy", ...): they override the config file.
  std::set<std::string> given;
};
/// Registers the `serve` subcommand on `app`; the callback runs it and sets `exit_code`.
void AddServeCommand(CLI::App& app, ServeOptions& options, int& exit_code);
/// Runs `tessera serve` until SIGTERM or SIGINT; returns the process exit code (0 after a
/// graceful stop, 2 for bad input or configuration, 1 when the address cannot be bound).
/// Prints "listening on HOST:PORT" on stdout once serving (the chosen port when PORT is 0),
/// then "probes on HOST:PORT" and "metrics on HOST:PORT" for --probe-listen and
/// --metrics-listen.
/// Exactly one mode: files (--nodes [--pods]), --in-cluster, or --kubeconfig.
int RunServe(const ServeOptions& options);

/// Splits "HOST:PORT" (port 0..65535; "[::1]:80" for IPv6). Errors name the bad part.
struct HostPort {
  std::string host;
  int port = 0;
};
Result<HostPort> ParseHostPort(const std::string& text);

}  // namespace tessera
