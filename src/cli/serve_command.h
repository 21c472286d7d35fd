#pragma once

#include <cstdint>
#include <string>

#include "util/result.h"

namespace CLI {
class App;
}

namespace tessera {

/// Options of `tessera serve` (see its --help).
struct ServeOptions {
  std::string nodes_file;  ///< required: `kubectl get nodes -o json`
  std::string pods_file;   ///< optional: `kubectl get pods -A -o json` (bound pods are loaded)
  std::string policy = "fgd";
  std::string listen = "127.0.0.1:8888";
  uint64_t seed = 42;
  bool log_requests = false;
};

/// Registers the `serve` subcommand on `app`; the callback runs it and sets `exit_code`.
void AddServeCommand(CLI::App& app, ServeOptions& options, int& exit_code);
/// Runs `tessera serve` until SIGTERM or SIGINT; returns the process exit code (0 after a
/// graceful stop, 2 for bad input, 1 when the address cannot be bound). Prints
/// "listening on HOST:PORT" on stdout once serving (the chosen port when PORT is 0).
int RunServe(const ServeOptions& options);

/// Splits "HOST:PORT" (port 0..65535; "[::1]:80" for IPv6). Errors name the bad part.
struct HostPort {
  std::string host;
  int port = 0;
};
Result<HostPort> ParseHostPort(const std::string& text);

}  // namespace tessera
