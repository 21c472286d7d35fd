#include "trace/csv_reader.h"

#include <charconv>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/gpu_catalog.h"
#include "model/resources.h"
#include "model/topology_text.h"
#include "util/text.h"

namespace tessera {
namespace {

// One record of a CSV file: its fields and the physical line (1-based) it starts on.
struct CsvRecord {
  int line = 0;
  std::vector<std::string> fields;
};

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// "file:line: field 'name': what".
Error FieldError(std::string_view file, int line, std::string_view field, std::string_view what) {
  std::string m;
  m.append(file).append(":").append(std::to_string(line)).append(": field '");
  m.append(field).append("': ").append(what);
  return Error{std::move(m)};
}

// Splits CSV text into records, one at a time. Fields may be double-quoted ("" inside quotes is
// a quote; quoted fields may hold commas and line breaks). CRLF and LF both end a record; blank
// lines are skipped; spaces around unquoted fields are trimmed. Not thread-safe.
class CsvSplitter {
 public:
  CsvSplitter(std::string_view text, std::string_view file) : text_(text), file_(file) {
    if (text_.starts_with("\xEF\xBB\xBF")) text_.remove_prefix(3);  // UTF-8 byte order mark
  }

  /// Reads the next non-blank record into `record`; returns false at the end of the text.
  /// `names` names the columns for syntax errors (the header; empty while reading it).
  Result<bool> Next(const std::vector<std::string>& names, CsvRecord* record) {
    for (;;) {
      if (pos_ >= text_.size()) return false;
      record->line = line_;
      record->fields.clear();
      bool any_quoted = false;
      for (;;) {
        std::string field;
        size_t p = pos_;
        while (p < text_.size() && IsBlank(text_[p])) ++p;
        if (p < text_.size() && text_[p] == '"') {
          any_quoted = true;
          pos_ = p + 1;
          const int open_line = line_;
          for (;;) {
            if (pos_ >= text_.size()) {
              return FieldError(file_, open_line, ColumnName(names, record->fields.size()),
                                "unterminated quoted field");
            }
            const char c = text_[pos_++];
            if (c == '"') {
              if (pos_ < text_.size() && text_[pos_] == '"') {
                field.push_back('"');
                ++pos_;
              } else {
                break;
              }
            } else {
              if (c == '\n') ++line_;
              field.push_back(c);
            }
          }
          while (pos_ < text_.size() && IsBlank(text_[pos_])) ++pos_;
          if (pos_ < text_.size() && !AtRecordEnd() && text_[pos_] != ',') {
            return FieldError(file_, line_, ColumnName(names, record->fields.size()),
                              "text after the closing quote");
          }
        } else {
          const size_t start = pos_;
          while (pos_ < text_.size() && text_[pos_] != ',' && !AtRecordEnd()) ++pos_;
          field = std::string(TrimBlanks(text_.substr(start, pos_ - start)));
        }
        record->fields.push_back(std::move(field));
        if (pos_ < text_.size() && text_[pos_] == ',') {
          ++pos_;
          continue;
        }
        // End of the record: a line break or the end of the text.
        if (pos_ < text_.size()) {
          if (text_[pos_] == '\r') ++pos_;
          ++pos_;  // '\n'
          ++line_;
        }
        break;
      }
      const bool blank = record->fields.size() == 1 && record->fields[0].empty() && !any_quoted;
      if (!blank) return true;
    }
  }

  /// A column's name for messages: the header name, or "#k" (1-based) past the header.
  static std::string ColumnName(const std::vector<std::string>& names, size_t index) {
    if (index < names.size()) return names[index];
    return "#" + std::to_string(index + 1);
  }

