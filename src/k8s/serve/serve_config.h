#pragma once

// The configuration file of `tessera serve` (tessera.yaml; schema in docs/EXTENDER_CONFIG.md).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "k8s/extender/extender.h"
#include "k8s/translate/node_topology.h"
#include "sched/classes.h"
#include "sched/headroom.h"
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
  /// probeListen: HOST:PORT of a second listener that serves only /healthz and /readyz ("" =
  /// none), for the kubelet's probes when `listen` is loopback-only.
  std::string probe_listen;
  /// metricsListen: HOST:PORT of a listener that serves only GET /metrics ("" = none), for
  /// Prometheus when `listen` is loopback-only. Plain HTTP, as probeListen is.
  std::string metrics_listen;
  std::string tls_cert_file;       ///< tls.certFile: PEM; with tls.keyFile, `listen` speaks TLS
  std::string tls_key_file;        ///< tls.keyFile
  std::string tls_client_ca_file;  ///< tls.clientCAFile: clients must present a cert it signed
  /// bindRequiresFilterSeconds: bind only to a node this extender's filter passed for the pod
  /// within this many seconds (0 turns the check off).
  uint64_t filter_pass_seconds = 600;
  /// kubernetes.readNodeBeforeBind: read the node's pods from the API before each bind.
  bool read_node_before_bind = true;
  /// classes: the classes of service (sched/classes.h) a pod is sorted into for the SLO
  /// metrics: by its tessera.io/class label, else by spec.priority. Default: the replay's.
  QosClasses classes = DefaultQosClasses();
  /// headroom: idle GPUs kept for the classes with useHeadroom (mode none: nothing kept).
  HeadroomOptions headroom;
  /// schedulerNames: a pending pod whose spec.schedulerName is one of these counts in the GPU
  /// queue from the moment the watch shows it (pods this extender's filter saw count anyway).
  std::vector<std::string> scheduler_names = {"tessera-scheduler"};
  /// topology.pools: the kubelet Topology Manager policy per node pool, first match wins.
  std::vector<NodePoolTopology> topology_pools;
  /// workload: a pod CSV (the trace's columns, as `tessera record` writes them) whose request
  /// mix is the fgd and tessera policies' target workload M ("" = the bound pods').
  std::string workload_file;
  /// preemption: who evicts the victims of a GPU pod that fits no node — "evict" (the extender
  /// itself, as kube-scheduler's preemption would: with GPU resources ignoredByScheduler, that
  /// preemption never reaches the extender), "verb" (kube-scheduler's PostFilter through the
  /// preempt verb) or "off".
  std::string preemption = "evict";
};

/// Reads tessera.yaml text into *config: each key present replaces the field, the others keep
/// their value. Keys: listen (string), probeListen (string), metricsListen (string), policy
/// (string), seed (unsigned integer), logRequests (bool), spinMicroseconds (integer
/// 0..kMaxSpinMicroseconds), bindRequiresFilterSeconds (unsigned integer), tls (mapping: certFile,
/// keyFile, clientCAFile (strings)), kubernetes (mapping: inCluster (bool), kubeconfig (string),
/// readNodeBeforeBind (bool)), classes (a non-empty list of mappings: name (string, required,
/// unique), priority (integer, required: the lowest spec.priority of the class), sloWaitSeconds
/// (number 0..1e9; absent = no SLO), preemptible (bool, default true), useHeadroom (bool, default
/// false)), headroom (mapping: mode (none | static | forecast | backlog), gpus (unsigned,
/// 0..1e7), windowSeconds, bucketSeconds (1..1e9), quantile (0..1), factor (0..1000), models
/// (mapping of GPU model name to unsigned GPUs 0..1e7, names unique; needs a mode but none)),
/// schedulerNames (a list of strings), topology (mapping: pools (a list of mappings: selector
/// (mapping: matchLabels (mapping of strings)), kubeletPolicy (none | best-effort |
/// restricted | single-numa-node, required))), workload (string: a pod CSV), preemption
/// (evict | verb | off). An empty file is valid. Unknown keys, wrong types
/// and YAML syntax errors are errors naming the place: "tessera.yaml:4: kubernetes.inCluster:
/// expected true or false, got \"maybe\"". Pure.
Status ParseServeConfig(std::string_view text, const std::string& file_name, ServeConfig* config);

/// The extender's options a configuration sets (policy, seed, spin, filter-pass window,
/// classes, headroom, scheduler names, topology pools); the workload is left empty (reading
/// workload_file is the caller's I/O). Pure.
ExtenderOptions ToExtenderOptions(const ServeConfig& config);

}  // namespace tessera::k8s
