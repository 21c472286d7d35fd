#include "k8s/record/record_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "k8s/api/json_util.h"
#include "model/gpu_catalog.h"
#include "model/resources.h"
#include "model/topology_text.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;

constexpr int64_t kMaxTime = int64_t{1} << 62;

/// A CSV field: quoted when it holds a comma, a quote or a line break.
std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string TimeField(int64_t t) { return t < 0 ? "" : std::to_string(t); }

/// Reads the members of a journal line; errors name "file:line: member".
class LineReader {
 public:
  LineReader(const Json& j, std::string where) : j_(j), where_(std::move(where)) {}
  Status Str(const char* key, std::string* out) const {
    return ReadString(FindField(j_, key), where_ + ": " + key, out);
  }
  /// A string that older journals lack: absent or null leaves `out` as it is.
  Status OptionalStr(const char* key, std::string* out) const {
    const Json* v = FindField(j_, key);
    if (v == nullptr || v->is_null()) return {};
    return ReadString(v, where_ + ": " + key, out);
  }
  Status Int(const char* key, int64_t min, int64_t* out, int64_t max = kMaxTime) const {
    return ReadInt64(FindField(j_, key), where_ + ": " + key, min, max, out);
  }
  /// An integer of a narrower field: `max` must fit in T.
  template <typename T>
  Status Int(const char* key, int64_t min, T* out, int64_t max) const {
    int64_t v = 0;
    TESSERA_RETURN_IF_ERROR(Int(key, min, &v, max));
    *out = static_cast<T>(v);
    return {};
  }
  /// An integer that older journals lack: absent or null leaves `out` as it is.
  template <typename T>
  Status OptionalInt(const char* key, T* out, int64_t max) const {
    const Json* v = FindField(j_, key);
    if (v == nullptr || v->is_null()) return {};
    return Int(key, 0, out, max);
  }
  /// An error of member `key`: "file:line: key: what".
  Error Fail(const char* key, const std::string& what) const {
    return Error{where_ + ": " + key + ": " + what};
  }
  Status Bool(const char* key, bool* out) const {
    const Json* v = FindField(j_, key);
    if (v == nullptr || v->is_null()) return {};
    if (!v->is_boolean()) return Error{where_ + ": " + key + ": expected true or false"};
    *out = v->get<bool>();
    return {};
  }

 private:
  const Json& j_;
  std::string where_;
};

// A record is read within the limits of the openb lists folded from it (trace/csv_reader.h),
// so that every list `tessera record` writes is read back by `frag`, `replay` and serve's
// --workload: a record outside them is damage, named where it is.
Status ReadPodLine(const LineReader& r, RecordedPod* p) {
  TESSERA_RETURN_IF_ERROR(r.Str("uid", &p->uid));
  TESSERA_RETURN_IF_ERROR(r.Str("name", &p->name));
  if (p->name.empty()) return r.Fail("name", "empty");
  TESSERA_RETURN_IF_ERROR(r.Int("cpu_milli", 0, &p->cpu_milli, kMaxCpuMilli));
  TESSERA_RETURN_IF_ERROR(r.Int("memory_mib", 0, &p->memory_mib, kMaxMemoryMib));
  TESSERA_RETURN_IF_ERROR(r.Int("num_gpu", 0, &p->num_gpu, kMaxGpusPerNode));
  TESSERA_RETURN_IF_ERROR(r.Int("gpu_milli", 0, &p->gpu_milli, kMilliPerGpu));
  if (p->num_gpu > 0 && p->gpu_milli == 0) {
    return r.Fail("gpu_milli",
                  "is 0, but num_gpu is " + std::to_string(p->num_gpu) + " (need 1..1000)");
  }
  if (p->num_gpu > 1 && p->gpu_milli != kMilliPerGpu) {
    return r.Fail("gpu_milli", "must be 1000 for a multi-GPU pod (num_gpu " +
                                   std::to_string(p->num_gpu) + "), got " +
                                   std::to_string(p->gpu_milli));
  }
  TESSERA_RETURN_IF_ERROR(r.OptionalInt("gpu_memory_mib", &p->gpu_memory_mib, kMaxGpuMemoryMib));
  TESSERA_RETURN_IF_ERROR(r.OptionalInt("gpu_memory_percent", &p->gpu_memory_percent, 100));
  if (p->num_gpu == 0 && (p->gpu_memory_mib > 0 || p->gpu_memory_percent > 0)) {
    return r.Fail(p->gpu_memory_mib > 0 ? "gpu_memory_mib" : "gpu_memory_percent",
                  "set, but num_gpu is 0");
  }
  TESSERA_RETURN_IF_ERROR(r.Str("gpu_spec", &p->gpu_spec));
  TESSERA_RETURN_IF_ERROR(r.Str("qos", &p->qos));
  TESSERA_RETURN_IF_ERROR(r.Str("phase", &p->phase));
  TESSERA_RETURN_IF_ERROR(r.Str("node", &p->node));
  TESSERA_RETURN_IF_ERROR(r.Int("creation_time", -1, &p->creation_time));
  TESSERA_RETURN_IF_ERROR(r.Int("scheduled_time", -1, &p->scheduled_time));
  TESSERA_RETURN_IF_ERROR(r.Int("deletion_time", -1, &p->deletion_time));
  TESSERA_RETURN_IF_ERROR(r.Bool("gone", &p->gone));
  TESSERA_RETURN_IF_ERROR(r.Bool("ended_unseen", &p->ended_unseen));
  TESSERA_RETURN_IF_ERROR(r.Bool("before_start", &p->before_start));
  return {};
}

