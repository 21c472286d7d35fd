#pragma once

// Number formatting shared by the text and HTML reports and the messages.

#include <cstdio>
#include <string>

namespace tessera {

/// `v` with `decimals` digits after the point ("%.*f"), e.g. Fixed(2.345, 1) == "2.3".
inline std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace tessera
