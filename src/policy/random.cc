// random: one feasible node uniformly at random (the scheduler draws it, with the run's
// seeded Rng); a sharing pod goes to a GPU drawn uniformly among those with room.
#include "policy/builtin.h"

namespace tessera {
namespace {

class RandomPolicy final : public Policy {
 public:
  std::string_view name() const override { return "random"; }
  ScoreMode mode() const override { return ScoreMode::kUniformRandom; }
  NodeScore Score(const NodeView&, const PodRequest&) const override { return {}; }
};

}  // namespace

std::unique_ptr<Policy> MakeRandomPolicy(const PolicyContext&) {
  return std::make_unique<RandomPolicy>();
}

}  // namespace tessera
