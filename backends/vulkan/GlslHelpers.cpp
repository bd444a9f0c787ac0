#include "backends/vulkan/GlslHelpers.h"

namespace tessera::vulkan {

using clike::kDouble;
using clike::kFloat;
using clike::kFloats;
using clike::kSigned;
using clike::kUnsigned;

namespace {

// Integer division never traps: x / 0 = 0, MIN / -1 wraps. GLSL's % is undefined for negative
// operands, so remainders come from the truncating quotient.
constexpr const char *kUnsignedDiv = R"glsl(
$T $NAME($T a, $T b) {
  if (b == $T(0)) return $T(0);
  $T q = a / b;
  $T r = $T(a - q * b);
  return q;
}
)glsl";

constexpr const char *kUnsignedMod = R"glsl(
$T $NAME($T a, $T b) {
  if (b == $T(0)) return $T(0);
  $T q = a / b;
  $T r = $T(a - q * b);
  return r;
}
)glsl";

const std::vector<clike::HelperDefinition> kHelpers = {
    {"floordiv", kSigned, {}, R"glsl(
$T $NAME($T a, $T b) {
  if (b == $T(0)) return $T(0);
  if (b == $T(-1)) return $T(-a);
  $T q = a / b;
  $T r = $T(a - q * b);
  if (r != $T(0) && ((r < $T(0)) != (b < $T(0)))) { q -= $T(1); r += b; }
  return q;
}
)glsl"},
    {"floormod", kSigned, {}, R"glsl(
$T $NAME($T a, $T b) {
  if (b == $T(0)) return $T(0);
  if (b == $T(-1)) return $T(0);
  $T q = a / b;
  $T r = $T(a - q * b);
  if (r != $T(0) && ((r < $T(0)) != (b < $T(0)))) { q -= $T(1); r += b; }
  return r;
}
)glsl"},
    {"truncdiv", kSigned, {}, R"glsl(
$T $NAME($T a, $T b) {
  if (b == $T(0)) return $T(0);
  if (b == $T(-1)) return $T(-a);
  $T q = a / b;
  $T r = $T(a - q * b);
  return q;
}
)glsl"},
    {"truncmod", kSigned, {}, R"glsl(
$T $NAME($T a, $T b) {
  if (b == $T(0)) return $T(0);
  if (b == $T(-1)) return $T(0);
  $T q = a / b;
  $T r = $T(a - q * b);
  return r;
}
)glsl"},
    {"floordiv", kUnsigned, {}, kUnsignedDiv},
    {"truncdiv", kUnsigned, {}, kUnsignedDiv},
    {"floormod", kUnsigned, {}, kUnsignedMod},
    {"truncmod", kUnsigned, {}, kUnsignedMod},

    // A count outside [0, BITS) gives 0, or -1 for a negative value shifted right.
    {"shl", kSigned, {}, R"glsl(
$T $NAME($T a, $T b) {
  return (b >= $T(0) && b < $T($BITS)) ? $T(a << b) : $T(0);
}
)glsl"},
    {"shl", kUnsigned, {}, R"glsl(
$T $NAME($T a, $T b) {
  return (b < $T($BITS)) ? $T(a << b) : $T(0);
}
)glsl"},
    {"shr", kSigned, {}, R"glsl(
$T $NAME($T a, $T b) {
  return (b >= $T(0) && b < $T($BITS)) ? $T(a >> b) : $T(a >> $TOP);
}
)glsl"},
    {"shr", kUnsigned, {}, R"glsl(
$T $NAME($T a, $T b) {
  return (b < $T($BITS)) ? $T(a >> b) : $T(0);
}
)glsl"},

    // Float -> integer conversion as Tile's: NaN -> 0, out of range -> the nearest bound. The
    // bounds are powers of two, exact in F.
    {"sat", kSigned, {}, R"glsl(
$T $NAME($F a) {
  if (isnan(a)) return $T(0);
  if (a >= $LIMIT) return $T(~($T(1) << $TOP));
  if (a <= (-$LIMIT)) return $T($T(1) << $TOP);
  return $T(a);
}
)glsl"},
    {"sat", kUnsigned, {}, R"glsl(
$T $NAME($F a) {
  if (isnan(a)) return $T(0);
  if (a >= $LIMIT) return $T(~$T(0));
  if (a <= $F(0)) return $T(0);
  return $T(a);
}
)glsl"},

    // A product or quotient with a literal zero operand, whose NaN cases are spelled out: llvmpipe
    // returns 0 for 0 * x and 0 / x whatever x is (gallivm's lp_build_mul and lp_build_div, below
    // NIR, where neither `precise` nor the float controls reach).
    {"fmul_exact", kFloats, {}, R"glsl(
$T $NAME($T a, $T b) {
  return (isnan(a) || isnan(b) || isinf(a) || isinf(b)) ? $T(NAN) : a * b;
}
)glsl"},
    {"fdiv_exact", kFloats, {}, R"glsl(
$T $NAME($T a, $T b) {
  if (isnan(a) || isnan(b) || (a == $T(0) && b == $T(0))) return $T(NAN);
  if (b == $T(0)) return a > $T(0) ? $T(INFINITY) : $T(-INFINITY);  // the literal is +0
  return a / b;
}
)glsl"},

    // NaN propagates (numpy maximum/minimum).
    {"fmax_nan", kFloats, {}, R"glsl(
$T $NAME($T a, $T b) {
  return (isnan(a) || isnan(b)) ? a + b : (a > b ? a : b);
}
)glsl"},
    {"fmin_nan", kFloats, {}, R"glsl(
$T $NAME($T a, $T b) {
  return (isnan(a) || isnan(b)) ? a + b : (a < b ? a : b);
}
)glsl"},
    {"relu", kFloats, {}, R"glsl(
$T $NAME($T a) {
  return !(a <= $T(0)) ? a : $T(0);
}
)glsl"},
    {"relu", kSigned, {}, R"glsl(
$T $NAME($T a) {
  return a < $T(0) ? $T(0) : a;
}
)glsl"},
    {"abs", kSigned, {}, R"glsl(
$T $NAME($T a) {
  return a < $T(0) ? $T(-a) : a;
}
)glsl"},
    // float16 values compute in float, rounded to float16 where Tile converts to it.
    {"to_half", kFloat, {}, R"glsl(
float $NAME(float a) {
  return float(float16_t(a));
}
)glsl"},

    // C's round: half away from zero; a - trunc(a) is exact.
    {"round", kFloats, {}, R"glsl(
$T $NAME($T a) {
  $T t = trunc(a);
  return abs(a - t) >= 0.5$f ? t + sign(a) : t;
}
)glsl"},
    // C's fmod: a - b trunc(a / b), with a's sign and below |b| in magnitude.
    {"fmod", kFloats, {}, R"glsl(
$T $NAME($T a, $T b) {
  if (isnan(a) || isnan(b) || isinf(a) || b == $T(0)) return $T(NAN);
  if (isinf(b)) return a;
  $T r = fma(-b, trunc(a / b), a);
  if (r != $T(0) && ((r < $T(0)) != (a < $T(0)))) r += abs(b) * sign(a);
  if (abs(r) >= abs(b)) r -= abs(b) * sign(a);
  return r;
}
)glsl"},
    // C's pow: GLSL's is undefined for a < 0 and for a = 0, b <= 0.
    {"pow", kFloat, {}, R"glsl(
float $NAME(float a, float b) {
  if (b == float(0) || a == float(1)) return float(1);
  if (isnan(a) || isnan(b)) return a + b;
  if (a == float(0)) return b < float(0) ? float(INFINITY) : float(0);
  float r = pow(abs(a), b);
  if (a < float(0)) {
    if (b != floor(b)) return float(NAN);
    if (mod(b, 2.0f) == 1.0f) r = -r;
  }
  return r;
}
)glsl"},
    {"pow", kDouble, {"log", "exp"}, R"glsl(
double $NAME(double a, double b) {
  if (b == double(0) || a == double(1)) return double(1);
  if (isnan(a) || isnan(b)) return a + b;
  if (a == double(0)) return b < double(0) ? double(INFINITY) : double(0);
  double r = tsr_exp_double(b * tsr_log_double(abs(a)));
  if (a < double(0)) {
    if (b != floor(b)) return double(NAN);
    if (mod(b, 2.0lf) == 1.0lf) r = -r;
  }
  return r;
}
)glsl"},
    // Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7).
    {"erf", kFloat, {}, R"glsl(
float $NAME(float a) {
  float x = abs(a), t = 1.0f / (1.0f + 0.3275911f * x);
  float y = 1.0f - (((((1.061405429f * t - 1.453152027f) * t + 1.421413741f) * t - 0.284496736f) * t + 0.254829592f) * t) * exp(-x * x);
  return a < float(0) ? -y : y;
}
)glsl"},

    // float64 exp and log, and what is built on them, to double precision.
    // exp(x) = 2^k exp(r), |r| <= ln2/2 (Cody-Waite reduction), exp(r) by its Taylor series.
    {"exp", kDouble, {}, R"glsl(
double $NAME(double a) {
  if (isnan(a)) return a;
  if (a > 709.782712893384lf) return double(INFINITY);
  if (a < -745.2lf) return 0.0lf;
  double k = floor(a * 1.4426950408889634lf + 0.5lf);
  double r = (a - k * 6.93147180369123816490e-01lf) - k * 1.90821492927058770002e-10lf;
  double s = 1.0lf;
  for (int i = 14; i >= 1; --i) s = 1.0lf + s * r / double(i);
  return ldexp(s, int(k));
}
)glsl"},
    {"expm1", kDouble, {"exp"}, R"glsl(
double $NAME(double a) {
  if (abs(a) >= 0.35lf) return tsr_exp_double(a) - 1.0lf;
  double s = 1.0lf;
  for (int i = 17; i >= 2; --i) s = 1.0lf + s * a / double(i);
  return a * s;
}
)glsl"},
    // log(x) = e ln2 + log(m), m in [sqrt(1/2), sqrt(2)): 2 atanh((m-1)/(m+1)) by its series.
    {"log", kDouble, {}, R"glsl(
double $NAME(double a) {
  if (isnan(a) || a < double(0)) return double(NAN);
  if (a == double(0)) return -double(INFINITY);
  if (isinf(a)) return a;
  int e;
  double m = frexp(a, e);
  if (m < 0.70710678118654752lf) { m *= 2.0lf; e -= 1; }
  double f = (m - 1.0lf) / (m + 1.0lf), f2 = f * f, s = double(0);
  for (int i = 25; i >= 1; i -= 2) s = s * f2 + 1.0lf / double(i);
  return double(e) * 6.93147180369123816490e-01lf + (2.0lf * f * s + double(e) * 1.90821492927058770002e-10lf);
}
)glsl"},
    {"tanh", kDouble, {"expm1"}, R"glsl(
double $NAME(double a) {
  double x = abs(a);
  if (x > 22.0lf) return sign(a);
  double t = tsr_expm1_double(2.0lf * x);
  return sign(a) * (t / (t + 2.0lf));
}
)glsl"},
    {"sinh", kDouble, {"expm1"}, R"glsl(
double $NAME(double a) {
  return (tsr_expm1_double(a) - tsr_expm1_double(-a)) * 0.5lf;
}
)glsl"},
    {"cosh", kDouble, {"exp"}, R"glsl(
double $NAME(double a) {
  return (tsr_exp_double(a) + tsr_exp_double(-a)) * 0.5lf;
}
)glsl"},
};

}  // namespace

const std::vector<clike::HelperDefinition> &glsl_helpers() { return kHelpers; }

}  // namespace tessera::vulkan
