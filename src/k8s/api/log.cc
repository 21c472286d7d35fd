#include "k8s/api/log.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "k8s/api/json_util.h"

namespace tessera::k8s {

std::string Rfc3339Millis(double unix_seconds) {
  const double whole = std::floor(unix_seconds);
  const std::time_t t = static_cast<std::time_t>(whole);
  int millis = static_cast<int>(std::lround((unix_seconds - whole) * 1000));
  if (millis > 999) millis = 999;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
  return buf;
}

void LogJson(std::string_view level, std::string_view msg, std::string_view fields_json) {
  static std::mutex log_mutex;
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  nlohmann::ordered_json j;
  j["ts"] = Rfc3339Millis(now);
  j["level"] = std::string(level);
  j["msg"] = std::string(msg);
  if (!fields_json.empty()) {
    nlohmann::json fields = nlohmann::json::parse(fields_json, nullptr, false);
    if (fields.is_object()) {
      for (auto it = fields.begin(); it != fields.end(); ++it) j[it.key()] = it.value();
    }
  }
  const std::string line = DumpJson(j) + "\n";
  std::lock_guard<std::mutex> lock(log_mutex);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace tessera::k8s
