#pragma once

// Structured logs of `tessera serve`: one JSON object per line on stderr, with a timestamp.

#include <string>
#include <string_view>

namespace tessera::k8s {

/// Writes one log line to stderr:
///   {"ts":"2026-12-01T23:45:01.123Z","level":..,"msg":..,<fields>}
/// `ts` is UTC wall-clock time in RFC 3339 with milliseconds; `fields_json` is a JSON object
/// text whose members are appended (or empty; other text is ignored). Thread-safe: lines from
/// concurrent callers never interleave.
void LogJson(std::string_view level, std::string_view msg, std::string_view fields_json = "");

/// The RFC 3339 UTC form of `unix_seconds` with milliseconds ("2026-12-01T23:45:01.123Z").
std::string Rfc3339Millis(double unix_seconds);

}  // namespace tessera::k8s
