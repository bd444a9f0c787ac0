// The prng specials and dropout.
#include "frontends/ops/Random.h"

#include "frontends/edsl/TensorNode.h"
#include "frontends/ops/Elementwise.h"
#include "frontends/ops/Library.h"

namespace tessera::ops {

Tensor prng_step(const Tensor &state, const std::vector<int64_t> &shape) {
  std::vector<Tensor> args{state};
  for (int64_t d : shape) args.emplace_back(d);
  return call(tile::Intrinsic::PrngStep, args);
}

namespace {

// prng_value and prng_state read the statement that computes their step, which the EDSL's type
// inference cannot show them (it binds each call with its operands as inputs), so their nodes are
// typed here by the rule tile::bind applies to the whole program.
Tensor prng_read(tile::Intrinsic op, const Tensor &step) {
  const auto &s = step.node();
  if (!s || s->kind != edsl_detail::TensorNode::Kind::Call || s->op != tile::Intrinsic::PrngStep)
    throw EdslError(std::string(tile::intrinsic_name(op)) + ": step must be the result of prng_step");
  auto n = edsl_detail::make_node(edsl_detail::TensorNode::Kind::Call);
  n->op = op;
  n->args = {s};
  const auto &state = s->args.at(0);
  n->type = op == tile::Intrinsic::PrngValue ? tile::ValueType{DType::Float32, false} : state->type;
  n->shape = op == tile::Intrinsic::PrngValue ? s->shape : state->shape;
  return Tensor(n);
}

}  // namespace

Tensor prng_value(const Tensor &step) { return prng_read(tile::Intrinsic::PrngValue, step); }
Tensor prng_state(const Tensor &step) { return prng_read(tile::Intrinsic::PrngState, step); }

Dropout dropout(const Tensor &x, const Tensor &state, double rate) {
  if (!(rate >= 0 && rate < 1))
    throw EdslError("dropout: rate " + std::to_string(rate) + " is outside [0, 1)");
  if (state.dtype() != DType::UInt32 || state.rank() != 2 || state.shape()[0] != 3)
    throw EdslError("dropout: state must be uint32 [3, N], not " + std::string(tile::dtype_name(state.dtype())) +
                    " " + shape_text(state.shape()));
  if (!tile::is_float(x.dtype()))
    throw EdslError("dropout: x must be a float tensor, not " + std::string(tile::dtype_name(x.dtype())));
  Tensor step = prng_step(state, x.shape());
  Tensor keep = prng_value(step) >= rate;
  return {select(keep, x / (1 - rate), 0), prng_state(step)};
}

void register_random_ops(OpRegistry &registry) {
  // Inputs (x, state); outputs (y, next state).
  registry.add("dropout", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    expect_inputs(attrs, in, 2, 2);
    if (!attrs.has("rate")) throw EdslError("dropout: missing attribute 'rate'");
    Dropout d = dropout(in[0], in[1], attrs.get_float("rate", 0));
    return std::vector<Tensor>{d.y, d.state};
  });
}

}  // namespace tessera::ops
