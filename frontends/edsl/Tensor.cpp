// Tensors of the EDSL: placeholders, literals, elementwise operations, specials and building a
// Program from them.
#include <algorithm>
#include <functional>
#include <set>

#include "backends/Registry.h"
#include "frontends/edsl/TensorNode.h"
#include "tile/Printer.h"

namespace tessera {

using edsl_detail::NodePtr;
using edsl_detail::TensorNode;

namespace {

NodePtr literal(bool is_float, double f, int64_t i) {
  NodePtr n = edsl_detail::make_node(TensorNode::Kind::Literal);
  n->is_float = is_float;
  n->float_value = f;
  n->int_value = i;
  n->type = {is_float ? DType::Float32 : DType::Int32, true};
  return n;
}

const NodePtr &checked(const Tensor &t) {
  if (!t.defined()) throw EdslError("an undefined Tensor is used");
  return t.node();
}

}  // namespace

Tensor::Tensor(double value) : node_(literal(true, value, 0)) {}
Tensor::Tensor(int value) : node_(literal(false, 0, value)) {}
Tensor::Tensor(int64_t value) : node_(literal(false, 0, value)) {}

DType Tensor::dtype() const { return checked(*this)->type.dtype; }
const std::vector<int64_t> &Tensor::shape() const { return checked(*this)->shape; }
const std::string &Tensor::name() const { return checked(*this)->name; }

void Tensor::bind_dim_list(const std::vector<TensorDim *> &dims) const {
  const auto &s = shape();
  if (dims.size() != s.size())
    throw EdslError("bind_dims: the tensor has rank " + std::to_string(s.size()) + ", not " +
                    std::to_string(dims.size()));
  for (size_t i = 0; i < dims.size(); ++i) {
    if (!dims[i]->is_bound()) {
      *dims[i]->size_ = s[i];
    } else if (dims[i]->value() != s[i]) {
      throw EdslError("bind_dims: dimension " + std::to_string(i) + " is " + std::to_string(s[i]) +
                      " but was bound to " + std::to_string(dims[i]->value()));
    }
  }
}

std::vector<TensorDim> Tensor::dims() const {
  std::vector<TensorDim> out;
  for (int64_t d : shape()) out.emplace_back(d);
  return out;
}

Tensor Placeholder(DType dtype, const std::vector<int64_t> &shape, const std::string &name) {
  for (int64_t d : shape)
    if (d < 0) throw EdslError("Placeholder: negative dimension " + std::to_string(d));
  NodePtr n = edsl_detail::make_node(TensorNode::Kind::Placeholder);
  n->type = {dtype, false};
  n->shape = shape;
  n->name = name;
  return Tensor(n);
}

Tensor call(tile::Intrinsic op, const std::vector<Tensor> &args) {
  NodePtr n = edsl_detail::make_node(TensorNode::Kind::Call);
  n->op = op;
  for (const auto &a : args) n->args.push_back(checked(a));
  try {
    edsl_detail::infer_type(n);
  } catch (const EdslError &e) {
    throw EdslError(std::string(tile::intrinsic_name(op)) + ": " + e.what());
  }
  return Tensor(n);
}

Tensor operator+(const Tensor &a, const Tensor &b) { return call(tile::Intrinsic::Add, {a, b}); }
Tensor operator-(const Tensor &a, const Tensor &b) { return call(tile::Intrinsic::Sub, {a, b}); }
Tensor operator*(const Tensor &a, const Tensor &b) { return call(tile::Intrinsic::Mul, {a, b}); }
Tensor operator/(const Tensor &a, const Tensor &b) { return call(tile::Intrinsic::Div, {a, b}); }
Tensor operator-(const Tensor &a) { return call(tile::Intrinsic::Neg, {a}); }
Tensor operator==(const Tensor &a, const Tensor &b) { return call(tile::Intrinsic::CmpEq, {a, b}); }
Tensor operator!=(const Tensor &a, const Tensor &b) { return call(tile::Intrinsic::CmpNe, {a, b}); }
Tensor operator<(const Tensor &a, const Tensor &b) { return call(tile::Intrinsic::CmpLt, {a, b}); }
Tensor operator>(const Tensor &a, const Tensor &b) { return call(tile::Intrinsic::CmpGt, {a, b}); }
Tensor operator<=(const Tensor &a, const Tensor &b) { return call(tile::Intrinsic::CmpLe, {a, b}); }
Tensor operator>=(const Tensor &a, const Tensor &b) { return call(tile::Intrinsic::CmpGe, {a, b}); }
Tensor operator&(const Tensor &a, const Tensor &b) { return call(tile::Intrinsic::BitAnd, {a, b}); }
Tensor operator|(const Tensor &a, const Tensor &b) { return call(tile::Intrinsic::BitOr, {a, b}); }
Tensor operator^(const Tensor &a, const Tensor &b) { return call(tile::Intrinsic::BitXor, {a, b}); }
Tensor operator<<(const Tensor &a, const Tensor &b) {
  return call(tile::Intrinsic::BitLeft, {a, b});
}
Tensor operator>>(const Tensor &a, const Tensor &b) {
  return call(tile::Intrinsic::BitRight, {a, b});
}
Tensor operator~(const Tensor &a) { return call(tile::Intrinsic::BitNot, {a}); }

Tensor exp(const Tensor &x) { return call(tile::Intrinsic::Exp, {x}); }
Tensor log(const Tensor &x) { return call(tile::Intrinsic::Log, {x}); }
Tensor sqrt(const Tensor &x) { return call(tile::Intrinsic::Sqrt, {x}); }
Tensor pow(const Tensor &x, const Tensor &y) { return call(tile::Intrinsic::Pow, {x, y}); }
Tensor tanh(const Tensor &x) { return call(tile::Intrinsic::Tanh, {x}); }
Tensor sigmoid(const Tensor &x) { return call(tile::Intrinsic::Sigmoid, {x}); }
Tensor abs(const Tensor &x) { return call(tile::Intrinsic::Abs, {x}); }
Tensor max(const Tensor &a, const Tensor &b) { return call(tile::Intrinsic::Max, {a, b}); }
Tensor min(const Tensor &a, const Tensor &b) { return call(tile::Intrinsic::Min, {a, b}); }
Tensor select(const Tensor &c, const Tensor &a, const Tensor &b) {
  return call(tile::Intrinsic::Cond, {c, a, b});
}

Tensor cast(const Tensor &x, DType to) {
  if (to == DType::Bool) return call(tile::Intrinsic::AsBool, {x});
  tile::Intrinsic op = tile::is_float(to)        ? tile::Intrinsic::AsFloat
                       : tile::is_signed_int(to) ? tile::Intrinsic::AsInt
                                                 : tile::Intrinsic::AsUInt;
  return call(op, {x, Tensor(static_cast<int64_t>(tile::dtype_bits(to)))});
}

Tensor reshape(const Tensor &x, const std::vector<int64_t> &shape) {
  std::vector<Tensor> args{x};
  for (int64_t d : shape) args.emplace_back(d);
  return call(tile::Intrinsic::Reshape, args);
}

Tensor index(const Tensor &x, int axis) { return call(tile::Intrinsic::Index, {x, Tensor(axis)}); }
Tensor gather(const Tensor &x, const Tensor &indices) {
  return call(tile::Intrinsic::Gather, {x, indices});
}
Tensor scatter(const Tensor &x, const Tensor &indices, const Tensor &like) {
  return call(tile::Intrinsic::Scatter, {x, indices, like});
}

Tensor prng_step(const Tensor &state, const std::vector<int64_t> &shape) {
  std::vector<Tensor> args{state};
  for (int64_t d : shape) args.emplace_back(d);
  return call(tile::Intrinsic::PrngStep, args);
}
Tensor prng_value(const Tensor &step) { return call(tile::Intrinsic::PrngValue, {step}); }
Tensor prng_state(const Tensor &step) { return call(tile::Intrinsic::PrngState, {step}); }

std::string Function::tile_text() const { return tile::print_program(program); }

Function build(const std::vector<std::pair<std::string, Tensor>> &outputs,
               const std::vector<Tensor> &inputs) {
  std::vector<NodePtr> input_nodes;
  if (!inputs.empty()) {
    for (const auto &t : inputs) input_nodes.push_back(checked(t));
  } else {
    // Every placeholder reachable from the outputs, in creation order.
    std::set<const TensorNode *> seen;
    std::function<void(const NodePtr &)> visit = [&](const NodePtr &n) {
      if (!seen.insert(n.get()).second) return;
      if (n->kind == TensorNode::Kind::Placeholder) input_nodes.push_back(n);
      for (const auto &a : n->args) visit(a);
      if (n->contraction)
        for (const auto &in : n->contraction->inputs) visit(in.tensor);
      if (n->default_value) visit(n->default_value);
    };
    for (const auto &[name, t] : outputs) visit(checked(t));
    std::sort(input_nodes.begin(), input_nodes.end(),
              [](auto &a, auto &b) { return a->serial < b->serial; });
  }
  std::vector<std::pair<std::string, NodePtr>> outs;
  for (const auto &[name, t] : outputs) outs.emplace_back(name, checked(t));
  Function fn;
  edsl_detail::ProgramBuilder builder;
  fn.program = builder.build(outs, input_nodes);
  for (size_t i = 0; i < input_nodes.size(); ++i)
    fn.input_types[fn.program.inputs[i].name] =
        tile::TensorType{input_nodes[i]->type.dtype, input_nodes[i]->shape};
  return fn;
}

std::unique_ptr<Executable> compile(const Function &fn, const std::string &device,
                                    const CompileOptions &options) {
  DeviceRegistry registry = builtin_devices();
  std::unique_ptr<Device> dev = registry.create(device.empty() ? registry.default_name() : device);
  return dev->compile(tile::bind(fn.program, fn.input_types), options);
}

}  // namespace tessera
