#include "backends/llvm/CodeGen.h"

#include <functional>
#include <map>
#include <numeric>
#include <optional>

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "backends/llvm/VectorMath.h"
#include "tile/Diagnostics.h"

namespace tessera::llvm_backend {

namespace {

using compiler::Expr;
using compiler::Stmt;
using tile::DType;
using tile::Intrinsic;
using Op = compiler::Binary::Op;

bool is_signed(DType t) { return tile::is_signed_int(t); }

// A value in scope: a scalar (or vector) variable, or a buffer base pointer with its dtype.
struct Symbol {
  std::string name;
  llvm::Value *value = nullptr;
  bool is_buffer = false;
  compiler::Type type;  // variables: the value's type; buffers: the element dtype (lanes 1)
};

class FunctionEmitter {
 public:
  FunctionEmitter(llvm::Module &m, std::string prefix)
      : C_(m.getContext()), M_(m), B_(C_), prefix_(std::move(prefix)) {}

  // `void symbol(ptr buffers)` unpacks buffers[i] and calls an always-inlined implementation
  // whose buffer parameters are noalias (distinct tensors), so the optimizer may vectorize.
  void emit_kernel(const compiler::Kernel &k) {
    std::vector<Symbol> scope;
    for (const auto &p : k.params) {
      scope.push_back({p.name, nullptr, true, {p.dtype, 1}});
      if (p.prefetch_ahead > 0) prefetch_ahead_[p.name] = p.prefetch_ahead;
    }
    llvm::Function *impl = emit_body_function(prefix_ + ".impl", scope, [&] { emit(k.body); });
    llvm::Function *f =
        llvm::Function::Create(llvm::FunctionType::get(B_.getVoidTy(), {ptr_ty()}, false),
                               llvm::Function::ExternalLinkage, prefix_, M_);
    f->addFnAttr(llvm::Attribute::NoUnwind);
    B_.SetInsertPoint(llvm::BasicBlock::Create(C_, "entry", f));
    std::vector<llvm::Value *> args;
    for (size_t i = 0; i < k.params.size(); ++i)
      args.push_back(
          B_.CreateLoad(ptr_ty(), B_.CreateConstInBoundsGEP1_64(ptr_ty(), f->getArg(0), i)));
    B_.CreateCall(impl, args);
    B_.CreateRetVoid();
  }

 private:
  llvm::Type *ptr_ty() { return llvm::PointerType::getUnqual(C_); }

  llvm::Type *scalar_ty(DType t, bool memory = false) {
    switch (t) {
      case DType::Bool: return memory ? B_.getInt8Ty() : B_.getInt1Ty();
      case DType::Int8:
      case DType::UInt8: return B_.getInt8Ty();
      case DType::Int16:
      case DType::UInt16: return B_.getInt16Ty();
      case DType::Int32:
      case DType::UInt32: return B_.getInt32Ty();
      case DType::Int64:
      case DType::UInt64: return B_.getInt64Ty();
      case DType::Float16: return B_.getHalfTy();
      case DType::Float32: return B_.getFloatTy();
      case DType::Float64: return B_.getDoubleTy();
    }
    TESSERA_INTERNAL_ASSERT(false, "bad dtype");
    return nullptr;
  }
  llvm::Type *ty(compiler::Type t, bool memory = false) {
    llvm::Type *s = scalar_ty(t.dtype, memory);
    return t.lanes > 1 ? static_cast<llvm::Type *>(llvm::FixedVectorType::get(s, t.lanes)) : s;
  }
  llvm::Constant *constant(compiler::Type t, double fv, int64_t iv) {
    llvm::Type *s = scalar_ty(t.dtype);
    llvm::Constant *c =
        tile::is_float(t.dtype)
            ? llvm::ConstantFP::get(s, fv)
            : llvm::ConstantInt::get(s, static_cast<uint64_t>(iv), is_signed(t.dtype));
    return t.lanes > 1 ? llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(t.lanes), c)
                       : c;
  }
  llvm::Value *zero(compiler::Type t) { return constant(t, 0, 0); }

  // ---- scope ----
  void push(Symbol s) { scope_.push_back(std::move(s)); }
  void pop() { scope_.pop_back(); }
  const Symbol &lookup(const std::string &name, bool buffer) {
    for (auto it = scope_.rbegin(); it != scope_.rend(); ++it)
      if (it->name == name && it->is_buffer == buffer) return *it;
    TESSERA_INTERNAL_ASSERT(false, std::string(buffer ? "buffer " : "variable ") + name +
                                       " is not in scope");
    return scope_.front();
  }

