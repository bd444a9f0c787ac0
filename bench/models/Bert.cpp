// The BERT-base encoder: word and position embeddings, then layers of self-attention and a gelu
// feed-forward block, each closed by a residual add and layer norm (post-norm, as in BERT).
#include <cmath>
#include <numeric>

#include "bench/models/Layers.h"
#include "bench/models/Networks.h"

namespace tessera::models {

namespace {

constexpr double kBertEpsilon = 1e-12;

struct BertShape {
  int64_t batch, seq, hidden, heads, head_size;
};

/// Multi-head self-attention of x [B, S, H], with the output projection.
Tensor attention(LayerBuilder &b, const Tensor &x, const std::string &name, const BertShape &s) {
  std::vector<int64_t> split{s.batch, s.seq, s.heads, s.head_size};
  auto heads = [&](const std::string &which, const std::vector<int64_t> &perm) {
    return b.transpose(b.reshape(b.dense(x, name + "_" + which, s.hidden), split), perm);
  };
  Tensor q = heads("query", {0, 2, 1, 3});  // [B, heads, S, dh]
  Tensor k = heads("key", {0, 2, 3, 1});    // [B, heads, dh, S]
  Tensor v = heads("value", {0, 2, 1, 3});  // [B, heads, S, dh]
  Tensor scores = b.mul_scalar(b.matmul(q, k), 1.0 / std::sqrt(double(s.head_size)));
  Tensor context = b.matmul(b.softmax(scores, -1), v);
  context = b.reshape(b.transpose(context, {0, 2, 1, 3}), {s.batch, s.seq, s.hidden});
  return b.dense(context, name + "_output", s.hidden);
}

}  // namespace

Model build_bert_base(const ModelOptions &options) {
  LayerBuilder b("bert_base", options);
  BertShape s{options.batch, options.seq_len ? options.seq_len : 128, b.width(768), 0, 0};
  // 12 heads of 64 at full width; a divided width keeps 12 / gcd(12, divisor) heads where they
  // divide the hidden size (8 or 16: 3 heads), else fewer.
  s.heads = 12 / std::gcd<int64_t>(12, options.width_divisor);
  while (s.hidden % s.heads != 0) --s.heads;
  s.head_size = s.hidden / s.heads;
  const int64_t vocab = b.width(30522), layers = options.layers ? options.layers : 12;

  Tensor ids = b.token_input(s.seq, vocab);
  Tensor words = b.normal_weight("word_embeddings", {vocab, s.hidden}, 0, 0.5);
  Tensor positions = b.normal_weight("position_embeddings", {s.seq, s.hidden}, 0, 0.5);
  Tensor x = b.add(b.gather(words, ids), positions);
  x = b.layer_norm(x, "embeddings_ln", kBertEpsilon);
  for (int64_t layer = 0; layer < layers; ++layer) {
    std::string name = "layer" + std::to_string(layer);
    x = b.layer_norm(b.add(attention(b, x, name + "_attention", s), x), name + "_attention_ln",
                     kBertEpsilon);
    Tensor h = b.gelu(b.dense(x, name + "_intermediate", 4 * s.hidden));
    x = b.layer_norm(b.add(b.dense(h, name + "_output", s.hidden), x), name + "_output_ln",
                     kBertEpsilon);
  }
  return b.finish(x);
}

}  // namespace tessera::models
