#include "replay/qos.h"

namespace tessera {

int QosClasses::Find(std::string_view qos) const {
  for (size_t i = 0; i < classes.size(); ++i) {
    if (classes[i].name == qos) return static_cast<int>(i);
  }
  return fallback;
}

QosClasses DefaultQosClasses() {
  QosClasses q;
  q.classes = {
      {"LS", 1000, 1.0, false, 30},
      {"Guaranteed", 900, 10.0, false, 30},
      {"Burstable", 500, 60.0, true, 30},
      {"BE", 0, -1, true, 30},
  };
  q.fallback = 3;
  return q;
}

}  // namespace tessera