  // Creates `internal void name(<scope values>..., extra...)`, always inlined, and emits `body`
  // into it with the scope rebound to its parameters. Restores the builder and scope afterwards.
  llvm::Function *emit_body_function(const std::string &name, const std::vector<Symbol> &captured,
                                     const std::function<void()> &body,
                                     std::vector<llvm::Type *> extra = {},
                                     std::vector<llvm::Value *> *extra_args = nullptr) {
    std::vector<llvm::Type *> params;
    for (const auto &s : captured) params.push_back(s.is_buffer ? ptr_ty() : ty(s.type));
    params.insert(params.end(), extra.begin(), extra.end());
    auto *f = llvm::Function::Create(llvm::FunctionType::get(B_.getVoidTy(), params, false),
                                     llvm::Function::InternalLinkage, name, M_);
    f->addFnAttr(llvm::Attribute::AlwaysInline);
    f->addFnAttr(llvm::Attribute::NoUnwind);
    for (size_t i = 0; i < captured.size(); ++i)
      if (captured[i].is_buffer) f->addParamAttr(i, llvm::Attribute::NoAlias);

    auto saved_scope = std::move(scope_);
    auto saved_ip = B_.saveIP();
    llvm::BasicBlock *saved_entry = entry_;
    scope_.clear();
    for (size_t i = 0; i < captured.size(); ++i) {
      Symbol s = captured[i];
      s.value = f->getArg(i);
      scope_.push_back(s);
    }
    if (extra_args)
      for (size_t i = 0; i < extra.size(); ++i)
        extra_args->push_back(f->getArg(captured.size() + i));
    entry_ = llvm::BasicBlock::Create(C_, "entry", f);
    B_.SetInsertPoint(entry_);
    body();
    B_.CreateRetVoid();
    scope_ = std::move(saved_scope);
    entry_ = saved_entry;
    B_.restoreIP(saved_ip);
    return f;
  }

  llvm::AllocaInst *entry_alloca(llvm::Type *t, llvm::Value *count = nullptr) {
    llvm::IRBuilder<> b(entry_, entry_->begin());
    auto *a = b.CreateAlloca(t, count);
    a->setAlignment(llvm::Align(64));
    return a;
  }

  // ---- conversions ----
  llvm::Value *cast(llvm::Value *v, compiler::Type from, compiler::Type to) {
    if (from.dtype == to.dtype) {
      if (from.lanes == to.lanes || to.lanes == 1) return v;
      return from.lanes == 1 ? B_.CreateVectorSplat(to.lanes, v) : v;
    }
    if (from.lanes == 1 && to.lanes > 1) {
      v = B_.CreateVectorSplat(to.lanes, v);
      from.lanes = to.lanes;
    }
    DType f = from.dtype, t = to.dtype;
    llvm::Type *dst = ty(to);
    if (t == DType::Bool)
      return tile::is_float(f) ? B_.CreateFCmpUNE(v, zero(from)) : B_.CreateICmpNE(v, zero(from));
    if (tile::is_float(f) && tile::is_float(t))
      return tile::dtype_bits(f) < tile::dtype_bits(t) ? B_.CreateFPExt(v, dst)
                                                       : B_.CreateFPTrunc(v, dst);
    if (!tile::is_float(f) && tile::is_float(t))
      return is_signed(f) ? B_.CreateSIToFP(v, dst) : B_.CreateUIToFP(v, dst);
    if (!tile::is_float(f))  // int to int wraps (C conversions)
      return B_.CreateIntCast(v, dst, is_signed(f));
    // float to int saturates and gives 0 for NaN (HostTensor::set_double).
    if (f == DType::Float16) {
      v = B_.CreateFPExt(v, ty({DType::Float32, from.lanes}));
    }
    auto id = is_signed(t) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    return B_.CreateIntrinsic(id, {dst, v->getType()}, {v});
  }
  llvm::Value *truthy(llvm::Value *v, compiler::Type t) {
    return cast(v, t, {DType::Bool, t.lanes});
  }

