#pragma once

// The nodes this extender's filter passed for each pod, so that Bind can refuse a node the
// filter did not pass (ExtenderOptions::filter_pass_seconds: a second wall behind
// kube-scheduler). One pass per pod UID, the last filter's: the nodes it passed as a bitmap by
// node index, the clock time of the filter and the model it decided on (its generation and its
// quoted node names, so that a pass made before the model was rebuilt is still checked by
// name). A ring of `capacity` passes: a new UID takes the oldest UID's slot.
//
// Reads no clock: the caller hands in the time (seconds, as its Clock reads them).
//
// Not thread-safe; the Extender holds its lock.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "k8s/extender/padded_strings.h"

namespace tessera::k8s {

class FilterPasses {
 public:
  /// How many pods' passes the Extender keeps.
  static constexpr size_t kDefaultCapacity = 4096;

  /// A pass counts for `window_seconds` after its filter; 0 or less turns the check off (Begin
  /// records nothing, Passed always says yes). `capacity` > 0.
  explicit FilterPasses(double window_seconds, size_t capacity = kDefaultCapacity);
  FilterPasses(const FilterPasses&) = delete;
  FilterPasses& operator=(const FilterPasses&) = delete;

  /// Starts the pass of a filter of pod `uid` at time `now` on the model of `generation`, whose
  /// quoted node names by node index (NodeNameIndex::QuotedNames) are `names`; it replaces the
  /// UID's earlier pass. Returns the bitmap to fill, all clear (bit n % 64 of word n / 64: node n
  /// passed), valid until the next Begin; null when the check is off.
  std::vector<uint64_t>* Begin(const std::string& uid, double now, uint64_t generation,
                               std::shared_ptr<const PaddedStrings> names);
  /// Whether the last filter of pod `uid`, at most window_seconds before `now`, passed node
  /// `node`, whose index in the current model (of `generation`) is `index` (-1: not in it). A
  /// pass made on an earlier model finds the node by name among that model's names. True when
  /// the check is off.
  bool Passed(const std::string& uid, std::string_view node, int index, uint64_t generation,
              double now) const;

 private:
  struct Pass {
    std::string uid;  ///< "" for a slot never used
    double seconds = 0;
    uint64_t generation = 0;                     ///< the model's (node indices are its)
    std::shared_ptr<const PaddedStrings> names;  ///< that model's quoted names, by node index
    std::vector<uint64_t> bits;                  ///< passed node indices
  };

  double window_seconds_;
  std::vector<Pass> passes_;                       ///< the ring
  size_t next_ = 0;                                ///< the oldest slot: the next new UID's
  std::unordered_map<std::string, size_t> index_;  ///< UID → slot
};

}  // namespace tessera::k8s
