#include "k8s/api/json_util.h"

#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

namespace tessera::k8s {
namespace {

char LowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualFoldAscii(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (LowerAscii(a[i]) != LowerAscii(b[i])) return false;
  }
  return true;
}

bool IsIdentifier(std::string_view key) {
  if (key.empty()) return false;
  for (char c : key) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// The deepest nesting of arrays and objects in `text`, counted outside strings; stops counting
// once `limit` is exceeded. Malformed text is left to the parser.
int NestingDepth(std::string_view text, int limit) {
  int depth = 0;
  int max_depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) {
        max_depth = depth;
        if (max_depth > limit) return max_depth;
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return max_depth;
}

// nlohmann's message without its "[json.exception.parse_error.101] " tag.
std::string StripTag(const char* what) {
  std::string_view m = what;
  if (m.starts_with("[json.exception.")) {
    const size_t end = m.find("] ");
    if (end != std::string_view::npos) m.remove_prefix(end + 2);
  }
  return std::string(m);
}

}  // namespace

std::string QuoteForError(std::string_view s, size_t max_chars) {
  std::string out = "\"";
  const bool cut = s.size() > max_chars;
  if (cut) s = s.substr(0, max_chars);
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out.push_back(c);
    }
  }
  out += cut ? "\"..." : "\"";
  return out;
}

Result<nlohmann::json> ParseJson(std::string_view text, size_t max_bytes, std::string_view what) {
  const std::string prefix = std::string(what) + ": ";
  if (text.size() > max_bytes) {
    return Error{prefix + "body is " + std::to_string(text.size()) + " bytes, over the limit of " +
                 std::to_string(max_bytes)};
  }
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Error{prefix + "empty body"};
  }
  if (NestingDepth(text, kMaxJsonDepth) > kMaxJsonDepth) {
    return Error{prefix + "nesting deeper than " + std::to_string(kMaxJsonDepth)};
  }
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte counts the bytes read, the offending one (or the end of input) included.
    const size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    return Error{prefix + "malformed JSON at byte " + std::to_string(offset) + ": " +
                 StripTag(e.what())};
  } catch (const std::exception& e) {
    return Error{prefix + "malformed JSON: " + StripTag(e.what())};
  }
}

std::string DumpJson(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

void AppendJsonString(std::string* out, std::string_view s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f || c == '"' || c == '\\') {
      *out += DumpJson(nlohmann::ordered_json(std::string(s)));
      return;
    }
  }
  *out += '"';
  out->append(s);
  *out += '"';
}

std::string PathKey(std::string_view base, std::string_view key) {
  std::string out(base);
  if (IsIdentifier(key)) {
    if (!out.empty()) out.push_back('.');
    out.append(key);
  } else {
    out += "[" + QuoteForError(key, 256) + "]";
  }
  return out;
}

std::string PathIndex(std::string_view base, size_t i) {
  return std::string(base) + "[" + std::to_string(i) + "]";
}

const nlohmann::json* FindField(const nlohmann::json& obj, std::string_view key) {
  const auto exact = obj.find(key);
  if (exact != obj.end()) return &*exact;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (EqualFoldAscii(it.key(), key)) return &*it;
  }
  return nullptr;
}

Error TypeError(std::string_view path, std::string_view expected, const nlohmann::json& got) {
  std::string m(path);
  m += ": expected ";
  m += expected;
  m += ", got ";
  m += got.type_name();
  return Error{std::move(m)};
}

Status ReadString(const nlohmann::json* v, std::string_view path, std::string* out) {
  if (v == nullptr || v->is_null()) return Status();
  if (!v->is_string()) return TypeError(path, "string", *v);
  *out = v->get_ref<const std::string&>();
  return Status();
}

Status ReadInt64(const nlohmann::json* v, std::string_view path, int64_t min, int64_t max,
                 int64_t* out) {
  if (v == nullptr || v->is_null()) return Status();
  if (!v->is_number()) return TypeError(path, "integer", *v);
  if (!v->is_number_integer()) {
    return Error{std::string(path) + ": expected integer, got " + v->dump()};
  }
  if (v->is_number_unsigned()) {
    const uint64_t u = v->get<uint64_t>();
    if (max < 0 || u > static_cast<uint64_t>(max)) {
      return Error{std::string(path) + ": " + std::to_string(u) + " out of range [" +
                   std::to_string(min) + ", " + std::to_string(max) + "]"};
    }
    *out = static_cast<int64_t>(u);
    return Status();
  }
  const int64_t x = v->get<int64_t>();
  if (x < min || x > max) {
    return Error{std::string(path) + ": " + std::to_string(x) + " out of range [" +
                 std::to_string(min) + ", " + std::to_string(max) + "]"};
  }
  *out = x;
  return Status();
}

Status ReadBool(const nlohmann::json* v, std::string_view path, bool* out) {
  if (v == nullptr || v->is_null()) return Status();
  if (!v->is_boolean()) return TypeError(path, "boolean", *v);
  *out = v->get<bool>();
  return Status();
}

Status ReadStringMap(const nlohmann::json* v, std::string_view path,
                     std::map<std::string, std::string>* out) {
  if (v == nullptr || v->is_null()) return Status();
  if (!v->is_object()) return TypeError(path, "object of strings", *v);
  for (auto it = v->begin(); it != v->end(); ++it) {
    if (it->is_null()) {  // Go decodes a null map value as the zero value ""
      (*out)[it.key()].clear();
      continue;
    }
    if (!it->is_string()) return TypeError(PathKey(path, it.key()), "string", *it);
    (*out)[it.key()] = it->get_ref<const std::string&>();
  }
  return Status();
}

Result<const nlohmann::json*> ObjectField(const nlohmann::json& obj, std::string_view key,
                                          std::string_view path) {
  const nlohmann::json* v = FindField(obj, key);
  if (v == nullptr || v->is_null()) return static_cast<const nlohmann::json*>(nullptr);
  if (!v->is_object()) return TypeError(PathKey(path, key), "object", *v);
  return v;
}

Result<const nlohmann::json*> ArrayField(const nlohmann::json& obj, std::string_view key,
                                         std::string_view path) {
  const nlohmann::json* v = FindField(obj, key);
  if (v == nullptr || v->is_null()) return static_cast<const nlohmann::json*>(nullptr);
  if (!v->is_array()) return TypeError(PathKey(path, key), "array", *v);
  return v;
}

}  // namespace tessera::k8s
