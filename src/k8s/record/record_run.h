#pragma once

// One run of `tessera record`: check that the API server answers, resume or start the
// recording in a folder, keep it current from a list + watch of pods and nodes, flush it
// periodically, and end it cleanly at --until / after --duration / when stopped (SIGTERM), or
// mark it failed when the API server stays unreachable or refuses. docs/RECORD.md.

#include <iosfwd>
#include <string>

#include "k8s/api/cluster_cache.h"
#include "k8s/api/kube_api.h"
#include "sched/classes.h"
#include "util/clock.h"

namespace tessera::k8s {

struct RecordRunOptions {
  std::string dir;  ///< the recording's folder
  /// End at this Unix time (< 0: no end time); and/or after this many seconds (< 0: none).
  double until_unix_seconds = -1;
  double duration_seconds = -1;
  double flush_seconds = 10;  ///< journal fdatasync + partial lists + record.json this often
  /// Give up (exit 1, recording marked failed) when the watch stays out of sync this long.
  double give_up_seconds = 300;
  std::string server;            ///< the API server's address, for the journal and messages
  const Clock* clock = nullptr;  ///< wall clock; the system clock when null
  /// The classes pods are recorded in (RecorderOptions::classes).
  QosClasses classes = DefaultQosClasses();
  /// Waits between flushes; Wake() ends the run cleanly (the CLI wakes it on SIGTERM/SIGINT).
  /// Not owned; required.
  Sleeper* stop = nullptr;
  /// Back-off of the list + watch; tests shorten it.
  ClusterCacheOptions cache;
};

/// Runs a recording against `api` until it ends; returns the exit code: 0 after a clean end
/// (final lists written, record.json "complete"), 1 when the API server cannot be reached or
/// refuses (before anything is written; or later, with record.json "failed" and only partial
/// lists), 2 when the folder holds a journal that is not one. Progress and errors go to `err`.
int RunRecord(KubeApi* api, const RecordRunOptions& options, std::ostream& err);

}  // namespace tessera::k8s
