// SGEMM and ResNet-50 convolutions on Tessera's `cpu` device against OpenBLAS (cblas_sgemm) and
// oneDNN in the same binary, untuned (cost model) and tuned; items/s counters are FLOP/s. Fixed
// seeds; only the run is timed (compilation happens once, before the loop). Run with
// OPENBLAS_CORETYPE unset and OPENBLAS_NUM_THREADS=2 (ENVIRONMENT.md), and with
// --benchmark_repetitions=5
// --benchmark_enable_random_interleaving=true: repetitions of Tessera and its peer then alternate,
// so a change in the shared machine's load moves both sides of a ratio alike.
#include <cblas.h>

#include <random>
#include <string>
#include <thread>

#include <benchmark/benchmark.h>
#include <dnnl.hpp>

#include "backends/Registry.h"
#include "bench/kernels/ScratchCache.h"
#include "bench/peak/FmaPeak.h"
#include "tile/Parser.h"

extern "C" char *openblas_get_config();

namespace {

using tessera::HostTensor;

HostTensor random_tensor(std::vector<int64_t> shape, uint32_t seed) {
  HostTensor t(tessera::tile::TensorType{tessera::tile::DType::Float32, std::move(shape)});
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t i = 0; i < t.elements(); ++i) t.as<float>()[i] = u(rng);
  return t;
}

// FLOP/s (items/s) and their share of this CPU's FMA peak, measured once per process on as many
// threads as Tessera's pool, OpenBLAS and oneDNN use (one per core the machine gives).
void count_flops(benchmark::State &state, double flops) {
  static const double peak =
      tessera::bench::measure_fma_peak(static_cast<int>(std::thread::hardware_concurrency()))
          .flops_per_second;
  state.SetItemsProcessed(static_cast<int64_t>(flops) * state.iterations());
  state.counters["of_peak"] = benchmark::Counter(
      flops * static_cast<double>(state.iterations()) / peak, benchmark::Counter::kIsRate);
}

// Compiles `text` for `cpu` once and times Executable::run. Untuned: the cost model's schedules
// alone. Tuned: the tuner's, timed before the first repetition's loop (16 trials, 20 s per kernel)
// into a scratch cache file of this process (later repetitions find it there; no earlier run's
// cache is reused).
void run_tessera(benchmark::State &state, const std::string &text, const tessera::TensorMap &inputs,
                 double flops, bool tuned) {
  auto program = tessera::tile::parse_program(text);
  std::map<std::string, tessera::tile::TensorType> types;
  for (const auto &[n, t] : inputs) types[n] = t.type();
  auto bound = tessera::tile::bind(program, types);
  auto device = tessera::builtin_devices().create("cpu");
  tessera::CompileOptions options;
  options.policy = tuned ? tessera::TunePolicy::Online : tessera::TunePolicy::Off;
  options.budget = tessera::TuneBudget{16, 20};
  options.cache_path = tessera::bench::scratch_cache();
  auto exe = device->compile(bound, options);
  if (tuned && !exe->report().kernels.empty())
    state.SetLabel(exe->report().kernels.front().schedule);
  for (auto _ : state) benchmark::DoNotOptimize(exe->run(inputs));
  count_flops(state, flops);
}

void sgemm_tessera(benchmark::State &state, bool tuned) {
  int64_t n = state.range(0);
  run_tessera(
      state, "function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }",
      {{"A", random_tensor({n, n}, 1)}, {"B", random_tensor({n, n}, 2)}}, 2.0 * n * n * n, tuned);
}
void BM_Sgemm_Tessera(benchmark::State &state) { sgemm_tessera(state, false); }
void BM_Sgemm_TesseraTuned(benchmark::State &state) { sgemm_tessera(state, true); }

void BM_Sgemm_OpenBLAS(benchmark::State &state) {
  int n = static_cast<int>(state.range(0));
  HostTensor a = random_tensor({n, n}, 1), b = random_tensor({n, n}, 2),
             c = random_tensor({n, n}, 3);
  for (auto _ : state)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.f, a.as<float>(), n,
                b.as<float>(), n, 0.f, c.as<float>(), n);
  count_flops(state, 2.0 * n * n * n);
  state.SetLabel(openblas_get_config());
}

