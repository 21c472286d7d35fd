#pragma once

// The M/M/c queue (Erlang C): Poisson arrivals at rate λ, exponential service at rate μ per
// server, c servers, first come first served. The planner's analytic first guess of how many
// GPUs a class of single-GPU pods needs for a wait SLO, and the yardstick its replays are
// checked against. Pure functions; thread-safe.

namespace tessera {

/// The offered load a = λ/μ (Erlangs) on `servers` servers.
struct ErlangQueue {
  int servers = 1;
  double arrival_per_s = 0;  ///< λ
  double service_s = 1;      ///< 1/μ, the mean service time

  double load() const { return arrival_per_s * service_s; }
  /// Whether the queue is stable (a < c): otherwise the waits grow without bound.
  bool stable() const { return load() < servers; }
};

/// The probability that an arrival waits (Erlang C formula); 1 when unstable.
double ErlangWaitProbability(const ErlangQueue& q);
/// The mean wait in the queue, seconds; +inf when unstable.
double ErlangMeanWait(const ErlangQueue& q);
/// P(wait > t): C · exp(−(cμ − λ) t).
double ErlangWaitAbove(const ErlangQueue& q, double t_s);
/// The p-quantile of the wait (p in (0, 1)), seconds: 0 when P(wait) <= 1 − p; +inf when
/// unstable.
double ErlangWaitQuantile(const ErlangQueue& q, double p);
/// The least number of servers with the p-quantile of the wait <= t_s, for arrival rate λ and
/// mean service time; at least the least stable count (floor(a) + 1).
int ErlangLeastServers(double arrival_per_s, double service_s, double p, double t_s);

}  // namespace tessera