 private:
  bool AtRecordEnd() const {
    return text_[pos_] == '\n' ||
           (text_[pos_] == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') ||
           (text_[pos_] == '\r' && pos_ + 1 == text_.size());
  }

  std::string_view text_;
  std::string_view file_;
  size_t pos_ = 0;
  int line_ = 1;
};

// A parsed CSV file: the header and its records, with typed, checked field access.
class CsvTable {
 public:
  /// Splits `text`; `first_column` names the column reported when the file is empty.
  static Result<CsvTable> Parse(std::string_view text, std::string_view file,
                                std::string_view first_column) {
    CsvTable table;
    table.file_ = file;
    CsvSplitter splitter(text, file);
    CsvRecord header;
    Result<bool> got = splitter.Next({}, &header);
    if (!got.ok()) return got.error();
    if (!*got) return FieldError(file, 1, first_column, "missing column (the file is empty)");
    table.header_line_ = header.line;
    for (size_t i = 0; i < header.fields.size(); ++i) {
      const std::string& name = header.fields[i];
      if (name.empty()) continue;  // an unnamed column is never looked up
      if (!table.columns_.emplace(name, static_cast<int>(i)).second) {
        return FieldError(file, header.line, name, "duplicate column in the header");
      }
    }
    table.names_ = std::move(header.fields);
    for (;;) {
      CsvRecord record;
      got = splitter.Next(table.names_, &record);
      if (!got.ok()) return got.error();
      if (!*got) break;
      if (record.fields.size() < table.names_.size()) {
        return FieldError(file, record.line, table.names_[record.fields.size()],
                          "missing (row has " + std::to_string(record.fields.size()) +
                              " fields, header has " + std::to_string(table.names_.size()) + ")");
      }
      if (record.fields.size() > table.names_.size()) {
        return FieldError(
            file, record.line, CsvSplitter::ColumnName(table.names_, table.names_.size()),
            "unexpected extra field (row has " + std::to_string(record.fields.size()) +
                " fields, header has " + std::to_string(table.names_.size()) + ")");
      }
      table.records_.push_back(std::move(record));
    }
    if (table.records_.empty()) {
      return FieldError(file, table.header_line_, first_column,
                        "no rows after the header (the list is empty)");
    }
    return table;
  }

  /// The index of a required column, or an error naming it on the header line.
  Result<int> Required(std::string_view name) const {
    const int col = Optional(name);
    if (col < 0) return FieldError(file_, header_line_, name, "missing column in the header");
    return col;
  }
  /// The index of an optional column, or -1.
  int Optional(std::string_view name) const {
    auto it = columns_.find(std::string(name));
    return it == columns_.end() ? -1 : it->second;
  }

  const std::vector<CsvRecord>& records() const { return records_; }
  std::string_view file() const { return file_; }

  Error Fail(const CsvRecord& r, int col, std::string_view what) const {
    return FieldError(file_, r.line, names_[col], what);
  }

  /// The field as text ("" for an absent optional column).
  static std::string_view Str(const CsvRecord& r, int col) {
    return col < 0 ? std::string_view() : std::string_view(r.fields[col]);
  }

  /// The field as an integer in [0, max]. An empty field is an error unless `empty_value` is
  /// given, which it then yields (also for an absent optional column, col < 0).
  Result<int64_t> Int(const CsvRecord& r, int col, int64_t max,
                      std::optional<int64_t> empty_value = std::nullopt) const {
    const std::string_view s = Str(r, col);
    if (s.empty()) {
      if (empty_value) return *empty_value;
      return Fail(r, col, "empty, expected an integer");
    }
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc::result_out_of_range) {
      return Fail(r, col, "out of range: '" + std::string(s) + "'");
    }
    if (ec != std::errc() || end != s.data() + s.size()) {
      return Fail(r, col, "not an integer: '" + std::string(s) + "'");
    }
    if (v < 0) return Fail(r, col, "negative: " + std::to_string(v));
    if (v > max) {
      return Fail(r, col,
                  "too large: " + std::to_string(v) + " (at most " + std::to_string(max) + ")");
    }
    return v;
  }

