// The padded string buffer of the extender's answer pieces (src/k8s/extender/padded_strings.h)
// and the short copy that reads past a string into its padding.

#include "k8s/extender/padded_strings.h"

#include <gtest/gtest.h>

#include <string>

namespace tessera::k8s {
namespace {

TEST(PaddedStrings, HoldsEachStringAndItsLength) {
  PaddedStrings s;
  EXPECT_EQ(s.size(), 0u);
  EXPECT_EQ(s.max_length(), 0u);
  s.Add("ab");
  s.Add("");
  s.Add(std::string(100, 'x'));
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0], "ab");
  EXPECT_EQ(s[1], "");
  EXPECT_EQ(s[2], std::string(100, 'x'));
  EXPECT_EQ(s.length(0), 2u);
  EXPECT_EQ(s.length(2), 100u);
  EXPECT_EQ(s.max_length(), 100u);
  s.Clear();
  EXPECT_EQ(s.size(), 0u);
  EXPECT_EQ(s.max_length(), 0u);
}

TEST(PaddedStrings, CopyShortCopiesExactlyTheBytesAsked) {
  // Every length around the two fixed block sizes, from the last string of the buffer (where
  // the padding is all there is to read past it).
  for (size_t n : {0, 1, 31, 32, 33, 63, 64, 65, 200}) {
    PaddedStrings s;
    s.Add("head");
    std::string text;
    for (size_t i = 0; i < n; ++i) text += static_cast<char>('a' + i % 26);
    s.Add(text);
    std::string out(n + kCopyPad, '#');
    CopyShort(out.data(), s[1].data(), s.length(1));
    EXPECT_EQ(out.substr(0, n), text) << n;
  }
}

}  // namespace
}  // namespace tessera::k8s
