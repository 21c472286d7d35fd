#pragma once

// The configuration file of `tessera serve` (tessera.yaml; schema in docs/EXTENDER.md,
// "Configuration file").

#include <cstdint>
#include <string>
#include <string_view>

#include "util/result.h"
#include "util/spin_lock.h"

namespace tessera::k8s {

/// The largest spinMicroseconds / --spin-us accepted (10 ms: beyond it spinning only burns CPU).
inline constexpr int kMaxSpinMicroseconds = 10000;

/// What `tessera serve` reads from its configuration file; the defaults are the command's.
struct ServeConfig {
  std::string listen = "127.0.0.1:8888";  ///< HOST:PORT
  std::string policy = "fgd";
  uint64_t seed = 42;
  bool log_requests = false;
  int spin_us = kDefaultSpinMicroseconds;  ///< spinMicroseconds: 0..kMaxSpinMicroseconds
  bool in_cluster = false;                 ///< kubernetes.inCluster: the pod's service account
  std::string kubeconfig;                  ///< kubernetes.kubeconfig: a kubeconfig file (as given)
};

/// Reads tessera.yaml text into *config: each key present replaces the field, the others keep
/// their value. Keys: listen (string), policy (string), seed (unsigned integer), logRequests
/// (bool), spinMicroseconds (integer 0..kMaxSpinMicroseconds), kubernetes (mapping: inCluster
/// (bool), kubeconfig (string)). An empty file is
/// valid. Unknown keys, wrong types and YAML syntax errors are errors naming the place:
/// "tessera.yaml:4: kubernetes.inCluster: expected true or false, got \"maybe\"". Pure.
Status ParseServeConfig(std::string_view text, const std::string& file_name, ServeConfig* config);

}  // namespace tessera::k8s