 private:
  std::string_view file_;
  int header_line_ = 1;
  std::vector<std::string> names_;
  std::unordered_map<std::string, int> columns_;
  std::vector<CsvRecord> records_;
};

// Checks that `name` is non-empty and not seen before; records where it was seen.
std::optional<Error> CheckName(const CsvTable& table, const CsvRecord& r, int col,
                               std::string_view kind, std::unordered_map<std::string, int>* seen) {
  const std::string_view name = CsvTable::Str(r, col);
  if (name.empty()) return table.Fail(r, col, "empty " + std::string(kind) + " name");
  auto [it, inserted] = seen->emplace(std::string(name), r.line);
  if (!inserted) {
    return table.Fail(r, col,
                      "duplicate " + std::string(kind) + " name '" + std::string(name) +
                          "' (first on line " + std::to_string(it->second) + ")");
  }
  return std::nullopt;
}

}  // namespace

Result<std::vector<NodeSpec>> ReadNodeCsv(std::string_view text, std::string_view file) {
  Result<CsvTable> parsed = CsvTable::Parse(text, file, "sn");
  if (!parsed.ok()) return parsed.error();
  const CsvTable& t = *parsed;
  int sn, cpu, mem, gpu, model;
  TESSERA_ASSIGN_OR_RETURN(sn, t.Required("sn"));
  TESSERA_ASSIGN_OR_RETURN(cpu, t.Required("cpu_milli"));
  TESSERA_ASSIGN_OR_RETURN(mem, t.Required("memory_mib"));
  TESSERA_ASSIGN_OR_RETURN(gpu, t.Required("gpu"));
  TESSERA_ASSIGN_OR_RETURN(model, t.Required("model"));
  const int topology = t.Optional("gpu_topology");
  const int gpu_memory = t.Optional("gpu_memory_mib");

  std::vector<NodeSpec> nodes;
  nodes.reserve(t.records().size());
  std::unordered_map<std::string, int> seen;
  std::map<std::pair<std::string, int>, TopologyPtr> topologies;  // nodes alike share one
  for (const CsvRecord& r : t.records()) {
    if (auto e = CheckName(t, r, sn, "node", &seen)) return *e;
    NodeSpec n;
    n.name = std::string(CsvTable::Str(r, sn));
    TESSERA_ASSIGN_OR_RETURN(n.cpu_milli, t.Int(r, cpu, kMaxCpuMilli));
    TESSERA_ASSIGN_OR_RETURN(n.memory_mib, t.Int(r, mem, kMaxMemoryMib));
    TESSERA_ASSIGN_OR_RETURN(n.gpu_count, t.Int(r, gpu, kMaxGpusPerNode));
    if (n.gpu_count > 0) {
      n.gpu_model = CanonicalGpuModel(CsvTable::Str(r, model));
      if (n.gpu_model.empty()) {
        return t.Fail(r, model, "empty, but the node has " + std::to_string(n.gpu_count) + " GPUs");
      }
      TESSERA_ASSIGN_OR_RETURN(n.gpu_memory_mib, t.Int(r, gpu_memory, kMaxGpuMemoryMib, -1));
      if (n.gpu_memory_mib < 0) n.gpu_memory_mib = KnownGpuMemoryMib(n.gpu_model);
    }
    if (const std::string_view text = TrimBlanks(CsvTable::Str(r, topology)); !text.empty()) {
      if (n.gpu_count == 0) return t.Fail(r, topology, "set, but the node has no GPUs");
      TopologyPtr& shared = topologies[{std::string(text), n.gpu_count}];
      if (shared == nullptr) {
        Result<TopologyGroups> groups = ParseCompactTopology(text);
        if (!groups.ok()) return t.Fail(r, topology, groups.error().message);
        Result<GpuTopology> built = BuildTopology(n.gpu_count, *groups);
        if (!built.ok()) return t.Fail(r, topology, built.error().message);
        shared = std::make_shared<const GpuTopology>(*built);
      }
      n.topology = shared;
    }
    nodes.push_back(std::move(n));
  }
  return nodes;
}

Result<std::vector<PodSpec>> ReadPodCsv(std::string_view text, std::string_view file) {
  Result<CsvTable> parsed = CsvTable::Parse(text, file, "name");
  if (!parsed.ok()) return parsed.error();
  const CsvTable& t = *parsed;
  int name, cpu, mem, num_gpu, gpu_milli;
  TESSERA_ASSIGN_OR_RETURN(name, t.Required("name"));
  TESSERA_ASSIGN_OR_RETURN(cpu, t.Required("cpu_milli"));
  TESSERA_ASSIGN_OR_RETURN(mem, t.Required("memory_mib"));
  TESSERA_ASSIGN_OR_RETURN(num_gpu, t.Required("num_gpu"));
  TESSERA_ASSIGN_OR_RETURN(gpu_milli, t.Required("gpu_milli"));
  const int gpu_spec = t.Optional("gpu_spec");
  const int qos = t.Optional("qos");
  const int creation = t.Optional("creation_time");
  const int deletion = t.Optional("deletion_time");
  const int scheduled = t.Optional("scheduled_time");
  const int topology = t.Optional("topology");
  const int gpu_memory = t.Optional("gpu_memory_mib");
  const int gpu_memory_percent = t.Optional("gpu_memory_percent");
  constexpr int64_t kMaxTime = int64_t{1} << 62;

  std::vector<PodSpec> pods;
  pods.reserve(t.records().size());
  std::unordered_map<std::string, int> seen;
  for (const CsvRecord& r : t.records()) {
    if (auto e = CheckName(t, r, name, "pod", &seen)) return *e;
    PodSpec p;
    p.name = std::string(CsvTable::Str(r, name));
    TESSERA_ASSIGN_OR_RETURN(p.cpu_milli, t.Int(r, cpu, kMaxCpuMilli));
    TESSERA_ASSIGN_OR_RETURN(p.memory_mib, t.Int(r, mem, kMaxMemoryMib));
    TESSERA_ASSIGN_OR_RETURN(p.gpu_count, t.Int(r, num_gpu, kMaxGpusPerNode));
    TESSERA_ASSIGN_OR_RETURN(p.gpu_milli, t.Int(r, gpu_milli, kMilliPerGpu));
    if (p.gpu_count == 0) {
      p.gpu_milli = 0;  // a CPU-only pod; a stray gpu_milli is ignored
    } else if (p.gpu_milli == 0) {
      return t.Fail(r, gpu_milli,
                    "is 0, but num_gpu is " + std::to_string(p.gpu_count) + " (need 1..1000)");
    } else if (p.gpu_count > 1 && p.gpu_milli != kMilliPerGpu) {
      return t.Fail(r, gpu_milli,
                    "must be 1000 for a multi-GPU pod (num_gpu " + std::to_string(p.gpu_count) +
                        "), got " + std::to_string(p.gpu_milli));
    }
    TESSERA_ASSIGN_OR_RETURN(p.gpu_memory_mib, t.Int(r, gpu_memory, kMaxGpuMemoryMib, 0));
    int64_t percent = 0;
    TESSERA_ASSIGN_OR_RETURN(percent, t.Int(r, gpu_memory_percent, 100, 0));
    if (p.gpu_count == 0) {  // a CPU-only pod: stray GPU memory is ignored, as gpu_milli is
      p.gpu_memory_mib = 0;
      percent = 0;
    }
    if (p.gpu_memory_mib == 0) p.gpu_memory_percent = static_cast<int32_t>(percent);
    p.gpu_spec = CanonicalGpuModels(CsvTable::Str(r, gpu_spec));
    p.qos = std::string(CsvTable::Str(r, qos));
    if (topology >= 0) {
      Result<TopologyRequest> intent = ParseTopologyRequest(CsvTable::Str(r, topology));
      if (!intent.ok()) return t.Fail(r, topology, intent.error().message);
      p.topology = *intent;
    }
    TESSERA_ASSIGN_OR_RETURN(p.creation_time, t.Int(r, creation, kMaxTime, -1));
    TESSERA_ASSIGN_OR_RETURN(p.deletion_time, t.Int(r, deletion, kMaxTime, -1));
    TESSERA_ASSIGN_OR_RETURN(p.scheduled_time, t.Int(r, scheduled, kMaxTime, -1));
    pods.push_back(std::move(p));
  }
  return pods;
}

#undef TESSERA_ASSIGN_OR_RETURN

}  // namespace tessera
