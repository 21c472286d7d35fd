#include "k8s/extender/filter_passes.h"

#include <utility>

#include "k8s/api/json_util.h"
#include "util/check.h"

namespace tessera::k8s {

FilterPasses::FilterPasses(double window_seconds, size_t capacity)
    : window_seconds_(window_seconds), passes_(capacity) {
  TESSERA_CHECK(capacity > 0);
}

std::vector<uint64_t>* FilterPasses::Begin(const std::string& uid, double now, uint64_t generation,
                                           std::shared_ptr<const PaddedStrings> names) {
  if (window_seconds_ <= 0) return nullptr;
  // A retried filter of the same pod replaces its pass; a new pod takes the oldest slot.
  auto known = index_.find(uid);
  Pass* slot = nullptr;
  if (known != index_.end()) {
    slot = &passes_[known->second];
  } else {
    const size_t at = next_;
    next_ = (next_ + 1) % passes_.size();
    slot = &passes_[at];
    if (!slot->uid.empty()) index_.erase(slot->uid);
    index_.emplace(uid, at);
  }
  slot->uid = uid;
  slot->seconds = now;
  slot->generation = generation;
  slot->bits.assign((names->size() + 63) / 64, 0);
  slot->names = std::move(names);
  return &slot->bits;
}

bool FilterPasses::Passed(const std::string& uid, std::string_view node, int index,
                          uint64_t generation, double now) const {
  if (window_seconds_ <= 0) return true;
  auto known = index_.find(uid);
  if (known == index_.end()) return false;
  const Pass& pass = passes_[known->second];
  if (now - pass.seconds > window_seconds_) return false;
  if (pass.generation != generation) {  // the model was rebuilt since: find the node by name
    index = -1;
    std::string quoted;
    AppendJsonString(&quoted, node);
    for (size_t i = 0; i < pass.names->size(); ++i) {
      if ((*pass.names)[i] == quoted) index = static_cast<int>(i);
    }
  }
  return index >= 0 && static_cast<size_t>(index >> 6) < pass.bits.size() &&
         (pass.bits[index >> 6] >> (index & 63) & 1) != 0;
}

}  // namespace tessera::k8s
