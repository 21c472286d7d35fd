#include "sim/grid.h"

#include <atomic>
#include <mutex>
#include <optional>
#include <thread>

namespace tessera {

Result<std::vector<RunResult>> RunGrid(const std::vector<NodeSpec>& nodes,
                                       const std::vector<PodSpec>& pods,
                                       const TargetWorkload& workload,
                                       const std::vector<std::string>& policies,
                                       const std::vector<uint64_t>& seeds, int threads,
                                       const InflationOptions& options,
                                       const GridProgress& progress, const RunProgress& within) {
  const int total = static_cast<int>(policies.size() * seeds.size());
  std::vector<std::optional<RunResult>> results(total);
  std::atomic<int> next{0};
  std::mutex mu;
  int done = 0;
  std::optional<Error> error;
  auto worker = [&] {
    for (int k = next++; k < total; k = next++) {
      const std::string& policy = policies[k / seeds.size()];
      const uint64_t seed = seeds[k % seeds.size()];
      InflationOptions run_options = options;
      if (within) {
        run_options.progress = [&, seed](int64_t submitted, int64_t total) {
          std::lock_guard<std::mutex> lock(mu);
          within(policy, seed, submitted, total);
        };
      }
      Result<RunResult> r = RunInflation(nodes, pods, workload, policy, seed, run_options);
      std::lock_guard<std::mutex> lock(mu);
      if (!r.ok()) {
        if (!error) error = r.error();
        continue;
      }
      results[k] = std::move(r).value();
      ++done;
      if (progress) progress(done, total, *results[k]);
    }
  };
  const int n = std::max(1, std::min(threads, total));
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  if (error) return *error;
  std::vector<RunResult> out;
  out.reserve(total);
  for (auto& r : results) out.push_back(std::move(*r));
  return out;
}

}  // namespace tessera
