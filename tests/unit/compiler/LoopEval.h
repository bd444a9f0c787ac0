// A tiny evaluator of loop IR for tests (values as doubles per lane; Tile's elementwise Calls
// that tests use). Independent of any backend: kernels it runs are compared with interp.
#pragma once

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "compiler/IR.h"
#include "tile/Diagnostics.h"

namespace tessera::compiler::test {

class LoopEval {
 public:
  std::map<std::string, std::vector<double>> buffers;
  std::map<std::string, int64_t> vars;

  std::vector<double> eval(const Expr &e) {
    switch (e->kind) {
      case ExprKind::IntImm: return {static_cast<double>(as<IntImm>(e)->value)};
      case ExprKind::FloatImm: return {as<FloatImm>(e)->value};
      case ExprKind::Var: return {static_cast<double>(vars.at(as<Var>(e)->name))};
      case ExprKind::Cast: {
        auto v = eval(as<Cast>(e)->value);
        if (!tile::is_float(e->type.dtype))
          for (auto &x : v) x = std::trunc(x);
        if (e->type.dtype == tile::DType::Float32)
          for (auto &x : v) x = static_cast<float>(x);
        return v;
      }
      case ExprKind::Binary: {
        auto *b = as<Binary>(e);
        auto x = eval(b->a), y = eval(b->b);
        for (size_t i = 0; i < x.size(); ++i)
          x[i] = binary(b->op, x[i], y[i], tile::is_float(b->a->type.dtype));
        return x;
      }
      case ExprKind::Not: {
        auto v = eval(as<Not>(e)->a);
        for (auto &x : v) x = x == 0;
        return v;
      }
      case ExprKind::Select: {
        auto *s = as<Select>(e);
        auto c = eval(s->cond), a = eval(s->true_value), b = eval(s->false_value);
        for (size_t i = 0; i < a.size(); ++i) a[i] = c[c.size() == 1 ? 0 : i] != 0 ? a[i] : b[i];
        return a;
      }
      case ExprKind::Load: {
        auto *l = as<Load>(e);
        auto idx = eval(l->index);
        const auto &buf = buffers.at(l->buffer);
        std::vector<double> out;
        for (double i : idx) {
          TESSERA_INTERNAL_ASSERT(i >= 0 && i < buf.size(), "out-of-bounds load of " + l->buffer);
          out.push_back(buf[static_cast<size_t>(i)]);
        }
        return out;
      }
      case ExprKind::Call: {
        auto *c = as<Call>(e);
        std::vector<std::vector<double>> args;
        for (const auto &a : c->args) args.push_back(eval(a));
        std::vector<double> out(args[0].size());
        for (size_t i = 0; i < out.size(); ++i) {
          double x = args[0][i];
          switch (c->op) {
            case tile::Intrinsic::Relu: out[i] = x > 0 ? x : 0; break;
            case tile::Intrinsic::Exp: out[i] = std::exp(x); break;
            case tile::Intrinsic::Sqrt: out[i] = std::sqrt(x); break;
            case tile::Intrinsic::Max: out[i] = std::max(x, args[1][i]); break;
            case tile::Intrinsic::Min: out[i] = std::min(x, args[1][i]); break;
            case tile::Intrinsic::Div: out[i] = x / args[1][i]; break;
            case tile::Intrinsic::Neg: out[i] = -x; break;
            default: TESSERA_INTERNAL_ASSERT(false, "LoopEval: unsupported call");
          }
        }
        return out;
      }
      case ExprKind::Broadcast:
        return std::vector<double>(e->type.lanes, eval(as<Broadcast>(e)->value)[0]);
      case ExprKind::Ramp: {
        auto *r = as<Ramp>(e);
        double b = eval(r->base)[0], s = eval(r->stride)[0];
        std::vector<double> out;
        for (int i = 0; i < e->type.lanes; ++i) out.push_back(b + s * i);
        return out;
      }
    }
    return {};
  }

  void run(const Stmt &s) {
    switch (s->kind) {
      case StmtKind::For: {
        auto *f = as<For>(s);
        int64_t lo = static_cast<int64_t>(eval(f->min)[0]),
                n = static_cast<int64_t>(eval(f->extent)[0]);
        for (int64_t i = lo; i < lo + n; ++i) {
          vars[f->var] = i;
          run(f->body);
        }
        return;
      }
      case StmtKind::IfThenElse: {
        auto *i = as<IfThenElse>(s);
        if (eval(i->cond)[0] != 0)
          run(i->then_case);
        else if (i->else_case)
          run(i->else_case);
        return;
      }
      case StmtKind::Store: {
        auto *st = as<Store>(s);
        auto idx = eval(st->index), v = eval(st->value);
        auto &buf = buffers.at(st->buffer);
        for (size_t i = 0; i < idx.size(); ++i) {
          TESSERA_INTERNAL_ASSERT(idx[i] >= 0 && idx[i] < buf.size(),
                                  "out-of-bounds store to " + st->buffer);
          buf[static_cast<size_t>(idx[i])] = v[i];
        }
        return;
      }
      case StmtKind::LetStmt: {
        auto *l = as<LetStmt>(s);
        vars[l->var] = static_cast<int64_t>(eval(l->value)[0]);
        run(l->body);
        return;
      }
      case StmtKind::Block:
        for (const auto &x : as<Block>(s)->stmts) run(x);
        return;
      case StmtKind::Allocate: {
        auto *a = as<Allocate>(s);
        buffers[a->buffer].assign(a->size, 0);
        run(a->body);
        return;
      }
      case StmtKind::Barrier: return;
    }
  }

 private:
  static int64_t fdiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
  }
  static double binary(Binary::Op op, double x, double y, bool is_float) {
    using Op = Binary::Op;
    switch (op) {
      case Op::Add: return x + y;
      case Op::Sub: return x - y;
      case Op::Mul: return x * y;
      case Op::Div: return is_float ? x / y : static_cast<double>(fdiv(int64_t(x), int64_t(y)));
      case Op::Mod:
        return static_cast<double>(int64_t(x) - fdiv(int64_t(x), int64_t(y)) * int64_t(y));
      case Op::Min: return std::min(x, y);
      case Op::Max: return std::max(x, y);
      case Op::EQ: return x == y;
      case Op::NE: return x != y;
      case Op::LT: return x < y;
      case Op::LE: return x <= y;
      case Op::GT: return x > y;
      case Op::GE: return x >= y;
      case Op::And: return x != 0 && y != 0;
      case Op::Or: return x != 0 || y != 0;
      default: TESSERA_INTERNAL_ASSERT(false, "LoopEval: unsupported binary op");
    }
    return 0;
  }
};

}  // namespace tessera::compiler::test
