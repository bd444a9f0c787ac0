#include "backends/clike/ParallelBuild.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace tessera::clike {

void build_on_all_cores(size_t n, const std::function<void(size_t)> &build) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < n;) build(i);
  };
  const size_t threads = std::min<size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  if (threads > 0) work();
  for (auto &t : pool) t.join();
}

}  // namespace tessera::clike