// ResNet-50 layers, batch 1, NHWC: {H(=W), CI, CO, kernel, stride}; padding "same" as in ResNet.
struct Conv {
  int64_t hw, ci, co, k, s;
};
const Conv kConvs[] = {{224, 3, 64, 7, 2},
                       {56, 64, 64, 3, 1},
                       {56, 64, 256, 1, 1},
                       {28, 128, 128, 3, 2},
                       {7, 512, 512, 3, 1}};

int64_t out_size(const Conv &c) { return (c.hw + c.s - 1) / c.s; }
double conv_flops(const Conv &c) {
  return 2.0 * out_size(c) * out_size(c) * c.co * c.ci * c.k * c.k;
}

void conv_tessera(benchmark::State &state, bool tuned) {
  const Conv &c = kConvs[state.range(0)];
  int64_t o = out_size(c), pad = ((o - 1) * c.s + c.k - c.hw) / 2;
  std::string text = "function (I[N, H, W, CI], K[KH, KW, CI, CO]) -> (O) { O[n, x, y, co : N, " +
                     std::to_string(o) + ", " + std::to_string(o) + ", CO] = +(I[n, " +
                     std::to_string(c.s) + "*x + i - " + std::to_string(pad) + ", " +
                     std::to_string(c.s) + "*y + j - " + std::to_string(pad) +
                     ", ci] * K[i, j, ci, co]); }";
  run_tessera(state, text,
              {{"I", random_tensor({1, c.hw, c.hw, c.ci}, 1)},
               {"K", random_tensor({c.k, c.k, c.ci, c.co}, 2)}},
              conv_flops(c), tuned);
}
void BM_Conv_Tessera(benchmark::State &state) { conv_tessera(state, false); }
void BM_Conv_TesseraTuned(benchmark::State &state) { conv_tessera(state, true); }

void BM_Conv_OneDNN(benchmark::State &state) {
  using namespace dnnl;  // NOLINT: benchmark brevity
  const Conv &c = kConvs[state.range(0)];
  int64_t o = out_size(c), pad = ((o - 1) * c.s + c.k - c.hw) / 2,
          pad_r = (o - 1) * c.s + c.k - c.hw - pad;
  engine eng(engine::kind::cpu, 0);
  stream strm(eng);
  memory::desc src({1, c.ci, c.hw, c.hw}, memory::data_type::f32, memory::format_tag::nhwc);
  memory::desc wei({c.co, c.ci, c.k, c.k}, memory::data_type::f32, memory::format_tag::any);
  memory::desc dst({1, c.co, o, o}, memory::data_type::f32, memory::format_tag::nhwc);
  convolution_forward::primitive_desc pd({prop_kind::forward_inference,
                                          algorithm::convolution_direct,
                                          src,
                                          wei,
                                          dst,
                                          {c.s, c.s},
                                          {pad, pad},
                                          {pad_r, pad_r}},
                                         eng);
  HostTensor in = random_tensor({1, c.hw, c.hw, c.ci}, 1), out = random_tensor({1, o, o, c.co}, 3);
  memory src_m(src, eng, in.data()), dst_m(dst, eng, out.data()), wei_m(pd.weights_desc(), eng);
  // The same random weights as Tessera's (HWIO), reordered into oneDNN's blocked layout: memory
  // left uninitialized could hold denormals and time something else.
  HostTensor k = random_tensor({c.k, c.k, c.ci, c.co}, 2);
  memory user_wei({{c.co, c.ci, c.k, c.k}, memory::data_type::f32, memory::format_tag::hwio}, eng,
                  k.data());
  reorder(user_wei, wei_m).execute(strm, user_wei, wei_m);
  strm.wait();
  convolution_forward conv(pd);
  for (auto _ : state) {
    conv.execute(strm, {{DNNL_ARG_SRC, src_m}, {DNNL_ARG_WEIGHTS, wei_m}, {DNNL_ARG_DST, dst_m}});
    strm.wait();
  }
  count_flops(state, conv_flops(c));
}

}  // namespace

BENCHMARK(BM_Sgemm_Tessera)
    ->Arg(256)
    ->Arg(512)
    ->Arg(1024)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Sgemm_TesseraTuned)
    ->Arg(256)
    ->Arg(512)
    ->Arg(1024)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Sgemm_OpenBLAS)
    ->Arg(256)
    ->Arg(512)
    ->Arg(1024)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Conv_Tessera)->DenseRange(0, 4)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Conv_TesseraTuned)->DenseRange(0, 4)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Conv_OneDNN)->DenseRange(0, 4)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();
