// The Tile grammar (PlaidML v0 syntax plus `//` comments), written with Boost.Spirit X3.
//
// The grammar builds tile::Program pieces directly through semantic actions; tile/Sema.cpp then
// checks names and shapes of use. Operator precedence follows PlaidML's tile.y, lowest first:
// `?:`, `^`, `|`, `&`, `== !=`, `< > <= >=`, `<< >>`, `+ -`, `* /`, unary `- ~`.
// This file is the only one that includes Spirit: it is slow to compile.
#include "tile/Parser.h"

#include <boost/spirit/home/x3.hpp>
#include <charconv>

#include "tile/Diagnostics.h"
#include "tile/Sema.h"

// Expectation failures name what was expected. An action keeps its subject's name, so that
// `> x3::lit(']')[f]` reports "expected ']'" rather than a mangled type.
namespace boost::spirit::x3 {
template <typename Subject, typename Action>
struct get_info<action<Subject, Action>> {
  using result_type = std::string;
  std::string operator()(const action<Subject, Action> &p) const { return what(p.subject); }
};
// A list `a % ','` expects what its element expects ("expected name", not a mangled list type).
template <typename Left, typename Right>
struct get_info<list<Left, Right>> {
  using result_type = std::string;
  std::string operator()(const list<Left, Right> &p) const { return what(p.left); }
};
}  // namespace boost::spirit::x3

namespace tessera::tile {

namespace x3 = boost::spirit::x3;
using Iterator = const char *;

namespace {

struct ParseState {
  const char *base = nullptr;
  SourcePtr source;
  Program *program = nullptr;
  int depth = 0;  // the nested[] parsers entered and not yet left
};
struct state_tag;

template <typename Ctx>
ParseState &state(Ctx &ctx) {
  return x3::get<state_tag>(ctx).get();
}

// The offset of the parser's position. In an action, X3's _where(ctx) is the input *after* the
// match, so this is where the match ended; after `eps` (which skips whitespace) it is where the
// next token begins. Ranges are built from these two facts.
template <typename Ctx>
uint32_t here(Ctx &ctx) {
  return static_cast<uint32_t>(x3::_where(ctx).begin() - state(ctx).base);
}

// Parentheses, prefix operators and `?:` branches recurse through the grammar's rules, so deep
// enough nesting would overflow the stack (the fuzzer found 1,650 open parentheses; with
// AddressSanitizer the stack ran out between 600 and 1,000). `nested[p]` parses p one level
// deeper and stops a program with an error at the first token nested more than kMaxNesting
// levels deep.
constexpr int kMaxNesting = 256;

template <typename Subject>
struct NestedParser : x3::unary_parser<Subject, NestedParser<Subject>> {
  static const bool is_pass_through_unary = true;
  constexpr explicit NestedParser(const Subject &subject)
      : x3::unary_parser<Subject, NestedParser<Subject>>(subject) {}

