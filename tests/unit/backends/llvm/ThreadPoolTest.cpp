// The pool that runs JIT-compiled parallel loops: every iteration exactly once, whatever the
// iteration count, however often jobs follow each other, and serially inside a parallel body.
#include <gtest/gtest.h>

#include <atomic>
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

}  // namespace
