#include "runtime/Constants.h"

#include <algorithm>
#include <map>
#include <set>

#include "compiler/OutputBasis.h"
#include "runtime/interp/Interpret.h"
#include "tile/Diagnostics.h"

namespace tessera {

namespace {

using tile::BoundExpr;
using tile::BoundExprPtr;
using tile::BoundStatement;
using tile::DType;
using tile::Expr;
using tile::Intrinsic;

bool is_prng(const BoundStatement &s) {
  if (s.is_contraction() || s.expr()->kind != Expr::Kind::Call) return false;
  Intrinsic op = s.expr()->op;
  return op == Intrinsic::PrngStep || op == Intrinsic::PrngState || op == Intrinsic::PrngValue;
}

std::string fresh_name(const std::string &base, const tile::BoundProgram &p) {
  std::string name = base;
  while (p.types.count(name)) name += "_";
  return name;
}

BoundExprPtr ref(const std::string &name, const std::vector<int64_t> &shape) {
  auto e = std::make_shared<BoundExpr>();
  e->kind = Expr::Kind::Ref;
  e->name = name;
  e->shape = shape;
  return e;
}

bool mentions(const tile::Affine &a, size_t j) { return !(a.coeffs[j] == tile::Rational(0)); }

// y = scale[c] * acc + shift[c] per channel c: the epilogue of a contraction so far.
struct ChannelAffine {
  std::vector<double> scale, shift;
};

/// Folds the per-channel affine statements after contractions with constant weights.
class EpilogueFolder {
 public:
  EpilogueFolder(tile::BoundProgram &p, TensorMap &known) : p_(p), known_(known) {}

  int run() {
    // Who reads what, once: folding a chain changes only what its own statements read.
    for (size_t i = 0; i < p_.statements.size(); ++i)
      for (const auto &r : statement_reads(p_, p_.statements[i])) {
        auto &list = readers_[r];
        if (list.empty() || list.back() != i) list.push_back(i);
      }
    int folded = 0;
    for (size_t i = 0; i < p_.statements.size(); ++i) folded += fold(i);
    std::vector<BoundStatement> kept;
    for (auto &s : p_.statements)
      if (!removed_.count(s.output)) kept.push_back(std::move(s));
    p_.statements = std::move(kept);
    return folded;
  }

 private:
  tile::BoundProgram &p_;
  TensorMap &known_;
  std::set<std::string> removed_;
  std::map<std::string, std::vector<size_t>> readers_;  // by tensor: statements reading it

  const std::vector<size_t> &readers_of(const std::string &name) const {
    static const std::vector<size_t> none;
    auto it = readers_.find(name);
    return it == readers_.end() ? none : it->second;
  }

  bool is_output(const std::string &name) const {
    for (const auto &[n, t] : p_.outputs)
      if (n == name) return true;
    return false;
  }

  // The per-channel values of a constant operand broadcast against a tensor of `shape` along
  // dimension `d` only (a literal, a [C] or [1, 1, 1, C] tensor), else nothing.
  std::optional<std::vector<double>>
  per_channel(const BoundExpr &e, const std::vector<int64_t> &shape, size_t d) const {
    const int64_t channels = shape[d];
    if (e.kind == Expr::Kind::Int || e.kind == Expr::Kind::Float)
      return std::vector<double>(
          channels, e.kind == Expr::Kind::Int ? static_cast<double>(e.int_value) : e.float_value);
    if (e.kind != Expr::Kind::Ref) return std::nullopt;
    auto it = known_.find(e.name);
    if (it == known_.end() || it->second.dtype() != DType::Float32) return std::nullopt;
    const auto &ks = it->second.shape();
    if (ks.size() > shape.size()) return std::nullopt;
    const size_t off = shape.size() - ks.size();
    for (size_t k = 0; k < ks.size(); ++k)
      if (ks[k] != 1 && !(k + off == d && ks[k] == channels)) return std::nullopt;
    std::vector<double> v(channels);
    for (int64_t c = 0; c < channels; ++c)
      v[c] = it->second.get_double(it->second.elements() == 1 ? 0 : c);
    return v;
  }

