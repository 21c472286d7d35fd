#include "k8s/extender/node_name_index.h"

#include <utility>

#include "k8s/api/json_util.h"

namespace tessera::k8s {

void NodeNameIndex::Rebuild(std::vector<std::string> names) {
  // clear() keeps the buckets: the index's order (ForEachName) comes out as it always did.
  index_.clear();
  for (size_t i = 0; i < names.size(); ++i) index_.emplace(names[i], static_cast<int>(i));
  names_ = std::move(names);
  successor_.assign(names_.size(), -1);
  first_guess_ = -1;
  for (ResolvedList& r : resolved_) r.names_id = 0;  // node indices change
  quoted_names_.reset();
  host_entries_.reset();
}

int NodeNameIndex::ResolveOne(int previous, std::string_view name) {
  int& guess = previous >= 0 ? successor_[previous] : first_guess_;
  if (guess >= 0 && guess < size() && names_[guess] == name) return guess;
  const int node = Find(name);
  if (node >= 0) guess = node;
  return node;
}

std::span<const int> NodeNameIndex::Resolve(std::span<const std::string_view> names,
                                            uint64_t names_id) {
  std::vector<int>* nodes = &scratch_;
  if (names_id != 0) {
    for (const ResolvedList& r : resolved_) {
      if (r.names_id == names_id) return r.nodes;
    }
    ResolvedList& slot = resolved_[next_resolved_];
    next_resolved_ = (next_resolved_ + 1) % resolved_.size();
    slot.names_id = names_id;
    nodes = &slot.nodes;
  }
  nodes->resize(names.size());
  int previous = -1;
  for (size_t i = 0; i < names.size(); ++i) {
    const int node = ResolveOne(previous, names[i]);
    (*nodes)[i] = node;
    if (node >= 0) previous = node;
  }
  return *nodes;
}

std::shared_ptr<const PaddedStrings> NodeNameIndex::QuotedNames() {
  if (quoted_names_ == nullptr) {
    auto fresh = std::make_shared<PaddedStrings>();
    std::string quoted;
    for (const std::string& name : names_) {
      quoted.clear();
      AppendJsonString(&quoted, name);
      fresh->Add(quoted);
    }
    quoted_names_ = std::move(fresh);
    host_entries_.reset();
  }
  return quoted_names_;
}

std::shared_ptr<const PaddedStrings> NodeNameIndex::HostEntries() {
  const std::shared_ptr<const PaddedStrings> quoted = QuotedNames();
  if (host_entries_ == nullptr) {
    auto fresh = std::make_shared<PaddedStrings>();
    std::string entry;
    for (size_t n = 0; n < quoted->size(); ++n) {
      entry.assign("{\"Host\":");
      entry.append((*quoted)[n]);
      entry.append(",\"Score\":");
      fresh->Add(entry);
    }
    host_entries_ = std::move(fresh);
  }
  return host_entries_;
}

}  // namespace tessera::k8s
