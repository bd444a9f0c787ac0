// The roofline's compute ceiling, measured: how many float32 FLOP/s this CPU's fused multiply-adds
// give on N threads. Benchmarks report kernels and whole models as a share of it, which holds
// across machines where absolute times do not (a datasheet's peak ignores clocks under load, SMT
// siblings and what else the machine runs).
#pragma once

namespace tessera::bench {

struct FmaPeak {
  double flops_per_second = 0;
  const char *isa = "";  // the widest FMA used: "avx512f", "avx2+fma" or "sse (mul+add)"
};

/// Best of `repeats` rounds of independent FMA chains (enough of them to cover the FMA units'
/// latency) on `threads` threads at once, each round about `seconds` long.
FmaPeak measure_fma_peak(int threads, double seconds = 0.1, int repeats = 3);

}  // namespace tessera::bench
