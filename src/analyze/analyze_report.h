#pragma once

// The outputs of `tessera analyze` (docs/ANALYZE.md): analyze.json, the table on stdout and
// report.html (a self-contained page with a per-node GPU map before / after the move plan,
// plain HTML + SVG, styled as the other reports). Pure functions.

#include <string>

#include "analyze/analyze.h"

namespace tessera::analyze {

/// What the report says about where its input came from.
struct ReportInfo {
  std::string source;        ///< files or the API server
  std::string generated_by;  ///< the command line
};

/// analyze.json: every figure of the Analysis (milli-GPU where a name ends in _milli, GPUs
/// otherwise), pretty-printed.
std::string AnalysisJson(const Analysis& a, const ReportInfo& info);
/// The terminal summary: the pools, the pending pods and the plan as aligned tables.
std::string AnalysisTable(const Analysis& a);
/// report.html. Nodes the plan touches are drawn first in the GPU map; at most `max_nodes`
/// nodes are drawn in all.
std::string AnalysisHtml(const Analysis& a, const ReportInfo& info, int max_nodes = 2000);

}  // namespace tessera::analyze
