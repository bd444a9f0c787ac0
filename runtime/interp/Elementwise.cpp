#include "runtime/interp/Elementwise.h"

#include <cmath>
#include <limits>

#include "tile/Diagnostics.h"

namespace tessera::interp {

using tile::DType;
using tile::Intrinsic;
using tile::IntrinsicKind;

HostTensor convert(const HostTensor &t, DType dtype) {
  HostTensor out(tile::TensorType{dtype, t.shape()});
  for (int64_t i = 0; i < t.elements(); ++i) {
    if (tile::is_float(t.dtype()))
      out.set_double(i, t.get_double(i));
    else if (tile::is_unsigned_int(t.dtype()))
      out.set_uint(i, t.get_uint(i));
    else
      out.set_int(i, t.get_int(i));
  }
  return out;
}

namespace {

// The domain an operation computes in, from the dtype it computes for.
enum class Domain { Float, Signed, Unsigned };
Domain domain_of(DType t) {
  if (tile::is_float(t)) return Domain::Float;
  return tile::is_unsigned_int(t) ? Domain::Unsigned : Domain::Signed;
}

bool truthy(const HostTensor &t, int64_t i) {
  return tile::is_float(t.dtype()) ? t.get_double(i) != 0 : t.get_int(i) != 0;
}

double float_op(Intrinsic op, const double *a) {
  double x = a[0], y = a[1];
  switch (op) {
    case Intrinsic::Ident: return x;
    case Intrinsic::Add: return x + y;
    case Intrinsic::Sub: return x - y;
    case Intrinsic::Mul: return x * y;
    case Intrinsic::Div: return x / y;
    case Intrinsic::Neg: return -x;
    // max/min propagate NaN, as numpy's maximum/minimum do.
    case Intrinsic::Max: return std::isnan(x) || std::isnan(y) ? NAN : x > y ? x : y;
    case Intrinsic::Min: return std::isnan(x) || std::isnan(y) ? NAN : x < y ? x : y;
    case Intrinsic::Cond: return a[0] != 0 ? a[1] : a[2];
    case Intrinsic::Exp: return std::exp(x);
    case Intrinsic::Log: return std::log(x);
    case Intrinsic::Sqrt: return std::sqrt(x);
    case Intrinsic::Pow: return std::pow(x, y);
    case Intrinsic::Tanh: return std::tanh(x);
    case Intrinsic::Sin: return std::sin(x);
    case Intrinsic::Cos: return std::cos(x);
    case Intrinsic::Tan: return std::tan(x);
    case Intrinsic::Asin: return std::asin(x);
    case Intrinsic::Acos: return std::acos(x);
    case Intrinsic::Atan: return std::atan(x);
    case Intrinsic::Sinh: return std::sinh(x);
    case Intrinsic::Cosh: return std::cosh(x);
    case Intrinsic::Erf: return std::erf(x);
    case Intrinsic::Sigmoid: return 1 / (1 + std::exp(-x));
    case Intrinsic::Abs: return std::fabs(x);
    case Intrinsic::Floor: return std::floor(x);
    case Intrinsic::Ceil: return std::ceil(x);
    case Intrinsic::Round: return std::round(x);  // half away from zero
    case Intrinsic::Relu: return x > 0 ? x : (std::isnan(x) ? x : 0);
    case Intrinsic::CmpEq:
    case Intrinsic::CmpNe:
    case Intrinsic::CmpLt:
    case Intrinsic::CmpGt:
    case Intrinsic::CmpLe:
    case Intrinsic::CmpGe:
    case Intrinsic::BitAnd:
    case Intrinsic::BitOr:
    case Intrinsic::BitXor:
    case Intrinsic::BitNot:
    case Intrinsic::BitLeft:
    case Intrinsic::BitRight:
    case Intrinsic::AsFloat:
    case Intrinsic::AsInt:
    case Intrinsic::AsUInt:
    case Intrinsic::AsBool:
    case Intrinsic::Gather:
    case Intrinsic::Scatter:
    case Intrinsic::Shape:
    case Intrinsic::Reshape:
    case Intrinsic::Index:
    case Intrinsic::PrngStep:
    case Intrinsic::PrngState:
    case Intrinsic::PrngValue: break;
  }
  TESSERA_INTERNAL_ASSERT(false, "not a float operation: " + std::string(tile::intrinsic_name(op)));
  return 0;
}

// Integer operations on 64-bit two's complement values; `is_signed` and `bits` describe the
// result dtype (the caller wraps the result to it). Unsigned arithmetic avoids overflow UB.
uint64_t int_op(Intrinsic op, const uint64_t *a, bool is_signed, int bits) {
  uint64_t x = a[0], y = a[1];
  int64_t sx = static_cast<int64_t>(x), sy = static_cast<int64_t>(y);
  switch (op) {
    case Intrinsic::Ident: return x;
    case Intrinsic::Add: return x + y;
    case Intrinsic::Sub: return x - y;
    case Intrinsic::Mul: return x * y;
    case Intrinsic::Div:
      if (y == 0) return 0;  // defined as 0: devices cannot raise
      if (!is_signed) return x / y;
      if (sx == std::numeric_limits<int64_t>::min() && sy == -1) return x;  // wraps
      return static_cast<uint64_t>(sx / sy);                                // truncates toward zero
    case Intrinsic::Neg: return 0 - x;
    case Intrinsic::Max: return is_signed ? (sx > sy ? x : y) : (x > y ? x : y);
    case Intrinsic::Min: return is_signed ? (sx < sy ? x : y) : (x < y ? x : y);
    case Intrinsic::Cond: return a[0] != 0 ? a[1] : a[2];
    case Intrinsic::Abs: return is_signed && sx < 0 ? 0 - x : x;
    case Intrinsic::Floor:
    case Intrinsic::Ceil:
    case Intrinsic::Round: return x;
    case Intrinsic::Relu: return is_signed && sx < 0 ? 0 : x;
    case Intrinsic::BitAnd: return x & y;
    case Intrinsic::BitOr: return x | y;
    case Intrinsic::BitXor: return x ^ y;
    case Intrinsic::BitNot: return ~x;
    case Intrinsic::BitLeft:
      if (sy < 0 || sy >= bits) return 0;
      return x << sy;
    case Intrinsic::BitRight:
      if (is_signed) {
        if (sy < 0 || sy >= bits) return sx < 0 ? ~uint64_t{0} : 0;
        return static_cast<uint64_t>(sx >> sy);  // arithmetic
      }
      if (sy < 0 || sy >= bits) return 0;
      return x >> sy;
    case Intrinsic::CmpEq:
    case Intrinsic::CmpNe:
    case Intrinsic::CmpLt:
    case Intrinsic::CmpGt:
    case Intrinsic::CmpLe:
    case Intrinsic::CmpGe:
    case Intrinsic::Exp:
    case Intrinsic::Log:
    case Intrinsic::Sqrt:
    case Intrinsic::Pow:
    case Intrinsic::Tanh:
    case Intrinsic::Sin:
    case Intrinsic::Cos:
    case Intrinsic::Tan:
    case Intrinsic::Asin:
    case Intrinsic::Acos:
    case Intrinsic::Atan:
    case Intrinsic::Sinh:
    case Intrinsic::Cosh:
    case Intrinsic::Erf:
    case Intrinsic::Sigmoid:
    case Intrinsic::AsFloat:
    case Intrinsic::AsInt:
    case Intrinsic::AsUInt:
    case Intrinsic::AsBool:
    case Intrinsic::Gather:
    case Intrinsic::Scatter:
    case Intrinsic::Shape:
    case Intrinsic::Reshape:
    case Intrinsic::Index:
    case Intrinsic::PrngStep:
    case Intrinsic::PrngState:
    case Intrinsic::PrngValue: break;
  }
  TESSERA_INTERNAL_ASSERT(false,
                          "not an integer operation: " + std::string(tile::intrinsic_name(op)));
  return 0;
}

template <typename T>
bool compare(Intrinsic op, T x, T y) {
  if (op == Intrinsic::CmpEq) return x == y;
  if (op == Intrinsic::CmpNe) return x != y;
  if (op == Intrinsic::CmpLt) return x < y;
  if (op == Intrinsic::CmpGt) return x > y;
  if (op == Intrinsic::CmpLe) return x <= y;
  TESSERA_INTERNAL_ASSERT(op == Intrinsic::CmpGe, "not a comparison");
  return x >= y;
}

HostTensor literal(const tile::BoundExpr &e) {
  bool is_int = e.kind == tile::Expr::Kind::Int;
  HostTensor t(tile::TensorType{is_int ? DType::Int64 : DType::Float64, {}});
  if (is_int)
    t.set_int(0, e.int_value);
  else
    t.set_double(0, e.float_value);
  return t;
}

HostTensor eval_call(const tile::BoundExpr &e, const TensorMap &env) {
  std::vector<HostTensor> args;
  for (const auto &a : e.args) args.push_back(eval_expr(*a, env));
  const auto kind = tile::intrinsic_info(e.op).kind;
  HostTensor out(tile::TensorType{e.type.dtype, e.shape});
  if (kind == IntrinsicKind::Cast) {  // as_float/as_int/as_uint(X, bits), as_bool(X)
    if (e.op != Intrinsic::AsBool) return convert(args[0], e.type.dtype);
    for (int64_t i = 0; i < out.elements(); ++i) out.set_int(i, truthy(args[0], i));
    return out;
  }
  std::vector<const std::vector<int64_t> *> shapes;
  for (const auto &a : args) shapes.push_back(&a.shape());

  if (kind == IntrinsicKind::Compare) {
    tile::ValueType t = e.args[0]->type;
    for (const auto &a : e.args) t = tile::promote(t, a->type);
    Domain d = domain_of(t.dtype);
    for_each_broadcast(e.shape, shapes, [&](int64_t i, const int64_t *off) {
      bool r = d == Domain::Float
                   ? compare(e.op, args[0].get_double(off[0]), args[1].get_double(off[1]))
               : d == Domain::Unsigned
                   ? compare(e.op, args[0].get_uint(off[0]), args[1].get_uint(off[1]))
                   : compare(e.op, args[0].get_int(off[0]), args[1].get_int(off[1]));
      out.set_int(i, r);
    });
    return out;
  }

  // `cond` tests its first argument for truth whatever its type; the others compute in the
  // result's domain.
  size_t first_value = e.op == Intrinsic::Cond ? 1 : 0;
  Domain d = domain_of(e.type.dtype);
  bool is_signed = d == Domain::Signed;
  int bits = tile::dtype_bits(e.type.dtype);
  bool bool_not = e.op == Intrinsic::BitNot && e.type.dtype == DType::Bool;
  for_each_broadcast(e.shape, shapes, [&](int64_t i, const int64_t *off) {
    if (d == Domain::Float) {
      double v[3] = {0, 0, 0};
      for (size_t k = 0; k < args.size(); ++k)
        v[k] = k < first_value ? truthy(args[k], off[k]) : args[k].get_double(off[k]);
      out.set_double(i, float_op(e.op, v));
      return;
    }
    uint64_t v[3] = {0, 0, 0};
    for (size_t k = 0; k < args.size(); ++k)
      v[k] = k < first_value ? truthy(args[k], off[k]) : args[k].get_uint(off[k]);
    if (bool_not) return out.set_int(i, v[0] == 0);
    uint64_t r = int_op(e.op, v, is_signed, bits);
    // Wrap to the dtype: set_uint keeps the low bits.
    out.set_uint(i, r);
  });
  return out;
}

}  // namespace

HostTensor eval_expr(const tile::BoundExpr &e, const TensorMap &env) {
  switch (e.kind) {
    case tile::Expr::Kind::Int:
    case tile::Expr::Kind::Float: return literal(e);
    case tile::Expr::Kind::Ref: {
      auto it = env.find(e.name);
      TESSERA_INTERNAL_ASSERT(it != env.end(), "no value for " + e.name);
      return it->second;
    }
    case tile::Expr::Kind::Call: return eval_call(e, env);
  }
  TESSERA_INTERNAL_ASSERT(false, "bad expression kind");
  return {};
}

}  // namespace tessera::interp
