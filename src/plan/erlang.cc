#include "plan/erlang.h"

#include <cmath>
#include <limits>

namespace tessera {

double ErlangWaitProbability(const ErlangQueue& q) {
  if (!q.stable()) return 1;
  // Erlang B by its recursion (stable for any c), then C = B / (1 − ρ(1 − B)).
  const double a = q.load();
  double b = 1;
  for (int k = 1; k <= q.servers; ++k) b = a * b / (k + a * b);
  const double rho = a / q.servers;
  return b / (1 - rho * (1 - b));
}

double ErlangMeanWait(const ErlangQueue& q) {
  if (!q.stable()) return std::numeric_limits<double>::infinity();
  const double drain = q.servers / q.service_s - q.arrival_per_s;  // cμ − λ
  return ErlangWaitProbability(q) / drain;
}

double ErlangWaitAbove(const ErlangQueue& q, double t_s) {
  if (!q.stable()) return 1;
  const double drain = q.servers / q.service_s - q.arrival_per_s;
  return ErlangWaitProbability(q) * std::exp(-drain * t_s);
}

double ErlangWaitQuantile(const ErlangQueue& q, double p) {
  if (!q.stable()) return std::numeric_limits<double>::infinity();
  const double c = ErlangWaitProbability(q);
  if (c <= 1 - p) return 0;
  const double drain = q.servers / q.service_s - q.arrival_per_s;
  return std::log(c / (1 - p)) / drain;
}

int ErlangLeastServers(double arrival_per_s, double service_s, double p, double t_s) {
  ErlangQueue q{static_cast<int>(std::floor(arrival_per_s * service_s)) + 1, arrival_per_s,
                service_s};
  while (ErlangWaitQuantile(q, p) > t_s) ++q.servers;
  return q.servers;
}

}  // namespace tessera
