#pragma once

// Number formatting shared by the text and HTML reports and the messages.

#include <charconv>
#include <cstdio>
#include <string>
#include <system_error>

namespace tessera {

/// `v` with `decimals` digits after the point ("%.*f"), e.g. Fixed(2.345, 1) == "2.3".
inline std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

/// Appends the shortest decimal form of `value` that reads back exactly ("12.5", "100", "0.1"):
/// the numbers of the CSV outputs.
inline void AppendNumber(std::string* out, double value) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  out->append(buf, ec == std::errc() ? end : buf);
}

}  // namespace tessera
