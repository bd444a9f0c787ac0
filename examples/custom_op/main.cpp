// A complete custom op (Attention.cpp) registered by name, called by name, run on a device and
// checked against a plain C++ loop.
#include <cmath>
#include <cstdio>
#include <random>

#include "Attention.h"

using namespace tessera;

namespace {

HostTensor random_tensor(std::vector<int64_t> shape, std::mt19937 &rng) {
  HostTensor t(tile::TensorType{DType::Float32, std::move(shape)});
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int64_t i = 0; i < t.elements(); ++i) t.as<float>()[i] = dist(rng);
  return t;
}

// The same computation as plain loops: the independent reference.
double reference(const HostTensor &Q, const HostTensor &K, const HostTensor &V, int64_t b,
                 int64_t s, int64_t e) {
  int64_t S = Q.shape()[1], D = Q.shape()[2], T = K.shape()[1], E = V.shape()[2];
  std::vector<double> w(T);
  double peak = -INFINITY, total = 0, out = 0;
  for (int64_t t = 0; t < T; ++t) {
    double dot = 0;
    for (int64_t d = 0; d < D; ++d)
      dot += Q.as<float>()[(b * S + s) * D + d] * K.as<float>()[(b * T + t) * D + d];
    w[t] = dot / std::sqrt(static_cast<double>(D));
    peak = std::max(peak, w[t]);
  }
  for (int64_t t = 0; t < T; ++t) total += w[t] = std::exp(w[t] - peak);
  for (int64_t t = 0; t < T; ++t) out += w[t] * V.as<float>()[(b * T + t) * E + e];
  return out / total;
}

}  // namespace

int main(int argc, char **argv) {
  std::string device = argc > 1 ? argv[1] : "interp";
  OpRegistry ops = builtin_ops();
  register_attention(ops);

  const int64_t B = 2, S = 5, T = 7, D = 8, E = 3;
  Tensor q = Placeholder(DType::Float32, {B, S, D}, "Q");
  Tensor k = Placeholder(DType::Float32, {B, T, D}, "K");
  Tensor v = Placeholder(DType::Float32, {B, T, E}, "V");
  Function fn = build({{"O", ops.call("attention", {q, k, v}).at(0)}});
  std::printf("%s", fn.tile_text().c_str());

  std::mt19937 rng(7);
  TensorMap inputs;
  inputs.emplace("Q", random_tensor({B, S, D}, rng));
  inputs.emplace("K", random_tensor({B, T, D}, rng));
  inputs.emplace("V", random_tensor({B, T, E}, rng));
  TensorMap out = compile(fn, device)->run(inputs);

  double worst = 0;
  const HostTensor &o = out.at("O");
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t e = 0; e < E; ++e)
        worst = std::max(
            worst, std::abs(o.as<float>()[(b * S + s) * E + e] -
                            reference(inputs.at("Q"), inputs.at("K"), inputs.at("V"), b, s, e)));
  std::printf("attention on %s: max abs error vs reference loops = %.3g\n", device.c_str(), worst);
  return worst < 1e-5 ? 0 : 1;
}
