#include "runtime/interp/Interpret.h"

#include <map>

#include "runtime/InputCheck.h"
#include "runtime/interp/Contraction.h"
#include "runtime/interp/Elementwise.h"
#include "runtime/interp/Specials.h"
#include "tile/Diagnostics.h"

namespace tessera {

namespace {

void collect_refs(const tile::BoundExpr &e, std::vector<std::string> &out) {
  if (e.kind == tile::Expr::Kind::Ref) out.push_back(e.name);
  for (const auto &a : e.args) collect_refs(*a, out);
}

// The tensors statement `s` reads. prng_state reads the state its prng_step was given.
std::vector<std::string> reads(const tile::BoundProgram &p, const tile::BoundStatement &s) {
  std::vector<std::string> out;
  if (s.is_contraction()) {
    for (const auto &in : s.contraction().inputs) out.push_back(in.tensor);
    if (s.contraction().default_tensor) out.push_back(*s.contraction().default_tensor);
    return out;
  }
  collect_refs(*s.expr(), out);
  if (s.expr()->op == tile::Intrinsic::PrngState && s.expr()->kind == tile::Expr::Kind::Call)
    for (const auto &t : p.statements)
      if (t.output == s.expr()->args[0]->name) collect_refs(*t.expr()->args[0], out);
  return out;
}

HostTensor eval_statement(const tile::BoundProgram &p, const tile::BoundStatement &s,
                          const TensorMap &env) {
  if (s.is_contraction()) return interp::eval_contraction(p, s, env);
  const tile::BoundExpr &e = *s.expr();
  if (e.kind == tile::Expr::Kind::Call && tile::is_special(e.op))
    return interp::eval_special(p, s, env);
  HostTensor v = interp::eval_expr(e, env);
  // Literals evaluate exactly; the statement stores its bound dtype.
  return v.dtype() == s.type.dtype ? v : interp::convert(v, s.type.dtype);
}

}  // namespace

std::vector<std::string> statement_reads(const tile::BoundProgram &program,
                                         const tile::BoundStatement &s) {
  return reads(program, s);
}

HostTensor evaluate_statement(const tile::BoundProgram &program, const tile::BoundStatement &s,
                              const TensorMap &env) {
  return eval_statement(program, s, env);
}

TensorMap interpret(const tile::BoundProgram &program, const TensorMap &inputs) {
  check_inputs(program, inputs);
  TensorMap env;
  for (const auto &[name, type] : program.inputs) env[name] = inputs.at(name);
  // Drop each intermediate after its last reader so large programs fit in memory.
  std::map<std::string, size_t> last_use;
  for (size_t i = 0; i < program.statements.size(); ++i)
    for (const auto &r : reads(program, program.statements[i])) last_use[r] = i;
  std::map<std::string, bool> is_output;
  for (const auto &[name, type] : program.outputs) is_output[name] = true;

  for (size_t i = 0; i < program.statements.size(); ++i) {
    const auto &s = program.statements[i];
    HostTensor v = eval_statement(program, s, env);
    TESSERA_INTERNAL_ASSERT(v.type() == s.type, "statement " + s.output + " evaluated to " +
                                                    v.type().str() + " instead of " + s.type.str());
    env[s.output] = std::move(v);
    for (const auto &r : reads(program, s))
      if (last_use[r] == i && !is_output.count(r)) env.erase(r);
  }
  TensorMap out;
  for (const auto &[name, type] : program.outputs) out[name] = env.at(name);
  return out;
}

}  // namespace tessera
