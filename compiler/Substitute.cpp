#include "compiler/Substitute.h"

#include "compiler/IRMutator.h"

namespace tessera::compiler {

namespace {
class Substituter : public IRMutator {
 public:
  explicit Substituter(const std::map<std::string, Expr> &r) : r_(r) {}
  using IRMutator::visit;
  Expr visit(const Var *op, const Expr &self) override {
    auto it = r_.find(op->name);
    return it == r_.end() ? self : it->second;
  }

 private:
  const std::map<std::string, Expr> &r_;
};
}  // namespace

Expr substitute(const Expr &e, const std::map<std::string, Expr> &r) {
  return Substituter(r).mutate(e);
}
Stmt substitute(const Stmt &s, const std::map<std::string, Expr> &r) {
  return Substituter(r).mutate(s);
}

}  // namespace tessera::compiler
