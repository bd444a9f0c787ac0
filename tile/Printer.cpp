#include "tile/Printer.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tessera::tile {

namespace {

bool is_keyword(const std::string &name) {
  return name == "function" || name == "default" || name == "no_defract";
}

bool plain_tail(const std::string &name, size_t from) {
  for (size_t i = from; i < name.size(); ++i) {
    char c = name[i];
    bool last_prime = c == '\'' && i + 1 == name.size();
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && !last_prime) return false;
  }
  return true;
}

// Capitalized names print as they are; others need PlaidML's `#` escape.
std::string tensor_name(const std::string &name) {
  if (!name.empty() && name[0] >= 'A' && name[0] <= 'Z' && plain_tail(name, 1)) return name;
  return "#" + name;
}

// Lowercase names print as they are; others (and keywords) need the `$` escape.
std::string index_name(const std::string &name) {
  if (!name.empty() && name[0] >= 'a' && name[0] <= 'z' && plain_tail(name, 1) && !is_keyword(name))
    return name;
  return "$" + name;
}

// A float literal must read back as a float: "1" would parse as an integer.
std::string float_literal(const Expr &e) {
  bool float_spelling = e.text.find_first_of(".eE") != std::string::npos;
  if (float_spelling && std::strtod(e.text.c_str(), nullptr) == e.float_value) return e.text;
  // Tile has no spelling for infinities and NaN; these divisions evaluate to them.
  if (std::isnan(e.float_value)) return "div(0.0, 0.0)";
  if (std::isinf(e.float_value)) return e.float_value > 0 ? "div(1.0, 0.0)" : "div(-1.0, 0.0)";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", e.float_value);
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

int precedence(Poly::Kind k) {
  switch (k) {
    case Poly::Kind::Add:
    case Poly::Kind::Sub: return 1;
    case Poly::Kind::Mul:
    case Poly::Kind::Div: return 2;
    case Poly::Kind::Neg: return 3;
    case Poly::Kind::Int:
    case Poly::Kind::Index:
    case Poly::Kind::Name: return 4;
  }
  return 4;
}

std::string poly_text(const PolyPtr &p, int min_precedence) {
  std::string s;
  switch (p->kind) {
    case Poly::Kind::Int: s = std::to_string(p->value); break;
    case Poly::Kind::Index: s = index_name(p->name); break;
    case Poly::Kind::Name: s = tensor_name(p->name); break;
    case Poly::Kind::Neg: s = "-" + poly_text(p->lhs, 3); break;
    case Poly::Kind::Add: s = poly_text(p->lhs, 1) + " + " + poly_text(p->rhs, 2); break;
    case Poly::Kind::Sub: s = poly_text(p->lhs, 1) + " - " + poly_text(p->rhs, 2); break;
    case Poly::Kind::Mul: s = poly_text(p->lhs, 2) + "*" + poly_text(p->rhs, 3); break;
    case Poly::Kind::Div: s = poly_text(p->lhs, 2) + "/" + poly_text(p->rhs, 3); break;
  }
  // A negative literal behaves like a negation when it is an operand.
  int own = p->kind == Poly::Kind::Int && p->value < 0 ? 3 : precedence(p->kind);
  return own < min_precedence ? "(" + s + ")" : s;
}

std::string access_text(const Access &a) {
  std::string s = tensor_name(a.tensor) + "[";
  for (size_t i = 0; i < a.indices.size(); ++i) s += (i ? ", " : "") + print_poly(a.indices[i]);
  return s + "]";
}

std::string contraction_text(const Contraction &c) {
  std::string s = tensor_name(c.output.tensor) + "[";
  for (size_t i = 0; i < c.output.indices.size(); ++i)
    s += (i ? ", " : "") + print_poly(c.output.indices[i]);
  if (!c.sizes.empty()) {
    s += " : ";
    for (size_t i = 0; i < c.sizes.size(); ++i) s += (i ? ", " : "") + print_expr(c.sizes[i]);
  }
  s += "] = ";
  s += agg_symbol(c.agg);
  s += "(" + access_text(c.inputs[0]);
  if (c.inputs.size() > 1)
    s += std::string(" ") + comb_symbol(c.comb) + " " + access_text(c.inputs[1]);
  if (c.inputs.size() > 2) s += " ? " + access_text(c.inputs[2]);
  s += ")";
  for (const auto &k : c.constraints) s += ", " + print_poly(k.poly) + " < " + print_expr(k.bound);
  if (c.default_tensor) s += " default " + tensor_name(*c.default_tensor);
  if (c.no_defract) s += " no_defract";
  return s;
}

std::string call_text(const std::string &fn, const std::vector<ExprPtr> &args) {
  std::string s = fn + "(";
  for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + print_expr(args[i]);
  return s + ")";
}

}  // namespace

std::string print_poly(const PolyPtr &poly) { return poly_text(poly, 0); }

std::string print_expr(const ExprPtr &e) {
  switch (e->kind) {
    case Expr::Kind::Int: return std::to_string(e->int_value);
    case Expr::Kind::Float: return float_literal(*e);
    case Expr::Kind::Ref: return tensor_name(e->name);
    case Expr::Kind::Call: break;
  }
  return call_text(e->is_builtin_call() ? e->name : std::string(intrinsic_name(e->op)), e->args);
}

std::string print_program(const Program &program) {
  std::string s = "function (";
  for (size_t i = 0; i < program.inputs.size(); ++i) {
    const Input &in = program.inputs[i];
    s += (i ? ", " : "") + tensor_name(in.name);
    if (!in.has_dims) continue;
    s += "[";
    for (size_t d = 0; d < in.dims.size(); ++d)
      s += (d ? ", " : "") + (in.dims[d].name.empty() ? std::to_string(in.dims[d].size)
                                                      : tensor_name(in.dims[d].name));
    s += "]";
  }
  s += ") -> (";
  for (size_t i = 0; i < program.outputs.size(); ++i)
    s += (i ? ", " : "") + tensor_name(program.outputs[i].name);
  s += ") {\n";
  for (const auto &stmt : program.statements) {
    s += "  ";
    for (const auto &attr : stmt.attributes) {
      s += "[[" + index_name(attr.name);
      if (!attr.params.empty()) {
        s += "(";
        for (size_t i = 0; i < attr.params.size(); ++i) s += (i ? ", " : "") + attr.params[i];
        s += ")";
      }
      s += "]] ";
    }
    if (stmt.is_contraction())
      s += contraction_text(stmt.contraction());
    else if (stmt.is_builtin())
      s += tensor_name(stmt.output) + " = " +
           call_text(std::string(builtin_name(stmt.builtin().fn)), stmt.builtin().args);
    else
      s += tensor_name(stmt.output) + " = " + print_expr(stmt.expr());
    s += ";\n";
  }
  return s + "}\n";
}

}  // namespace tessera::tile
