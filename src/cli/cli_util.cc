#include "cli/cli_util.h"

#include "trace/scenario.h"
#include "util/file.h"

namespace tessera {

std::vector<std::string> SplitCommaList(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

Result<ScenarioText> LoadScenarioText(const std::string& name_or_file) {
  ScenarioText out;
  out.yaml = std::string(EmbeddedScenario(name_or_file));
  out.source = "embedded scenario '" + name_or_file + "'";
  if (!out.yaml.empty()) return out;
  Result<std::string> text = ReadFile(name_or_file);
  if (!text) {
    return Error{"--scenario '" + name_or_file + "' is neither an embedded scenario (" +
                 JoinNames(EmbeddedScenarioNames()) +
                 ") nor a readable file: " + text.error().message};
  }
  out.yaml = std::move(text).value();
  out.source = name_or_file;
  return out;
}

}  // namespace tessera
