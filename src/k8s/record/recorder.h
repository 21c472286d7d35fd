#pragma once

// `tessera record`'s state: a ClusterEventSink that turns the pod and node events of a
// ClusterCache (list + watch, relists after 410 Gone) into the recording's journal
// (k8s/record/record_log.h), and writes the openb node and pod lists from it. docs/RECORD.md
// describes what is recorded and the resume rules.

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "k8s/api/cluster_events.h"
#include "k8s/record/record_log.h"
#include "sched/classes.h"
#include "util/clock.h"

namespace tessera::k8s {

/// The files of a recording in its folder.
struct RecordFiles {
  explicit RecordFiles(const std::string& dir);
  std::string journal;        ///< DIR/record.journal, the state
  std::string status;         ///< DIR/record.json: complete or not, and why
  std::string node_list;      ///< DIR/openb_node_list.csv (only after a clean end)
  std::string pod_list;       ///< DIR/openb_pod_list.csv (only after a clean end)
  std::string partial_nodes;  ///< DIR/openb_node_list.partial.csv (while recording)
  std::string partial_pods;   ///< DIR/openb_pod_list.partial.csv (while recording)
};

/// Options of a Recorder.
struct RecorderOptions {
  std::string dir;               ///< the recording's folder (created when missing)
  const Clock* clock = nullptr;  ///< wall clock for observed times; not owned; required
  std::string server;            ///< the API server, for the journal's start line
  /// The classes of service a pod is sorted into, as `tessera serve` sorts it (its config's
  /// `classes:`): the recorded qos is the class's name.
  QosClasses classes = DefaultQosClasses();
};

/// How many objects a recording holds.
struct RecordCounts {
  int pods = 0;          ///< every pod recorded
  int running = 0;       ///< bound and not ended
  int pending = 0;       ///< not bound, not ended
  int ended = 0;         ///< with a deletion time
  int ended_unseen = 0;  ///< of those, found missing by a list (time = that list's)
  int nodes = 0;
  int undecodable = 0;  ///< pods (UIDs) whose objects did not decode (not recorded)
};

/// Records pods and nodes:
///  - a pod is recorded when first seen, with creation_time = metadata.creationTimestamp (the
///    clock when absent) and its request (GPU memory and allowed models included, the models
///    by their engine names) as `tessera serve` reads it (PodToSpec; a pod PodToSpec rejects is
///    recorded with FailClosedSpec's request), and the class `tessera serve` sorts it into
///    (ClassOfPod over options.classes: the tessera.io/class label, else spec.priority); the
///    lists clip times to the recording's window, which starts at the first run's start
///    (PodListCsv);
///  - scheduled_time: the PodScheduled condition's lastTransitionTime, else the clock when the
///    pod is first seen bound;
///  - deletion_time: the clock when the pod is first seen Succeeded or Failed, or deleted; a pod
///    a list no longer contains (deleted while no watch ran) ends at that list's time and is
///    marked ended_unseen (so is a recorded pod a list finds Succeeded/Failed); a pod already
///    Succeeded/Failed when first seen keeps no end time;
///  - a node is recorded with NodeToSpec's capacity (model by its engine name, GPU memory)
///    when first seen and on every change.
/// Each change is one journal line written at once. A Recorder opened on a folder with a
/// journal resumes it: what the journal holds is the starting state, so a pod is never written
/// twice, and pods the journal has open that the first list lacks ended while it was down.
///
/// Thread-safe (the cache calls it from its node and pod threads).
class Recorder final : public ClusterEventSink {
 public:
  /// Opens (or resumes) the recording in `options.dir`: reads the journal, cuts an incomplete
  /// last line, removes the final lists of an earlier clean end (they would no longer describe
  /// the recording), appends a start line and writes record.json {"state":"recording"}.
  static Result<std::unique_ptr<Recorder>> Open(RecorderOptions options);
  ~Recorder() override = default;
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // ClusterEventSink.
  Status UpsertNode(const Node& node) override;
  void DeleteNode(const std::string& name) override;
  Status UpsertPod(const Pod& pod) override;
  void UndecodablePod(const PodIdentity& pod, const std::string& error) override;
  void DeletePod(const std::string& uid) override;
  void BeginPodList() override;
  void EndPodList(const std::set<std::string>& uids, const std::string& resource_version) override;
  void SetDisruptionBudgets(std::vector<PodDisruptionBudget>) override {}
  void SyncChanged(const SyncStatus& status) override;

  /// Syncs the journal and writes the partial lists (pods still running without an end time).
  Status Flush();
  /// A clean end at `end_time`: syncs, appends the end line, writes the final lists (pods still
  /// running close at `end_time`) and record.json {"state":"complete"}; removes the partial
  /// lists.
  Status Finish(int64_t end_time);
  /// An end without a complete recording: record.json {"state":"failed","reason":...}; the
  /// journal is kept (a later run resumes it) and no final list is written.
  Status Fail(const std::string& reason);

  /// The recorded pod with this uid, if any (tests).
  std::optional<RecordedPod> pod(const std::string& uid) const;
  RecordCounts counts() const;
  SyncStatus sync_status() const;
  /// The first write error, which makes every later change fail ("" = none).
  std::string write_error() const;
  /// Whether this run resumed an existing journal, and what it found there.
  bool resumed() const { return resumed_; }
  bool dropped_torn_line() const { return torn_tail_; }
  const RecordFiles& files() const { return files_; }

 private:
  Recorder(RecorderOptions options, RecordFiles files)
      : options_(std::move(options)), files_(std::move(files)) {}
  int64_t Now() const;
  /// Appends the record's journal line (with mutex_ held).
  void Write(const RecordedPod& p);
  void Write(const RecordedNode& n);
  void WriteLine(const std::string& line);
  Status WriteStatus(const std::string& state, const std::string& reason, int64_t end_time);

  RecorderOptions options_;
  RecordFiles files_;
  bool resumed_ = false;
  bool torn_tail_ = false;
  int64_t started_ = 0;
  mutable std::mutex mutex_;
  JournalState state_;                     // GUARDED_BY(mutex_)
  std::unique_ptr<JournalWriter> writer_;  // GUARDED_BY(mutex_)
  std::string write_error_;                // GUARDED_BY(mutex_)
  SyncStatus sync_;                        // GUARDED_BY(mutex_)
  std::set<std::string> undecodable_;      // pod UIDs; GUARDED_BY(mutex_)
  bool in_list_ = false;  // between BeginPodList and EndPodList; GUARDED_BY(mutex_)
};

}  // namespace tessera::k8s
