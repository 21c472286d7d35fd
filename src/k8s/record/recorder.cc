#include "k8s/record/recorder.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <utility>

#include "k8s/extender/pending_queue.h"
#include "k8s/translate/translate.h"
#include "model/topology_text.h"
#include "util/file.h"

namespace tessera::k8s {
namespace {

/// Integer Unix seconds of an RFC 3339 time, or -1.
int64_t TimestampSeconds(const std::string& text) {
  if (text.empty()) return -1;
  const std::optional<double> t = Rfc3339Seconds(text);
  return t ? static_cast<int64_t>(std::floor(*t)) : -1;
}

bool Terminal(const std::string& phase) { return phase == "Succeeded" || phase == "Failed"; }

}  // namespace

RecordFiles::RecordFiles(const std::string& dir)
    : journal(dir + "/record.journal"),
      status(dir + "/record.json"),
      node_list(dir + "/openb_node_list.csv"),
      pod_list(dir + "/openb_pod_list.csv"),
      partial_nodes(dir + "/openb_node_list.partial.csv"),
      partial_pods(dir + "/openb_pod_list.partial.csv") {}

Result<std::unique_ptr<Recorder>> Recorder::Open(RecorderOptions options) {
  if (options.clock == nullptr) return Error{"record: no clock"};
  if (options.dir.empty()) return Error{"record: no output folder"};
  TESSERA_RETURN_IF_ERROR(MakeDirectories(options.dir));
  RecordFiles files(options.dir);
  std::unique_ptr<Recorder> r(new Recorder(std::move(options), files));
  std::error_code ec;
  size_t valid = 0;
  if (std::filesystem::exists(files.journal, ec)) {
    Result<std::string> text = ReadFile(files.journal);
    if (!text.ok()) return text.error();
    Result<JournalState> state = ParseJournal(*text, files.journal);
    if (!state.ok()) return state.error();
    r->state_ = std::move(*state);
    r->resumed_ = r->state_.runs > 0;
    r->torn_tail_ = r->state_.torn_tail;
    valid = r->state_.valid_bytes;
  }
  for (const std::string& f : {files.node_list, files.pod_list}) {
    std::filesystem::remove(f, ec);
    if (ec) return Error{f + ": cannot remove the list of the earlier run: " + ec.message()};
  }
  Result<std::unique_ptr<JournalWriter>> writer = JournalWriter::Open(files.journal, valid);
  if (!writer.ok()) return writer.error();
  r->writer_ = std::move(*writer);
  r->started_ = r->Now();
  if (r->state_.first_start < 0) r->state_.first_start = r->started_;
  nlohmann::ordered_json start;
  start["kind"] = "start";
  start["format"] = kRecordFormat;
  start["at"] = r->started_;
  start["server"] = r->options_.server;
  start["resumed"] = r->resumed_;
  TESSERA_RETURN_IF_ERROR(r->writer_->Append(start.dump()));
  ++r->state_.runs;
  r->state_.ended = false;
  TESSERA_RETURN_IF_ERROR(r->writer_->Sync());
  TESSERA_RETURN_IF_ERROR(r->WriteStatus("recording", "", -1));
  return r;
}

int64_t Recorder::Now() const {
  return static_cast<int64_t>(std::floor(options_.clock->NowSeconds()));
}

void Recorder::WriteLine(const std::string& line) {
  if (!write_error_.empty()) return;
  Status s = writer_->Append(line);
  if (!s.ok()) write_error_ = s.error().message;
}

void Recorder::Write(const RecordedPod& p) { WriteLine(PodLine(p)); }
void Recorder::Write(const RecordedNode& n) { WriteLine(NodeLine(n)); }

Status Recorder::UpsertNode(const Node& node) {
  Result<NodeSpec> spec = NodeToSpec(node);
  if (!spec.ok()) return spec.error();
  std::lock_guard<std::mutex> lock(mutex_);
  RecordedNode n;
  n.sn = node.name;
  n.cpu_milli = spec->cpu_milli;
  n.memory_mib = spec->memory_mib;
  n.gpu = spec->gpu_count;
  n.model = spec->gpu_model;
  n.gpu_memory_mib = spec->gpu_memory_mib;
  if (spec->topology != nullptr) n.gpu_topology = FormatCompactTopology(*spec->topology);
  auto it = state_.nodes.find(n.sn);
  n.first_seen = it == state_.nodes.end() ? Now() : it->second.first_seen;
  if (it != state_.nodes.end() && it->second == n) return {};
  state_.nodes[n.sn] = n;
  Write(n);
  if (!write_error_.empty()) return Error{write_error_};
  return {};
}

void Recorder::DeleteNode(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = state_.nodes.find(name);
  if (it == state_.nodes.end() || it->second.deleted >= 0) return;
  it->second.deleted = Now();
  Write(it->second);
}

Status Recorder::UpsertPod(const Pod& pod) {
  Result<PodSpec> decoded = PodToSpec(pod);
  const PodSpec spec = decoded.ok() ? *decoded : FailClosedSpec(pod);
  std::lock_guard<std::mutex> lock(mutex_);
  const int64_t now = Now();
  auto it = state_.pods.find(pod.uid);
  const bool known = it != state_.pods.end();
  RecordedPod p;
  if (known) {
    p = it->second;
  } else {
    p.uid = pod.uid;
    p.name = spec.name;
    p.cpu_milli = spec.cpu_milli;
    p.memory_mib = spec.memory_mib;
    p.num_gpu = spec.gpu_count;
    p.gpu_milli = spec.gpu_count > 0 ? spec.gpu_milli : 0;
    p.gpu_memory_mib = spec.gpu_count > 0 ? spec.gpu_memory_mib : 0;
    p.gpu_memory_percent = spec.gpu_count > 0 ? spec.gpu_memory_percent : 0;
    p.gpu_spec = spec.gpu_spec;
    const int cls = ClassOfPod(options_.classes, pod);
    p.qos = cls >= 0 ? options_.classes.classes[static_cast<size_t>(cls)].name : spec.qos;
    p.creation_time = TimestampSeconds(pod.creation_timestamp);
    if (p.creation_time < 0) p.creation_time = now;
    p.before_start = Terminal(pod.phase);
  }
  if (p.gone) return {};  // a late event of a pod already deleted
  p.phase = pod.phase;
  if (p.node.empty() && !pod.node_name.empty()) p.node = pod.node_name;
  if (p.scheduled_time < 0 && !pod.node_name.empty() && !p.before_start) {
    p.scheduled_time = TimestampSeconds(pod.scheduled_timestamp);
    if (p.scheduled_time < 0) p.scheduled_time = now;
    p.scheduled_time = std::max(p.scheduled_time, p.creation_time);
  }
  if (p.deletion_time < 0 && Terminal(pod.phase) && !p.before_start) {
    p.deletion_time = std::max(now, p.scheduled_time);
    p.ended_unseen = known && in_list_;  // it ended while no watch ran: found by this list
  }
  if (known && it->second == p) return {};
  state_.pods[p.uid] = p;
  Write(p);
  if (!write_error_.empty()) return Error{write_error_};
  if (!decoded.ok())
    return Error{"recorded with a fail-closed request: " + decoded.error().message};
  return {};
}

void Recorder::UndecodablePod(const PodIdentity& pod, const std::string&) {
  std::lock_guard<std::mutex> lock(mutex_);
  undecodable_.insert(pod.uid);
}

void Recorder::DeletePod(const std::string& uid) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = state_.pods.find(uid);
  if (it == state_.pods.end() || it->second.gone) return;
  RecordedPod& p = it->second;
  p.gone = true;
  if (p.deletion_time < 0 && !p.before_start) {
    p.deletion_time = std::max(Now(), std::max(p.scheduled_time, p.creation_time));
    p.ended_unseen = in_list_;
  }
  Write(p);
}

