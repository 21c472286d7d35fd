#pragma once

#include <string>
#include <string_view>

#include "util/result.h"

namespace tessera {

/// Reads a whole file. The error names the path and the OS reason, or says that the path is a
/// directory.
Result<std::string> ReadFile(const std::string& path);
/// Writes `content` to `path` (created or truncated), via a temporary file and a rename so
/// that readers never see half a file.
Status WriteFile(const std::string& path, std::string_view content);
/// Creates `path` and its parents if missing.
Status MakeDirectories(const std::string& path);

}  // namespace tessera
