#include "cli/record_command.h"

#include <pthread.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <charconv>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "k8s/api/kube_api.h"
#include "k8s/api/objects.h"
#include "k8s/record/record_run.h"
#include "k8s/serve/serve_config.h"
#include "util/clock.h"
#include "util/file.h"

namespace tessera {

Result<double> ParseDurationSeconds(const std::string& text) {
  const auto bad = [&] {
    return Error{"--duration \"" + text +
                 "\": expected a positive number of seconds, or one "
                 "with a unit: 90s, 15m, 12h, 7d"};
  };
  if (text.empty()) return bad();
  double scale = 1;
  std::string number = text;
  switch (text.back()) {
    case 's':
      scale = 1;
      break;
    case 'm':
      scale = 60;
      break;
    case 'h':
      scale = 3600;
      break;
    case 'd':
      scale = 86400;
      break;
    default:
      scale = 0;
  }
  if (scale != 0) {
    number.pop_back();
  } else {
    scale = 1;
  }
  double v = 0;
  const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
  if (number.empty() || ec != std::errc() || ptr != number.data() + number.size() ||
      !std::isfinite(v) || v <= 0) {
    return bad();
  }
  return v * scale;
}

namespace {

/// Unix seconds of --until: RFC 3339 ("2026-12-03T08:00:00Z") or a number.
Result<double> ParseUntil(const std::string& text) {
  if (std::optional<double> t = k8s::Rfc3339Seconds(text)) return *t;
  double v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (!text.empty() && ec == std::errc() && ptr == text.data() + text.size() && v >= 0) return v;
  return Error{"--until \"" + text +
               "\": expected an RFC 3339 UTC time (2026-12-03T08:00:00Z) or Unix seconds"};
}

}  // namespace

void AddRecordCommand(CLI::App& app, RecordCliOptions& o, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "record",
      "Record the cluster's own history, read-only, from the Kubernetes API (list + watch of "
      "pods and nodes): an openb-format node list and pod list with creation, scheduled and "
      "deletion times, class and GPU request, for `tessera replay`, `frag` and `plan`. Resumes "
      "the recording its folder holds (each pod once); survives watch drops and 410 Gone "
      "(relist). Ends cleanly at --until, after --duration, or on SIGTERM/SIGINT.");
  cmd->footer(
      "\nFiles in --out DIR (docs/RECORD.md):\n"
      "  record.journal                 the recording (append-only JSON lines; resumed)\n"
      "  record.json                    state: recording | complete | failed (and why)\n"
      "  openb_node_list.csv            written at a clean end only\n"
      "  openb_pod_list.csv             written at a clean end only\n"
      "  openb_*.partial.csv            while recording or after a failure (not complete)\n"
      "\nA pod's class (the qos column) is the class `tessera serve` sorts it into: its\n"
      "tessera.io/class label, else its spec.priority against the classes of --config (serve's\n"
      "tessera.yaml) or the default ones (LS >= 1000, Guaranteed >= 900, Burstable >= 500, else\n"
      "BE). Plan SLOs and replays then speak of the classes the extender enforces.\n"
      "\nExit codes: 0 clean end; 1 API server unreachable or refusing (nothing written when it\n"
      "fails at the start; record.json \"failed\" later); 2 bad input (flags, a damaged journal).\n"
      "\nExamples:\n"
      "  tessera record --kubeconfig ~/.kube/config --out rec --duration 24h\n"
      "  tessera record --in-cluster --out /data/rec          # until SIGTERM\n"
      "  tessera record --kubeconfig ~/.kube/config --out rec --config tessera.yaml\n"
      "  tessera replay --nodes rec/openb_node_list.csv --pods rec/openb_pod_list.csv\n");
  cmd->add_flag("--in-cluster", o.in_cluster,
                "Reach the API server with the pod's service account");
  cmd->add_option("--kubeconfig", o.kubeconfig,
                  "Reach the API server as the current context of this kubeconfig file");
  cmd->add_option("--out", o.out_dir, "The recording's folder (created; resumed when it holds one)")
      ->required();
  cmd->add_option("--until", o.until, "End at this time (RFC 3339 UTC, or Unix seconds)");
  cmd->add_option("--duration", o.duration, "End after this long (90s, 15m, 12h, 7d)");
  cmd->add_option("--flush-seconds", o.flush_seconds,
                  "Sync the journal and rewrite the partial lists and record.json this often")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--give-up-seconds", o.give_up_seconds,
                  "Fail (exit 1) when out of sync with the API server this long")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--config", o.config_file,
                  "tessera serve's configuration (tessera.yaml): the classes pods are sorted "
                  "into (default: serve's default classes)");
  cmd->callback([&o, &exit_code] { exit_code = RunRecordCommand(o); });
}

int RunRecordCommand(const RecordCliOptions& o) {
  const std::string me = "tessera record: ";
  if (o.in_cluster == !o.kubeconfig.empty()) {
    std::cerr << me << "error: give exactly one of --in-cluster or --kubeconfig PATH\n";
    return 2;
  }
  k8s::RecordRunOptions ro;
  ro.dir = o.out_dir;
  if (!o.config_file.empty()) {
    Result<std::string> text = ReadFile(o.config_file);
    k8s::ServeConfig config;
    Status s = text.ok() ? k8s::ParseServeConfig(*text, o.config_file, &config) : text.error();
    if (!s.ok()) {
      std::cerr << me << "error: --config: " << s.error().message << "\n";
      return 2;
    }
    ro.classes = config.classes;
  }
  ro.flush_seconds = o.flush_seconds;
  ro.give_up_seconds = o.give_up_seconds;
  if (!o.until.empty()) {
    Result<double> t = ParseUntil(o.until);
    if (!t.ok()) {
      std::cerr << me << "error: " << t.error().message << "\n";
      return 2;
    }
    const double now = SystemClock().NowSeconds();
    if (*t <= now) {
      std::cerr << me << "error: --until \"" << o.until << "\" is not in the future (now is "
                << static_cast<int64_t>(now) << " Unix seconds)\n";
      return 2;
    }
    ro.until_unix_seconds = *t;
  }
  if (!o.duration.empty()) {
    Result<double> d = ParseDurationSeconds(o.duration);
    if (!d.ok()) {
      std::cerr << me << "error: " << d.error().message << "\n";
      return 2;
    }
    ro.duration_seconds = *d;
  }
  Result<k8s::KubeApiConfig> kc =
      o.in_cluster ? k8s::InClusterConfig() : k8s::KubeconfigConfig(o.kubeconfig);
  if (!kc.ok()) {
    std::cerr << me << "error: " << kc.error().message << "\n";
    return 2;
  }
  Result<std::unique_ptr<k8s::HttpKubeApi>> api = k8s::HttpKubeApi::Create(*kc);
  if (!api.ok()) {
    std::cerr << me << "error: " << api.error().message << "\n";
    return 2;
  }
  ro.server = kc->server;
  // The API client's TLS writes raise SIGPIPE on a closed connection: an error, not the end.
  signal(SIGPIPE, SIG_IGN);
  // SIGTERM/SIGINT are blocked in every thread and taken by one that wakes the run.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  RealSleeper stop;
  ro.stop = &stop;
  std::atomic<bool> signalled{false};
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    signalled.store(true);
    stop.Wake();
  });
  const int code = k8s::RunRecord(api->get(), ro, std::cerr);
  // Ends the waiter's sigwait when no signal came (the signal stays blocked: no handler runs).
  if (!signalled.load()) pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  return code;
}

}  // namespace tessera
