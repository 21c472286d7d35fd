#pragma once

#include "util/check.h"

namespace tessera {

/// The replay's time: virtual seconds from the start of the run, moved only by the event loop,
/// never backwards (an invariant, checked). Nothing in the replay reads the system clock.
/// Not thread-safe; one per run.
class VirtualClock {
 public:
  double now_s() const { return now_s_; }
  /// Moves to `t_s`; `t_s` must not be earlier than now.
  void AdvanceTo(double t_s) {
    TESSERA_CHECK(t_s >= now_s_);
    now_s_ = t_s;
  }

 private:
  double now_s_ = 0;
};

}  // namespace tessera