  // ---- arithmetic with Tile semantics ----
  llvm::Value *float_minmax(bool is_max, llvm::Value *a, llvm::Value *b) {
    // NaN propagates (numpy maximum/minimum); otherwise x > y ? x : y.
    llvm::Value *pick = is_max ? B_.CreateSelect(B_.CreateFCmpOGT(a, b), a, b)
                               : B_.CreateSelect(B_.CreateFCmpOLT(a, b), a, b);
    return B_.CreateSelect(B_.CreateFCmpUNO(a, b), B_.CreateFAdd(a, b), pick);
  }
  llvm::Value *int_minmax(bool is_max, bool sgn, llvm::Value *a, llvm::Value *b) {
    llvm::Value *c = is_max ? (sgn ? B_.CreateICmpSGT(a, b) : B_.CreateICmpUGT(a, b))
                            : (sgn ? B_.CreateICmpSLT(a, b) : B_.CreateICmpULT(a, b));
    return B_.CreateSelect(c, a, b);
  }
  // Integer division: x / 0 = 0 and MIN / -1 wraps (never traps); `floor` rounds toward -inf
  // (index math, Binary::Div/Mod) instead of toward zero (Tile's `/`).
  llvm::Value *int_divmod(bool mod, bool floor, compiler::Type t, llvm::Value *a, llvm::Value *b) {
    llvm::Value *z = zero(t), *one = constant(t, 0, 1);
    llvm::Value *is_zero = B_.CreateICmpEQ(b, z);
    if (!is_signed(t.dtype)) {
      llvm::Value *sb = B_.CreateSelect(is_zero, one, b);
      return B_.CreateSelect(is_zero, z, mod ? B_.CreateURem(a, sb) : B_.CreateUDiv(a, sb));
    }
    llvm::Value *minus1 = constant(t, 0, -1);
    llvm::Value *is_m1 = B_.CreateICmpEQ(b, minus1);
    llvm::Value *sb = B_.CreateSelect(B_.CreateOr(is_zero, is_m1), one, b);
    llvm::Value *q = B_.CreateSDiv(a, sb), *r = B_.CreateSRem(a, sb);
    if (floor) {
      // r != 0 and sign(r) != sign(b): q -= 1, r += b.
      llvm::Value *adjust =
          B_.CreateAnd(B_.CreateICmpNE(r, z), B_.CreateICmpSLT(B_.CreateXor(r, sb), z));
      q = B_.CreateSelect(adjust, B_.CreateSub(q, one), q);
      r = B_.CreateSelect(adjust, B_.CreateAdd(r, sb), r);
    }
    llvm::Value *v =
        mod ? B_.CreateSelect(is_m1, z, r) : B_.CreateSelect(is_m1, B_.CreateNeg(a), q);
    return B_.CreateSelect(is_zero, z, v);
  }
  llvm::Value *shift(bool left, compiler::Type t, llvm::Value *a, llvm::Value *b) {
    // A count outside [0, bits) gives 0 (-1 for a negative value shifted right arithmetically).
    int bits = tile::dtype_bits(t.dtype);
    llvm::Value *in_range = B_.CreateICmpULT(b, constant(t, 0, bits));
    llvm::Value *safe = B_.CreateSelect(in_range, b, zero(t));
    if (left) return B_.CreateSelect(in_range, B_.CreateShl(a, safe), zero(t));
    if (is_signed(t.dtype))
      return B_.CreateSelect(in_range, B_.CreateAShr(a, safe),
                             B_.CreateAShr(a, constant(t, 0, bits - 1)));
    return B_.CreateSelect(in_range, B_.CreateLShr(a, safe), zero(t));
  }
  llvm::Value *compare(Op op, compiler::Type t, llvm::Value *a, llvm::Value *b) {
    if (tile::is_float(t.dtype)) {
      switch (op) {
        case Op::EQ: return B_.CreateFCmpOEQ(a, b);
        case Op::NE: return B_.CreateFCmpUNE(a, b);
        case Op::LT: return B_.CreateFCmpOLT(a, b);
        case Op::LE: return B_.CreateFCmpOLE(a, b);
        case Op::GT: return B_.CreateFCmpOGT(a, b);
        default: return B_.CreateFCmpOGE(a, b);
      }
    }
    bool s = is_signed(t.dtype);
    switch (op) {
      case Op::EQ: return B_.CreateICmpEQ(a, b);
      case Op::NE: return B_.CreateICmpNE(a, b);
      case Op::LT: return s ? B_.CreateICmpSLT(a, b) : B_.CreateICmpULT(a, b);
      case Op::LE: return s ? B_.CreateICmpSLE(a, b) : B_.CreateICmpULE(a, b);
      case Op::GT: return s ? B_.CreateICmpSGT(a, b) : B_.CreateICmpUGT(a, b);
      default: return s ? B_.CreateICmpSGE(a, b) : B_.CreateICmpUGE(a, b);
    }
  }

  // A float multiply and the add consuming it may fuse into one FMA (vfmadd): the accumulation of
  // every contraction is `acc + a * b`, and fusing rounds once instead of twice.
  llvm::Value *contractable(llvm::Value *v) {
    if (auto *i = llvm::dyn_cast<llvm::Instruction>(v)) {
      llvm::FastMathFlags f = i->getFastMathFlags();
      f.setAllowContract(true);
      i->setFastMathFlags(f);
    }
    return v;
  }

  // `a op b` on operands of type t; `floor_div` selects index (floor) or Tile (truncating)
  // division.
  llvm::Value *binary(Op op, compiler::Type t, llvm::Value *a, llvm::Value *b, bool floor_div) {
    switch (op) {
      case Op::EQ:
      case Op::NE:
      case Op::LT:
      case Op::LE:
      case Op::GT:
      case Op::GE: return compare(op, t, a, b);
      case Op::And: return B_.CreateAnd(truthy(a, t), truthy(b, t));
      case Op::Or: return B_.CreateOr(truthy(a, t), truthy(b, t));
      default: break;
    }
    if (tile::is_float(t.dtype)) {
      switch (op) {
        case Op::Add: return contractable(B_.CreateFAdd(a, b));
        case Op::Sub: return B_.CreateFSub(a, b);
        case Op::Mul: return contractable(B_.CreateFMul(a, b));
        case Op::Div: return B_.CreateFDiv(a, b);
        case Op::Mod: return B_.CreateFRem(a, b);
        case Op::Min: return float_minmax(false, a, b);
        case Op::Max: return float_minmax(true, a, b);
        default:
          throw tile::Error(std::string("error: cpu: '") + compiler::binary_op_name(op) +
                            "' is not defined on " + std::string(tile::dtype_name(t.dtype)));
      }
    }
    if (t.dtype == DType::Bool && op != Op::BitAnd && op != Op::BitOr && op != Op::BitXor) {
      // Arithmetic on bools computes on 0/1 and stores `!= 0` (the interpreter's rule).
      compiler::Type w{DType::Int8, t.lanes};
      return truthy(binary(op, w, cast(a, t, w), cast(b, t, w), floor_div), w);
    }
    bool s = is_signed(t.dtype);
    switch (op) {
      case Op::Add: return B_.CreateAdd(a, b);
      case Op::Sub: return B_.CreateSub(a, b);
      case Op::Mul: return B_.CreateMul(a, b);
      case Op::Div: return int_divmod(false, floor_div, t, a, b);
      case Op::Mod: return int_divmod(true, floor_div, t, a, b);
      case Op::Min: return int_minmax(false, s, a, b);
      case Op::Max: return int_minmax(true, s, a, b);
      case Op::BitAnd: return B_.CreateAnd(a, b);
      case Op::BitOr: return B_.CreateOr(a, b);
      case Op::BitXor: return B_.CreateXor(a, b);
      case Op::Shl: return shift(true, t, a, b);
      case Op::Shr: return shift(false, t, a, b);
      default: break;
    }
    TESSERA_INTERNAL_ASSERT(false, "unhandled binary op");
    return nullptr;
  }

