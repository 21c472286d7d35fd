#include "k8s/hami/register.h"

#include <charconv>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "k8s/api/json_util.h"
#include "model/resources.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;

bool ParseInt(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data() + (s[0] == '+' ? 1 : 0), end, *out);
  return ec == std::errc() && p == end;
}

// Go's strconv.ParseBool.
bool ParseGoBool(std::string_view s, bool* out) {
  if (s == "1" || s == "t" || s == "T" || s == "true" || s == "TRUE" || s == "True") {
    *out = true;
    return true;
  }
  if (s == "0" || s == "f" || s == "F" || s == "false" || s == "FALSE" || s == "False") {
    *out = false;
    return true;
  }
  return false;
}

Status CheckDevice(const HamiDevice& d, std::string_view where) {
  if (d.uuid.empty()) return ErrorAt(where, "empty device id");
  if (d.split_count < 0) return ErrorAt(where, "negative split count");
  if (d.memory_mib < 0 || d.memory_mib > kMaxGpuMemoryMib) {
    return ErrorAt(where, "memory " + std::to_string(d.memory_mib) + " MiB is out of range");
  }
  if (d.cores < 0) return ErrorAt(where, "negative core limit");
  if (d.index < 0) return ErrorAt(where, "negative device index");
  return Status();
}

Result<std::vector<HamiDevice>> ParseHamiJson(std::string_view value) {
  Result<Json> parsed = ParseJson(value, kDefaultMaxBodyBytes, "HAMi device list");
  if (!parsed.ok()) return parsed.error();
  const Json& list = *parsed;
  if (!list.is_array()) return TypeError("HAMi device list", "array", list);
  std::vector<HamiDevice> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = PathIndex("device", i);
    const Json& d = list[i];
    if (!d.is_object()) return TypeError(path, "object", d);
    HamiDevice dev;
    int64_t v = 0;
    constexpr int64_t kI32 = std::numeric_limits<int32_t>::max();
    TESSERA_RETURN_IF_ERROR(ReadString(FindField(d, "id"), PathKey(path, "id"), &dev.uuid));
    v = static_cast<int64_t>(i);  // HAMi omits index 0 (omitempty); absent = its position
    TESSERA_RETURN_IF_ERROR(ReadInt64(FindField(d, "index"), PathKey(path, "index"), 0, kI32, &v));
    dev.index = static_cast<int32_t>(v);
    v = 0;
    TESSERA_RETURN_IF_ERROR(ReadInt64(FindField(d, "count"), PathKey(path, "count"), 0, kI32, &v));
    dev.split_count = static_cast<int32_t>(v);
    v = 0;
    TESSERA_RETURN_IF_ERROR(
        ReadInt64(FindField(d, "devmem"), PathKey(path, "devmem"), 0, kI32, &v));
    dev.memory_mib = v;
    v = 0;
    TESSERA_RETURN_IF_ERROR(
        ReadInt64(FindField(d, "devcore"), PathKey(path, "devcore"), 0, kI32, &v));
    dev.cores = static_cast<int32_t>(v);
    TESSERA_RETURN_IF_ERROR(ReadString(FindField(d, "type"), PathKey(path, "type"), &dev.type));
    v = 0;
    TESSERA_RETURN_IF_ERROR(
        ReadInt64(FindField(d, "numa"), PathKey(path, "numa"), -kI32, kI32, &v));
    dev.numa = static_cast<int32_t>(v);
    dev.mode = "hami-core";
    TESSERA_RETURN_IF_ERROR(ReadString(FindField(d, "mode"), PathKey(path, "mode"), &dev.mode));
    TESSERA_RETURN_IF_ERROR(
        ReadBool(FindField(d, "health"), PathKey(path, "health"), &dev.healthy));
    TESSERA_RETURN_IF_ERROR(CheckDevice(dev, path));
    out.push_back(std::move(dev));
  }
  return out;
}

Result<std::vector<HamiDevice>> ParseHamiColon(std::string_view value) {
  if (value.find(':') == std::string_view::npos) return Error{"missing device separator ':'"};
  std::vector<HamiDevice> out;
  size_t position = 0;
  while (!value.empty()) {
    const size_t colon = value.find(':');
    const std::string_view segment = value.substr(0, colon);
    value = colon == std::string_view::npos ? std::string_view() : value.substr(colon + 1);
    if (segment.empty()) continue;
    const std::string where = "device " + std::to_string(position) + " " + QuoteForError(segment);
    std::vector<std::string_view> f;
    for (std::string_view rest = segment;;) {
      const size_t comma = rest.find(',');
      f.push_back(rest.substr(0, comma));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    if (f.size() != 7 && f.size() != 9) {
      return ErrorAt(where, "has " + std::to_string(f.size()) + " fields, expected 7 or 9");
    }
    HamiDevice d;
    int64_t count = 0, mem = 0, cores = 0, numa = 0, index = static_cast<int64_t>(position);
    constexpr int64_t kI32 = std::numeric_limits<int32_t>::max();
    d.uuid = std::string(f[0]);
    if (!ParseInt(f[1], &count) || count < 0 || count > kI32) {
      return ErrorAt(where, "invalid split count " + QuoteForError(f[1]));
    }
    if (!ParseInt(f[2], &mem) || mem < 0 || mem > kI32) {
      return ErrorAt(where, "invalid memory " + QuoteForError(f[2]));
    }
    if (!ParseInt(f[3], &cores) || cores < 0 || cores > kI32) {
      return ErrorAt(where, "invalid core limit " + QuoteForError(f[3]));
    }
    d.type = std::string(f[4]);
    if (!ParseInt(f[5], &numa) || numa < -kI32 || numa > kI32) {
      return ErrorAt(where, "invalid numa " + QuoteForError(f[5]));
    }
    if (!ParseGoBool(f[6], &d.healthy))
      return ErrorAt(where, "invalid health " + QuoteForError(f[6]));
    d.mode = "hami-core";
    if (f.size() == 9) {
      if (!ParseInt(f[7], &index) || index < 0 || index > kI32) {
        return ErrorAt(where, "invalid index " + QuoteForError(f[7]));
      }
      d.mode = std::string(f[8]);
    }
    d.split_count = static_cast<int32_t>(count);
    d.memory_mib = mem;
    d.cores = static_cast<int32_t>(cores);
    d.numa = static_cast<int32_t>(numa);
    d.index = static_cast<int32_t>(index);
    TESSERA_RETURN_IF_ERROR(CheckDevice(d, where));
    out.push_back(std::move(d));
    ++position;
  }
  return out;
}

}  // namespace

Result<std::vector<HamiDevice>> ParseHamiNodeRegister(std::string_view value) {
  std::string_view v = value;
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t' || v.front() == '\n')) {
    v.remove_prefix(1);
  }
  if (v.empty()) return Error{"empty device list"};
  return v.front() == '[' ? ParseHamiJson(v) : ParseHamiColon(v);
}

}  // namespace tessera::k8s
