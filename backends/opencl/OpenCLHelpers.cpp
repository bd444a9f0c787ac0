#include "backends/opencl/OpenCLHelpers.h"

namespace tessera::opencl {

using clike::kFloat;
using clike::kFloats;
using clike::kIntegers;
using clike::kSigned;
using clike::kUnsigned;

namespace {

// Integer division never traps: x / 0 = 0, MIN / -1 wraps.
constexpr const char *kUnsignedDiv = R"cl(
static inline $T $NAME($T a, $T b) {
  if (b == 0) return 0;
  return a / b;
}
)cl";

constexpr const char *kUnsignedMod = R"cl(
static inline $T $NAME($T a, $T b) {
  if (b == 0) return 0;
  return a % b;
}
)cl";

const std::vector<clike::HelperDefinition> kHelpers = {
    {"floordiv", kSigned, {}, R"cl(
static inline $T $NAME($T a, $T b) {
  if (b == 0) return 0;
  if (b == -1) return ($T)(($U)0 - ($U)a);
  $T q = a / b, r = a % b;
  if (r != 0 && ((r ^ b) < 0)) { q -= 1; r += b; }
  return q;
}
)cl"},
    {"floormod", kSigned, {}, R"cl(
static inline $T $NAME($T a, $T b) {
  if (b == 0) return 0;
  if (b == -1) return 0;
  $T q = a / b, r = a % b;
  if (r != 0 && ((r ^ b) < 0)) { q -= 1; r += b; }
  return r;
}
)cl"},
    {"truncdiv", kSigned, {}, R"cl(
static inline $T $NAME($T a, $T b) {
  if (b == 0) return 0;
  if (b == -1) return ($T)(($U)0 - ($U)a);
  $T q = a / b, r = a % b;
  return q;
}
)cl"},
    {"truncmod", kSigned, {}, R"cl(
static inline $T $NAME($T a, $T b) {
  if (b == 0) return 0;
  if (b == -1) return 0;
  $T q = a / b, r = a % b;
  return r;
}
)cl"},
    {"floordiv", kUnsigned, {}, kUnsignedDiv},
    {"truncdiv", kUnsigned, {}, kUnsignedDiv},
    {"floormod", kUnsigned, {}, kUnsignedMod},
    {"truncmod", kUnsigned, {}, kUnsignedMod},

    // A count outside [0, BITS) gives 0, or -1 for a negative value shifted right.
    {"shl", kIntegers, {}, R"cl(
static inline $T $NAME($T a, $T b) {
  return (ulong)(b) < ${BITS}UL ? ($T)(a << b) : ($T)0;
}
)cl"},
    {"shr", kSigned, {}, R"cl(
static inline $T $NAME($T a, $T b) {
  return (ulong)(b) < ${BITS}UL ? ($T)(a >> b) : ($T)(a >> $TOP);
}
)cl"},
    {"shr", kUnsigned, {}, R"cl(
static inline $T $NAME($T a, $T b) {
  return (ulong)(b) < ${BITS}UL ? ($T)(a >> b) : ($T)0;
}
)cl"},

    // Abramowitz & Stegun 7.1.26 (absolute error 1.5e-7; 4.2e-7 evaluated in float32), as GLSL's:
    // one exp and a division, on floatN too. PoCL's built-in erf took 5-8x its exp on 128x3072
    // floats (0.86 ms over a plain add's 0.12), a third of BERT-base's FFN up-projection with gelu.
    {"erf", kFloat, {}, R"cl(
static inline $T $NAME($T a) {
  $T x = fabs(a), t = 1.0f / (1.0f + 0.3275911f * x);
  $T y = 1.0f - (((((1.061405429f * t - 1.453152027f) * t + 1.421413741f) * t - 0.284496736f) * t + 0.254829592f) * t) * exp(-x * x);
  return a < 0.0f ? -y : y;
}
)cl"},

    // NaN propagates (numpy maximum/minimum).
    {"fmax_nan", kFloats, {}, R"cl(
static inline $T $NAME($T a, $T b) {
  return (isnan(a) || isnan(b)) ? a + b : (a > b ? a : b);
}
)cl"},
    {"fmin_nan", kFloats, {}, R"cl(
static inline $T $NAME($T a, $T b) {
  return (isnan(a) || isnan(b)) ? a + b : (a < b ? a : b);
}
)cl"},
    {"relu", kFloats, {}, R"cl(
static inline $T $NAME($T a) {
  return !(a <= 0) ? a : ($T)0;
}
)cl"},
    {"relu", kSigned, {}, R"cl(
static inline $T $NAME($T a) {
  return a < 0 ? ($T)0 : a;
}
)cl"},
    {"abs", kSigned, {}, R"cl(
static inline $T $NAME($T a) {
  return a < 0 ? ($T)(($U)0 - ($U)a) : a;
}
)cl"},
    // float16 values compute in float, rounded to float16 where Tile converts to it; vstore_half
    // and vload_half need no cl_khr_fp16.
    {"to_half", kFloat, {}, R"cl(
static inline float $NAME(float a) {
  ushort h;
  vstore_half_rte(a, 0, (half *)&h);
  return vload_half(0, (const half *)&h);
}
)cl"},
};

}  // namespace

const std::vector<clike::HelperDefinition> &opencl_helpers() { return kHelpers; }

}  // namespace tessera::opencl