  // A libm function over the lanes of `args` (half computes in float): libmvec's function a
  // register at a time where the host has one (VectorMath.h), else the scalar one lane by lane.
  llvm::Value *libm(const std::string &fname, compiler::Type t, std::vector<llvm::Value *> args) {
    if (llvm::Value *r = vector_libm(fname, t, args)) return r;
    compiler::Type ct = t.dtype == DType::Float16 ? compiler::Type{DType::Float32, t.lanes} : t;
    for (auto &a : args) a = cast(a, t, ct);
    llvm::Type *st = scalar_ty(ct.dtype);
    std::string name = ct.dtype == DType::Float32 ? fname + "f" : fname;
    auto callee = M_.getOrInsertFunction(
        name, llvm::FunctionType::get(st, std::vector<llvm::Type *>(args.size(), st), false));
    llvm::Value *r;
    if (t.lanes == 1) {
      r = B_.CreateCall(callee, args);
    } else {
      r = llvm::UndefValue::get(ty(ct));
      for (int l = 0; l < t.lanes; ++l) {
        std::vector<llvm::Value *> lane;
        for (auto *a : args) lane.push_back(B_.CreateExtractElement(a, l));
        r = B_.CreateInsertElement(r, B_.CreateCall(callee, lane), l);
      }
    }
    return cast(r, ct, t);
  }
  // `fname` of a vector through libmvec, in chunks of the function's lanes; null when the host
  // or libmvec has no such function for these lanes.
  llvm::Value *vector_libm(const std::string &fname, compiler::Type t,
                           std::vector<llvm::Value *> args) {
    auto isa = host_vector_math();
    if (t.lanes == 1 || !isa) return nullptr;
    compiler::Type ct = t.dtype == DType::Float16 ? compiler::Type{DType::Float32, t.lanes} : t;
    auto vf = vector_function(fname, ct.dtype, static_cast<int>(args.size()), t.lanes, *isa);
    if (!vf) return nullptr;
    for (auto &a : args) a = cast(a, t, ct);
    llvm::Type *vt = ty({ct.dtype, vf->lanes});
    auto callee = M_.getOrInsertFunction(
        vf->symbol, llvm::FunctionType::get(vt, std::vector<llvm::Type *>(args.size(), vt), false));
    if (auto *f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
      // No errno, no memory: copies of one call in a fused kernel are computed once.
      f->setDoesNotThrow();
      f->setDoesNotAccessMemory();
    }
    llvm::Value *r = llvm::UndefValue::get(ty(ct));
    for (int c = 0; c < t.lanes; c += vf->lanes) {
      std::vector<llvm::Value *> chunk;
      for (auto *a : args) {
        if (vf->lanes == t.lanes) {
          chunk.push_back(a);
          continue;
        }
        std::vector<int> lanes(vf->lanes);
        std::iota(lanes.begin(), lanes.end(), c);
        chunk.push_back(B_.CreateShuffleVector(a, lanes));
      }
      llvm::Value *part = B_.CreateCall(callee, chunk);
      if (vf->lanes == t.lanes) return cast(part, ct, t);
      for (int l = 0; l < vf->lanes; ++l)
        r = B_.CreateInsertElement(r, B_.CreateExtractElement(part, l), c + l);
    }
    return cast(r, ct, t);
  }
  llvm::Value *float_intrinsic(llvm::Intrinsic::ID id, std::vector<llvm::Value *> args) {
    return B_.CreateIntrinsic(id, {args[0]->getType()}, args);
  }
  // exp, log, pow, sin, cos: LLVM's intrinsics, whose vector forms LLVM's code generator would
  // split into scalar libm calls, so libmvec's where it has them.
  llvm::Value *math_intrinsic(llvm::Intrinsic::ID id, const char *fname, compiler::Type t,
                              std::vector<llvm::Value *> args) {
    if (llvm::Value *r = vector_libm(fname, t, args)) return r;
    return float_intrinsic(id, args);
  }

