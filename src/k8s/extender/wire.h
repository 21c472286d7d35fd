#pragma once

// The wire layer of the extender's hot verbs: filter's and prioritize's answers written as JSON
// from decisions already taken (under the model's lock, by the Extender) into one buffer sized
// in advance. Functions over values: no lock, no model.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "k8s/extender/padded_strings.h"

namespace tessera::k8s {

/// Appends to a buffer sized in advance: no capacity checks, no calls per piece. Ensure
/// grows the buffer where a size is only known piece by piece.
class PresizedWriter {
 public:
  explicit PresizedWriter(std::string* out) : out_(out), p_(out->data()) {}
  void Put(std::string_view s) {
    std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
  }
  void Put(char c) { *p_++ = c; }
  /// Put for a string of a PaddedStrings: no call for short ones. The buffer needs kCopyPad
  /// bytes of room past the string.
  void PutPadded(std::string_view s) {
    CopyShort(p_, s.data(), s.size());
    p_ += s.size();
  }
  /// Puts the first `n` (at most 4) bytes of `s`; writes all four.
  void PutFour(const char* s, size_t n) {
    std::memcpy(p_, s, 4);
    p_ += n;
  }
  /// Takes back the last byte (a separator after the last item of a list).
  void Unput() { --p_; }
  /// Room for `n` more bytes.
  void Ensure(size_t n) {
    const size_t at = static_cast<size_t>(p_ - out_->data());
    if (at + n <= out_->size()) return;
    out_->resize(std::max(out_->size() * 2, at + n));
    p_ = out_->data() + at;
  }
  /// Cuts the buffer to what was written.
  void Finish() { out_->resize(static_cast<size_t>(p_ - out_->data())); }

 private:
  std::string* out_;
  char* p_;
};

/// One candidate of a filter answer: where its quoted name is, where it was in the request,
/// and why it was refused.
struct Decided {
  int quoted;      ///< node index into NodeNameIndex::QuotedNames, or -1 - k for the k-th unknown
                   ///< name
  uint32_t index;  ///< position in the request
  int reason;      ///< a reason code (node_filter.h, kReason*): reasons[reason], or
                   ///< details[reason - detail_base] from detail_base on
};

/// A filter answer's decisions and the quoted strings they point into.
struct FilterAnswer {
  std::span<const Decided> fits, failed, unresolvable;  ///< each in request order
  const PaddedStrings& names;                           ///< the model's quoted node names
  const std::vector<std::string>& unknown_names;        ///< quoted names no node has
  const PaddedStrings& reasons;                         ///< ':' and the quoted reason, by code
  int detail_base;                                      ///< the first code of `details`
  const PaddedStrings& details;                         ///< the request's own reasons
  const std::vector<std::string>* nodes_json;           ///< non-null: answer Nodes too
  size_t bytes;              ///< the names, reasons and nodes listed, each with a comma
  const std::string& error;  ///< the pod's error; when set, no candidate is listed
};

/// The ExtenderFilterResult JSON of `a`: each section lists its candidates in request order;
/// every item is followed by ',' and the last one is taken back.
std::string WriteFilterAnswer(const FilterAnswer& a);

/// One candidate of a prioritize answer: its node (-1: a name no node has) and score 0..10.
struct ScoredCandidate {
  int node;
  int score;
};

/// The HostPriorityList JSON of `scored` (the candidates `names`, in order): a known node's
/// entry up to its score is one piece of `hosts` (NodeNameIndex::HostEntries); a buffer sized
/// for plain names, grown where a name needs escapes.
std::string WritePrioritizeAnswer(std::span<const ScoredCandidate> scored,
                                  const PaddedStrings& hosts,
                                  std::span<const std::string_view> names);

}  // namespace tessera::k8s