  template <typename It, typename Ctx, typename RCtx, typename Attr>
  bool parse(It &first, const It &last, const Ctx &ctx, RCtx &rctx, Attr &attr) const {
    ParseState &st = state(ctx);
    if (st.depth > kMaxNesting) {  // 256 parentheses around an operand, say, are 257 levels
      It at = first;
      x3::skip_over(at, last, ctx);  // point at the token, not at whitespace
      auto offset = static_cast<uint32_t>(at - st.base);
      user_error(st.source, {offset, offset + 1},
                 "nesting too deep: more than " + std::to_string(kMaxNesting) +
                     " levels of parentheses, prefix operators and ?: branches");
    }
    ++st.depth;
    struct Leave {
      int &depth;
      ~Leave() { --depth; }
    } leave{st.depth};
    return this->subject.parse(first, last, ctx, rctx, attr);
  }
};

struct NestedDirective {
  template <typename Subject>
  constexpr NestedParser<typename x3::extension::as_parser<Subject>::value_type>
  operator[](const Subject &s) const {
    return NestedParser<typename x3::extension::as_parser<Subject>::value_type>(x3::as_parser(s));
  }
};
constexpr NestedDirective nested{};

SourceRange join(SourceRange a, SourceRange b) {
  return {std::min(a.begin, b.begin), std::max(a.end, b.end)};
}

// Partial results of the bigger rules.
struct OutSpec {
  Access access;
  std::vector<ExprPtr> sizes;
};

// A name or number with where it was written.
struct Token {
  std::string text;
  SourceRange range;
};

struct AssignStmt {
  std::string name;
  SourceRange name_range;
  ExprPtr value;
};

// ---- Lexical rules ---------------------------------------------------------------------------

const auto ident_tail = *(x3::alnum | x3::char_('_')) >> -x3::char_('\'');
const auto word_end = !(x3::alnum | '_');
const auto keyword = x3::lexeme[(x3::lit("function") | "default" | "no_defract") >> word_end];

const auto token_begin = [](auto &ctx) { x3::_val(ctx).range.begin = here(ctx); };
const auto token_text = [](auto &ctx) {
  x3::_val(ctx).text = x3::_attr(ctx);
  x3::_val(ctx).range.end = here(ctx);
};

// Capitalized names (tensors, dimensions) and `#`-escaped ones.
x3::rule<class upper_text_r, std::string> const upper_text = "name";
const auto upper_text_def =
    x3::lexeme[(x3::char_('A', 'Z') >> ident_tail) | (x3::lit('#') >> x3::alpha >> ident_tail)];
x3::rule<class upper_id_r, Token> const upper_id = "name";
const auto upper_id_def = x3::eps[token_begin] >> upper_text[token_text];

// Lowercase names (index variables, functions) and `$`-escaped ones.
x3::rule<class lower_text_r, std::string> const lower_text = "index name";
const auto lower_text_def = x3::lexeme[(!keyword >> x3::char_('a', 'z') >> ident_tail) |
                                       (x3::lit('$') >> x3::alpha >> ident_tail)];
x3::rule<class lower_id_r, Token> const lower_id = "index name";
const auto lower_id_def = x3::eps[token_begin] >> lower_text[token_text];

x3::rule<class int_digits_r, std::string> const int_digits = "integer";
const auto int_digits_def = x3::lexeme[+x3::digit];
x3::rule<class int_text_r, Token> const int_text = "integer";
const auto int_text_def = x3::eps[token_begin] >> int_digits[token_text];

x3::rule<class float_digits_r, std::string> const float_digits = "number";
const auto exponent = x3::char_("eE") >> -x3::char_("+-") >> +x3::digit;
const auto float_digits_def =
    x3::lexeme[+x3::digit >> ((x3::char_('.') >> +x3::digit >> -exponent) | exponent)];
x3::rule<class float_text_r, Token> const float_text = "number";
const auto float_text_def = x3::eps[token_begin] >> float_digits[token_text];

// The offset where the next token starts.
x3::rule<class mark_r, uint32_t> const mark = "";
const auto mark_def = x3::eps[([](auto &ctx) { x3::_val(ctx) = here(ctx); })];

template <typename Ctx>
int64_t int_value(Ctx &ctx, const Token &t) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
  if (ec != std::errc() || ptr != t.text.data() + t.text.size())
    user_error(state(ctx).source, t.range,
               "integer literal '" + t.text + "' does not fit in 64 bits");
  return v;
}

BOOST_SPIRIT_DEFINE(upper_text, upper_id, lower_text, lower_id, int_digits, int_text, float_digits,
                    float_text, mark)

// ---- Index polynomials -----------------------------------------------------------------------

x3::rule<class poly_r, PolyPtr> const poly = "index polynomial";
x3::rule<class poly_term_r, PolyPtr> const poly_term = "index polynomial";
x3::rule<class poly_unary_r, PolyPtr> const poly_unary = "index polynomial";
x3::rule<class poly_atom_r, PolyPtr> const poly_atom = "index polynomial";

const auto set_val = [](auto &ctx) { x3::_val(ctx) = x3::_attr(ctx); };

auto poly_binary(Poly::Kind kind) {
  return [kind](auto &ctx) {
    auto &v = x3::_val(ctx);
    const PolyPtr &rhs = x3::_attr(ctx);
    v = Poly::make_binary(kind, v, rhs, join(v->range, rhs->range));
  };
}

const auto poly_def = poly_term[set_val] >> *(('+' >> poly_term)[poly_binary(Poly::Kind::Add)] |
                                              ('-' >> poly_term)[poly_binary(Poly::Kind::Sub)]);
const auto poly_term_def = poly_unary[set_val] >>
                           *(('*' >> poly_unary)[poly_binary(Poly::Kind::Mul)] |
                             ('/' >> poly_unary)[poly_binary(Poly::Kind::Div)]);

// `-3` folds to the literal -3, so that printing a negative literal parses back to the same tree.
const auto poly_negate = [](auto &ctx) {
  auto &attr = x3::_attr(ctx);
  const PolyPtr &p = boost::fusion::at_c<1>(attr);
  SourceRange r{boost::fusion::at_c<0>(attr), p->range.end};
  x3::_val(ctx) = p->kind == Poly::Kind::Int ? Poly::make_int(-p->value, r)
                                             : Poly::make_unary(Poly::Kind::Neg, p, r);
};
const auto poly_unary_def = nested[(mark >> '-' >> poly_unary)[poly_negate] | poly_atom[set_val]];

const auto poly_scaled_index = [](auto &ctx) {  // `2i`, PlaidML's juxtaposition
  auto &attr = x3::_attr(ctx);
  const Token &digits = boost::fusion::at_c<0>(attr);
  const Token &index = boost::fusion::at_c<1>(attr);
  x3::_val(ctx) =
      Poly::make_binary(Poly::Kind::Mul, Poly::make_int(int_value(ctx, digits), digits.range),
                        Poly::make_index(index.text, index.range), join(digits.range, index.range));
};
const auto poly_int = [](auto &ctx) {
  const Token &t = x3::_attr(ctx);
  x3::_val(ctx) = Poly::make_int(int_value(ctx, t), t.range);
};
const auto poly_name = [](auto &ctx) {
  x3::_val(ctx) = Poly::make_name(x3::_attr(ctx).text, x3::_attr(ctx).range);
};
const auto poly_index = [](auto &ctx) {
  x3::_val(ctx) = Poly::make_index(x3::_attr(ctx).text, x3::_attr(ctx).range);
};

const auto poly_atom_def = (int_text >> lower_id)[poly_scaled_index] | int_text[poly_int] |
                           upper_id[poly_name] | lower_id[poly_index] |
                           (x3::lit('(') > poly > ')')[set_val];

BOOST_SPIRIT_DEFINE(poly, poly_term, poly_unary, poly_atom)

// ---- Elementwise expressions -----------------------------------------------------------------

x3::rule<class expr_r, ExprPtr> const expr = "expression";
x3::rule<class bxor_r, ExprPtr> const bxor_expr = "expression";
x3::rule<class bor_r, ExprPtr> const bor_expr = "expression";
x3::rule<class band_r, ExprPtr> const band_expr = "expression";
x3::rule<class eq_r, ExprPtr> const eq_expr = "expression";
x3::rule<class rel_r, ExprPtr> const rel_expr = "expression";
x3::rule<class shift_r, ExprPtr> const shift_expr = "expression";
x3::rule<class add_r, ExprPtr> const add_expr = "expression";
x3::rule<class mul_r, ExprPtr> const mul_expr = "expression";
x3::rule<class unary_r, ExprPtr> const unary_expr = "expression";
x3::rule<class primary_r, ExprPtr> const primary_expr = "expression";

auto binary(Intrinsic op) {
  return [op](auto &ctx) {
    auto &v = x3::_val(ctx);
    const ExprPtr &rhs = x3::_attr(ctx);
    v = Expr::make_call(op, {v, rhs}, join(v->range, rhs->range));
  };
}

const auto make_cond = [](auto &ctx) {
  auto &v = x3::_val(ctx);
  auto &attr = x3::_attr(ctx);
  const ExprPtr &a = boost::fusion::at_c<0>(attr);
  const ExprPtr &b = boost::fusion::at_c<1>(attr);
  v = Expr::make_call(Intrinsic::Cond, {v, a, b}, join(v->range, b->range));
};

const auto expr_def = bxor_expr[set_val] >> -nested[('?' > expr > ':' > expr)[make_cond]];
const auto bxor_expr_def = bor_expr[set_val] >> *(('^' >> bor_expr)[binary(Intrinsic::BitXor)]);
const auto bor_expr_def = band_expr[set_val] >> *(('|' >> band_expr)[binary(Intrinsic::BitOr)]);
const auto band_expr_def = eq_expr[set_val] >> *(('&' >> eq_expr)[binary(Intrinsic::BitAnd)]);
const auto eq_expr_def = rel_expr[set_val] >> *(("==" >> rel_expr)[binary(Intrinsic::CmpEq)] |
                                                ("!=" >> rel_expr)[binary(Intrinsic::CmpNe)]);
const auto rel_expr_def = shift_expr[set_val] >> *(("<=" >> shift_expr)[binary(Intrinsic::CmpLe)] |
                                                   (">=" >> shift_expr)[binary(Intrinsic::CmpGe)] |
                                                   ('<' >> shift_expr)[binary(Intrinsic::CmpLt)] |
                                                   ('>' >> shift_expr)[binary(Intrinsic::CmpGt)]);
const auto shift_expr_def = add_expr[set_val] >> *(("<<" >> add_expr)[binary(Intrinsic::BitLeft)] |
                                                   (">>" >> add_expr)[binary(Intrinsic::BitRight)]);
const auto add_expr_def = mul_expr[set_val] >> *(('+' >> mul_expr)[binary(Intrinsic::Add)] |
                                                 ('-' >> mul_expr)[binary(Intrinsic::Sub)]);
const auto mul_expr_def = unary_expr[set_val] >> *(('*' >> unary_expr)[binary(Intrinsic::Mul)] |
                                                   ('/' >> unary_expr)[binary(Intrinsic::Div)]);

// `-0.5` folds to a negative literal, as PlaidML does for constants.
const auto expr_negate = [](auto &ctx) {
  auto &attr = x3::_attr(ctx);
  const ExprPtr &e = boost::fusion::at_c<1>(attr);
  SourceRange r{boost::fusion::at_c<0>(attr), e->range.end};
  if (e->kind == Expr::Kind::Int) {
    x3::_val(ctx) = Expr::make_int(-e->int_value, r);
  } else if (e->kind == Expr::Kind::Float) {
    std::string text = e->text.empty() || e->text[0] != '-' ? "-" + e->text : e->text.substr(1);
    x3::_val(ctx) = Expr::make_float(-e->float_value, text, r);
  } else {
    x3::_val(ctx) = Expr::make_call(Intrinsic::Neg, {e}, r);
  }
};
const auto expr_bit_not = [](auto &ctx) {
  auto &attr = x3::_attr(ctx);
  const ExprPtr &e = boost::fusion::at_c<1>(attr);
  x3::_val(ctx) =
      Expr::make_call(Intrinsic::BitNot, {e}, {boost::fusion::at_c<0>(attr), e->range.end});
};
const auto unary_expr_def =
    nested[(mark >> '-' >> unary_expr)[expr_negate] | (mark >> '~' >> unary_expr)[expr_bit_not] |
           primary_expr[set_val]];

const auto expr_float = [](auto &ctx) {
  const Token &t = x3::_attr(ctx);
  x3::_val(ctx) = Expr::make_float(std::strtod(t.text.c_str(), nullptr), t.text, t.range);
};
const auto expr_int = [](auto &ctx) {
  const Token &t = x3::_attr(ctx);
  x3::_val(ctx) = Expr::make_int(int_value(ctx, t), t.range);
};
const auto expr_ref = [](auto &ctx) {
  x3::_val(ctx) = Expr::make_ref(x3::_attr(ctx).text, x3::_attr(ctx).range);
};

struct CallArgs {
  std::vector<ExprPtr> args;
  uint32_t end = 0;
};
x3::rule<class args_r, CallArgs> const call_args = "arguments";
const auto args_push = [](auto &ctx) { x3::_val(ctx).args.push_back(x3::_attr(ctx)); };
const auto args_end = [](auto &ctx) { x3::_val(ctx).end = here(ctx); };
const auto call_args_def = x3::lit('(') >> -(expr[args_push] % ',') > x3::lit(')')[args_end];

x3::rule<class call_name_r, Token> const call_name = "function name";
const auto call_name_def = lower_id | upper_id;

const auto expr_call = [](auto &ctx) {
  auto &attr = x3::_attr(ctx);
  const Token &name = boost::fusion::at_c<0>(attr);
  CallArgs &args = boost::fusion::at_c<1>(attr);
  SourceRange range{name.range.begin, args.end};
  if (auto op = lookup_intrinsic(name.text)) {
    x3::_val(ctx) = Expr::make_call(*op, std::move(args.args), range);
    return;
  }
  auto fn = lookup_builtin(name.text);
  if (!fn) user_error(state(ctx).source, name.range, "unknown function '" + name.text + "'");
  x3::_val(ctx) = Expr::make_builtin_call(*fn, std::move(args.args), range);
};

const auto primary_expr_def = float_text[expr_float] | int_text[expr_int] |
                              (call_name >> &x3::lit('(') >> call_args)[expr_call] |
                              upper_id[expr_ref] | lower_id[expr_ref] |
                              (x3::lit('(') > expr > ')')[set_val];

BOOST_SPIRIT_DEFINE(expr, bxor_expr, bor_expr, band_expr, eq_expr, rel_expr, shift_expr, add_expr,
                    mul_expr, unary_expr, primary_expr, call_args, call_name)

// ---- Contractions ----------------------------------------------------------------------------

x3::rule<class access_r, Access> const access = "tensor access";
x3::rule<class out_spec_r, OutSpec> const out_spec = "contraction output";
x3::rule<class constraint_r, Constraint> const constraint = "constraint";
x3::rule<class contraction_r, Contraction> const contraction = "contraction";
x3::rule<class agg_r, AggOp> const agg_op = "aggregation ('+', '*', '>', '<' or '=')";
x3::rule<class comb_r, CombOp> const comb_op = "combination ('*', '+' or '==') or ')'";

const auto access_name = [](auto &ctx) {
  x3::_val(ctx).tensor = x3::_attr(ctx).text;
  x3::_val(ctx).range = x3::_attr(ctx).range;
};
const auto access_index = [](auto &ctx) { x3::_val(ctx).indices.push_back(x3::_attr(ctx)); };
const auto access_end = [](auto &ctx) { x3::_val(ctx).range.end = here(ctx); };
const auto access_def = upper_id[access_name] >> '[' >
                        -(poly[access_index] % ',') > x3::lit(']')[access_end];

const auto out_name = [](auto &ctx) {
  x3::_val(ctx).access.tensor = x3::_attr(ctx).text;
  x3::_val(ctx).access.range = x3::_attr(ctx).range;
};
const auto out_index = [](auto &ctx) { x3::_val(ctx).access.indices.push_back(x3::_attr(ctx)); };
const auto out_size = [](auto &ctx) { x3::_val(ctx).sizes.push_back(x3::_attr(ctx)); };
const auto out_end = [](auto &ctx) { x3::_val(ctx).access.range.end = here(ctx); };
const auto out_spec_def = upper_id[out_name] >> '[' > -(poly[out_index] % ',') >
                          -(':' > (expr[out_size] % ',')) > x3::lit(']')[out_end];

const auto constraint_poly = [](auto &ctx) {
  x3::_val(ctx).poly = x3::_attr(ctx);
  x3::_val(ctx).range = x3::_attr(ctx)->range;
};
const auto constraint_bound = [](auto &ctx) {
  x3::_val(ctx).bound = x3::_attr(ctx);
  x3::_val(ctx).range.end = x3::_attr(ctx)->range.end;
};
// The bound is parsed without comparisons so that `k < 3, j < 3` reads as two constraints.
const auto constraint_def = poly[constraint_poly] > '<' > shift_expr[constraint_bound];

struct AggSymbols : x3::symbols<AggOp> {
  AggSymbols() {
    add("+", AggOp::Sum)("*", AggOp::Prod)(">", AggOp::Max)("<", AggOp::Min)("=", AggOp::Assign);
  }
} const agg_symbols;
const auto agg_op_def = agg_symbols;

struct CombSymbols : x3::symbols<CombOp> {
  CombSymbols() { add("*", CombOp::Mul)("+", CombOp::Add)("==", CombOp::Eq); }
} const comb_symbols;
const auto comb_op_def = comb_symbols;

const auto con_out = [](auto &ctx) {
  OutSpec &o = x3::_attr(ctx);
  x3::_val(ctx).output = std::move(o.access);
  x3::_val(ctx).sizes = std::move(o.sizes);
};
const auto con_agg = [](auto &ctx) { x3::_val(ctx).agg = x3::_attr(ctx); };
const auto con_input = [](auto &ctx) { x3::_val(ctx).inputs.push_back(x3::_attr(ctx)); };
const auto con_comb = [](auto &ctx) { x3::_val(ctx).comb = x3::_attr(ctx); };
const auto con_cond = [](auto &ctx) {
  auto &c = x3::_val(ctx);
  const Access &a = x3::_attr(ctx);
  if (c.comb != CombOp::Eq)
    user_error(state(ctx).source, a.range,
               "a ternary contraction compares with '==': A[..] == B[..] ? C[..]");
  c.comb = CombOp::Cond;
  c.inputs.push_back(a);
};
const auto con_constraint = [](auto &ctx) { x3::_val(ctx).constraints.push_back(x3::_attr(ctx)); };
const auto con_no_defract = [](auto &ctx) { x3::_val(ctx).no_defract = true; };
const auto con_default = [](auto &ctx) {
  x3::_val(ctx).default_tensor = x3::_attr(ctx).text;
  x3::_val(ctx).default_range = x3::_attr(ctx).range;
};
x3::rule<class con_close_r> const con_close = "')' or a combination ('*', '+', '==')";
const auto con_close_def = x3::lit(')');
const auto kw_no_defract = x3::lexeme[x3::lit("no_defract") >> word_end];
const auto kw_default = x3::lexeme[x3::lit("default") >> word_end];

const auto contraction_def = out_spec[con_out] > '=' > agg_op[con_agg] > '(' > access[con_input] >
                             -(comb_op[con_comb] > access[con_input] >
                               -('?' > access[con_cond])) > con_close
                             > *(',' > constraint[con_constraint]) >
                             *(kw_no_defract[con_no_defract] |
                               (kw_default > upper_id[con_default]));

BOOST_SPIRIT_DEFINE(access, out_spec, constraint, agg_op, comb_op, con_close, contraction)

// ---- Statements and the function -------------------------------------------------------------

x3::rule<class attribute_r, Attribute> const attribute = "attribute";
x3::rule<class assign_r, AssignStmt> const assignment = "statement";
x3::rule<class statement_r, Statement> const statement = "statement";
x3::rule<class input_r, Input> const input = "input";
x3::rule<class function_r> const function = "function";

x3::rule<class attr_param_r, std::string> const attr_param = "attribute parameter";
const auto attr_param_def = x3::lexeme[+(x3::alnum | x3::char_("_.-"))];
const auto attr_name = [](auto &ctx) { x3::_val(ctx).name = x3::_attr(ctx).text; };
const auto attr_push = [](auto &ctx) { x3::_val(ctx).params.push_back(x3::_attr(ctx)); };
const auto attribute_def = x3::lit("[[") > lower_id[attr_name] >
                           -('(' > (attr_param[attr_push] % ',') > ')') > "]]";

const auto assign_name = [](auto &ctx) {
  x3::_val(ctx).name = x3::_attr(ctx).text;
  x3::_val(ctx).name_range = x3::_attr(ctx).range;
};
const auto assign_value = [](auto &ctx) { x3::_val(ctx).value = x3::_attr(ctx); };
const auto assignment_def = upper_id[assign_name] >> '=' > expr[assign_value];

const auto stmt_begin = [](auto &ctx) { x3::_val(ctx).range.begin = here(ctx); };
const auto stmt_attr = [](auto &ctx) { x3::_val(ctx).attributes.push_back(x3::_attr(ctx)); };
const auto stmt_contraction = [](auto &ctx) {
  Contraction &c = x3::_attr(ctx);
  x3::_val(ctx).output = c.output.tensor;
  x3::_val(ctx).body = std::move(c);
  x3::_val(ctx).range.end = here(ctx);
};
const auto stmt_assign = [](auto &ctx) {
  AssignStmt &a = x3::_attr(ctx);
  x3::_val(ctx).output = a.name;
  x3::_val(ctx).body = a.value;
  x3::_val(ctx).range.end = here(ctx);
};
const auto statement_def = *attribute[stmt_attr] >> x3::eps[stmt_begin] >>
                           (contraction[stmt_contraction] | assignment[stmt_assign]) > ';';

const auto input_name = [](auto &ctx) {
  x3::_val(ctx).name = x3::_attr(ctx).text;
  x3::_val(ctx).range = x3::_attr(ctx).range;
};
const auto input_open = [](auto &ctx) { x3::_val(ctx).has_dims = true; };
const auto input_dim_name = [](auto &ctx) {
  x3::_val(ctx).dims.push_back({x3::_attr(ctx).text, 0, x3::_attr(ctx).range});
};
const auto input_dim_size = [](auto &ctx) {
  x3::_val(ctx).dims.push_back({"", int_value(ctx, x3::_attr(ctx)), x3::_attr(ctx).range});
};
const auto input_end = [](auto &ctx) { x3::_val(ctx).range.end = here(ctx); };
const auto input_def = upper_id[input_name] >>
                       -(x3::lit('[')[input_open] >
                         -((upper_id[input_dim_name] | int_text[input_dim_size]) % ',') >
                         x3::lit(']')[input_end]);

const auto add_input = [](auto &ctx) { state(ctx).program->inputs.push_back(x3::_attr(ctx)); };
const auto add_output = [](auto &ctx) {
  state(ctx).program->outputs.push_back({x3::_attr(ctx).text, x3::_attr(ctx).range});
};
const auto add_statement = [](auto &ctx) {
  state(ctx).program->statements.push_back(x3::_attr(ctx));
};

x3::rule<class body_end_r> const body_end = "a statement or '}'";
const auto body_end_def = x3::lit('}');
x3::rule<class output_r, Token> const output_name = "output name";
const auto output_name_def = upper_id;

const auto function_def = x3::lit("function") > '(' > -(input[add_input] % ',') > ')' > "->" > '(' >
                          -(output_name[add_output] % ',') > ')' > '{' >
                          *statement[add_statement] > body_end;

BOOST_SPIRIT_DEFINE(attr_param, attribute, assignment, statement, input, body_end, output_name,
                    function)

x3::rule<class end_r> const end_of_input = "end of input";
const auto end_of_input_def = x3::eoi;
BOOST_SPIRIT_DEFINE(end_of_input)

const auto skipper = x3::space | x3::lexeme["//" >> *(x3::char_ - x3::eol) >> (x3::eol | x3::eoi)];

std::string describe_found(const char *where, const char *end) {
  if (where == end) return "end of input";
  std::string tok;
  for (const char *p = where;
       p < end && tok.size() < 12 && !std::isspace(static_cast<unsigned char>(*p)); ++p)
    tok += *p;
  return "'" + tok + "'";
}

}  // namespace

Program parse_program(const SourcePtr &source) {
  Program program;
  program.source = source;
  ParseState st{source->text().data(), source, &program};
  const char *first = source->text().data();
  const char *last = first + source->text().size();
  try {
    auto grammar = x3::with<state_tag>(std::ref(st))[x3::skip(skipper)[(function > end_of_input)]];
    const char *it = first;
    if (!x3::parse(it, last, grammar)) {
      x3::phrase_parse(it, last, x3::eps, skipper);  // point at the first token, not at whitespace
      uint32_t at = static_cast<uint32_t>(it - first);
      user_error(source, {at, at + 1}, "expected 'function', found " + describe_found(it, last));
    }
  } catch (const x3::expectation_failure<const char *> &e) {
    const char *it = e.where();
    x3::phrase_parse(it, last, x3::eps, skipper);  // point at the token, not at whitespace
    uint32_t at = static_cast<uint32_t>(it - first);
    user_error(source, {at, at + 1},
               "expected " + e.which() + ", found " + describe_found(it, last));
  }
  return analyze(std::move(program));
}

Program parse_program(const std::string &text, const std::string &name) {
  return parse_program(std::make_shared<SourceFile>(name, text));
}

}  // namespace tessera::tile
