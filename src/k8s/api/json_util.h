#pragma once

// Helpers shared by the Kubernetes codecs (k8s/objects.cc, k8s/extender_protocol.cc): safe
// JSON parsing of untrusted bodies, Go-style field lookup, typed reads that name the JSON path
// in their errors. Internal to src/k8s/; every function is pure and thread-safe, and none
// throws.

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "util/result.h"

namespace tessera::k8s {

/// The default limit on a request body, in bytes (16 MiB).
inline constexpr size_t kDefaultMaxBodyBytes = size_t{16} << 20;
/// The deepest nesting of arrays/objects accepted in a body. Kubernetes objects nest about 20
/// deep; the limit keeps recursive code (nlohmann's dump) far from the stack's end.
inline constexpr int kMaxJsonDepth = 512;

/// `s` in double quotes for an error message: `"` `\` and control bytes escaped, cut after
/// `max_chars` bytes with "..." (so a 16 MiB string is not echoed back).
std::string QuoteForError(std::string_view s, size_t max_chars = 80);

/// Parses an untrusted JSON document. Errors: "<what>: body is N bytes, over the limit of M",
/// "<what>: empty body", "<what>: nesting deeper than 512", "<what>: malformed JSON at byte N:
/// <parser message>" (N: 0-based offset where the parser stopped; truncated input reports its
/// length). Duplicate keys: the last one wins, as in Go.
Result<nlohmann::json> ParseJson(std::string_view text, size_t max_bytes, std::string_view what);

/// Serialises for the wire: compact, invalid UTF-8 replaced by U+FFFD (as Go's encoder does).
std::string DumpJson(const nlohmann::ordered_json& j);
/// Appends `s` as a JSON string, exactly as DumpJson writes it; printable ASCII without '"' or
/// '\\' (node names, reasons) is copied without building a JSON value.
void AppendJsonString(std::string* out, std::string_view s);

/// "base.key" for identifier-like keys, else `base["key"]` ("Pod.metadata.annotations[\"a/b\"]");
/// just "key" when base is empty.
std::string PathKey(std::string_view base, std::string_view key);
/// "base[i]".
std::string PathIndex(std::string_view base, size_t i);

/// The value of struct field `key` in object `obj` as Go's encoding/json finds it: the exact key
/// if present, else a key equal to it ignoring ASCII case (when several differ only in case,
/// the first in byte order). nullptr when absent. `obj` must be an object.
const nlohmann::json* FindField(const nlohmann::json& obj, std::string_view key);

/// "path: expected <expected>, got <type of got>" (types: null, boolean, number, string,
/// array, object).
Error TypeError(std::string_view path, std::string_view expected, const nlohmann::json& got);

/// Typed reads of an optional field `v` (nullptr = absent). Absent and JSON null leave *out
/// unchanged (Go's zero value); any other wrong type is a TypeError naming `path`.
Status ReadString(const nlohmann::json* v, std::string_view path, std::string* out);
/// An integral JSON number within [min, max]; 1.5, 1e3 and out-of-range numbers are errors.
Status ReadInt64(const nlohmann::json* v, std::string_view path, int64_t min, int64_t max,
                 int64_t* out);
Status ReadBool(const nlohmann::json* v, std::string_view path, bool* out);
/// An object of strings (labels, annotations, node selector), merged into *out.
Status ReadStringMap(const nlohmann::json* v, std::string_view path,
                     std::map<std::string, std::string>* out);

/// Field `key` of `obj` that must be an object or null/absent: the object, or nullptr when
/// absent or null; a TypeError for anything else.
Result<const nlohmann::json*> ObjectField(const nlohmann::json& obj, std::string_view key,
                                          std::string_view path);
/// Field `key` of `obj` that must be an array or null/absent: as ObjectField.
Result<const nlohmann::json*> ArrayField(const nlohmann::json& obj, std::string_view key,
                                         std::string_view path);

}  // namespace tessera::k8s