void Recorder::BeginPodList() {
  std::lock_guard<std::mutex> lock(mutex_);
  in_list_ = true;
}

void Recorder::EndPodList(const std::set<std::string>& uids, const std::string&) {
  std::lock_guard<std::mutex> lock(mutex_);
  in_list_ = false;
  const int64_t now = Now();
  for (auto& [uid, p] : state_.pods) {
    if (p.gone || uids.count(uid) != 0) continue;
    p.gone = true;
    if (p.deletion_time < 0 && !p.before_start) {
      p.deletion_time = std::max(now, std::max(p.scheduled_time, p.creation_time));
      p.ended_unseen = true;
    }
    Write(p);
  }
}

void Recorder::SyncChanged(const SyncStatus& status) {
  std::lock_guard<std::mutex> lock(mutex_);
  sync_ = status;
}

Status Recorder::WriteStatus(const std::string& state, const std::string& reason,
                             int64_t end_time) {
  // With mutex_ held, or before any other thread runs.
  nlohmann::ordered_json j;
  j["format"] = kRecordFormat;
  j["state"] = state;
  j["complete"] = state == "complete";
  if (!reason.empty()) j["reason"] = reason;
  j["server"] = options_.server;
  j["started"] = started_;
  j["updated"] = Now();
  if (end_time >= 0) j["end"] = end_time;
  j["runs"] = state_.runs;
  int ended_unseen = 0;
  for (const auto& [uid, p] : state_.pods) ended_unseen += p.ended_unseen;
  j["pods"] = state_.pods.size();
  j["nodes"] = state_.nodes.size();
  j["pods_ended_unseen"] = ended_unseen;
  // Pod objects that did not decode are not in the lists: said, so a reader knows.
  j["pods_undecodable"] = undecodable_.size();
  j["journal"] = files_.journal;
  if (state == "complete") {
    j["node_list"] = files_.node_list;
    j["pod_list"] = files_.pod_list;
  } else {
    j["partial_node_list"] = files_.partial_nodes;
    j["partial_pod_list"] = files_.partial_pods;
  }
  return WriteFile(files_.status, j.dump(2) + "\n");
}

