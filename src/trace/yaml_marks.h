#pragma once

// What the YAML readers (scenario, topology block, plan catalog, QoS classes) say about a
// node in an error message: its line and a short description of what it holds.

#include <yaml-cpp/yaml.h>

#include <string>

namespace tessera {

/// The 1-based line of `node`, or 1 when yaml-cpp has no mark for it.
inline int YamlLine(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.line >= 0 ? mark.line + 1 : 1;
}

/// `node` for a message: its scalar text in quotes, or "a list", "a mapping", "nothing".
inline std::string YamlShown(const YAML::Node& node) {
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  return "nothing";
}

}  // namespace tessera