  llvm::Value *call(const compiler::Call &c) {
    compiler::Type t = c.type;
    Intrinsic op = c.op;
    std::vector<llvm::Value *> v;
    std::vector<compiler::Type> at;
    for (const auto &a : c.args) {
      v.push_back(emit(a));
      at.push_back(a->type);
    }
    const auto kind = tile::intrinsic_info(op).kind;
    if (kind == tile::IntrinsicKind::Special)
      throw tile::Error("error: cpu: '" + std::string(tile::intrinsic_name(op)) +
                        "' is not an elementwise operation");
    if (kind == tile::IntrinsicKind::Cast) return cast(v[0], at[0], t);
    if (kind == tile::IntrinsicKind::Compare) {
      // Operands compare in their common type.
      compiler::Type ct = at[0];
      if (at[1].dtype != ct.dtype)
        ct = tile::is_float(at[1].dtype) && !tile::is_float(ct.dtype) ? at[1] : ct;
      ct.lanes = t.lanes;
      Op o = op == Intrinsic::CmpEq   ? Op::EQ
             : op == Intrinsic::CmpNe ? Op::NE
             : op == Intrinsic::CmpLt ? Op::LT
             : op == Intrinsic::CmpGt ? Op::GT
             : op == Intrinsic::CmpLe ? Op::LE
                                      : Op::GE;
      return compare(o, ct, cast(v[0], at[0], ct), cast(v[1], at[1], ct));
    }
    if (op == Intrinsic::Cond)
      return B_.CreateSelect(truthy(v[0], at[0]), cast(v[1], at[1], t), cast(v[2], at[2], t));
    // Every other intrinsic computes in its result type.
    for (size_t i = 0; i < v.size(); ++i) v[i] = cast(v[i], at[i], t);
    bool fl = tile::is_float(t.dtype);
    switch (op) {
      case Intrinsic::Ident: return v[0];
      case Intrinsic::Add: return binary(Op::Add, t, v[0], v[1], false);
      case Intrinsic::Sub: return binary(Op::Sub, t, v[0], v[1], false);
      case Intrinsic::Mul: return binary(Op::Mul, t, v[0], v[1], false);
      case Intrinsic::Div: return binary(Op::Div, t, v[0], v[1], false);
      case Intrinsic::Max: return binary(Op::Max, t, v[0], v[1], false);
      case Intrinsic::Min: return binary(Op::Min, t, v[0], v[1], false);
      case Intrinsic::BitAnd: return binary(Op::BitAnd, t, v[0], v[1], false);
      case Intrinsic::BitOr: return binary(Op::BitOr, t, v[0], v[1], false);
      case Intrinsic::BitXor: return binary(Op::BitXor, t, v[0], v[1], false);
      case Intrinsic::BitLeft: return binary(Op::Shl, t, v[0], v[1], false);
      case Intrinsic::BitRight: return binary(Op::Shr, t, v[0], v[1], false);
      case Intrinsic::BitNot:
        return t.dtype == DType::Bool ? B_.CreateNot(v[0]) : B_.CreateXor(v[0], constant(t, 0, -1));
      case Intrinsic::Neg:
        if (fl) return B_.CreateFNeg(v[0]);
        if (t.dtype == DType::Bool) return v[0];
        return B_.CreateSub(zero(t), v[0]);
      case Intrinsic::Abs:
        if (fl) return float_intrinsic(llvm::Intrinsic::fabs, v);
        if (!is_signed(t.dtype)) return v[0];
        return B_.CreateSelect(B_.CreateICmpSLT(v[0], zero(t)), B_.CreateSub(zero(t), v[0]), v[0]);
      case Intrinsic::Relu:
        if (fl)
          return B_.CreateSelect(B_.CreateFCmpUGT(v[0], zero(t)), v[0], zero(t));  // NaN stays NaN
        if (!is_signed(t.dtype)) return v[0];
        return B_.CreateSelect(B_.CreateICmpSLT(v[0], zero(t)), zero(t), v[0]);
      case Intrinsic::Floor: return fl ? float_intrinsic(llvm::Intrinsic::floor, v) : v[0];
      case Intrinsic::Ceil: return fl ? float_intrinsic(llvm::Intrinsic::ceil, v) : v[0];
      case Intrinsic::Round:
        return fl ? float_intrinsic(llvm::Intrinsic::round, v) : v[0];  // half away from zero
      default: break;
    }
    if (!fl)
      throw tile::Error("error: cpu: '" + std::string(tile::intrinsic_name(op)) +
                        "' needs a float type, not " + std::string(tile::dtype_name(t.dtype)));
    switch (op) {
      case Intrinsic::Exp: return math_intrinsic(llvm::Intrinsic::exp, "exp", t, v);
      case Intrinsic::Log: return math_intrinsic(llvm::Intrinsic::log, "log", t, v);
      case Intrinsic::Sqrt: return float_intrinsic(llvm::Intrinsic::sqrt, v);
      case Intrinsic::Pow: return math_intrinsic(llvm::Intrinsic::pow, "pow", t, v);
      case Intrinsic::Sin: return math_intrinsic(llvm::Intrinsic::sin, "sin", t, v);
      case Intrinsic::Cos: return math_intrinsic(llvm::Intrinsic::cos, "cos", t, v);
      case Intrinsic::Tanh: return libm("tanh", t, v);
      case Intrinsic::Tan: return libm("tan", t, v);
      case Intrinsic::Asin: return libm("asin", t, v);
      case Intrinsic::Acos: return libm("acos", t, v);
      case Intrinsic::Atan: return libm("atan", t, v);
      case Intrinsic::Sinh: return libm("sinh", t, v);
      case Intrinsic::Cosh: return libm("cosh", t, v);
      case Intrinsic::Erf: return libm("erf", t, v);
      case Intrinsic::Sigmoid: {
        llvm::Value *e = math_intrinsic(llvm::Intrinsic::exp, "exp", t, {B_.CreateFNeg(v[0])});
        llvm::Value *one = constant(t, 1, 0);
        return B_.CreateFDiv(one, B_.CreateFAdd(one, e));
      }
      default: break;
    }
    TESSERA_INTERNAL_ASSERT(false, "unhandled intrinsic " + std::string(tile::intrinsic_name(op)));
    return nullptr;
  }

