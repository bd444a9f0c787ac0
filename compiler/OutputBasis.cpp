#include "compiler/OutputBasis.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <set>

#include "tile/Diagnostics.h"

namespace tessera::compiler {

namespace {

using tile::Affine;
using tile::Rational;

bool is_simple(const tile::BoundContraction &c) {
  std::set<size_t> seen;
  for (const auto &a : c.output.dims) {
    if (!(a.constant == Rational(0))) return false;
    int count = 0;
    size_t var = 0;
    for (size_t j = 0; j < a.coeffs.size(); ++j)
      if (a.coeffs[j].num != 0) ++count, var = j;
    if (count != 1 || !(a.coeffs[var] == Rational(1)) || !seen.insert(var).second) return false;
  }
  // Outputs must also come first, in order, for the lowering.
  for (size_t d = 0; d < c.output.dims.size(); ++d)
    if (!(c.output.dims[d].coeffs[d] == Rational(1))) return false;
  return true;
}

// Rank test by Gaussian elimination over the rationals: is `row` independent of `basis`?
bool independent(std::vector<std::vector<Rational>> &basis, std::vector<Rational> row) {
  for (const auto &b : basis) {
    size_t p = 0;
    while (p < b.size() && b[p] == Rational(0)) ++p;
    if (p == b.size() || row[p] == Rational(0)) continue;
    Rational f = row[p] / b[p];
    for (size_t j = 0; j < row.size(); ++j) row[j] = row[j] - f * b[j];
  }
  if (std::all_of(row.begin(), row.end(), [](Rational r) { return r == Rational(0); }))
    return false;
  basis.push_back(row);
  // Keep the basis in echelon form by pivot position.
  std::sort(basis.begin(), basis.end(), [](const auto &x, const auto &y) {
    auto pivot = [](const auto &r) {
      size_t p = 0;
      while (p < r.size() && r[p] == Rational(0)) ++p;
      return p;
    };
    return pivot(x) < pivot(y);
  });
  return true;
}

// Substitutes x = X(new vars) into a, where X[j] is the new form of old variable j.
Affine substitute(const Affine &a, const std::vector<Affine> &x, size_t new_vars) {
  Affine r;
  r.coeffs.assign(new_vars, Rational(0));
  r.constant = a.constant;
  for (size_t j = 0; j < a.coeffs.size(); ++j) {
    if (a.coeffs[j] == Rational(0)) continue;
    for (size_t k = 0; k < new_vars; ++k) r.coeffs[k] = r.coeffs[k] + a.coeffs[j] * x[j].coeffs[k];
    r.constant = r.constant + a.coeffs[j] * x[j].constant;
  }
  return r;
}

Divisibility integrality_of(const Affine &a) {
  Divisibility d;
  d.modulus = a.constant.den;
  for (const auto &c : a.coeffs) d.modulus = std::lcm(d.modulus, c.den);
  for (const auto &c : a.coeffs) d.coeffs.push_back(c.num * (d.modulus / c.den));
  d.constant = a.constant.num * (d.modulus / a.constant.den);
  return d;
}

std::string fresh(const std::string &base, std::set<std::string> &used) {
  std::string n = base;
  while (used.count(n)) n += "_";
  used.insert(n);
  return n;
}

// The one value a constraint `0 <= a*x + b < bound` on a single index x allows, if one.
std::optional<Rational> single_value(const tile::BoundConstraint &q, size_t &index) {
  int count = 0;
  for (size_t j = 0; j < q.poly.coeffs.size(); ++j)
    if (q.poly.coeffs[j].num != 0) ++count, index = j;
  if (count != 1) return std::nullopt;
  Rational a = q.poly.coeffs[index], b = q.poly.constant;
  // a*x + b in [0, bound - 1]: x between (-b)/a and (bound - 1 - b)/a.
  Rational lo = (Rational(0) - b) / a, hi = (Rational(q.bound - 1) - b) / a;
  if (hi < lo) std::swap(lo, hi);
  if (lo.ceil() != hi.floor()) return std::nullopt;
  return Rational(lo.ceil());
}

// Substitutes index j = v everywhere and drops it: grouped convolutions written as
// `O[n, x, g*G + co] = +(I[..., g*G + ci] * K[..., g*G + co]), co < G` with G = 1 (depthwise)
// pin co to 0, and the output access becomes the plain index g.
bool pin_index(tile::BoundContraction &c, size_t j, Rational v) {
  auto pinned = [&](Affine a) {
    a.constant = a.constant + a.coeffs[j] * v;
    a.coeffs.erase(a.coeffs.begin() + static_cast<std::ptrdiff_t>(j));
    return a;
  };
  tile::BoundContraction n = c;
  for (auto &a : n.output.dims) {
    a = pinned(a);
    if (a.is_constant()) return false;  // a constant output dimension: left to the basis change
  }
  for (auto &in : n.inputs)
    for (auto &a : in.dims) a = pinned(a);
  n.constraints.clear();
  for (const auto &q : c.constraints) {
    tile::BoundConstraint p{pinned(q.poly), q.bound};
    if (!p.poly.is_constant()) {
      n.constraints.push_back(p);
    } else if (p.poly.constant < Rational(0) || !(p.poly.constant < Rational(q.bound))) {
      return false;  // no point at all: left to the bounds, which know an empty domain
    }
  }
  n.indices.erase(n.indices.begin() + static_cast<std::ptrdiff_t>(j));
  c = std::move(n);
  return true;
}

}  // namespace

tile::BoundContraction pin_single_valued(const tile::BoundContraction &original) {
  tile::BoundContraction c = original;
  for (bool again = true; again;) {
    again = false;
    for (const auto &q : c.constraints) {
      size_t j = 0;
      auto v = single_value(q, j);
      if (v && v->is_integer() && pin_index(c, j, *v)) {
        again = true;
        break;
      }
    }
  }
  return c;
}

BasisChange change_output_basis(const tile::BoundContraction &original) {
  BasisChange out;
  tile::BoundContraction c = pin_single_valued(original);
  out.changed = c.indices.size() != original.indices.size();
  out.contraction = c;
  if (is_simple(c)) return out;
  out.changed = true;
  size_t n = c.indices.size(), r = c.output.dims.size();

  // Integer rows L_d * (a_d . x + b_d) = L_d * o_d.
  std::vector<std::vector<int64_t>> rows(r);
  std::vector<int64_t> scale(r), shift(r);
  for (size_t d = 0; d < r; ++d) {
    const Affine &a = c.output.dims[d];
    int64_t l = a.constant.den;
    for (const auto &q : a.coeffs) l = std::lcm(l, q.den);
    for (const auto &q : a.coeffs) rows[d].push_back(q.num * (l / q.den));
    scale[d] = l;
    shift[d] = a.constant.num * (l / a.constant.den);
  }
  std::vector<size_t> sel;
  std::vector<std::vector<Rational>> basis;
  for (size_t d = 0; d < r; ++d) {
    std::vector<Rational> row(rows[d].begin(), rows[d].end());
    if (independent(basis, row)) sel.push_back(d);
  }
  size_t k = sel.size();

  // Column Hermite normal form: M U = [H 0] with U unimodular.
  std::vector<std::vector<int64_t>> M;
  for (size_t d : sel) M.push_back(rows[d]);
  std::vector<std::vector<int64_t>> U(n, std::vector<int64_t>(n, 0));
  for (size_t j = 0; j < n; ++j) U[j][j] = 1;
  auto col_axpy = [&](size_t dst, size_t src, int64_t q) {  // col dst -= q * col src
    for (auto &row : M) row[dst] -= q * row[src];
    for (auto &row : U) row[dst] -= q * row[src];
  };
  auto col_swap = [&](size_t a, size_t b) {
    for (auto &row : M) std::swap(row[a], row[b]);
    for (auto &row : U) std::swap(row[a], row[b]);
  };
  for (size_t i = 0; i < k; ++i) {
    // Bring a nonzero entry to the pivot, then Euclid it against every later column.
    for (size_t j = i; j < n && M[i][i] == 0; ++j)
      if (M[i][j] != 0) col_swap(i, j);
    TESSERA_INTERNAL_ASSERT(M[i][i] != 0, "dependent output row selected");
    for (size_t j = i + 1; j < n; ++j) {
      while (M[i][j] != 0) {
        col_axpy(i, j, M[i][i] / M[i][j]);
        col_swap(i, j);
      }
    }
    if (M[i][i] < 0)
      for (auto *mat : {&M, &U})
        for (auto &row : *mat) row[i] = -row[i];
  }

  // New variables: one per output dimension, then the free columns of U.
  std::set<std::string> used(c.indices.begin(), c.indices.end());
  std::vector<std::string> names;
  std::set<std::string> taken;
  for (size_t d = 0; d < r; ++d) {
    const Affine &a = c.output.dims[d];
    std::string name;
    if (a.constant == Rational(0))
      for (size_t j = 0; j < n; ++j)
        if (a.coeffs[j] == Rational(1) && a.is_constant() == false) {
          bool alone = true;
          for (size_t m = 0; m < n; ++m) alone &= m == j || a.coeffs[m] == Rational(0);
          if (alone && !taken.count(c.indices[j])) name = c.indices[j];
        }
    if (name.empty()) name = fresh("o" + std::to_string(d), used);
    taken.insert(name);
    names.push_back(name);
  }
  for (size_t m = k; m < n; ++m) {
    std::string name;
    for (size_t j = 0; j < n; ++j) {
      // x_j == y_m exactly: row j of U is the unit vector e_m.
      bool unit = U[j][m] == 1;
      for (size_t i = 0; i < n; ++i) unit &= i == m || U[j][i] == 0;
      if (unit && !taken.count(c.indices[j])) name = c.indices[j];
    }
    if (name.empty()) name = fresh("r" + std::to_string(m - k), used);
    taken.insert(name);
    names.push_back(name);
  }
  size_t nv = names.size();  // r + (n - k)

  // y1 = H^-1 (L o - shift) by forward substitution, as affine forms over the new variables.
  std::vector<Affine> y(n);
  for (size_t i = 0; i < k; ++i) {
    Affine t;
    t.coeffs.assign(nv, Rational(0));
    t.coeffs[sel[i]] = Rational(scale[sel[i]]);
    t.constant = Rational(-shift[sel[i]]);
    for (size_t j = 0; j < i; ++j) {
      for (size_t v = 0; v < nv; ++v)
        t.coeffs[v] = t.coeffs[v] - Rational(M[i][j]) * y[j].coeffs[v];
      t.constant = t.constant - Rational(M[i][j]) * y[j].constant;
    }
    for (auto &q : t.coeffs) q = q / Rational(M[i][i]);
    t.constant = t.constant / Rational(M[i][i]);
    y[i] = t;
    bool integral = t.constant.is_integer();
    for (const auto &q : t.coeffs) integral &= q.is_integer();
    if (!integral) out.integrality.push_back(integrality_of(t));
  }
  for (size_t m = k; m < n; ++m) {
    y[m].coeffs.assign(nv, Rational(0));
    y[m].coeffs[r + (m - k)] = Rational(1);
  }
  // x = U y.
  std::vector<Affine> x(n);
  for (size_t j = 0; j < n; ++j) {
    x[j].coeffs.assign(nv, Rational(0));
    for (size_t m = 0; m < n; ++m) {
      if (U[j][m] == 0) continue;
      for (size_t v = 0; v < nv; ++v)
        x[j].coeffs[v] = x[j].coeffs[v] + Rational(U[j][m]) * y[m].coeffs[v];
      x[j].constant = x[j].constant + Rational(U[j][m]) * y[m].constant;
    }
  }

  tile::BoundContraction &nc = out.contraction;
  nc.indices = names;
  nc.output.dims.clear();
  for (size_t d = 0; d < r; ++d) {
    Affine o;
    o.coeffs.assign(nv, Rational(0));
    o.coeffs[d] = Rational(1);
    nc.output.dims.push_back(o);
  }
  for (auto &in : nc.inputs)
    for (auto &a : in.dims) a = substitute(a, x, nv);
  for (auto &q : nc.constraints) q.poly = substitute(q.poly, x, nv);
  // Dependent output dimensions: a_d(x(y)) - o_d == 0, as 0 <= e < 1 on an integer form.
  for (size_t d = 0; d < r; ++d) {
    if (std::find(sel.begin(), sel.end(), d) != sel.end()) continue;
    Affine e = substitute(c.output.dims[d], x, nv);
    e.coeffs[d] = e.coeffs[d] - Rational(1);
    nc.constraints.push_back({e, 1});
  }
  return out;
}

}  // namespace tessera::compiler