  // Extends `f` by statement `s` = op(cur, k) or op(k, cur); false when `s` is not such a step.
  bool extend(ChannelAffine &f, const BoundStatement &s, const std::string &cur,
              const std::vector<int64_t> &shape, size_t d) const {
    if (s.is_contraction() || s.type.dtype != DType::Float32 || s.type.shape != shape) return false;
    const BoundExpr &e = *s.expr();
    if (e.kind != Expr::Kind::Call || e.args.size() != 2) return false;
    auto is_cur = [&](const BoundExpr &a) {
      return a.kind == Expr::Kind::Ref && a.name == cur && a.shape == shape;
    };
    bool first = is_cur(*e.args[0]), second = is_cur(*e.args[1]);
    if (first == second) return false;
    auto k = per_channel(*e.args[first ? 1 : 0], shape, d);
    if (!k) return false;
    for (size_t c = 0; c < k->size(); ++c) {
      double &a = f.scale[c], &b = f.shift[c], v = (*k)[c];
      switch (e.op) {
        case Intrinsic::Add: b += v; break;
        case Intrinsic::Sub:
          if (first) {
            b -= v;
          } else {
            a = -a, b = v - b;
          }
          break;
        case Intrinsic::Mul: a *= v, b *= v; break;
        case Intrinsic::Div:
          if (!first || v == 0) return false;
          a /= v, b /= v;
          break;
        default: return false;
      }
    }
    return true;
  }