  // ---- memory ----
  llvm::Value *index64(llvm::Value *idx, compiler::Type t) {
    llvm::Type *i64 = ty({DType::Int64, t.lanes});
    return B_.CreateIntCast(idx, i64, is_signed(t.dtype));
  }
  // The first lane when `index` is a Ramp of stride 1 (a contiguous vector access).
  std::optional<Expr> contiguous_base(const Expr &index) {
    auto *r = compiler::as<compiler::Ramp>(index);
    if (!r) return std::nullopt;
    auto *s = compiler::as<compiler::IntImm>(r->stride);
    if (!s || s->value != 1) return std::nullopt;
    return r->base;
  }
  llvm::Value *load(const compiler::Load &l) {
    const Symbol &buf = lookup(l.buffer, true);
    compiler::Type t = l.type;
    llvm::Type *mem_scalar = scalar_ty(t.dtype, true);
    llvm::Align align(tile::dtype_size(t.dtype));
    llvm::Value *v;
    if (auto base = contiguous_base(l.index); t.lanes > 1 && base) {
      llvm::Value *p =
          B_.CreateInBoundsGEP(mem_scalar, buf.value, index64(emit(*base), (*base)->type));
      v = B_.CreateAlignedLoad(ty(t, true), p, align);
      if (auto ahead = prefetch_ahead_.find(l.buffer); ahead != prefetch_ahead_.end()) {
        // llvm.prefetch(address, read, locality 2: L2 and outward, data cache)
        llvm::Value *next = B_.CreateGEP(mem_scalar, p, B_.getInt64(ahead->second));
        B_.CreateIntrinsic(llvm::Intrinsic::prefetch, {next->getType()},
                           {next, B_.getInt32(0), B_.getInt32(2), B_.getInt32(1)});
      }
    } else if (t.lanes > 1) {
      llvm::Value *idx = emit(l.index);
      compiler::Type it = l.index->type;
      if (it.lanes == 1) {
        idx = B_.CreateVectorSplat(t.lanes, idx);
        it.lanes = t.lanes;
      }
      llvm::Value *ptrs = B_.CreateInBoundsGEP(mem_scalar, buf.value, index64(idx, it));
      v = B_.CreateMaskedGather(ty(t, true), ptrs, align);
    } else {
      llvm::Value *p =
          B_.CreateInBoundsGEP(mem_scalar, buf.value, index64(emit(l.index), l.index->type));
      v = B_.CreateAlignedLoad(mem_scalar, p, align);
    }
    return t.dtype == DType::Bool ? B_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()))
                                  : v;
  }
  void store(const compiler::Store &s) {
    const Symbol &buf = lookup(s.buffer, true);
    compiler::Type vt = s.value->type;
    DType dt = buf.type.dtype;
    int lanes = std::max(vt.lanes, s.index->type.lanes);
    llvm::Value *v = cast(emit(s.value), vt, {dt, lanes});
    if (dt == DType::Bool) v = B_.CreateZExt(v, ty({dt, lanes}, true));
    llvm::Type *mem_scalar = scalar_ty(dt, true);
    llvm::Align align(tile::dtype_size(dt));
    if (auto base = contiguous_base(s.index); lanes > 1 && base) {
      llvm::Value *p =
          B_.CreateInBoundsGEP(mem_scalar, buf.value, index64(emit(*base), (*base)->type));
      B_.CreateAlignedStore(v, p, align);
    } else if (lanes > 1) {
      llvm::Value *ptrs =
          B_.CreateInBoundsGEP(mem_scalar, buf.value, index64(emit(s.index), s.index->type));
      B_.CreateMaskedScatter(v, ptrs, align);
    } else {
      llvm::Value *p =
          B_.CreateInBoundsGEP(mem_scalar, buf.value, index64(emit(s.index), s.index->type));
      B_.CreateAlignedStore(v, p, align);
    }
  }

  // ---- loops ----
  llvm::MDNode *loop_metadata(compiler::ForKind kind) {
    std::vector<llvm::Metadata *> ops{nullptr};
    auto flag = [&](const char *name) {
      ops.push_back(llvm::MDNode::get(C_, {llvm::MDString::get(C_, name)}));
    };
    auto enable = [&](const char *name) {
      ops.push_back(llvm::MDNode::get(
          C_, {llvm::MDString::get(C_, name), llvm::ConstantAsMetadata::get(B_.getTrue())}));
    };
    if (kind == compiler::ForKind::Unrolled)
      flag("llvm.loop.unroll.full");
    else if (kind == compiler::ForKind::Vectorized)
      enable("llvm.loop.vectorize.enable");
    else
      return nullptr;
    llvm::MDNode *md = llvm::MDNode::getDistinct(C_, ops);
    md->replaceOperandWith(0, md);
    return md;
  }

  // for (var = lo; var < hi; ++var) body, with `var` of type `t`.
  void emit_loop(const std::string &var, compiler::Type t, llvm::Value *lo, llvm::Value *hi,
                 compiler::ForKind kind, const Stmt &body) {
    llvm::Function *f = B_.GetInsertBlock()->getParent();
    llvm::BasicBlock *pre = B_.GetInsertBlock();
    auto *header = llvm::BasicBlock::Create(C_, var + ".loop", f);
    auto *bodyb = llvm::BasicBlock::Create(C_, var + ".body", f);
    auto *exit = llvm::BasicBlock::Create(C_, var + ".end", f);
    B_.CreateBr(header);
    B_.SetInsertPoint(header);
    llvm::PHINode *i = B_.CreatePHI(ty(t), 2, var);
    i->addIncoming(lo, pre);
    B_.CreateCondBr(is_signed(t.dtype) ? B_.CreateICmpSLT(i, hi) : B_.CreateICmpULT(i, hi), bodyb,
                    exit);
    B_.SetInsertPoint(bodyb);
    push({var, i, false, t});
    emit(body);
    pop();
    llvm::Value *next = B_.CreateAdd(i, constant(t, 0, 1));
    auto *latch = B_.CreateBr(header);
    if (llvm::MDNode *md = loop_metadata(kind)) latch->setMetadata(llvm::LLVMContext::MD_loop, md);
    i->addIncoming(next, B_.GetInsertBlock());
    B_.SetInsertPoint(exit);
  }

  // A parallel loop: the body is outlined into `void body(ptr ctx, i64 begin, i64 end)`, where ctx
  // holds a pointer per captured symbol (buffers: their base; variables: a stack slot holding the
  // value), and the thread pool calls it on contiguous ranges of iterations.
  void emit_parallel(const compiler::For &f) {
    compiler::Type t = f.min->type;
    llvm::Value *lo = emit(f.min), *extent = emit(f.extent);
    std::vector<Symbol> captured = scope_;
    std::string name = prefix_ + ".par" + std::to_string(outlined_++);
    auto *i64 = B_.getInt64Ty();
    std::vector<llvm::Value *> range;
    compiler::Type lo_type = t;
    captured.push_back({"$lo", lo, false, lo_type});
    llvm::Function *impl = emit_body_function(
        name + ".impl", captured,
        [&] {
          llvm::Value *begin = range[0], *end = range[1];
          llvm::Value *base = lookup("$lo", false).value;
          llvm::Value *b = B_.CreateAdd(base, B_.CreateIntCast(begin, ty(t), true));
          llvm::Value *e = B_.CreateAdd(base, B_.CreateIntCast(end, ty(t), true));
          emit_loop(f.var, t, b, e, compiler::ForKind::Serial, f.body);
        },
        {i64, i64}, &range);
    // The wrapper the pool calls.
    auto *wrapper =
        llvm::Function::Create(llvm::FunctionType::get(B_.getVoidTy(), {ptr_ty(), i64, i64}, false),
                               llvm::Function::InternalLinkage, name, M_);
    wrapper->addFnAttr(llvm::Attribute::NoUnwind);
    {
      llvm::IRBuilder<> b(llvm::BasicBlock::Create(C_, "entry", wrapper));
      std::vector<llvm::Value *> args;
      for (size_t k = 0; k < captured.size(); ++k) {
        llvm::Value *slot =
            b.CreateLoad(ptr_ty(), b.CreateConstInBoundsGEP1_64(ptr_ty(), wrapper->getArg(0), k));
        args.push_back(captured[k].is_buffer ? slot : b.CreateLoad(ty(captured[k].type), slot));
      }
      args.push_back(wrapper->getArg(1));
      args.push_back(wrapper->getArg(2));
      b.CreateCall(impl, args);
      b.CreateRetVoid();
    }
    // The call site: fill ctx and run.
    llvm::AllocaInst *ctx =
        entry_alloca(ptr_ty(), B_.getInt32(static_cast<uint32_t>(captured.size())));
    for (size_t k = 0; k < captured.size(); ++k) {
      llvm::Value *p = captured[k].value;
      if (!captured[k].is_buffer) {
        llvm::AllocaInst *slot = entry_alloca(ty(captured[k].type));
        B_.CreateStore(p, slot);
        p = slot;
      }
      B_.CreateStore(p, B_.CreateConstInBoundsGEP1_64(ptr_ty(), ctx, k));
    }
    auto pf = M_.getOrInsertFunction(
        "tessera_parallel_for",
        llvm::FunctionType::get(B_.getVoidTy(), {ptr_ty(), ptr_ty(), i64}, false));
    B_.CreateCall(pf,
                  {wrapper, ctx, B_.CreateIntCast(extent, i64, is_signed(f.extent->type.dtype))});
  }

  // ---- nodes ----
  llvm::Value *emit(const Expr &e) {
    using compiler::as;
    switch (e->kind) {
      case compiler::ExprKind::IntImm: {
        auto *n = as<compiler::IntImm>(e);
        if (tile::is_float(e->type.dtype))
          return constant(e->type, static_cast<double>(n->value), 0);
        return constant(e->type, 0, n->value);
      }
      case compiler::ExprKind::FloatImm: {
        auto *n = as<compiler::FloatImm>(e);
        if (!tile::is_float(e->type.dtype))
          return constant(e->type, 0, static_cast<int64_t>(n->value));
        return constant(e->type, n->value, 0);
      }
      case compiler::ExprKind::Var: {
        const Symbol &s = lookup(as<compiler::Var>(e)->name, false);
        return cast(s.value, s.type, e->type);
      }
      case compiler::ExprKind::Cast: {
        auto *n = as<compiler::Cast>(e);
        return cast(emit(n->value), n->value->type, e->type);
      }
      case compiler::ExprKind::Binary: {
        auto *n = as<compiler::Binary>(e);
        compiler::Type t = n->a->type;
        llvm::Value *a = emit(n->a), *b = cast(emit(n->b), n->b->type, t);
        if (n->b->type.lanes > t.lanes) {  // a scalar operand meets a vector one
          t = n->b->type;
          a = cast(a, n->a->type, t);
          b = emit(n->b);
        }
        return binary(n->op, t, a, b, true);
      }
      case compiler::ExprKind::Not: {
        auto *n = as<compiler::Not>(e);
        return B_.CreateNot(truthy(emit(n->a), n->a->type));
      }
      case compiler::ExprKind::Select: {
        auto *n = as<compiler::Select>(e);
        llvm::Value *c = truthy(emit(n->cond), n->cond->type);
        return B_.CreateSelect(c, cast(emit(n->true_value), n->true_value->type, e->type),
                               cast(emit(n->false_value), n->false_value->type, e->type));
      }
      case compiler::ExprKind::Load: return load(*as<compiler::Load>(e));
      case compiler::ExprKind::Call: return call(*as<compiler::Call>(e));
      case compiler::ExprKind::Broadcast: {
        auto *n = as<compiler::Broadcast>(e);
        return B_.CreateVectorSplat(e->type.lanes, emit(n->value));
      }
      case compiler::ExprKind::Ramp: {
        auto *n = as<compiler::Ramp>(e);
        compiler::Type st = n->base->type;
        int lanes = e->type.lanes;
        std::vector<llvm::Constant *> steps;
        for (int l = 0; l < lanes; ++l)
          steps.push_back(llvm::ConstantInt::get(scalar_ty(st.dtype), l));
        llvm::Value *base = B_.CreateVectorSplat(lanes, emit(n->base));
        llvm::Value *stride =
            B_.CreateVectorSplat(lanes, cast(emit(n->stride), n->stride->type, st));
        return B_.CreateAdd(base, B_.CreateMul(stride, llvm::ConstantVector::get(steps)));
      }
    }
    TESSERA_INTERNAL_ASSERT(false, "bad expression kind");
    return nullptr;
  }

  void emit(const Stmt &s) {
    using compiler::as;
    if (!s) return;
    switch (s->kind) {
      case compiler::StmtKind::For: {
        auto *f = as<compiler::For>(s);
        if (f->for_kind == compiler::ForKind::Parallel) return emit_parallel(*f);
        compiler::Type t = f->min->type;
        llvm::Value *lo = emit(f->min);
        llvm::Value *hi = B_.CreateAdd(lo, cast(emit(f->extent), f->extent->type, t));
        return emit_loop(f->var, t, lo, hi, f->for_kind, f->body);
      }
      case compiler::StmtKind::IfThenElse: {
        auto *n = as<compiler::IfThenElse>(s);
        llvm::Function *fn = B_.GetInsertBlock()->getParent();
        llvm::Value *c = truthy(emit(n->cond), n->cond->type);
        auto *then_b = llvm::BasicBlock::Create(C_, "then", fn);
        auto *else_b = n->else_case ? llvm::BasicBlock::Create(C_, "else", fn) : nullptr;
        auto *merge = llvm::BasicBlock::Create(C_, "endif", fn);
        B_.CreateCondBr(c, then_b, else_b ? else_b : merge);
        B_.SetInsertPoint(then_b);
        emit(n->then_case);
        B_.CreateBr(merge);
        if (else_b) {
          B_.SetInsertPoint(else_b);
          emit(n->else_case);
          B_.CreateBr(merge);
        }
        B_.SetInsertPoint(merge);
        return;
      }
      case compiler::StmtKind::Store: return store(*as<compiler::Store>(s));
      case compiler::StmtKind::LetStmt: {
        auto *n = as<compiler::LetStmt>(s);
        push({n->var, emit(n->value), false, n->value->type});
        emit(n->body);
        pop();
        return;
      }
      case compiler::StmtKind::Block:
        for (const auto &x : as<compiler::Block>(s)->stmts) emit(x);
        return;
      case compiler::StmtKind::Allocate: {
        auto *n = as<compiler::Allocate>(s);
        // Private arrays live on the stack (promoted to registers by SROA when indices are
        // constant); work-group `local` memory is the same thing on a CPU.
        llvm::AllocaInst *a =
            entry_alloca(scalar_ty(n->type.dtype, true),
                         B_.getInt64(static_cast<uint64_t>(n->size * n->type.lanes)));
        push({n->buffer, a, true, {n->type.dtype, 1}});
        emit(n->body);
        pop();
        return;
      }
      case compiler::StmtKind::Barrier: return;  // work-items of a CPU "work-group" run in sequence
    }
    TESSERA_INTERNAL_ASSERT(false, "bad statement kind");
  }

  llvm::LLVMContext &C_;
  llvm::Module &M_;
  llvm::IRBuilder<> B_;
  std::string prefix_;
  std::map<std::string, int64_t> prefetch_ahead_;  // buffer -> elements (BufferParam)
  std::vector<Symbol> scope_;
  llvm::BasicBlock *entry_ = nullptr;
  int outlined_ = 0;
};

}  // namespace

std::string kernel_symbol(const std::string &kernel_name) {
  std::string s = "tk_";
  for (char c : kernel_name) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}

std::unique_ptr<llvm::Module> codegen(llvm::LLVMContext &context,
                                      const std::vector<const compiler::Kernel *> &kernels,
                                      const std::string &module_name) {
  auto module = std::make_unique<llvm::Module>(module_name, context);
  std::map<std::string, int> seen;
  for (const compiler::Kernel *k : kernels) {
    std::string sym = kernel_symbol(k->name);
    TESSERA_INTERNAL_ASSERT(seen[sym]++ == 0, "two kernels named " + sym);
    FunctionEmitter(*module, sym).emit_kernel(*k);
  }
  std::string err;
  llvm::raw_string_ostream os(err);
  TESSERA_INTERNAL_ASSERT(!llvm::verifyModule(*module, &os), "invalid LLVM IR: " + os.str());
  return module;
}

}  // namespace tessera::llvm_backend
