#include "tessera/ops.h"

namespace tessera {

const OpAttr *OpAttrs::find(const std::string &name) const {
  asked_.insert(name);
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

namespace {
[[noreturn]] void bad_attr(const OpAttrs &attrs, const std::string &name, const char *want) {
  throw EdslError((attrs.op_name.empty() ? "" : attrs.op_name + ": ") + "attribute '" + name +
                  "' must be " + want);
}
}  // namespace

int64_t OpAttrs::get_int(const std::string &name) const {
  const OpAttr *v = find(name);
  if (!v)
    throw EdslError((op_name.empty() ? "" : op_name + ": ") + "missing attribute '" + name + "'");
  if (auto *i = std::get_if<int64_t>(v)) return *i;
  if (auto *b = std::get_if<bool>(v)) return *b;
  bad_attr(*this, name, "an integer");
}

int64_t OpAttrs::get_int(const std::string &name, int64_t fallback) const {
  return find(name) ? get_int(name) : fallback;
}

double OpAttrs::get_float(const std::string &name, double fallback) const {
  const OpAttr *v = find(name);
  if (!v) return fallback;
  if (auto *d = std::get_if<double>(v)) return *d;
  if (auto *i = std::get_if<int64_t>(v)) return static_cast<double>(*i);
  bad_attr(*this, name, "a number");
}

bool OpAttrs::get_bool(const std::string &name, bool fallback) const {
  const OpAttr *v = find(name);
  if (!v) return fallback;
  if (auto *b = std::get_if<bool>(v)) return *b;
  if (auto *i = std::get_if<int64_t>(v)) return *i != 0;
  bad_attr(*this, name, "a bool");
}

std::string OpAttrs::get_string(const std::string &name, const std::string &fallback) const {
  const OpAttr *v = find(name);
  if (!v) return fallback;
  if (auto *s = std::get_if<std::string>(v)) return *s;
  bad_attr(*this, name, "a string");
}

std::vector<int64_t> OpAttrs::get_ints(const std::string &name,
                                       const std::vector<int64_t> &fallback, size_t repeat) const {
  const OpAttr *v = find(name);
  if (!v) return fallback;
  if (auto *l = std::get_if<std::vector<int64_t>>(v)) return *l;
  if (auto *i = std::get_if<int64_t>(v)) return std::vector<int64_t>(repeat, *i);
  bad_attr(*this, name, "a list of integers");
}

void OpAttrs::check_all_asked() const {
  for (const auto &[name, value] : values_) {
    if (asked_.count(name)) continue;
    std::string known;
    for (const auto &a : asked_) known += (known.empty() ? "" : ", ") + a;
    throw EdslError((op_name.empty() ? "" : op_name + ": ") + "unknown attribute '" + name + "' (" +
                    (known.empty() ? "it takes none" : "known: " + known) + ")");
  }
}

void OpRegistry::add(const std::string &name, OpFunction fn) {
  if (!ops_.emplace(name, std::move(fn)).second)
    throw EdslError("op '" + name + "' is registered twice");
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> out;
  for (const auto &[name, fn] : ops_) out.push_back(name);
  return out;
}

std::vector<Tensor> OpRegistry::call(const std::string &name, const std::vector<Tensor> &inputs,
                                     OpAttrs attrs) const {
  auto it = ops_.find(name);
  if (it == ops_.end()) throw EdslError("unknown op '" + name + "'");
  attrs.op_name = name;
  std::vector<Tensor> out = it->second(inputs, attrs);
  attrs.check_all_asked();
  return out;
}

}  // namespace tessera
