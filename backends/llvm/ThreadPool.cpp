#include "backends/llvm/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace tessera::llvm_backend {

namespace {

thread_local bool in_parallel_body = false;

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins until `ready()` or until `limit` has passed; whether it became ready. A kernel runs its
// parallel loops back to back (a padded convolution: interior, then borders) and a benchmark runs
// kernels back to back: a worker that went to sleep between them costs a wake-up, and the
// scheduler may wake it onto a core another process keeps busy.
template <typename Ready>
bool spin_until(Ready ready, std::chrono::microseconds limit) {
  auto start = std::chrono::steady_clock::now();
  for (int i = 0;; ++i) {
    if (ready()) return true;
    cpu_relax();
    if (i % 64 == 63 && std::chrono::steady_clock::now() - start > limit) return false;
  }
}

// How long a worker spins for the next job, and the caller for the workers' last chunks, before
// sleeping. The caller finishes its chunks while a worker is still in its last one (up to an
// eighth of the loop): with 20 us it slept at the end of nearly every kernel and a worker woke
// only with the next one, about 60 sleeps and wake-ups per ResNet-50 run (3704 voluntary context
// switches in `tessera bench resnet50`, 47 now). A wake-up costs tens of microseconds on a virtual
// machine; spinning a millisecond or two costs a core that would otherwise idle. On the 2-core
// Intel Xeon VM (AVX-512), alternating binaries, fastest run: ResNet-50 0.87x, MobileNetV2
// 0.81-0.83x, Inception 0.90-0.93x. (5 ms each was no better.)
constexpr std::chrono::microseconds kIdleSpin{1000}, kJoinSpin{2000};

// A job's iterations are cut into chunks, and the chunks into one contiguous share per thread (the
// caller's first). Each thread runs its own share from the front, then takes the chunks left in
// the others' shares from their back. Own shares first: consecutive kernels split the same way
// (rows, say) give a thread the part of the tensor it wrote itself, still in its core's cache; with
// chunks claimed from one shared counter the split changed from kernel to kernel and a core read
// about half its inputs from the other core's cache. Taking from the others: on a machine shared
// with other processes a thread may lose its core for a while, and the others then run its chunks
// instead of waiting for them. Chunks stay contiguous ranges (neighbouring tiles share input rows).
//
// Handing a job over takes no lock while the threads spin: `state_` is odd while a job is open, and
// each job gets a new value. A worker that sees an open job announces itself in `inside_` and runs
// chunks only if the job is still the one it saw; the caller writes the next job's fields only once
// no worker is inside. (With a mutex around each hand-over, a CIFAR ResNet's 17 kernels spent about
// 5% of the caller's time locking, and the worker sometimes slept on the lock mid-kernel.) The
// mutex and condition variables remain for sleeping, after the spins.
class Pool {
 public:
  Pool() : threads_(std::max(1u, std::thread::hardware_concurrency())), shares_(threads_) {
    for (int t = 1; t < threads_; ++t) workers_.emplace_back([this, t] { work(t); });
  }
  ~Pool() {
    stop_.store(true);
    { std::lock_guard lock(mu_); }  // a worker about to sleep sees stop_ first, or is woken
    wake_.notify_all();
    for (auto &w : workers_) w.join();
  }
  int threads() const { return threads_; }

  void run(tessera_loop_body body, void *ctx, int64_t n) {
    if (threads_ <= 1 || n <= 1 || in_parallel_body) {
      if (n > 0) body(ctx, 0, n);
      return;
    }
    std::lock_guard job_lock(job_mu_);
    // A worker that saw the last job open may still be about to leave it.
    if (!spin_until([&] { return inside_.load() == 0; }, kJoinSpin))
      while (inside_.load() != 0) std::this_thread::yield();
    body_ = body, ctx_ = ctx, n_ = n;
    chunks_ = std::min<int64_t>(n, 4 * threads_);
    for (int t = 0; t < threads_; ++t)
      shares_[t].chunks.store(pack(chunks_ * t / threads_, chunks_ * (t + 1) / threads_));
    done_.store(0);
    const uint64_t open = state_.load() + 1;
    state_.store(open);
    if (sleepers_.load() > 0) {
      std::lock_guard lock(mu_);
      wake_.notify_all();
    }
    run_chunks(0);
    auto finished = [&] { return done_.load() == chunks_; };
    if (!spin_until(finished, kJoinSpin)) {
      std::unique_lock lock(mu_);
      caller_waits_.store(true);
      done_cv_.wait(lock, finished);
      caller_waits_.store(false);
    }
    state_.store(open + 1);  // closed: a worker that wakes only now stays out
  }

 private:
  // A share's chunks not yet claimed, [front, back), in one word so that its owner (from the front)
  // and the others (from the back) claim each chunk once.
  static uint64_t pack(int64_t front, int64_t back) {
    return static_cast<uint64_t>(front) | static_cast<uint64_t>(back) << 32;
  }
  // Claims the front (or back) chunk of share `t`; -1 when it has none left.
  int64_t claim(int t, bool front) {
    uint64_t v = shares_[t].chunks.load();
    for (;;) {
      int64_t f = static_cast<uint32_t>(v), b = static_cast<int64_t>(v >> 32);
      if (f >= b) return -1;
      if (shares_[t].chunks.compare_exchange_weak(v, front ? pack(f + 1, b) : pack(f, b - 1)))
        return front ? f : b - 1;
    }
  }
  // Runs thread `self`'s share of the current job, then whatever the others have left.
  void run_chunks(int self) {
    in_parallel_body = true;
    for (int i = 0; i < threads_; ++i) {
      int t = (self + i) % threads_;
      for (int64_t c; (c = claim(t, i == 0)) >= 0;) {
        body_(ctx_, n_ * c / chunks_, n_ * (c + 1) / chunks_);
        done_.fetch_add(1);
      }
    }
    in_parallel_body = false;
  }
  void work(int self) {
    uint64_t seen = 0, s = 0;
    auto fresh = [&] {
      s = state_.load();
      return (s % 2 == 1 && s != seen) || stop_.load();
    };
    for (;;) {
      if (!spin_until(fresh, kIdleSpin)) {
        std::unique_lock lock(mu_);
        sleepers_.fetch_add(1);
        wake_.wait(lock, fresh);
        sleepers_.fetch_sub(1);
      }
      if (stop_.load()) return;
      seen = s;
      inside_.fetch_add(1);
      if (state_.load() == s) run_chunks(self);
      inside_.fetch_sub(1);
      if (caller_waits_.load()) {
        std::lock_guard lock(mu_);
        done_cv_.notify_one();
      }
    }
  }

  int threads_;
  std::vector<std::thread> workers_;
  std::mutex job_mu_, mu_;
  std::condition_variable wake_, done_cv_;
  std::atomic<uint64_t> state_{0};  // odd: a job is open; each job a new value
  std::atomic<bool> stop_{false}, caller_waits_{false};
  std::atomic<int> sleepers_{0}, inside_{0};
  // The current job; written by the caller while no worker is inside, before state_ opens it.
  tessera_loop_body body_ = nullptr;
  void *ctx_ = nullptr;
  int64_t n_ = 0, chunks_ = 0;
  // Per thread: pack(front, back) of its chunks, each on a cache line of its own, so that the
  // threads claiming their own chunks do not take one line from each other.
  struct alignas(64) Share {
    std::atomic<uint64_t> chunks;
  };
  std::vector<Share> shares_;
  std::atomic<int64_t> done_{0};
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
