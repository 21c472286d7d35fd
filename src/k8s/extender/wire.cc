#include "k8s/extender/wire.h"

#include <array>
#include <utility>

#include "k8s/api/json_util.h"
#include "k8s/extender/node_filter.h"

namespace tessera::k8s {

FilterAnswerBuilder::FilterAnswerBuilder(size_t candidates,
                                         const std::vector<std::string>* nodes_json)
    : nodes_json_(nodes_json), reasons_(&QuotedReasons()), detail_base_(kReasonDetail) {
  thread_local std::vector<Decided> fits_list, failed_list, unresolvable_list;
  for (std::vector<Decided>* list : {&fits_list, &failed_list, &unresolvable_list}) {
    if (list->size() < candidates) list->resize(candidates);
  }
  fits_begin_ = fits_end_ = fits_list.data();
  failed_begin_ = failed_end_ = failed_list.data();
  unresolvable_begin_ = unresolvable_end_ = unresolvable_list.data();
  // Known nodes refused are marked with this request's stamp by node index.
  thread_local std::vector<uint32_t> rejected_stamp;
  thread_local uint32_t request_stamp = 0;
  if (++request_stamp == 0) {  // wrapped: forget every mark
    std::fill(rejected_stamp.begin(), rejected_stamp.end(), 0);
    request_stamp = 1;
  }
  rejected_stamp_ = &rejected_stamp;
  stamp_ = request_stamp;
}

size_t FilterAnswerBuilder::DetailLength(int reason, const std::vector<std::string>& details) {
  while (quoted_details_.size() < details.size()) {
    std::string q = ":";
    AppendJsonString(&q, details[quoted_details_.size()]);
    quoted_details_.Add(q);
  }
  return quoted_details_.length(reason - detail_base_);
}

void FilterAnswerBuilder::AppendUnknown(std::string_view name) {
  AppendJsonString(&unknown_quoted_.emplace_back(), name);
  bytes_ += unknown_quoted_.back().size() + 1;
}

std::string FilterAnswerBuilder::Write(const std::string& error) const {
  return WriteFilterAnswer({std::span<const Decided>(fits_begin_, fits_end_),
                            std::span<const Decided>(failed_begin_, failed_end_),
                            std::span<const Decided>(unresolvable_begin_, unresolvable_end_),
                            *names_, unknown_quoted_, *reasons_, detail_base_, quoted_details_,
                            nodes_json_, bytes_, error});
}

std::string WriteFilterAnswer(const FilterAnswer& a) {
  static constexpr std::string_view kHead = "{\"Nodes\":";
  static constexpr std::string_view kItems = "{\"metadata\":{},\"items\":[";
  static constexpr std::string_view kNames = ",\"NodeNames\":[";
  static constexpr std::string_view kFailed = "],\"FailedNodes\":{";
  static constexpr std::string_view kUnresolvable = "},\"FailedAndUnresolvableNodes\":{";
  static constexpr std::string_view kError = "},\"Error\":";
  const PaddedStrings& quoted = a.names;
  const std::span<const Decided> fits = a.fits;
  const std::span<const Decided> failed = a.failed;
  const std::span<const Decided> unresolvable = a.unresolvable;
  const std::string& error = a.error;
  const std::vector<std::string>* nodes_json = a.nodes_json;
  const bool with_nodes = nodes_json != nullptr && error.empty();
  std::string error_json;
  AppendJsonString(&error_json, error);
  std::string out;
  out.resize(a.bytes + kHead.size() + kItems.size() + 2 + 4 + kNames.size() + kFailed.size() +
             kUnresolvable.size() + kError.size() + error_json.size() + 1 + kCopyPad);
  PresizedWriter w(&out);
  const auto name_of = [&](const Decided& d) {
    if (d.quoted >= 0) [[likely]] {
      w.PutPadded(quoted[d.quoted]);
    } else {
      w.Put(a.unknown_names[-1 - d.quoted]);
    }
  };
  w.Put(kHead);
  if (with_nodes) {
    w.Put(kItems);
    bool any = false;
    for (const Decided& d : fits) {
      if (d.index >= nodes_json->size()) continue;
      w.Put((*nodes_json)[d.index]);
      w.Put(',');
      any = true;
    }
    if (any) w.Unput();
    w.Put("]}");
  } else {
    w.Put("null");
  }
  w.Put(kNames);
  if (error.empty()) {
    for (const Decided& d : fits) {
      name_of(d);
      w.Put(',');
    }
    if (!fits.empty()) w.Unput();
  }
  // By position, not by address: with no candidates both sections may be empty spans at the
  // same address (a thread's first request), and each must still get its own key.
  const std::array<std::pair<std::string_view, std::span<const Decided>>, 2> sections = {
      {{kFailed, failed}, {kUnresolvable, unresolvable}}};
  for (const auto& [key, section] : sections) {
    w.Put(key);
    if (!error.empty()) continue;
    for (const Decided& d : section) {
      name_of(d);
      w.PutPadded(d.reason < a.detail_base ? a.reasons[d.reason]
                                           : a.details[d.reason - a.detail_base]);
      w.Put(',');
    }
    if (!section.empty()) w.Unput();
  }
  w.Put(kError);
  w.Put(error_json);
  w.Put('}');
  w.Finish();
  return out;
}

std::string WritePrioritizeAnswer(std::span<const ScoredCandidate> scored,
                                  const PaddedStrings& hosts,
                                  std::span<const std::string_view> names) {
  // Written into a buffer sized for plain names ({"Host":"<name>","Score":10}, 24 bytes
  // besides the name, and a comma), grown where a name needs escapes. Every entry is followed
  // by ',' and the last one is taken back.
  static constexpr std::string_view kHost = "{\"Host\":";
  static constexpr std::string_view kScore = ",\"Score\":";
  // "<score>}," for the scores 0..10, as four bytes and a length.
  static constexpr std::array<char[5], 11> kTail = {"0},", "1},", "2},", "3},", "4},", "5},",
                                                    "6},", "7},", "8},", "9},", "10},"};
  std::string unknown;
  // Room for every candidate as a known node (its entry, a score of up to two digits, "},")
  // and the padding: a known node needs no check. An unknown name, whose escaped form may be
  // longer, grows the buffer so that the candidates after it keep that room.
  const size_t room = hosts.max_length() + 4;
  std::string out;
  out.resize(names.size() * room + kCopyPad + 2);
  PresizedWriter w(&out);
  w.Put('[');
  // Every candidate in order, or none when PodToSpec rejected the pod.
  const size_t count = scored.size();
  for (size_t i = 0; i < count; ++i) {
    const auto [node, score] = scored[i];
    // What the candidates after this one need (the slow paths keep it).
    const auto after = [&] { return (count - i - 1) * room + kCopyPad + 2; };
    if (node >= 0) [[likely]] {
      w.PutPadded(hosts[node]);
    } else {
      unknown.clear();
      AppendJsonString(&unknown, names[i]);
      w.Ensure(kHost.size() + unknown.size() + kScore.size() + 4 + after());
      w.Put(kHost);
      w.Put(unknown);
      w.Put(kScore);
    }
    if (score >= 0 && score <= 10) [[likely]] {
      w.PutFour(kTail[score], score == 10 ? 4 : 3);
    } else {  // not reached: scores are 0..10
      const std::string text = std::to_string(score) + "},";
      w.Ensure(text.size() + after());
      w.Put(text);
    }
  }
  if (count > 0) w.Unput();
  w.Ensure(1);
  w.Put(']');
  w.Finish();
  return out;
}

}  // namespace tessera::k8s
