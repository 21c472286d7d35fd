// Small text helpers shared by the file readers.
#pragma once

#include <string_view>

namespace tessera {

/// `s` without the spaces and tabs at either end.
inline std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace tessera
