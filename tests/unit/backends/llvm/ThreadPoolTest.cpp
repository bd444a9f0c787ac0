// The pool that runs JIT-compiled parallel loops: every iteration exactly once, whatever the
// iteration count, however often jobs follow each other, and serially inside a parallel body.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "backends/llvm/ThreadPool.h"

namespace {

struct Hits {
  std::vector<std::atomic<int>> count;
  explicit Hits(int64_t n) : count(n) {}
};

void hit(void *ctx, int64_t begin, int64_t end) {
  auto *h = static_cast<Hits *>(ctx);
  for (int64_t i = begin; i < end; ++i) h->count[i].fetch_add(1);
}

TEST(ThreadPool, RunsEveryIterationOnceForManyJobSizes) {
  for (int repeat = 0; repeat < 200; ++repeat)
    for (int64_t n : {0, 1, 2, 3, 7, 8, 9, 54, 109, 1000}) {
      Hits h(n);
      tessera_parallel_for(hit, &h, n);
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(h.count[i].load(), 1) << "n=" << n << " i=" << i;
    }
}

struct Nested {
  Hits inner{64};
  std::atomic<int> outer{0};
};

void nested_body(void *ctx, int64_t begin, int64_t end) {
  auto *s = static_cast<Nested *>(ctx);
  for (int64_t i = begin; i < end; ++i) {
    s->outer.fetch_add(1);
    tessera_parallel_for(hit, &s->inner, 64);  // runs serially on this thread
  }
}

TEST(ThreadPool, ANestedLoopRunsInsideItsIteration) {
  Nested s;
  tessera_parallel_for(nested_body, &s, 5);
  EXPECT_EQ(s.outer.load(), 5);
  for (int64_t i = 0; i < 64; ++i) EXPECT_EQ(s.inner.count[i].load(), 5);
}

// Jobs hand over without a lock while the threads spin; this goes through the sleeps: a pause
// longer than a worker's idle spin (it sleeps and must be woken by the next job), and a worker's
// chunk that keeps the caller waiting longer than its join spin (it sleeps and must be woken by the
// worker). A lost wake-up hangs the test.
std::thread::id caller_id;
std::atomic<int> worker_chunks{0};

void slow_hit(void *ctx, int64_t begin, int64_t end) {
  bool caller = std::this_thread::get_id() == caller_id;
  worker_chunks += !caller;
  std::this_thread::sleep_for(std::chrono::milliseconds(caller ? 5 : 20));
  hit(ctx, begin, end);
}

TEST(ThreadPool, WorkersAndCallerWakeFromTheirSleeps) {
  caller_id = std::this_thread::get_id();
  for (int repeat = 0; repeat < 10; ++repeat) {
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    Hits h(16);
    worker_chunks = 0;
    tessera_parallel_for(repeat % 2 ? slow_hit : hit, &h, 16);
    for (int64_t i = 0; i < 16; ++i) ASSERT_EQ(h.count[i].load(), 1) << "repeat " << repeat;
    // The caller alone would take 40 ms: a woken worker takes some of its chunks.
    if (repeat % 2 && tessera::llvm_backend::pool_threads() > 1) {
      EXPECT_GT(worker_chunks.load(), 0) << "repeat " << repeat;
    }
  }
}

// Each thread starts a job with its own share of the chunks (the caller the first), so that jobs
// split the same way give a thread the same part of every tensor (what it wrote stays in its
// core's cache); it takes the others' chunks only after its own, from their back.
std::mutex first_mu;
std::map<std::thread::id, int64_t> first_run;

void note_first(void *, int64_t begin, int64_t) {
  bool caller = std::this_thread::get_id() == caller_id;
  {
    std::lock_guard lock(first_mu);
    first_run.emplace(std::this_thread::get_id(), begin);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(caller ? 5 : 1));
}

TEST(ThreadPool, EachThreadStartsWithItsOwnShare) {
  int threads = tessera::llvm_backend::pool_threads();
  if (threads < 2) GTEST_SKIP() << "one thread";
  // With two, the caller takes the worker's chunks only after its own 20 ms. With more, a worker
  // that wakes late (a loaded machine) may find its share taken by the other workers, and begin in
  // another's: only the caller's start is certain.
  const bool workers_checked = threads == 2;
  caller_id = std::this_thread::get_id();
  const int64_t n = 4 * threads;  // one iteration a chunk, four chunks a share
  for (int repeat = 0; repeat < 5; ++repeat) {
    first_run.clear();
    tessera_parallel_for(note_first, nullptr, n);
    ASSERT_EQ(first_run.at(caller_id), 0) << "repeat " << repeat;
    for (const auto &[id, begin] : first_run)
      if (id != caller_id && workers_checked) {
        EXPECT_EQ(begin % 4, 0) << "a worker began inside a share: " << begin;
        EXPECT_NE(begin, 0) << "a worker began in the caller's share";
      }
  }
}

TEST(ThreadPool, JobsFromSeveralThreadsRunOneAtATime) {
  std::vector<std::thread> callers;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&] {
      for (int repeat = 0; repeat < 300; ++repeat) {
        Hits h(37);
        tessera_parallel_for(hit, &h, 37);
        for (int64_t i = 0; i < 37; ++i) wrong += h.count[i].load() != 1;
      }
    });
  for (auto &c : callers) c.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