Status Recorder::Flush() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!write_error_.empty()) return Error{write_error_};
  TESSERA_RETURN_IF_ERROR(writer_->Sync());
  const int64_t now = Now();
  TESSERA_RETURN_IF_ERROR(WriteFile(files_.partial_nodes, NodeListCsv(state_)));
  TESSERA_RETURN_IF_ERROR(WriteFile(files_.partial_pods, PodListCsv(state_, now)));
  return WriteStatus("recording", "", -1);
}

Status Recorder::Finish(int64_t end_time) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!write_error_.empty()) return Error{write_error_};
  nlohmann::ordered_json end;
  end["kind"] = "end";
  end["at"] = end_time;
  end["pods"] = state_.pods.size();
  end["nodes"] = state_.nodes.size();
  TESSERA_RETURN_IF_ERROR(writer_->Append(end.dump()));
  TESSERA_RETURN_IF_ERROR(writer_->Sync());
  state_.ended = true;
  TESSERA_RETURN_IF_ERROR(WriteFile(files_.node_list, NodeListCsv(state_)));
  TESSERA_RETURN_IF_ERROR(WriteFile(files_.pod_list, PodListCsv(state_, end_time)));
  std::error_code ec;
  std::filesystem::remove(files_.partial_nodes, ec);
  std::filesystem::remove(files_.partial_pods, ec);
  return WriteStatus("complete", "", end_time);
}

Status Recorder::Fail(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (writer_) (void)writer_->Sync();
  const int64_t now = Now();
  (void)WriteFile(files_.partial_nodes, NodeListCsv(state_));
  (void)WriteFile(files_.partial_pods, PodListCsv(state_, now));
  return WriteStatus("failed", reason, -1);
}

std::optional<RecordedPod> Recorder::pod(const std::string& uid) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = state_.pods.find(uid);
  if (it == state_.pods.end()) return std::nullopt;
  return it->second;
}

RecordCounts Recorder::counts() const {
  std::lock_guard<std::mutex> lock(mutex_);
  RecordCounts c;
  for (const auto& [uid, p] : state_.pods) {
    ++c.pods;
    if (p.deletion_time >= 0) {
      ++c.ended;
      c.ended_unseen += p.ended_unseen;
    } else if (!p.gone && !p.before_start) {
      if (p.scheduled_time >= 0) {
        ++c.running;
      } else {
        ++c.pending;
      }
    }
  }
  c.nodes = static_cast<int>(state_.nodes.size());
  c.undecodable = static_cast<int>(undecodable_.size());
  return c;
}

SyncStatus Recorder::sync_status() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return sync_;
}

std::string Recorder::write_error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return write_error_;
}

}  // namespace tessera::k8s
