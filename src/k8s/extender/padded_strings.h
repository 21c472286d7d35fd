#pragma once

// Strings laid out for the extender's answer writers: one buffer with padding after the last
// string, so that a short string is copied as one fixed-size block (CopyShort) instead of a
// call to memcpy with a variable length. Not thread-safe; a PaddedStrings is built once and then
// only read (the Extender shares them as std::shared_ptr<const PaddedStrings>).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::k8s {

/// Bytes CopyShort may copy at once (prioritize's `{"Host":"<name>","Score":` pieces are
/// ~40 bytes).
inline constexpr size_t kCopyPad = 64;

/// Copies `n` bytes; up to kCopyPad of them as one fixed-size copy of 32 or kCopyPad bytes (no
/// call): then `src` must be readable and `dst` writable for kCopyPad bytes.
inline void CopyShort(char* dst, const char* src, size_t n) {
  if (n <= kCopyPad / 2) {
    std::memcpy(dst, src, kCopyPad / 2);
  } else if (n <= kCopyPad) {
    std::memcpy(dst, src, kCopyPad);
  } else {
    std::memcpy(dst, src, n);
  }
}

/// Strings in one buffer with kCopyPad bytes after the last, so that CopyShort may read
/// kCopyPad bytes from the start of any of them (the extender's answer pieces).
class PaddedStrings {
 public:
  void Add(std::string_view s) {
    text_.resize(text_.size() - kCopyPad);  // drop the padding
    at_.push_back(static_cast<uint32_t>(text_.size()));
    len_.push_back(static_cast<uint32_t>(s.size()));
    max_length_ = std::max(max_length_, s.size());
    text_.append(s);
    text_.append(kCopyPad, ' ');
  }
  void Clear() { *this = PaddedStrings(); }
  size_t size() const { return at_.size(); }
  std::string_view operator[](size_t i) const { return {text_.data() + at_[i], len_[i]}; }
  size_t length(size_t i) const { return len_[i]; }
  /// The longest string's length (0 when empty).
  size_t max_length() const { return max_length_; }

 private:
  std::string text_ = std::string(kCopyPad, ' ');
  std::vector<uint32_t> at_;
  std::vector<uint32_t> len_;
  size_t max_length_ = 0;
};

}  // namespace tessera::k8s
