#include "runtime/interp/Specials.h"

#include <algorithm>
#include <cstring>

#include "runtime/interp/Elementwise.h"
#include "runtime/interp/Prng.h"
#include "tile/Diagnostics.h"

namespace tessera::interp {

namespace {

using tile::DType;
using tile::Intrinsic;

int64_t inner_elements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (size_t d = 1; d < shape.size(); ++d) n *= shape[d];
  return n;
}

int64_t clamp_index(const HostTensor &idx, int64_t i, int64_t n) {
  int64_t v = tile::is_unsigned_int(idx.dtype()) && idx.get_uint(i) > INT64_MAX ? INT64_MAX
                                                                                : idx.get_int(i);
  return std::clamp<int64_t>(v, 0, n - 1);
}

HostTensor shape_of(const HostTensor &x) {
  HostTensor out(tile::TensorType{DType::Int32, {static_cast<int64_t>(x.shape().size())}});
  for (size_t d = 0; d < x.shape().size(); ++d) out.set_int(d, x.shape()[d]);
  return out;
}

HostTensor index_of(const HostTensor &x, int64_t axis) {
  HostTensor out(tile::TensorType{DType::Int32, x.shape()});
  int64_t inner = 1;
  for (size_t d = axis + 1; d < x.shape().size(); ++d) inner *= x.shape()[d];
  for (int64_t i = 0; i < out.elements(); ++i) out.set_int(i, (i / inner) % x.shape()[axis]);
  return out;
}

HostTensor gather(const HostTensor &x, const HostTensor &idx, const tile::TensorType &type) {
  HostTensor out(type);
  int64_t row = inner_elements(x.shape()), n = x.shape()[0];
  size_t row_bytes = row * tile::dtype_size(x.dtype());
  if (n == 0) return out;
  for (int64_t i = 0; i < idx.elements(); ++i)
    std::memcpy(out.data() + i * row_bytes, x.data() + clamp_index(idx, i, n) * row_bytes,
                row_bytes);
  return out;
}

HostTensor scatter(const HostTensor &x, const HostTensor &idx, const tile::TensorType &type) {
  HostTensor out(type);
  int64_t row = inner_elements(type.shape), n = type.shape[0];
  if (n == 0) return out;
  // Accumulate exactly (double for floats, wrapping int64 for integers) and round once.
  bool is_float = tile::is_float(type.dtype);
  std::vector<double> fsum(is_float ? out.elements() : 0);
  std::vector<uint64_t> isum(is_float ? 0 : out.elements());
  for (int64_t i = 0; i < idx.elements(); ++i) {
    int64_t dst = clamp_index(idx, i, n) * row;
    for (int64_t r = 0; r < row; ++r) {
      if (is_float)
        fsum[dst + r] += x.get_double(i * row + r);
      else
        isum[dst + r] += x.get_uint(i * row + r);
    }
  }
  for (int64_t i = 0; i < out.elements(); ++i) {
    if (is_float)
      out.set_double(i, fsum[i]);
    else
      out.set_uint(i, isum[i]);
  }
  return out;
}

// The state tensor a prng_step statement was called with.
const HostTensor &step_state(const tile::BoundProgram &p, const std::string &step,
                             const TensorMap &env) {
  for (const auto &s : p.statements) {
    if (s.output != step) continue;
    const auto &state = *s.expr()->args[0];
    TESSERA_INTERNAL_ASSERT(state.kind == tile::Expr::Kind::Ref, "prng state is not a tensor");
    return env.at(state.name);
  }
  TESSERA_INTERNAL_ASSERT(false, "no prng_step statement " + step);
  return env.begin()->second;
}

}  // namespace

HostTensor eval_special(const tile::BoundProgram &program, const tile::BoundStatement &s,
                        const TensorMap &env) {
  const tile::BoundExpr &e = *s.expr();
  auto arg = [&](size_t i) { return eval_expr(*e.args[i], env); };
  if (e.op == Intrinsic::Shape) return shape_of(arg(0));
  if (e.op == Intrinsic::Reshape) {
    HostTensor x = convert(arg(0), s.type.dtype);
    HostTensor out(s.type);
    std::memcpy(out.data(), x.data(), x.bytes());
    return out;
  }
  if (e.op == Intrinsic::Index) return index_of(arg(0), e.args[1]->int_value);
  if (e.op == Intrinsic::Gather) return gather(convert(arg(0), s.type.dtype), arg(1), s.type);
  if (e.op == Intrinsic::Scatter) return scatter(arg(0), arg(1), s.type);
  if (e.op == Intrinsic::PrngStep) {
    HostTensor out(s.type);
    uint64_t key = prng_key(arg(0));
    for (int64_t i = 0; i < out.elements(); ++i) out.set_uint(i, prng_bits(key, i, 0));
    return out;
  }
  if (e.op == Intrinsic::PrngValue) {
    HostTensor bits = arg(0), out(s.type);
    // The top 24 bits give every float32 in [0, 1) on a 2^-24 grid; 1.0 is never reached.
    for (int64_t i = 0; i < out.elements(); ++i)
      out.set_double(i, static_cast<double>(bits.get_uint(i) >> 8) * 0x1p-24);
    return out;
  }
  if (e.op == Intrinsic::PrngState) {
    const HostTensor &state = step_state(program, e.args[0]->name, env);
    HostTensor out(s.type);
    uint64_t key = prng_key(state);
    for (int64_t i = 0; i < out.elements(); ++i) out.set_uint(i, prng_bits(key, i, 1));
    return out;
  }
  TESSERA_INTERNAL_ASSERT(false, "not a special: " + std::string(tile::intrinsic_name(e.op)));
  return {};
}

}  // namespace tessera::interp
