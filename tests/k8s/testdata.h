#pragma once

#include <gtest/gtest.h>

#include <string>

#include "util/file.h"

namespace tessera::k8s {

/// The text of tests/k8s/testdata/<name> (kubectl-printed fixtures; see the README there).
inline std::string ReadTestdata(const std::string& name) {
  Result<std::string> text =
      ReadFile(std::string(TESSERA_SOURCE_DIR) + "/tests/k8s/testdata/" + name);
  EXPECT_TRUE(text.ok()) << (text.ok() ? "" : text.error().message);
  return text.ok() ? std::move(text).value() : std::string();
}

}  // namespace tessera::k8s
