// gradient(): the loss is built into a Program, differentiated by autodiff::gradient and the
// gradient program is imported back as Tensors over the same placeholders.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "autodiff/Gradient.h"
#include "frontends/edsl/TensorNode.h"
#include "tessera/gradient.h"
#include "tessera/import.h"
#include "tile/Diagnostics.h"

namespace tessera {

using edsl_detail::NodePtr;
using edsl_detail::TensorNode;

namespace {

std::string shape_str(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// The placeholders `roots` depend on, in creation order: the program's inputs.
std::vector<Tensor> placeholders(const std::vector<Tensor> &roots) {
  std::vector<NodePtr> found;
  std::set<const TensorNode *> seen;
  std::function<void(const NodePtr &)> visit = [&](const NodePtr &n) {
    if (!seen.insert(n.get()).second) return;
    if (n->kind == TensorNode::Kind::Placeholder) found.push_back(n);
    for (const auto &a : n->args) visit(a);
    if (n->contraction)
      for (const auto &in : n->contraction->inputs) visit(in.tensor);
    if (n->default_value) visit(n->default_value);
  };
  for (const auto &r : roots) visit(r.node());
  std::sort(found.begin(), found.end(),
            [](const NodePtr &a, const NodePtr &b) { return a->serial < b->serial; });
  std::vector<Tensor> out;
  for (const auto &n : found) out.emplace_back(n);
  return out;
}

/// `e` with tensor references renamed by `names` (others kept).
tile::ExprPtr rename(const tile::ExprPtr &e, const std::map<std::string, std::string> &names) {
  if (e->kind == tile::Expr::Kind::Ref) {
    auto it = names.find(e->name);
    return it == names.end() ? e : tile::Expr::make_ref(it->second);
  }
  if (e->kind != tile::Expr::Kind::Call) return e;
  std::vector<tile::ExprPtr> args;
  for (const auto &a : e->args) args.push_back(rename(a, names));
  return tile::Expr::make_call(e->op, std::move(args));
}

/// Renames the program's inputs to X_A0, X_A1, ... (names the EDSL never generates): placeholder
/// names are the user's, and an input `d_L` beside an input `L` would clash with L's gradient.
void rename_inputs(tile::Program &p) {
  std::map<std::string, std::string> names;
  for (size_t i = 0; i < p.inputs.size(); ++i) names[p.inputs[i].name] = "X_A" + std::to_string(i);
  auto renamed = [&](const std::string &n) {
    auto it = names.find(n);
    return it == names.end() ? n : it->second;
  };
  for (auto &in : p.inputs) in.name = renamed(in.name);
  for (auto &s : p.statements) {
    if (!s.is_contraction()) {
      s.body = rename(s.expr(), names);
      continue;
    }
    tile::Contraction c = s.contraction();
    for (auto &a : c.inputs) a.tensor = renamed(a.tensor);
    if (c.default_tensor) c.default_tensor = renamed(*c.default_tensor);
    s.body = std::move(c);
  }
}

/// Ones of the loss's shape and dtype: an assign contraction broadcasting a scalar one.
Tensor ones_like(const Tensor &loss) {
  Tensor one = cast(Tensor(1.0), loss.dtype());
  if (loss.rank() == 0) return one;
  std::vector<TensorIndex> idx(loss.rank());
  std::vector<IndexExpr> access(idx.begin(), idx.end());
  Tensor out = TensorOutput(loss.dims());
  out(access) = one();
  return out;
}

}  // namespace

std::vector<Tensor> gradient(const Tensor &loss, const std::vector<Tensor> &wrt,
                             const Tensor &seed) {
  if (!loss.defined()) throw EdslError("gradient: the loss is an undefined Tensor");
  if (!seed.defined()) throw EdslError("gradient: the seed is an undefined Tensor");
  for (size_t i = 0; i < wrt.size(); ++i) {
    if (!wrt[i].defined())
      throw EdslError("gradient: wrt " + std::to_string(i) + " is an undefined Tensor");
    if (wrt[i].node()->kind == TensorNode::Kind::Literal)
      throw EdslError("gradient: wrt " + std::to_string(i) +
                      " is a literal, not a tensor of the loss");
  }
  if (seed.shape() != loss.shape())
    throw EdslError("gradient: the seed has shape " + shape_str(seed.shape()) +
                    " but the loss has " + shape_str(loss.shape()));
  // Checked here, not left to autodiff, so that messages name placeholders, not program names.
  if (!tile::is_float(loss.dtype()))
    throw EdslError("gradient: the loss is " + std::string(tile::dtype_name(loss.dtype())) +
                    ", not a float tensor");
  if (!tile::is_float(seed.dtype()))
    throw EdslError("gradient: the seed is " + std::string(tile::dtype_name(seed.dtype())) +
                    ", not a float tensor");
  for (size_t i = 0; i < wrt.size(); ++i)
    if (!tile::is_float(wrt[i].dtype()))
      throw EdslError("gradient: cannot differentiate with respect to wrt " + std::to_string(i) +
                      (wrt[i].name().empty() ? std::string() : " ('" + wrt[i].name() + "')") +
                      ": it is " + std::string(tile::dtype_name(wrt[i].dtype())) +
                      ", not a float tensor");
  if (wrt.empty()) return {};

  // Inputs are the placeholders of the loss and of every wrt. A wrt that is not a placeholder
  // becomes an extra output of the loss program, so that its statement carries a name for
  // autodiff: its gradient is what flows into it, while the placeholders still get the whole
  // gradient through it.
  std::vector<Tensor> roots{loss};
  roots.insert(roots.end(), wrt.begin(), wrt.end());
  std::vector<Tensor> inputs = placeholders(roots);
  std::set<std::string> taken;  // output names must differ from the placeholders' while building
  for (const auto &t : inputs) taken.insert(t.node()->name);
  auto fresh = [&](const std::string &hint) {
    std::string name = hint;
    for (int i = 0; taken.count(name) || taken.count("d_" + name); ++i)
      name = hint + "_" + std::to_string(i);
    taken.insert(name);
    return name;
  };
  std::string of = fresh("L");
  std::vector<std::pair<std::string, Tensor>> outputs{{of, loss}};
  std::map<const TensorNode *, std::string> output_names{{loss.node().get(), of}};
  for (const auto &w : wrt) {
    if (w.node()->kind == TensorNode::Kind::Placeholder || output_names.count(w.node().get()))
      continue;
    std::string name = fresh("W");
    outputs.emplace_back(name, w);
    output_names[w.node().get()] = name;
  }

  Function fn = build(outputs, inputs);
  rename_inputs(fn.program);
  std::map<std::string, tile::DType> dtypes;
  std::map<std::string, Tensor> bound;
  std::map<const TensorNode *, std::string> names = output_names;
  for (size_t i = 0; i < inputs.size(); ++i) {
    dtypes[fn.program.inputs[i].name] = inputs[i].dtype();
    bound[fn.program.inputs[i].name] = inputs[i];
    names[inputs[i].node().get()] = fn.program.inputs[i].name;
  }
  // The loss's own gradient is the seed; autodiff differentiates the rest.
  std::vector<std::string> wrt_names;
  for (const auto &w : wrt)
    wrt_names.push_back(w.node() == loss.node() ? "" : names.at(w.node().get()));
  std::vector<std::string> unique_names;
  for (const auto &n : wrt_names)
    if (!n.empty()) unique_names.push_back(n);
  std::sort(unique_names.begin(), unique_names.end());
  unique_names.erase(std::unique(unique_names.begin(), unique_names.end()), unique_names.end());
  if (unique_names.empty()) return std::vector<Tensor>(wrt.size(), seed);

  tile::Program g;
  try {
    g = autodiff::gradient(fn.program, of, unique_names, {}, dtypes);
  } catch (const tile::Error &e) {
    std::string msg = e.what();
    if (msg.rfind("error: ", 0) == 0) msg = msg.substr(7);
    throw EdslError("gradient: " + msg);
  }
  bound["d_" + of] = seed;
  std::map<std::string, Tensor> grads = import_program(g, bound);
  std::vector<Tensor> out;
  for (const auto &name : wrt_names) out.push_back(name.empty() ? seed : grads.at("d_" + name));
  return out;
}

std::vector<Tensor> gradient(const Tensor &loss, const std::vector<Tensor> &wrt) {
  if (!loss.defined()) throw EdslError("gradient: the loss is an undefined Tensor");
  return gradient(loss, wrt, ones_like(loss));
}

}  // namespace tessera
