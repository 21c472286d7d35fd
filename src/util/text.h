// Small text helpers shared by the file readers.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

/// `s` without the spaces and tabs at either end.
inline std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// The non-empty items of a `sep`-separated list: "a,,b," -> {"a", "b"}.
inline std::vector<std::string> SplitNonEmpty(std::string_view text, char sep = ',') {
  std::vector<std::string> items;
  while (!text.empty()) {
    const size_t end = std::min(text.find(sep), text.size());
    if (end > 0) items.emplace_back(text.substr(0, end));
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return items;
}

}  // namespace tessera
