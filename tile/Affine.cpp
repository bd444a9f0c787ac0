#include "tile/Affine.h"

#include <numeric>

#include "tile/Diagnostics.h"

namespace tessera::tile {

namespace {
int64_t checked(__int128 v) {
  if (v > INT64_MAX || v < INT64_MIN) throw Error("error: integer overflow in an index expression");
  return static_cast<int64_t>(v);
}

Rational make(__int128 n, __int128 d) {
  if (d == 0) throw Error("error: division by zero in an index expression");
  if (d < 0) n = -n, d = -d;
  __int128 a = n < 0 ? -n : n, b = d;
  while (b != 0) {
    __int128 t = a % b;
    a = b;
    b = t;
  }
  if (a > 1) n /= a, d /= a;
  Rational r;
  r.num = checked(n);
  r.den = checked(d);
  return r;
}
}  // namespace

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

Rational::Rational(int64_t n, int64_t d) { *this = make(n, d); }

int64_t Rational::floor() const {
  int64_t q = num / den;
  return (num % den != 0 && num < 0) ? q - 1 : q;
}
int64_t Rational::ceil() const {
  int64_t q = num / den;
  return (num % den != 0 && num > 0) ? q + 1 : q;
}
std::string Rational::str() const {
  return den == 1 ? std::to_string(num) : std::to_string(num) + "/" + std::to_string(den);
}

Rational operator+(Rational a, Rational b) {
  return make(static_cast<__int128>(a.num) * b.den + static_cast<__int128>(b.num) * a.den,
              static_cast<__int128>(a.den) * b.den);
}
Rational operator-(Rational a, Rational b) {
  return make(static_cast<__int128>(a.num) * b.den - static_cast<__int128>(b.num) * a.den,
              static_cast<__int128>(a.den) * b.den);
}
Rational operator*(Rational a, Rational b) {
  return make(static_cast<__int128>(a.num) * b.num, static_cast<__int128>(a.den) * b.den);
}
Rational operator/(Rational a, Rational b) {
  return make(static_cast<__int128>(a.num) * b.den, static_cast<__int128>(a.den) * b.num);
}
bool operator<(Rational a, Rational b) {
  return static_cast<__int128>(a.num) * b.den < static_cast<__int128>(b.num) * a.den;
}

bool Affine::is_constant() const {
  for (const auto &c : coeffs)
    if (c.num != 0) return false;
  return true;
}

std::optional<size_t> Affine::plain_index() const {
  std::optional<size_t> j;
  for (size_t k = 0; k < coeffs.size(); ++k) {
    if (coeffs[k] == Rational(0)) continue;
    if (j || !(coeffs[k] == Rational(1))) return std::nullopt;
    j = k;
  }
  if (!(constant == Rational(0))) return std::nullopt;
  return j;
}

Rational Affine::evaluate(const std::vector<int64_t> &point) const {
  Rational v = constant;
  for (size_t i = 0; i < coeffs.size(); ++i)
    if (coeffs[i].num != 0) v = v + coeffs[i] * Rational(point[i]);
  return v;
}

std::string Affine::str(const std::vector<std::string> &index_names) const {
  std::string out;
  for (size_t i = 0; i < coeffs.size(); ++i) {
    Rational c = coeffs[i];
    if (c.num == 0) continue;
    bool neg = c.num < 0;
    if (neg) c = -c;
    if (!out.empty())
      out += neg ? " - " : " + ";
    else if (neg)
      out += "-";
    if (c.num != 1) out += std::to_string(c.num) + "*";
    out += index_names[i];
    if (c.den != 1) out += "/" + std::to_string(c.den);
  }
  if (constant.num != 0 || out.empty()) {
    Rational c = constant;
    bool neg = c.num < 0;
    if (!out.empty()) {
      out += neg ? " - " : " + ";
      if (neg) c = -c;
    }
    out += c.str();
  }
  return out;
}

}  // namespace tessera::tile
