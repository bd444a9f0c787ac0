// tile::Program, the graph IR every front end produces and every later stage consumes.
//
// A Program is a function from named input tensors to named output tensors, as a list of
// statements in definition order. Each statement defines one new name:
//  - an elementwise statement `X = expr;`: an expression tree over tensors (numpy broadcasting),
//    dimension names used as integers, and literals; a bare literal is a constant statement;
//  - a special `X = reshape(A, 2, N);` (gather, scatter, shape, reshape, index, prng_*): a Call
//    expression with a special intrinsic at the root, never nested;
//  - a contraction `O[i, j : M, N] = +(A[i, k] * B[k, j]), k < 3;`;
//  - a builtin `Y = builtin_softmax(X, N, C);` (tile/Builtins.h), kept as a call so that autodiff
//  can
//    give it its own derivative; tile::bind expands it into statements of the kinds above.
// Dimensions stay symbolic here (names such as M, or expressions); tile::bind makes them concrete.
// Nodes are immutable and shared. Source ranges point into `source` for diagnostics.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tile/Builtins.h"
#include "tile/Intrinsics.h"
#include "tile/Source.h"

namespace tessera::tile {

/// A symbolic index polynomial, as written: `2*x + k - (KH - 1) / 2`. Leaves are integer literals,
/// index variables (lowercase) and names of dimensions or scalar constants (capitalized).
struct Poly;
using PolyPtr = std::shared_ptr<const Poly>;
struct Poly {
  enum class Kind { Int, Index, Name, Neg, Add, Sub, Mul, Div };
  Kind kind = Kind::Int;
  int64_t value = 0;  // Int
  std::string name;   // Index, Name
  PolyPtr lhs, rhs;   // Neg uses lhs
  SourceRange range;

  static PolyPtr make_int(int64_t v, SourceRange r = {});
  static PolyPtr make_index(std::string n, SourceRange r = {});
  static PolyPtr make_name(std::string n, SourceRange r = {});
  static PolyPtr make_unary(Kind k, PolyPtr a, SourceRange r = {});
  static PolyPtr make_binary(Kind k, PolyPtr a, PolyPtr b, SourceRange r = {});
};

/// An elementwise expression. `text` keeps a float literal's spelling so printing is exact.
/// A call whose `name` is set calls a builtin (tile/Builtins.h) instead of an intrinsic: only the
/// parser makes one, and Sema turns each into a statement of its own (Statement::builtin()).
struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;
struct Expr {
  enum class Kind { Int, Float, Ref, Call };
  Kind kind = Kind::Int;
  int64_t int_value = 0;
  double float_value = 0;
  std::string text;  // Float: the literal as written
  std::string name;  // Ref: a tensor, dimension or constant name; Call: a builtin's name or ""
  Intrinsic op = Intrinsic::Ident;  // Call
  std::vector<ExprPtr> args;        // Call
  SourceRange range;

  static ExprPtr make_int(int64_t v, SourceRange r = {});
  static ExprPtr make_float(double v, std::string text, SourceRange r = {});
  static ExprPtr make_ref(std::string name, SourceRange r = {});
  static ExprPtr make_call(Intrinsic op, std::vector<ExprPtr> args, SourceRange r = {});
  static ExprPtr make_builtin_call(Builtin fn, std::vector<ExprPtr> args, SourceRange r = {});
  bool is_builtin_call() const { return kind == Kind::Call && !name.empty(); }
};

enum class AggOp { Sum, Prod, Max, Min, Assign };  // + * > < =
enum class CombOp { None, Mul, Add, Eq, Cond };    // unary, *, +, ==, A == B ? C
char agg_symbol(AggOp op);
const char *comb_symbol(CombOp op);  // "", "*", "+", "==", "=="

struct Access {
  std::string tensor;
  std::vector<PolyPtr> indices;
  SourceRange range;
};

/// `poly < bound` means 0 <= poly < bound.
struct Constraint {
  PolyPtr poly;
  ExprPtr bound;
  SourceRange range;
};

struct Contraction {
  AggOp agg = AggOp::Sum;
  CombOp comb = CombOp::None;
  Access output;               // output.tensor is the statement's name
  std::vector<ExprPtr> sizes;  // one per output index; integer expressions over dimensions
  std::vector<Access> inputs;  // 1 (None), 2 (Mul, Add, Eq) or 3 (Cond)
  std::vector<Constraint> constraints;
  std::optional<std::string> default_tensor;
  SourceRange default_range;
  bool no_defract = false;
};

/// `Y = builtin_softmax(X, N, C);`: Tensor arguments are names of tensors (Refs); Size and Value
/// arguments are expressions.
struct BuiltinCall {
  Builtin fn = Builtin::Softmax;
  std::vector<ExprPtr> args;
  SourceRange range;  // the call
};

struct Attribute {
  std::string name;
  std::vector<std::string> params;
};

struct Statement {
  std::string output;
  SourceRange range;  // the whole statement
  std::vector<Attribute> attributes;
  std::variant<ExprPtr, Contraction, BuiltinCall> body;

  bool is_contraction() const { return std::holds_alternative<Contraction>(body); }
  bool is_builtin() const { return std::holds_alternative<BuiltinCall>(body); }
  const Contraction &contraction() const { return std::get<Contraction>(body); }
  const BuiltinCall &builtin() const { return std::get<BuiltinCall>(body); }
  const ExprPtr &expr() const { return std::get<ExprPtr>(body); }
};

/// An input dimension: a name (`N`) or, as an extension, a fixed size (`3`).
struct InputDim {
  std::string name;  // empty for a literal size
  int64_t size = 0;  // literal size
  SourceRange range;
};

struct Input {
  std::string name;
  /// false for a bare `X` (any shape); true for `X[...]`, including the scalar `X[]`.
  bool has_dims = false;
  std::vector<InputDim> dims;
  SourceRange range;
};

struct Output {
  std::string name;
  SourceRange range;
};

struct Program {
  SourcePtr source;  // may be null (EDSL)
  std::vector<Input> inputs;
  std::vector<Output> outputs;
  std::vector<Statement> statements;

  /// The statement that defines `name`, or null for inputs and unknown names.
  const Statement *find_statement(const std::string &name) const;
  const Input *find_input(const std::string &name) const;
};

/// Structural equality: same inputs, outputs and statements, ignoring source ranges.
bool structurally_equal(const Program &a, const Program &b);
bool structurally_equal(const PolyPtr &a, const PolyPtr &b);
bool structurally_equal(const ExprPtr &a, const ExprPtr &b);

}  // namespace tessera::tile
