#include "backends/llvm/ThreadPool.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace tessera::llvm_backend {

namespace {

thread_local bool in_parallel_body = false;

// Workers wait for a generation number to change, run their share of the current job and count
// down; the caller runs share 0 itself. One job at a time (a mutex serializes callers).
class Pool {
 public:
  Pool() : threads_(std::max(1u, std::thread::hardware_concurrency())) {
    for (int t = 1; t < threads_; ++t)
      workers_.emplace_back([this, t] { work(t); });
  }
  ~Pool() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
      ++generation_;
    }
    wake_.notify_all();
    for (auto &w : workers_)
      w.join();
  }
  int threads() const { return threads_; }

  void run(tessera_loop_body body, void *ctx, int64_t n) {
    int parts = static_cast<int>(std::min<int64_t>(threads_, n));
    if (parts <= 1 || in_parallel_body) {
      if (n > 0)
        body(ctx, 0, n);
      return;
    }
    std::lock_guard job_lock(job_mu_);
    {
      std::lock_guard lock(mu_);
      body_ = body, ctx_ = ctx, n_ = n, parts_ = parts, pending_ = parts - 1;
      ++generation_;
    }
    wake_.notify_all();
    run_part(0);
    std::unique_lock lock(mu_);
    done_.wait(lock, [&] { return pending_ == 0; });
  }

 private:
  void run_part(int part) {
    int64_t begin = n_ * part / parts_, end = n_ * (part + 1) / parts_;
    in_parallel_body = true;
    if (begin < end)
      body_(ctx_, begin, end);
    in_parallel_body = false;
  }
  void work(int t) {
    uint64_t seen = 0;
    for (;;) {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      if (stop_)
        return;
      if (t >= parts_)
        continue;
      lock.unlock();
      run_part(t);
      lock.lock();
      if (--pending_ == 0)
        done_.notify_one();
    }
  }

  int threads_;
  std::vector<std::thread> workers_;
  std::mutex job_mu_, mu_;
  std::condition_variable wake_, done_;
  uint64_t generation_ = 0;
  bool stop_ = false;
  tessera_loop_body body_ = nullptr;
  void *ctx_ = nullptr;
  int64_t n_ = 0;
  int parts_ = 0, pending_ = 0;
};

Pool &pool() {
  static Pool p;
  return p;
}

}  // namespace

int pool_threads() { return pool().threads(); }

}  // namespace tessera::llvm_backend

extern "C" void tessera_parallel_for(tessera_loop_body body, void *ctx, int64_t n) {
  tessera::llvm_backend::pool().run(body, ctx, n);
}
