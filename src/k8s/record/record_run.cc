#include "k8s/record/record_run.h"

#include <algorithm>
#include <cmath>
#include <ostream>

#include "k8s/record/recorder.h"

namespace tessera::k8s {
namespace {

/// What to tell a person about a refused or failed call.
std::string Advice(const ApiStatus& s) {
  if (s.http_status == 0) {
    return " (is the server address right, and is the API server reachable from here?)";
  }
  if (s.http_status == 401) return " (the credentials were not accepted: token or certificate)";
  if (s.http_status == 403) {
    return " (record needs get, list and watch on pods and nodes cluster-wide: see the "
           "ClusterRole in docs/RECORD.md)";
  }
  return "";
}

std::string Summary(const RecordCounts& c) {
  return std::to_string(c.pods) + " pods (" + std::to_string(c.running) + " running, " +
         std::to_string(c.pending) + " pending, " + std::to_string(c.ended) + " ended, " +
         std::to_string(c.ended_unseen) + " of them found gone by a list), " +
         std::to_string(c.nodes) + " nodes" +
         (c.undecodable > 0 ? ", " + std::to_string(c.undecodable) + " pods not decodable" : "");
}

}  // namespace

int RunRecord(KubeApi* api, const RecordRunOptions& options, std::ostream& err) {
  const Clock* clock = ClockOrSystem(options.clock);
  const std::string me = "tessera record: ";
  // Before anything is written: the API server answers, and lets us read both resources.
  for (const char* path : {"/api/v1/nodes", "/api/v1/pods"}) {
    ListOptions probe;
    probe.limit = 1;
    ListPage page;
    const ApiStatus s = api->List(path, probe, &page);
    if (!s.ok()) {
      err << me << "error: cannot read " << (path + 8) << " from the API server: " << s.error
          << Advice(s) << "; nothing was recorded\n";
      return 1;
    }
  }
  RecorderOptions ro;
  ro.dir = options.dir;
  ro.clock = clock;
  ro.server = options.server;
  ro.classes = options.classes;
  Result<std::unique_ptr<Recorder>> opened = Recorder::Open(ro);
  if (!opened.ok()) {
    err << me << "error: " << opened.error().message << "\n";
    return 2;
  }
  Recorder& recorder = **opened;
  if (recorder.resumed()) {
    err << me << "resuming " << recorder.files().journal << ": " << Summary(recorder.counts())
        << (recorder.dropped_torn_line() ? "; dropped an incomplete last line" : "") << "\n";
  } else {
    err << me << "recording into " << options.dir << "\n";
  }

  const double start = clock->NowSeconds();
  double end = -1;
  if (options.until_unix_seconds >= 0) end = options.until_unix_seconds;
  if (options.duration_seconds >= 0) {
    const double d = start + options.duration_seconds;
    end = end < 0 ? d : std::min(end, d);
  }
  ClusterCacheOptions co = options.cache;
  if (co.clock == nullptr) co.clock = clock;
  ClusterCache cache(api, &recorder, co);
  cache.Start();

  double out_of_sync_since = start;
  bool was_synced = false;
  bool ever_synced = false;
  std::string failure, out_of_sync_reason;
  for (;;) {
    double step = options.flush_seconds;
    const double now = clock->NowSeconds();
    if (end >= 0) step = std::min(step, std::max(0.0, end - now));
    const bool woken = !options.stop->Sleep(step);
    const double t = clock->NowSeconds();
    const SyncStatus sync = recorder.sync_status();
    if (sync.synced) {
      if (!was_synced) err << me << "in sync: " << Summary(recorder.counts()) << "\n";
      was_synced = true;
      ever_synced = true;
    } else {
      if (was_synced) {
        out_of_sync_since = t;
        err << me << "out of sync: " << sync.reason << "\n";
      }
      was_synced = false;
      out_of_sync_reason = sync.reason;
    }
    Status flushed = recorder.Flush();
    if (!flushed.ok()) {
      failure = flushed.error().message;
      break;
    }
    if (woken || (end >= 0 && t >= end)) break;
    // A refusal (credentials or RBAC) does not go away by retrying: said at once.
    if (!sync.synced && (sync.reason.find(": HTTP 401: ") != std::string::npos ||
                         sync.reason.find(": HTTP 403: ") != std::string::npos)) {
      failure = "the API server refuses: " + sync.reason +
                " (record needs get, list and watch on pods and nodes cluster-wide: see the "
                "ClusterRole in docs/RECORD.md)";
      break;
    }
    if (!sync.synced && t - out_of_sync_since >= options.give_up_seconds) {
      failure = "out of sync with the API server for " +
                std::to_string(static_cast<int64_t>(t - out_of_sync_since)) + " s: " + sync.reason;
      break;
    }
    err << me << Summary(recorder.counts()) << "\n";
  }
  cache.Stop();
  if (failure.empty() && !ever_synced) {
    failure = "stopped before the first complete list of pods and nodes";
  }
  // Pods created or ended while out of sync are unknown: such an end is not a clean one.
  if (failure.empty() && !was_synced) {
    failure = "ended out of sync with the API server (for " +
              std::to_string(static_cast<int64_t>(clock->NowSeconds() - out_of_sync_since)) +
              " s: " + out_of_sync_reason + ")";
  }
  if (!failure.empty()) {
    Status s = recorder.Fail(failure);
    err << me << "error: " << failure
        << "; the recording is incomplete (record.json says \"failed\"; the journal is kept and "
           "a later run resumes it)\n";
    if (!s.ok()) err << me << "error: " << s.error().message << "\n";
    return 1;
  }
  const int64_t end_time = static_cast<int64_t>(std::floor(clock->NowSeconds()));
  Status finished = recorder.Finish(end_time);
  if (!finished.ok()) {
    err << me << "error: " << finished.error().message << "\n";
    (void)recorder.Fail(finished.error().message);
    return 1;
  }
  err << me << "done: " << Summary(recorder.counts()) << "; wrote " << recorder.files().node_list
      << " and " << recorder.files().pod_list << "\n";
  return 0;
}

}  // namespace tessera::k8s
