#pragma once

// The wire layer of the extender's hot verbs: filter's and prioritize's answers written as JSON
// from decisions already taken (under the model's lock, by the Extender) into one buffer sized
// in advance. Functions over values: no lock, no model.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
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

/// Where filter puts a candidate: NodeNames, FailedNodes (preemption may help) or
/// FailedAndUnresolvableNodes.
enum class FilterSection : uint8_t { kFits, kFailed, kUnresolvable };

/// A filter answer collected as filter decides its candidates (under the model's lock) and
/// written after the lock is released (WriteFilterAnswer). The decisions go into this thread's
/// three section lists, kept between requests so that their memory is not allocated each
/// time; the answer's size is summed as they come. A name the request lists twice is one key of
/// a failure map: listed once, the first time (as Extender::Filter's maps keep it); NodeNames
/// keeps every fit. One builder per thread at a time.
class FilterAnswerBuilder {
 public:
  /// For a request of `candidates` names; `nodes_json` non-null: answer Nodes too.
  FilterAnswerBuilder(size_t candidates, const std::vector<std::string>* nodes_json);
  /// The model's quoted node names (NodeNameIndex::QuotedNames), before the first Add.
  void SetNames(std::shared_ptr<const PaddedStrings> names) { names_ = std::move(names); }
  /// Candidate `i`, `name`, node index `node` (-1: unknown) goes to `section` for `reason` (a
  /// code of node_filter.h; `details` holds the request's own reasons from kReasonDetail).
  void Add(size_t i, std::string_view name, int node, FilterSection section, int reason,
           const std::vector<std::string>& details) __attribute__((always_inline)) {
    if (section != FilterSection::kFits) {
      if (node >= 0) [[likely]] {
        if (static_cast<size_t>(node) >= rejected_stamp_->size()) {
          rejected_stamp_->resize(static_cast<size_t>(node) + 1);
        }
        if ((*rejected_stamp_)[node] == stamp_) return;
        (*rejected_stamp_)[node] = stamp_;
      } else if (!rejected_unknown_.insert(name).second) {
        return;
      }
    }
    int q = node;
    if (node >= 0) [[likely]] {
      bytes_ += names_->length(node) + 1;
    } else {
      q = -1 - static_cast<int>(unknown_quoted_.size());
      AppendUnknown(name);
    }
    const Decided d{q, static_cast<uint32_t>(i), reason};
    switch (section) {
      case FilterSection::kFits:
        *fits_end_++ = d;
        if (nodes_json_ != nullptr && i < nodes_json_->size()) {
          bytes_ += (*nodes_json_)[i].size() + 1;
        }
        break;
      case FilterSection::kFailed:
        *failed_end_++ = d;
        bytes_ += ReasonLength(reason, details);
        break;
      case FilterSection::kUnresolvable:
        *unresolvable_end_++ = d;
        bytes_ += ReasonLength(reason, details);
        break;
    }
  }
  /// The answer: the sections in request order, or only `error` when it is not empty.
  std::string Write(const std::string& error) const;

 private:
  size_t ReasonLength(int reason, const std::vector<std::string>& details) {
    if (reason < detail_base_) [[likely]] {
      return reasons_->length(reason);
    }
    return DetailLength(reason, details);
  }
  size_t DetailLength(int reason, const std::vector<std::string>& details);
  void AppendUnknown(std::string_view name);

  const std::vector<std::string>* nodes_json_;
  const PaddedStrings* reasons_;  ///< ':' and the quoted reason, by code (QuotedReasons)
  int detail_base_;               ///< the first code of the request's own reasons
  std::shared_ptr<const PaddedStrings> names_;
  Decided* fits_begin_;
  Decided* fits_end_;
  Decided* failed_begin_;
  Decided* failed_end_;
  Decided* unresolvable_begin_;
  Decided* unresolvable_end_;
  std::vector<uint32_t>* rejected_stamp_;  ///< this thread's marks by node index
  uint32_t stamp_;                         ///< this request's mark
  std::unordered_set<std::string_view> rejected_unknown_;
  std::vector<std::string> unknown_quoted_;
  PaddedStrings quoted_details_;  ///< ':' and the JSON string of each detail
  size_t bytes_ = 0;  ///< names, reasons and nodes listed, and their commas (one too many each)
};

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