Status ReadNodeLine(const LineReader& r, RecordedNode* n) {
  TESSERA_RETURN_IF_ERROR(r.Str("sn", &n->sn));
  TESSERA_RETURN_IF_ERROR(r.Int("cpu_milli", 0, &n->cpu_milli, kMaxCpuMilli));
  TESSERA_RETURN_IF_ERROR(r.Int("memory_mib", 0, &n->memory_mib, kMaxMemoryMib));
  TESSERA_RETURN_IF_ERROR(r.Int("gpu", 0, &n->gpu, kMaxGpusPerNode));
  TESSERA_RETURN_IF_ERROR(r.Str("model", &n->model));
  TESSERA_RETURN_IF_ERROR(r.Int("gpu_memory_mib", 0, &n->gpu_memory_mib));
  TESSERA_RETURN_IF_ERROR(r.OptionalStr("gpu_topology", &n->gpu_topology));
  if (!n->gpu_topology.empty()) {
    if (n->gpu == 0) return r.Fail("gpu_topology", "set, but the node has no GPUs");
    Result<TopologyGroups> groups = ParseCompactTopology(n->gpu_topology);
    if (!groups.ok()) return r.Fail("gpu_topology", groups.error().message);
    Result<GpuTopology> built = BuildTopology(n->gpu, *groups);
    if (!built.ok()) return r.Fail("gpu_topology", built.error().message);
  }
  TESSERA_RETURN_IF_ERROR(r.Int("first_seen", -1, &n->first_seen));
  TESSERA_RETURN_IF_ERROR(r.Int("deleted", -1, &n->deleted));
  return {};
}

}  // namespace

