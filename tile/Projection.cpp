#include "tile/Projection.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>

#include "tile/Affine.h"

namespace tessera::tile {

namespace {

// Divides a row by the gcd of its coefficients; the constant rounds down, which is exact for
// integer points (sum c*x >= -k with gcd g is sum (c/g)*x >= ceil(-k/g)).
Inequality normalize(Inequality q) {
  int64_t g = 0;
  for (int64_t c : q.coeffs) g = std::gcd(g, c);
  if (g > 1) {
    for (auto &c : q.coeffs) c /= g;
    q.constant = floor_div(q.constant, g);
  }
  return q;
}

// Integer coefficients for den * (affine) where den is the lcm of the denominators.
void scale(const Affine &a, std::vector<int64_t> &coeffs, int64_t &constant, int64_t &den) {
  den = a.constant.den;
  for (const auto &c : a.coeffs) den = std::lcm(den, c.den);
  coeffs.clear();
  for (const auto &c : a.coeffs) coeffs.push_back(c.num * (den / c.den));
  constant = a.constant.num * (den / a.constant.den);
}

// Rows beyond this make elimination too costly; interval bounds (always valid) are used instead.
constexpr size_t kMaxRows = 4096;

}  // namespace

std::string Inequality::str(const std::vector<std::string> &names) const {
  std::string s;
  for (size_t j = 0; j < coeffs.size(); ++j) {
    int64_t c = coeffs[j];
    if (c == 0) continue;
    std::string term = (std::abs(c) == 1 ? "" : std::to_string(std::abs(c)) + "*") + names[j];
    s += s.empty() ? (c < 0 ? "-" + term : term) : (c < 0 ? " - " : " + ") + term;
  }
  if (constant != 0 || s.empty())
    s += s.empty() ? std::to_string(constant)
                   : (constant < 0 ? " - " : " + ") + std::to_string(std::abs(constant));
  return s + " >= 0";
}

std::vector<Inequality> domain_inequalities(const BoundContraction &c,
                                            const std::vector<int64_t> &output_shape,
                                            const std::map<std::string, TensorType> &types,
                                            std::vector<Divisibility> *divisibility) {
  std::vector<Inequality> out;
  // 0 <= a/den and a/den <= limit - 1, i.e. a >= 0 and den*(limit-1) - a >= 0.
  auto add_range = [&](const Affine &a, int64_t limit) {
    Inequality q;
    int64_t den;
    scale(a, q.coeffs, q.constant, den);
    out.push_back(normalize(q));
    Inequality r = q;
    for (auto &x : r.coeffs) x = -x;
    r.constant = den * (limit - 1) - q.constant;
    out.push_back(normalize(r));
    if (den > 1 && divisibility) divisibility->push_back({q.coeffs, q.constant, den});
  };
  auto add_access = [&](const tile::BoundAccess &a, const std::vector<int64_t> &shape) {
    for (size_t d = 0; d < a.dims.size(); ++d) add_range(a.dims[d], shape[d]);
  };
  add_access(c.output, output_shape);
  for (const auto &in : c.inputs) add_access(in, types.at(in.tensor).shape);
  for (const auto &k : c.constraints) add_range(k.poly, k.bound);
  return out;
}

bool project(const std::vector<Inequality> &ineqs, size_t v, int64_t &lo, int64_t &hi,
             bool &empty) {
  std::vector<Inequality> rows = ineqs;
  size_t n = ineqs.empty() ? 0 : ineqs[0].coeffs.size();
  empty = false;
  for (size_t e = 0; e < n; ++e) {
    if (e == v) continue;
    std::vector<Inequality> keep, pos, neg;
    for (auto &r : rows) (r.coeffs[e] > 0 ? pos : r.coeffs[e] < 0 ? neg : keep).push_back(r);
    for (const auto &p : pos)
      for (const auto &q : neg) {
        // Combine so x_e cancels: |q_e| * p + p_e * q.
        int64_t a = -q.coeffs[e], b = p.coeffs[e];
        Inequality r;
        r.coeffs.resize(n);
        for (size_t j = 0; j < n; ++j) r.coeffs[j] = a * p.coeffs[j] + b * q.coeffs[j];
        r.constant = a * p.constant + b * q.constant;
        r = normalize(r);
        if (std::find(keep.begin(), keep.end(), r) == keep.end()) keep.push_back(r);
      }
    if (keep.size() > kMaxRows) return false;
    rows = std::move(keep);
  }
  bool has_lo = false, has_hi = false;
  for (const auto &r : rows) {
    int64_t c = r.coeffs.empty() ? 0 : r.coeffs[v];
    if (c == 0) {
      empty |= r.constant < 0;  // a contradiction: no point at all
      continue;
    }
    if (c > 0) {  // x >= -k/c
      int64_t b = ceil_div(-r.constant, c);
      lo = has_lo ? std::max(lo, b) : b;
      has_lo = true;
    } else {  // x <= k/|c|
      int64_t b = floor_div(r.constant, -c);
      hi = has_hi ? std::min(hi, b) : b;
      has_hi = true;
    }
  }
  return has_lo && has_hi;
}

}  // namespace tessera::tile
