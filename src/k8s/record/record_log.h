#pragma once

// The files `tessera record` writes (docs/RECORD.md): the journal, an append-only log of JSON
// lines that is the recording's only state, and the openb node and pod lists folded from it.
//
// Journal (record.journal), one JSON object per line, each line written with one write(2) on
// a file opened O_APPEND:
//   {"kind":"start","format":"tessera-record/1","at":T,"server":S,"resumed":B}  one per run
//   {"kind":"node","sn":..,"cpu_milli":..,"memory_mib":..,"gpu":..,"model":..,
//    "gpu_memory_mib":..,"first_seen":T,"deleted":T|-1}                        on each change
//   {"kind":"pod","uid":..,"name":"ns/name","cpu_milli":..,"memory_mib":..,"num_gpu":..,
//    "gpu_milli":..,"gpu_memory_mib":..,"gpu_memory_percent":..,"gpu_spec":..,"qos":..,
//    "phase":..,"node":..,"creation_time":T,
//    "scheduled_time":T|-1,"deletion_time":T|-1,"gone":B,"ended_unseen":B,
//    "before_start":B}                                                         on each change
//   {"kind":"end","at":T,"pods":N,"nodes":M}                       a run that ended cleanly
// Times are integer Unix seconds, as the objects and the clock give them (the lists clip them to
// the recording's window, below). gpu_memory_mib and gpu_memory_percent are absent from the
// lines of older journals (read as 0). The last line of a record wins (pods by uid, nodes by sn).
// A kill can leave only the last line incomplete (no newline): ReadJournal drops it and says
// so, and the next run truncates it before appending.

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace tessera::k8s {

inline constexpr std::string_view kRecordFormat = "tessera-record/1";

/// One pod of a recording, as the pod list's row and the journal's line say it.
struct RecordedPod {
  std::string uid;
  std::string name;  ///< "namespace/name"
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int num_gpu = 0;
  int32_t gpu_milli = 0;
  int64_t gpu_memory_mib = 0;      ///< per GPU, MiB (0 = not requested)
  int32_t gpu_memory_percent = 0;  ///< per GPU, % of its memory when gpu_memory_mib is 0
  std::string gpu_spec;            ///< allowed models "A|B", engine names ("" = any)
  std::string qos;              ///< the class the replay reads (LS, BE, Burstable, Guaranteed, ...)
  std::string phase;            ///< status.phase last seen
  std::string node;             ///< spec.nodeName once bound
  int64_t creation_time = -1;   ///< metadata.creationTimestamp (Unix seconds), as the object has it
  int64_t scheduled_time = -1;  ///< the PodScheduled condition, else when first seen bound
  int64_t deletion_time = -1;   ///< when it ended: phase Succeeded/Failed, or deleted
  bool gone = false;            ///< deleted from the API server
  /// The end was not seen as it happened (the pod was deleted while no watch ran): the time is
  /// that of the list that found it missing, an upper bound.
  bool ended_unseen = false;
  /// Already ended (Succeeded/Failed) when first seen: its end time is unknown (-1).
  bool before_start = false;
  bool operator==(const RecordedPod&) const = default;
};

/// One node of a recording.
struct RecordedNode {
  std::string sn;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int gpu = 0;
  std::string model;
  int64_t gpu_memory_mib = 0;
  /// The node's GPU topology in the node list's compact text (FormatCompactTopology), or "".
  std::string gpu_topology;
  int64_t first_seen = -1;
  int64_t deleted = -1;
  bool operator==(const RecordedNode&) const = default;
};

/// What a journal holds, folded.
struct JournalState {
  std::map<std::string, RecordedPod> pods;    ///< by uid
  std::map<std::string, RecordedNode> nodes;  ///< by sn
  int runs = 0;                               ///< "start" lines
  int64_t first_start = -1;                   ///< "at" of the first start line: the window's start
  bool ended = false;                         ///< the last run wrote its "end" line
  int64_t last_time = -1;                     ///< the latest time any line names
  size_t valid_bytes = 0;                     ///< the length of the complete lines
  bool torn_tail = false;                     ///< an incomplete last line was dropped
};

std::string PodLine(const RecordedPod& p);
std::string NodeLine(const RecordedNode& n);

/// Folds a journal's text. `file` names it in errors ("DIR/record.journal:12: ..."): a
/// complete line that is not a journal record is an error (the file is not ours, or damaged),
/// and so is a record outside what the openb lists folded from it can hold (the limits of
/// trace/csv_reader.h: "record.journal:7: gpu_milli: is 0, but num_gpu is 2 (need 1..1000)").
Result<JournalState> ParseJournal(std::string_view text, std::string_view file);

/// The model a node list gives a GPU node whose model is not known (no model label, no HAMi
/// register): the openb readers need one, and no pod's model constraint names it.
inline constexpr std::string_view kUnknownGpuModel = "unknown";

/// The openb node list (sn,cpu_milli,memory_mib,gpu,model) of every node ever seen, by name;
/// a GPU node of unknown model is listed with kUnknownGpuModel. Models are the engine's names
/// (CanonicalGpuModel). Two more columns only when some node needs them: gpu_memory_mib (per
/// GPU MiB, when some GPU node's known memory is not what its model's name gives,
/// KnownGpuMemoryMib; empty for the others) and gpu_topology (the compact text, when some node
/// has a topology).
std::string NodeListCsv(const JournalState& state);

/// The openb pod list (name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,
/// creation_time,deletion_time,scheduled_time), one row per pod (uid), ordered by creation
/// time, then name, then uid; with gpu_memory_mib,gpu_memory_percent after them when some pod
/// asks for GPU memory. A name taken by an earlier pod (a pod re-created under its name)
/// gets "~" and its uid appended. Times are clipped to the recording's window: a pod created
/// (or scheduled) before state.first_start is written as created (scheduled) then, so that a
/// replay of the lists starts at the recording's start and not at the oldest pod's creation.
/// `end_time` >= 0 closes the pods still running: their deletion_time is `end_time` and their
/// pod_phase "Running" (as the openb lists close theirs); < 0 leaves it empty. Empty times are
/// written as empty fields.
std::string PodListCsv(const JournalState& state, int64_t end_time);

/// Appends lines to a journal: one write(2) per line on an O_APPEND descriptor, so that a kill
/// leaves at most the last line incomplete. Not thread-safe.
class JournalWriter {
 public:
  /// Opens (creating) `path` for appending after cutting it to `valid_bytes` (dropping a torn
  /// last line).
  static Result<std::unique_ptr<JournalWriter>> Open(const std::string& path, size_t valid_bytes);
  ~JournalWriter();
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;

  /// Writes `line` and a newline.
  Status Append(std::string_view line);
  /// fdatasync(2).
  Status Sync();

 private:
  JournalWriter(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_ = -1;
};

}  // namespace tessera::k8s
