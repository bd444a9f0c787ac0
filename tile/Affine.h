// Exact rationals and affine forms over a contraction's index variables, the bound form of
// index polynomials (`2*x + k - 1`, `i/2`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessera::tile {

/// a / b rounded toward negative infinity, and toward positive infinity (b != 0, either sign).
int64_t floor_div(int64_t a, int64_t b);
int64_t ceil_div(int64_t a, int64_t b);

/// num/den in lowest terms with den > 0. Arithmetic is exact; it throws tile::Error on int64
/// overflow rather than wrapping.
struct Rational {
  int64_t num = 0;
  int64_t den = 1;

  Rational() = default;
  Rational(int64_t n) : num(n) {}  // NOLINT: integers are rationals
  Rational(int64_t n, int64_t d);

  bool is_integer() const { return den == 1; }
  int64_t floor() const;
  int64_t ceil() const;
  std::string str() const;  // "3", "-1/2"

  friend Rational operator+(Rational a, Rational b);
  friend Rational operator-(Rational a, Rational b);
  friend Rational operator*(Rational a, Rational b);
  friend Rational operator/(Rational a, Rational b);
  friend Rational operator-(Rational a) { return Rational(0) - a; }
  friend bool operator==(Rational a, Rational b) { return a.num == b.num && a.den == b.den; }
  friend bool operator<(Rational a, Rational b);
  friend bool operator<=(Rational a, Rational b) { return !(b < a); }
};

/// sum(coeffs[i] * index_i) + constant, for the index variables of one contraction (by position).
struct Affine {
  std::vector<Rational> coeffs;
  Rational constant;

  bool operator==(const Affine &) const = default;
  bool is_constant() const;
  /// The index variable the form is, where it is one plain index (coefficient 1, no constant).
  std::optional<size_t> plain_index() const;
  /// The value at an integer point; `point` has one entry per index variable.
  Rational evaluate(const std::vector<int64_t> &point) const;
  /// "2*x + k - 1" given the index names.
  std::string str(const std::vector<std::string> &index_names) const;
};

}  // namespace tessera::tile
