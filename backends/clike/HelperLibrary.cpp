#include "backends/clike/HelperLibrary.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>

#include "backends/clike/CLikePrinter.h"
#include "tile/Diagnostics.h"

namespace tessera::clike {

namespace {

using tile::DType;

unsigned types_of(DType t) {
  if (t == DType::Float64) return kDouble;
  if (tile::is_float(t)) return kFloat;
  if (tile::is_signed_int(t)) return kSigned;
  if (tile::is_unsigned_int(t)) return kUnsigned;
  return 0;  // bool: no helper computes on it
}

DType unsigned_of(DType t) {
  switch (t) {
    case DType::Int8: return DType::UInt8;
    case DType::Int16: return DType::UInt16;
    case DType::Int32: return DType::UInt32;
    case DType::Int64: return DType::UInt64;
    default: return t;
  }
}

std::string substitute(const std::string &helper, const char *text,
                       const std::map<std::string, std::string> &values) {
  std::string out;
  const char *p = text + (*text == '\n');
  while (*p) {
    if (*p != '$') {
      out += *p++;
      continue;
    }
    std::string key;
    if (*++p == '{') {
      for (++p; *p && *p != '}'; ++p) key += *p;
      p += *p == '}';
    } else {
      for (; std::isalnum(static_cast<unsigned char>(*p)); ++p) key += *p;
    }
    auto it = values.find(key);
    TESSERA_INTERNAL_ASSERT(it != values.end(), "helper " + helper + " has no placeholder $" + key);
    out += it->second;
  }
  return out;
}

}  // namespace

std::string HelperLibrary::use(const std::string &name, DType dtype) {
  return define(name, dtype, std::nullopt);
}

std::string HelperLibrary::use(const std::string &name, DType from, DType to) {
  return define(name, to, from);
}

std::string HelperLibrary::use_vector(const std::string &name, DType dtype, int lanes) {
  return define(name, dtype, std::nullopt, lanes);
}

std::string HelperLibrary::define(const std::string &name, DType dtype, std::optional<DType> from,
                                  int lanes) {
  std::string type = lanes > 1 ? dialect_.vector_type(dtype, lanes) : dialect_.compute_type(dtype);
  TESSERA_INTERNAL_ASSERT(!type.empty(), "no vector of " + std::to_string(lanes) + " " +
                                             std::string(tile::dtype_name(dtype)));
  std::string fn = "tsr_" + name + "_" + type;
  if (from) fn += "_" + dialect_.compute_type(*from);
  if (defined_.count(fn)) return fn;
  auto def = std::find_if(definitions_.begin(), definitions_.end(), [&](const HelperDefinition &d) {
    return d.name == name && (d.types & types_of(dtype));
  });
  TESSERA_INTERNAL_ASSERT(def != definitions_.end(),
                          "no helper " + name + " for " + std::string(tile::dtype_name(dtype)));
  for (const char *callee : def->calls) define(callee, dtype, std::nullopt, lanes);
  int bits = tile::dtype_bits(dtype);
  std::map<std::string, std::string> values{{"NAME", fn},
                                            {"T", type},
                                            {"U", dialect_.compute_type(unsigned_of(dtype))},
                                            {"BITS", std::to_string(bits)},
                                            {"TOP", std::to_string(bits - 1)},
                                            {"f", dialect_.literal_suffix(dtype)}};
  if (from) {
    char limit[64];
    std::snprintf(limit, sizeof limit, "%.1f",
                  std::ldexp(1.0, tile::is_signed_int(dtype) ? bits - 1 : bits));
    values["F"] = dialect_.compute_type(*from);
    values["LIMIT"] = limit + dialect_.literal_suffix(*from);
  }
  defined_.insert(fn);
  text_ += substitute(fn, def->text, values);
  return fn;
}

}  // namespace tessera::clike
