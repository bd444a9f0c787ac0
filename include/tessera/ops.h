// Ops by name: the op library and custom ops, callable from C++ now and from Python and Keras.
//
//   OpRegistry ops = builtin_ops();
//   ops.add("group_norm", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
//     return std::vector<Tensor>{my_group_norm(in[0], attrs.get_int("groups"))};
//   });
//   std::vector<Tensor> out = ops.call("group_norm", {x}, {{"groups", 4}});
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "tessera/edsl.h"

namespace tessera {

/// An op attribute: an integer, a float, a string, a bool or a list of integers.
using OpAttr = std::variant<int64_t, double, std::string, bool, std::vector<int64_t>>;

/// Named attributes with typed getters that name the op and the attribute when they fail.
class OpAttrs {
 public:
  OpAttrs() = default;
  OpAttrs(std::initializer_list<std::pair<const std::string, OpAttr>> init) : values_(init) {}
  void set(const std::string &name, OpAttr value) { values_[name] = std::move(value); }
  bool has(const std::string &name) const { return find(name) != nullptr; }

  int64_t get_int(const std::string &name) const;
  int64_t get_int(const std::string &name, int64_t fallback) const;
  double get_float(const std::string &name, double fallback) const;
  bool get_bool(const std::string &name, bool fallback) const;
  std::string get_string(const std::string &name, const std::string &fallback) const;
  /// A list; a single integer is taken as a list of `repeat` copies of it.
  std::vector<int64_t> get_ints(const std::string &name, const std::vector<int64_t> &fallback,
                                size_t repeat = 1) const;

  /// Which op is asking, for error messages ("conv2d: ...").
  std::string op_name;

  /// Throws EdslError "conv2d: unknown attribute 'bogus' (known: padding, strides)" for a given
  /// attribute that no getter and no has() asked for: the names asked are the op's attributes.
  void check_all_asked() const;

 private:
  const OpAttr *find(const std::string &name) const;
  std::map<std::string, OpAttr> values_;
  mutable std::set<std::string> asked_;
};

using OpFunction =
    std::function<std::vector<Tensor>(const std::vector<Tensor> &inputs, const OpAttrs &attrs)>;

/// An explicit registry of named ops (no static self-registration).
class OpRegistry {
 public:
  /// Adds an op; a name may be registered once.
  void add(const std::string &name, OpFunction fn);
  bool has(const std::string &name) const { return ops_.count(name) != 0; }
  std::vector<std::string> names() const;
  /// Runs the op's EDSL function. Throws EdslError "unknown op 'x'", "x: unknown attribute 'y'
  /// (known: ...)" for an attribute the op never asked for, or the op's own error.
  std::vector<Tensor> call(const std::string &name, const std::vector<Tensor> &inputs,
                           OpAttrs attrs = {}) const;

 private:
  std::map<std::string, OpFunction> ops_;
};

/// A registry holding the whole op library (frontends/ops).
OpRegistry builtin_ops();

}  // namespace tessera
