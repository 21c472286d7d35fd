#pragma once

#include <string>
#include <vector>

#include "util/result.h"

namespace tessera {

// Small helpers shared by the subcommands' option parsing.

/// The parts of a comma-separated list, in order, empty parts kept ("a,,b" → {"a", "", "b"};
/// "" → {""}): callers reject what they do not accept, naming the part.
std::vector<std::string> SplitCommaList(const std::string& text);

/// "a, b, c".
std::string JoinNames(const std::vector<std::string>& names);

/// A scenario's YAML text and where it came from ("embedded scenario 'x'" or the file name).
struct ScenarioText {
  std::string yaml;
  std::string source;
};
/// `name_or_file` as an embedded scenario name, else as a YAML file; the error lists the
/// embedded names.
Result<ScenarioText> LoadScenarioText(const std::string& name_or_file);

}  // namespace tessera
