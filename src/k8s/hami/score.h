#pragma once

// HAMi's GPU pair score: the node annotation in which HAMi's device plugin (with
// ENABLE_TOPOLOGY_SCORE) publishes how well each pair of the node's GPUs is linked, read so
// that Tessera knows NVLink islands without a node agent of its own.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/result.h"

namespace tessera::k8s {

/// The node annotation with the pairwise GPU link scores.
inline constexpr std::string_view kHamiScoreAnnotation = "hami.io/node-nvidia-score";

/// One GPU's entry: its UUID and its score towards each other GPU, by UUID (HAMi's
/// DevicePairScore: 10 across CPU sockets, 20 same CPU, 30 host bridge, 40 several PCIe
/// switches, 50 one PCIe switch, 60 same board; plus 100 per NVLink link).
struct HamiPairScore {
  std::string uuid;
  std::vector<std::pair<std::string, int64_t>> scores;  ///< in the annotation's key order
  bool operator==(const HamiPairScore&) const = default;
};

/// The greatest score read (HAMi sums 100 per NVLink link, 18 links at most today, plus the
/// PCIe base); anything above is refused as absurd.
inline constexpr int64_t kMaxHamiPairScore = 10000;

/// Parses the annotation: a JSON array [{"uuid":"GPU-…","score":{"GPU-…":int,…}},…], one
/// entry per GPU (HAMi's DevicePairScores; Go matches the keys ignoring case and ignores
/// unknown ones, as here). Errors name the JSON path below `path` (the annotation's own path,
/// e.g. `Node.metadata.annotations["hami.io/node-nvidia-score"][2].score["GPU-x"]: ...`):
/// malformed JSON, wrong types, an empty or repeated uuid, a score outside
/// 0..kMaxHamiPairScore. Pure; thread-safe.
Result<std::vector<HamiPairScore>> ParseHamiNodeScore(std::string_view value,
                                                      std::string_view path);

}  // namespace tessera::k8s