std::string PodLine(const RecordedPod& p) {
  nlohmann::ordered_json j;
  j["kind"] = "pod";
  j["uid"] = p.uid;
  j["name"] = p.name;
  j["cpu_milli"] = p.cpu_milli;
  j["memory_mib"] = p.memory_mib;
  j["num_gpu"] = p.num_gpu;
  j["gpu_milli"] = p.gpu_milli;
  j["gpu_memory_mib"] = p.gpu_memory_mib;
  j["gpu_memory_percent"] = p.gpu_memory_percent;
  j["gpu_spec"] = p.gpu_spec;
  j["qos"] = p.qos;
  j["phase"] = p.phase;
  j["node"] = p.node;
  j["creation_time"] = p.creation_time;
  j["scheduled_time"] = p.scheduled_time;
  j["deletion_time"] = p.deletion_time;
  j["gone"] = p.gone;
  j["ended_unseen"] = p.ended_unseen;
  j["before_start"] = p.before_start;
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string NodeLine(const RecordedNode& n) {
  nlohmann::ordered_json j;
  j["kind"] = "node";
  j["sn"] = n.sn;
  j["cpu_milli"] = n.cpu_milli;
  j["memory_mib"] = n.memory_mib;
  j["gpu"] = n.gpu;
  j["model"] = n.model;
  j["gpu_memory_mib"] = n.gpu_memory_mib;
  if (!n.gpu_topology.empty()) j["gpu_topology"] = n.gpu_topology;
  j["first_seen"] = n.first_seen;
  j["deleted"] = n.deleted;
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<JournalState> ParseJournal(std::string_view text, std::string_view file) {
  JournalState state;
  size_t pos = 0;
  int line_number = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    ++line_number;
    if (nl == std::string_view::npos) {  // a line cut by a kill: dropped
      state.torn_tail = true;
      break;
    }
    const std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    state.valid_bytes = pos;
    if (line.empty()) continue;
    const std::string where = std::string(file) + ":" + std::to_string(line_number);
    Json j = Json::parse(line, nullptr, false);
    if (!j.is_object()) {
      return Error{where +
                   ": not a journal line (expected a JSON object): " + QuoteForError(line, 120)};
    }
    const LineReader r(j, where);
    std::string kind;
    TESSERA_RETURN_IF_ERROR(r.Str("kind", &kind));
    if (kind == "start") {
      std::string format;
      TESSERA_RETURN_IF_ERROR(r.Str("format", &format));
      if (format != kRecordFormat) {
        return Error{where + ": format " + QuoteForError(format) + ", expected " +
                     std::string(kRecordFormat)};
      }
      ++state.runs;
      state.ended = false;
      int64_t at = -1;
      TESSERA_RETURN_IF_ERROR(r.Int("at", -1, &at));
      if (state.first_start < 0) state.first_start = at;
      state.last_time = std::max(state.last_time, at);
    } else if (kind == "end") {
      state.ended = true;
      int64_t at = -1;
      TESSERA_RETURN_IF_ERROR(r.Int("at", -1, &at));
      state.last_time = std::max(state.last_time, at);
    } else if (kind == "pod") {
      RecordedPod p;
      TESSERA_RETURN_IF_ERROR(ReadPodLine(r, &p));
      if (p.uid.empty()) return Error{where + ": uid: empty"};
      state.last_time =
          std::max({state.last_time, p.creation_time, p.scheduled_time, p.deletion_time});
      state.pods[p.uid] = std::move(p);
    } else if (kind == "node") {
      RecordedNode n;
      TESSERA_RETURN_IF_ERROR(ReadNodeLine(r, &n));
      if (n.sn.empty()) return Error{where + ": sn: empty"};
      state.last_time = std::max({state.last_time, n.first_seen, n.deleted});
      state.nodes[n.sn] = std::move(n);
    } else {
      return Error{where + ": kind: unknown " + QuoteForError(kind) +
                   " (known: start, node, pod, end)"};
    }
    if (state.runs == 0) return Error{where + ": the journal does not begin with a start line"};
  }
  return state;
}

std::string NodeListCsv(const JournalState& state) {
  // The gpu_topology column only when some node has a topology: lists without one stay in
  // the five columns of the openb format.
  // So does gpu_memory_mib, when the model's name does not give some GPU node's memory.
  bool topology = false;
  bool memory = false;
  for (const auto& [sn, n] : state.nodes) {
    topology = topology || !n.gpu_topology.empty();
    memory = memory || (n.gpu > 0 && n.gpu_memory_mib > 0 &&
                        n.gpu_memory_mib != KnownGpuMemoryMib(CanonicalGpuModel(n.model)));
  }
  std::string out = "sn,cpu_milli,memory_mib,gpu,model";
  if (memory) out += ",gpu_memory_mib";
  if (topology) out += ",gpu_topology";
  out += "\n";
  for (const auto& [sn, n] : state.nodes) {
    out += CsvField(n.sn) + "," + std::to_string(n.cpu_milli) + "," + std::to_string(n.memory_mib) +
           "," + std::to_string(n.gpu) + "," +
           CsvField(n.gpu == 0        ? ""
                    : n.model.empty() ? std::string(kUnknownGpuModel)
                                      : CanonicalGpuModel(n.model));
    if (memory) {  // empty: the model's memory, as without the column
      out += "," + (n.gpu == 0 || n.gpu_memory_mib == 0 ? std::string()
                                                        : std::to_string(n.gpu_memory_mib));
    }
    if (topology) out += "," + CsvField(n.gpu_topology);
    out += "\n";
  }
  return out;
}

std::string PodListCsv(const JournalState& state, int64_t end_time) {
  std::vector<const RecordedPod*> pods;
  pods.reserve(state.pods.size());
  for (const auto& [uid, p] : state.pods) pods.push_back(&p);
  std::sort(pods.begin(), pods.end(), [](const RecordedPod* a, const RecordedPod* b) {
    return std::tie(a->creation_time, a->name, a->uid) <
           std::tie(b->creation_time, b->name, b->uid);
  });
  // GPU memory columns only when some pod asks for GPU memory: lists without stay in the
  // columns of the openb format.
  bool memory = false;
  for (const RecordedPod* p : pods) {
    memory = memory || p->gpu_memory_mib > 0 || p->gpu_memory_percent > 0;
  }
  std::string out =
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
      "deletion_time,scheduled_time";
  out += memory ? ",gpu_memory_mib,gpu_memory_percent\n" : "\n";
  // The window's start: what happened before it is seen as at it.
  const auto clip = [&](int64_t t) { return t < 0 ? t : std::max(t, state.first_start); };
  std::set<std::string> names;
  for (const RecordedPod* p : pods) {
    std::string name = p->name;
    if (!names.insert(name).second) {
      name += "~" + p->uid;
      names.insert(name);
    }
    int64_t deletion = p->deletion_time;
    std::string phase = p->phase;
    if (deletion < 0 && end_time >= 0 && p->scheduled_time >= 0 && !p->before_start && !p->gone) {
      deletion = std::max(end_time, p->scheduled_time);
      phase = "Running";
    }
    out += CsvField(name) + "," + std::to_string(p->cpu_milli) + "," +
           std::to_string(p->memory_mib) + "," + std::to_string(p->num_gpu) + "," +
           std::to_string(p->gpu_milli) + "," + CsvField(CanonicalGpuModels(p->gpu_spec)) + "," +
           CsvField(p->qos) + "," + CsvField(phase) + "," + TimeField(clip(p->creation_time)) +
           "," + TimeField(clip(deletion)) + "," + TimeField(clip(p->scheduled_time));
    if (memory) {
      out += "," + std::to_string(p->gpu_memory_mib) + "," + std::to_string(p->gpu_memory_percent);
    }
    out += "\n";
  }
  return out;
}

Result<std::unique_ptr<JournalWriter>> JournalWriter::Open(const std::string& path,
                                                           size_t valid_bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Error{path + ": cannot open for appending: " + std::strerror(errno)};
  std::unique_ptr<JournalWriter> w(new JournalWriter(path, fd));
  if (::ftruncate(fd, static_cast<off_t>(valid_bytes)) != 0) {
    return Error{path + ": cannot cut the incomplete last line: " + std::strerror(errno)};
  }
  return w;
}

JournalWriter::~JournalWriter() {
  if (fd_ >= 0) ::close(fd_);
}

Status JournalWriter::Append(std::string_view line) {
  std::string buffer;
  buffer.reserve(line.size() + 1);
  buffer.append(line).push_back('\n');
  // One write(2) per line: O_APPEND writes of a regular file are not interleaved, and a kill
  // between two lines leaves whole lines. A short write (disk full) is completed or reported.
  size_t done = 0;
  while (done < buffer.size()) {
    const ssize_t n = ::write(fd_, buffer.data() + done, buffer.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error{path_ + ": write failed: " + std::strerror(errno)};
    done += static_cast<size_t>(n);
  }
  return {};
}

Status JournalWriter::Sync() {
  if (::fdatasync(fd_) != 0) return Error{path_ + ": fdatasync failed: " + std::strerror(errno)};
  return {};
}

}  // namespace tessera::k8s
