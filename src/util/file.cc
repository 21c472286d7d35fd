#include "util/file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tessera {

Result<std::string> ReadFile(const std::string& path) {
  std::error_code ec;
  // An ifstream opens a directory on Linux and reads it as empty: say what it is instead.
  if (std::filesystem::is_directory(path, ec)) {
    return Error{path + ": is a directory, not a file"};
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open: " + std::strerror(errno)};
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return Error{path + ": read error"};
  return buffer.str();
}

Status WriteFile(const std::string& path, std::string_view content) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Error{tmp + ": cannot create: " + std::strerror(errno)};
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (!out) return Error{tmp + ": write error"};
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Error{path + ": cannot rename: " + ec.message()};
  return {};
}

Status MakeDirectories(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return Error{path + ": cannot create directory: " + ec.message()};
  return {};
}

}  // namespace tessera