  // Statement i, a sum of products with constant weights whose channel is the output's last
  // dimension, followed by affine per-channel statements: its weights scaled, the chain replaced
  // by one add of a shift. Returns 1 when it folded.
  int fold(size_t i) {
    const BoundStatement &s = p_.statements[i];
    if (!s.is_contraction() || removed_.count(s.output) || is_output(s.output) ||
        s.type.dtype != DType::Float32 || s.type.shape.empty())
      return 0;
    // Depthwise convolutions pin their per-group output channel (`g*1 + co`, co < 1) to g.
    const tile::BoundContraction c = compiler::pin_single_valued(s.contraction());
    if (c.agg != tile::AggOp::Sum || c.comb != tile::CombOp::Mul || c.inputs.size() != 2 ||
        c.default_tensor)
      return 0;
    const size_t d = s.type.shape.size() - 1;
    auto j = c.output.dims[d].plain_index();
    if (!j) return 0;
    for (size_t k = 0; k < c.output.dims.size(); ++k)
      if (k != d && mentions(c.output.dims[k], *j)) return 0;
    for (const auto &q : c.constraints)
      if (mentions(q.poly, *j)) return 0;
    // One constant input (the weights) indexed by the channel in exactly one dimension: scaling
    // that slice of the weights scales that output channel (whatever the other input reads).
    int w = known_.count(c.inputs[0].tensor) ? 0 : known_.count(c.inputs[1].tensor) ? 1 : -1;
    if (w < 0 || known_.count(c.inputs[1 - w].tensor)) return 0;
    const HostTensor &weights = known_.at(c.inputs[w].tensor);
    if (weights.dtype() != DType::Float32) return 0;
    std::optional<size_t> channel_dim;
    for (size_t k = 0; k < c.inputs[w].dims.size(); ++k) {
      const auto &a = c.inputs[w].dims[k];
      if (!mentions(a, *j)) continue;
      if (channel_dim || a.plain_index() != j) return 0;
      channel_dim = k;
    }
    if (!channel_dim) return 0;

    const auto &shape = s.type.shape;
    ChannelAffine f{std::vector<double>(shape[d], 1.0), std::vector<double>(shape[d], 0.0)};
    std::vector<size_t> chain;
    std::string cur = s.output;
    for (;;) {
      const auto &readers = readers_of(cur);
      if (readers.size() != 1 || (cur != s.output && is_output(cur))) break;
      if (!extend(f, p_.statements[readers[0]], cur, shape, d)) break;
      chain.push_back(readers[0]);
      cur = p_.statements[readers[0]].output;
    }
    if (chain.empty()) return 0;

    // Scaled weights, and the shift as a [C, 1, ...] tensor broadcast along the channel.
    HostTensor scaled = HostTensor::uninitialized(weights.type());
    int64_t stride = 1;
    for (size_t k = *channel_dim + 1; k < weights.shape().size(); ++k) stride *= weights.shape()[k];
    const int64_t channels = weights.shape()[*channel_dim];
    for (int64_t e = 0; e < weights.elements(); ++e)
      scaled.set_double(e, weights.get_double(e) * f.scale[(e / stride) % channels]);
    const std::string w_name = fresh_name(s.output + "_weights", p_);
    p_.types[w_name] = scaled.type();
    known_[w_name] = std::move(scaled);
    HostTensor shift(tile::TensorType{DType::Float32, {shape[d]}});
    for (int64_t k = 0; k < shape[d]; ++k) shift.set_double(k, f.shift[k]);
    const std::string b_name = fresh_name(s.output + "_shift", p_);
    p_.types[b_name] = shift.type();
    known_[b_name] = std::move(shift);

    tile::BoundContraction scaled_c = c;
    scaled_c.inputs[w].tensor = w_name;
    p_.statements[i].body = std::move(scaled_c);
    BoundStatement &last = p_.statements[chain.back()];
    auto add = std::make_shared<BoundExpr>();
    add->kind = Expr::Kind::Call;
    add->op = Intrinsic::Add;
    add->shape = shape;
    add->range = last.expr()->range;
    add->args = {ref(s.output, shape), ref(b_name, {shape[d]})};
    last.body = BoundExprPtr(add);
    for (size_t k = 0; k + 1 < chain.size(); ++k) removed_.insert(p_.statements[chain[k]].output);
    return 1;
  }
};

}  // namespace

FoldedProgram fold_constants(const tile::BoundProgram &program, const TensorMap &constants) {
  std::set<std::string> inputs;
  for (const auto &[name, type] : program.inputs) inputs.insert(name);
  for (const auto &[name, value] : constants) {
    if (!inputs.count(name)) {
      std::string names;
      for (const auto &[n, t] : program.inputs) names += (names.empty() ? "" : ", ") + n;
      throw tile::Error("error: constant '" + name + "' is not an input of the program (its " +
                        "inputs: " + names + ")");
    }
    const auto &type = program.type_of(name);
    if (value.type() != type)
      throw tile::Error("error: constant '" + name + "' is " + value.type().str() +
                        " but the program declares " + type.str());
  }
  std::set<std::string> outputs;
  for (const auto &[name, type] : program.outputs) outputs.insert(name);

  FoldedProgram out;
  out.program = program;
  TensorMap known = constants;
  // 1. Statements reading constants only are evaluated now, unless they are outputs, random
  // (prng_*) or much larger than what they read (a broadcast to a large shape stays a kernel).
  std::vector<BoundStatement> kept;
  for (const auto &s : program.statements) {
    auto reads = statement_reads(program, s);
    int64_t read_elements = 0;
    bool all_known = true;
    for (const auto &r : reads) {
      auto it = known.find(r);
      all_known = all_known && it != known.end();
      if (it != known.end()) read_elements += it->second.elements();
    }
    if (all_known && !outputs.count(s.output) && !is_prng(s) &&
        s.type.elements() <= 4 * read_elements + 64) {
      known[s.output] = evaluate_statement(program, s, known);
      ++out.folded_statements;
    } else {
      kept.push_back(s);
    }
  }
  out.program.statements = std::move(kept);
  // 2. Affine per-channel epilogues into the weights.
  out.folded_epilogues = EpilogueFolder(out.program, known).run();
  // 3. Inputs: the run's, then the constants something still reads.
  std::set<std::string> read = outputs;  // an output may be a constant input itself
  for (const auto &s : out.program.statements)
    for (const auto &r : statement_reads(out.program, s)) read.insert(r);
  out.program.inputs.clear();
  for (const auto &[name, type] : program.inputs)
    if (!constants.count(name)) out.program.inputs.emplace_back(name, type);
  for (auto &[name, value] : known)
    if (read.count(name)) {
      out.program.inputs.emplace_back(name, value.type());
      out.constants[name] = std::move(value);
    }
  return out;
}

}  // namespace tessera
