#include "bench/peak/FmaPeak.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace tessera::bench {

namespace {

// Independent accumulators, enough to cover the FMA units' latency (4 cycles, 2 units: 8 chains)
// and few enough to stay in registers with the two constants (AVX2 has 16 of them, AVX-512 32).
// GCC's vector extensions contract `a * b + c` into one FMA under the target attribute
// (-ffp-contract=fast is its default outside ISO mode); the loop is unrolled so that the chains
// live in registers. Inlined into each target-specific caller, which compiles it for its width.
template <typename V, int Chains>
__attribute__((always_inline)) inline float chains(long iterations) {
  V acc[Chains];
  for (int c = 0; c < Chains; ++c) acc[c] = V{} + 1.0f + 0.001f * static_cast<float>(c);
  V mul = V{} + 0.999999f, add = V{} + 1e-7f;
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int c = 0; c < Chains; ++c) acc[c] = acc[c] * mul + add;
  }
  V sum = V{};
  for (int c = 0; c < Chains; ++c) sum += acc[c];
  return sum[0];  // used, so the loop stays
}

typedef float V16 __attribute__((vector_size(64)));
typedef float V8 __attribute__((vector_size(32)));
typedef float V4 __attribute__((vector_size(16)));

__attribute__((target("avx512f"))) float run_avx512(long n) { return chains<V16, 16>(n); }
__attribute__((target("avx2,fma"))) float run_avx2(long n) { return chains<V8, 12>(n); }
float run_sse(long n) { return chains<V4, 12>(n); }

struct Kernel {
  float (*run)(long);
  int flops_per_iteration;  // 2 per lane per chain
  const char *isa;
};

Kernel widest() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {run_avx512, 2 * 16 * 16, "avx512f"};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {run_avx2, 2 * 8 * 12, "avx2+fma"};
  return {run_sse, 2 * 4 * 12, "sse (mul+add)"};
}

double seconds_of(const Kernel &k, int threads, long iterations) {
  std::atomic<float> sink{0};
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back([&] { sink = sink + k.run(iterations); });
  for (auto &t : pool) t.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

FmaPeak measure_fma_peak(int threads, double seconds, int repeats) {
  Kernel k = widest();
  threads = std::max(threads, 1);
  // Double the iterations until a round on one thread takes a quarter of `seconds`, then 4 times
  // that: about `seconds` a round.
  long iterations = 1 << 12;
  while (seconds_of(k, 1, iterations) < seconds / 4 && iterations < (1L << 40)) iterations *= 2;
  iterations *= 4;
  double best = 0;
  for (int r = 0; r < repeats; ++r) {
    double s = seconds_of(k, threads, iterations);
    best = std::max(best, static_cast<double>(k.flops_per_iteration) *
                              static_cast<double>(iterations) * threads / s);
  }
  return {best, k.isa};
}

}  // namespace tessera::bench
