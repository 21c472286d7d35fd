#pragma once

// A bind, in both modes: the checks (ExtenderState::CheckBind: a pod some filter saw, a node this
// extender's filter passed for it, not blocked), the assumption with the GPU choice under the
// headroom (ExtenderState::Assume), and in API mode the handoff through the API — a read of the
// node's pods first, then the Binding with the GPU annotations in it (tessera.io/gpu-indices;
// with HAMi's register on the node also HAMi's, see k8s/hami/annotations.h) — with the lock
// released around each API call. See Extender::Bind.

#include <condition_variable>
#include <set>
#include <string>

#include "k8s/extender/extender_options.h"
#include "k8s/extender/extender_protocol.h"
#include "k8s/extender/extender_state.h"
#include "util/mutex.h"

namespace tessera::k8s {

struct ExtenderMetrics;  // metrics.h

class Binder {
 public:
  /// `live.api` null: file mode (the bind is confirmed at once, nothing is written).
  explicit Binder(LiveOptions live) : live_(live) {}
  Binder(const Binder&) = delete;
  Binder& operator=(const Binder&) = delete;

  /// Binds `args.pod_uid` to `args.node` on `state`, which `mutex` guards; API mode releases
  /// `mutex` around its API calls, and waits for a concurrent bind of the same UID. Counts the
  /// outcome in `metrics`; the wait of a pod bound ends (ExtenderState::WaitEnded).
  ExtenderBindingResult Bind(const ExtenderBindingArgs& args, Mutex& mutex, ExtenderState& state,
                             ExtenderMetrics& metrics) TESSERA_REQUIRES(mutex);

 private:
  ExtenderBindingResult BindThroughApi(const ExtenderBindingArgs& args, Mutex& mutex,
                                       ExtenderState& state, ExtenderMetrics& metrics)
      TESSERA_REQUIRES(mutex);

  LiveOptions live_;
  std::set<std::string> binding_;          ///< UIDs whose API bind is in flight (under `mutex`)
  std::condition_variable_any bind_done_;  ///< signalled when binding_ shrinks
};

}  // namespace tessera::k8s
