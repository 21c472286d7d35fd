#include "k8s/hami/score.h"

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "k8s/api/json_util.h"

namespace tessera::k8s {

Result<std::vector<HamiPairScore>> ParseHamiNodeScore(std::string_view value,
                                                      std::string_view base) {
  using Json = nlohmann::json;
  Result<Json> parsed = ParseJson(value, kDefaultMaxBodyBytes, base);
  if (!parsed.ok()) return parsed.error();
  const Json& list = *parsed;
  if (!list.is_array()) return TypeError(base, "array", list);
  std::vector<HamiPairScore> out;
  std::set<std::string> seen;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = PathIndex(base, i);
    const Json& entry = list[i];
    if (!entry.is_object()) return TypeError(path, "object", entry);
    HamiPairScore s;
    TESSERA_RETURN_IF_ERROR(ReadString(FindField(entry, "uuid"), PathKey(path, "uuid"), &s.uuid));
    if (s.uuid.empty()) return Error{PathKey(path, "uuid") + ": empty GPU uuid"};
    if (!seen.insert(s.uuid).second) {
      return Error{PathKey(path, "uuid") + ": GPU " + QuoteForError(s.uuid) + " listed twice"};
    }
    const Json* scores = FindField(entry, "score");
    const std::string spath = PathKey(path, "score");
    if (scores != nullptr && !scores->is_null()) {
      if (!scores->is_object()) return TypeError(spath, "object", *scores);
      for (auto it = scores->begin(); it != scores->end(); ++it) {
        int64_t v = 0;
        const std::string kpath = spath + "[" + QuoteForError(it.key(), 256) + "]";
        TESSERA_RETURN_IF_ERROR(ReadInt64(&*it, kpath, 0, kMaxHamiPairScore, &v));
        if (it->is_null()) return TypeError(kpath, "number", *it);
        s.scores.emplace_back(it.key(), v);
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace tessera::k8s
