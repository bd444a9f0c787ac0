#include "runtime/interp/Contraction.h"

#include <cmath>
#include <numeric>

#include "tile/Affine.h"
#include "tile/Diagnostics.h"
#include "tile/IndexRanges.h"

namespace tessera::interp {

namespace {

using tile::AggOp;
using tile::CombOp;

// One affine form of the contraction scaled to integers: its value is
// (constant + sum coeffs[j] * x_j) / den, and a point is valid only when that is an integer in
// [0, limit). Access dimensions carry the operand slot (0 = output, k = input k-1) and the
// dimension's C-order stride; constraints have slot -1.
struct Row {
  std::vector<int64_t> coeffs;
  int64_t constant = 0, den = 1, limit = 0;
  int slot = -1;
  int64_t stride = 0;
};

Row make_row(const tile::Affine &a, int64_t limit, int slot, int64_t stride) {
  Row r;
  r.den = a.constant.den;
  for (const auto &c : a.coeffs) r.den = std::lcm(r.den, c.den);
  for (const auto &c : a.coeffs) r.coeffs.push_back(c.num * (r.den / c.den));
  r.constant = a.constant.num * (r.den / a.constant.den);
  r.limit = limit;
  r.slot = slot;
  r.stride = stride;
  return r;
}

using tile::ceil_div;
using tile::floor_div;

std::vector<int64_t> strides_of(const std::vector<int64_t> &shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

// Max (`>`) or min (`<`) of an aggregation: a NaN on either side gives NaN, so that the result
// does not depend on the order in which the values come (docs/tile-semantics.md).
template <typename T>
T extreme(bool is_max, T acc, T v) {
  if constexpr (std::is_same_v<T, double>)
    if (std::isnan(acc) || std::isnan(v)) return acc + v;
  return (is_max ? v > acc : v < acc) ? v : acc;
}

// Integers wrap (two's complement) instead of overflowing.
template <typename T>
T add(T a, T b) {
  if constexpr (std::is_same_v<T, double>)
    return a + b;
  else
    return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
template <typename T>
T mul(T a, T b) {
  if constexpr (std::is_same_v<T, double>)
    return a * b;
  else
    return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

template <typename T>
std::vector<T> load(const HostTensor &t) {
  std::vector<T> v(t.elements());
  for (int64_t i = 0; i < t.elements(); ++i) {
    if constexpr (std::is_same_v<T, double>)
      v[i] = t.get_double(i);
    else
      v[i] = t.get_int(i);
  }
  return v;
}

// T: the accumulator / value domain (double or int64_t); C: the domain `==` compares in.
template <typename T, typename C>
class Evaluator {
 public:
  Evaluator(const tile::BoundProgram &p, const tile::BoundStatement &s, const TensorMap &env)
      : program_(p), stmt_(s), c_(s.contraction()), out_type_(s.type) {
    size_t n = c_.inputs.size();
    values_.resize(n);
    compares_.resize(n);
    for (size_t k = 0; k < n; ++k) {
      const HostTensor &t = env.at(c_.inputs[k].tensor);
      bool is_compare = (c_.comb == CombOp::Eq || c_.comb == CombOp::Cond) && k < 2;
      if (is_compare)
        compares_[k] = load<C>(t);
      else
        values_[k] = load<T>(t);
    }
    auto add_access = [&](const tile::BoundAccess &a, const std::vector<int64_t> &shape, int slot) {
      auto st = strides_of(shape);
      for (size_t d = 0; d < a.dims.size(); ++d)
        rows_.push_back(make_row(a.dims[d], shape[d], slot, st[d]));
    };
    add_access(c_.output, out_type_.shape, 0);
    for (size_t k = 0; k < n; ++k)
      add_access(c_.inputs[k], program_.type_of(c_.inputs[k].tensor).shape, k + 1);
    for (const auto &k : c_.constraints) rows_.push_back(make_row(k.poly, k.bound, -1, 0));
    acc_.assign(out_type_.elements(), T(0));
    written_.assign(out_type_.elements(), 0);
  }

  HostTensor run(const TensorMap &env) {
    auto ranges = tile::index_ranges(c_, out_type_.shape, program_.types);
    size_t nv = c_.indices.size();
    bool empty = false;
    for (const auto &r : ranges) {
      TESSERA_INTERNAL_ASSERT(r.has_value(), "unbounded index survived bind");
      empty |= r->empty();
    }
    if (!empty) enumerate(ranges, nv);
    return finish(env);
  }

 private:
  void enumerate(const std::vector<std::optional<tile::IndexRange>> &ranges, size_t nv) {
    for (const auto &r : ranges) lo_.push_back(r->lo), hi_.push_back(r->hi);
    // The innermost variable walks memory with strides; the last one usually is a reduction
    // index, but when it is short another long one keeps the inner loop worth its setup.
    inner_ = static_cast<int>(nv) - 1;
    if (nv > 0 && hi_[inner_] - lo_[inner_] < 15)
      for (size_t i = 0; i < nv; ++i)
        if (hi_[i] - lo_[i] > hi_[inner_] - lo_[inner_]) inner_ = static_cast<int>(i);
    std::vector<int64_t> x(lo_);
    if (inner_ >= 0) x[inner_] = 0;
    partial_.resize(rows_.size());
    while (true) {
      visit_outer(x);
      int d = static_cast<int>(nv) - 1;
      for (; d >= 0; --d) {
        if (d == inner_) continue;
        if (++x[d] <= hi_[d]) break;
        x[d] = lo_[d];
      }
      if (d < 0) return;
    }
  }

  // All points that share the outer variables `x`: the inner variable's valid interval comes
  // from each row; rows with fractional forms are checked point by point.
  void visit_outer(const std::vector<int64_t> &x) {
    int64_t vlo = inner_ >= 0 ? lo_[inner_] : 0, vhi = inner_ >= 0 ? hi_[inner_] : 0;
    bool exact = true;
    for (size_t r = 0; r < rows_.size(); ++r) {
      const Row &row = rows_[r];
      int64_t p = row.constant;
      for (size_t j = 0; j < x.size(); ++j) p += row.coeffs[j] * x[j];
      partial_[r] = p;
      int64_t cc = inner_ >= 0 ? row.coeffs[inner_] : 0;
      int64_t top = row.limit * row.den - 1;  // valid when 0 <= p + cc*v <= top
      if (cc == 0) {
        if (p < 0 || p > top || p % row.den != 0) return;
        continue;
      }
      if (cc > 0) {
        vlo = std::max(vlo, ceil_div(-p, cc));
        vhi = std::min(vhi, floor_div(top - p, cc));
      } else {
        vlo = std::max(vlo, ceil_div(top - p, cc));
        vhi = std::min(vhi, floor_div(-p, cc));
      }
      exact &= row.den == 1;
    }
    if (vlo > vhi) return;
    int64_t off[4] = {0, 0, 0, 0}, step[4] = {0, 0, 0, 0};
    if (!exact) {
      for (int64_t v = vlo; v <= vhi; ++v) {
        bool valid = true;
        std::fill(off, off + 4, 0);
        for (size_t r = 0; r < rows_.size() && valid; ++r) {
          const Row &row = rows_[r];
          int64_t val = partial_[r] + (inner_ >= 0 ? row.coeffs[inner_] : 0) * v;
          valid = val % row.den == 0;
          if (row.slot >= 0) off[row.slot] += row.stride * (val / row.den);
        }
        if (valid) aggregate(off[0], combine(off));
      }
      return;
    }
    for (size_t r = 0; r < rows_.size(); ++r) {
      const Row &row = rows_[r];
      if (row.slot < 0) continue;
      int64_t cc = inner_ >= 0 ? row.coeffs[inner_] : 0;
      off[row.slot] += row.stride * ((partial_[r] + cc * vlo) / row.den);
      step[row.slot] += row.stride * cc;  // cc != 0 only on rows with den 1
    }
    if (step[0] == 0 && c_.agg == AggOp::Sum) {
      // A pure reduction along the inner variable: sum locally, then add once.
      T sum = combine(off);
      for (int64_t v = vlo + 1; v <= vhi; ++v) {
        for (int k = 1; k < 4; ++k) off[k] += step[k];
        sum = add(sum, combine(off));
      }
      aggregate(off[0], sum);
      return;
    }
    for (int64_t v = vlo; v <= vhi; ++v) {
      aggregate(off[0], combine(off));
      for (int k = 0; k < 4; ++k) off[k] += step[k];
    }
  }

  T combine(const int64_t *off) const {
    switch (c_.comb) {
      case CombOp::None: return values_[0][off[1]];
      case CombOp::Mul: return mul(values_[0][off[1]], values_[1][off[2]]);
      case CombOp::Add: return add(values_[0][off[1]], values_[1][off[2]]);
      case CombOp::Eq: return compares_[0][off[1]] == compares_[1][off[2]] ? T(1) : T(0);
      case CombOp::Cond:
        return compares_[0][off[1]] == compares_[1][off[2]] ? values_[2][off[3]] : T(0);
    }
    return T(0);
  }

  // An integer combination wraps to the output's width before max or min compare it (uint32:
  // 8 * 4294967295 is 4294967288, not 34359738360); sums and products may wrap at the end.
  T wrapped(T v) const {
    if constexpr (std::is_same_v<T, double>) {
      return v;
    } else {
      int bits = tile::dtype_bits(out_type_.dtype);
      if (!tile::is_integer(out_type_.dtype) || bits >= 64) return v;
      uint64_t low = (uint64_t{1} << bits) - 1, u = static_cast<uint64_t>(v) & low;
      if (tile::is_signed_int(out_type_.dtype) && (u >> (bits - 1)) != 0) u |= ~low;
      return static_cast<T>(u);
    }
  }

  void aggregate(int64_t o, T v) {
    if (c_.agg == AggOp::Max || c_.agg == AggOp::Min) v = wrapped(v);
    if (!written_[o]) {
      written_[o] = 1;
      acc_[o] = v;
      return;
    }
    switch (c_.agg) {
      case AggOp::Sum: acc_[o] = add(acc_[o], v); return;
      case AggOp::Prod: acc_[o] = mul(acc_[o], v); return;
      case AggOp::Max: acc_[o] = extreme(true, acc_[o], v); return;
      case AggOp::Min: acc_[o] = extreme(false, acc_[o], v); return;
      case AggOp::Assign: double_write(o);
    }
  }

  [[noreturn]] void double_write(int64_t o) const {
    std::string where;
    for (size_t d = out_type_.shape.size(); d-- > 0;) {
      where = std::to_string(o % out_type_.shape[d]) + (where.empty() ? "" : ", ") + where;
      o /= out_type_.shape[d];
    }
    tile::user_error(program_.source, stmt_.range,
                     "'=' writes element [" + where + "] of '" + stmt_.output + "' more than once");
  }

  HostTensor finish(const TensorMap &env) const {
    HostTensor out(out_type_);
    const HostTensor *dflt = c_.default_tensor ? &env.at(*c_.default_tensor) : nullptr;
    bool is_float = tile::is_float(out_type_.dtype);
    for (int64_t i = 0; i < out.elements(); ++i) {
      if (written_[i]) {
        if constexpr (std::is_same_v<T, double>)
          out.set_double(i, acc_[i]);
        else
          out.set_int(i, acc_[i]);
      } else if (dflt) {
        if (is_float || tile::is_float(dflt->dtype()))
          out.set_double(i, dflt->get_double(i));
        else
          out.set_int(i, dflt->get_int(i));
      }
    }
    return out;
  }

  const tile::BoundProgram &program_;
  const tile::BoundStatement &stmt_;
  const tile::BoundContraction &c_;
  const tile::TensorType &out_type_;
  std::vector<std::vector<T>> values_;
  std::vector<std::vector<C>> compares_;
  std::vector<Row> rows_;
  std::vector<int64_t> lo_, hi_, partial_;
  int inner_ = -1;
  std::vector<T> acc_;
  std::vector<uint8_t> written_;
};

template <typename T>
HostTensor eval_with(const tile::BoundProgram &p, const tile::BoundStatement &s,
                     const TensorMap &env) {
  const auto &c = s.contraction();
  if (c.comb != CombOp::Eq && c.comb != CombOp::Cond) return Evaluator<T, T>(p, s, env).run(env);
  tile::DType a = p.type_of(c.inputs[0].tensor).dtype, b = p.type_of(c.inputs[1].tensor).dtype;
  if (tile::is_float(a) || tile::is_float(b)) return Evaluator<T, double>(p, s, env).run(env);
  return Evaluator<T, int64_t>(p, s, env).run(env);
}

}  // namespace

HostTensor eval_contraction(const tile::BoundProgram &program, const tile::BoundStatement &s,
                            const TensorMap &env) {
  if (tile::is_float(s.type.dtype)) return eval_with<double>(program, s, env);
  return eval_with<int64_t>(program, s, env);
}

}  // namespace tessera::interp
