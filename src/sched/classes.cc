#include "sched/classes.h"

#include <algorithm>
#include <limits>

namespace tessera {

int QosClasses::Find(std::string_view qos) const {
  for (size_t i = 0; i < classes.size(); ++i) {
    if (classes[i].name == qos) return static_cast<int>(i);
  }
  return fallback;
}

int QosClasses::Classify(std::string_view label, int64_t priority) const {
  if (!label.empty()) {
    for (size_t i = 0; i < classes.size(); ++i) {
      if (classes[i].name == label) return static_cast<int>(i);
    }
  }
  int band = -1;
  int lowest = -1;
  for (size_t i = 0; i < classes.size(); ++i) {
    const int p = classes[i].priority;
    if (p <= priority && (band < 0 || p > classes[band].priority)) band = static_cast<int>(i);
    if (lowest < 0 || p < classes[lowest].priority) lowest = static_cast<int>(i);
  }
  return band >= 0 ? band : lowest;
}

int HeadroomProtectedPriority(const QosClasses& classes) {
  int lowest = std::numeric_limits<int>::max();
  for (const QosClass& c : classes.classes) {
    if (c.use_headroom) lowest = std::min(lowest, c.priority);
  }
  return lowest;
}

QosClasses DefaultQosClasses() {
  QosClasses q;
  q.classes = {
      {"LS", 1000, 1.0, false, 30, true},
      {"Guaranteed", 900, 10.0, false, 30, false},
      {"Burstable", 500, 60.0, true, 30, false},
      {"BE", 0, -1, true, 30, false},
  };
  q.fallback = 3;
  return q;
}

}  // namespace tessera
