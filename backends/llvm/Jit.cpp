#include "backends/llvm/Jit.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <numeric>
#include <set>

#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringSet.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "backends/llvm/CodeGen.h"
#include "backends/llvm/ThreadPool.h"
#include "backends/llvm/VectorMath.h"
#include "compiler/IRPrinter.h"
#include "compiler/tune/Canonical.h"
#include "runtime/BinaryStore.h"
#include "tile/Diagnostics.h"

namespace tessera::llvm_backend {

namespace {

void init_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

std::string error_text(llvm::Error e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << e;
  return os.str();
}

template <typename T>
T check(llvm::Expected<T> v, const char *what) {
  if (!v) throw tile::Error(std::string("error: cpu: ") + what + ": " + error_text(v.takeError()));
  return std::move(*v);
}

llvm::orc::JITTargetMachineBuilder host_builder() {
  init_llvm();
  auto jtmb =
      check(llvm::orc::JITTargetMachineBuilder::detectHost(), "cannot describe the host CPU");
  // detectHost() enabled every host feature; TESSERA_CPU may name a CPU with fewer, so each
  // feature the host query knows is switched on or off explicitly.
  jtmb.setCPU(host_cpu().name);
  llvm::SubtargetFeatures features;
  for (const auto &f : host_cpu().features) features.AddFeature(f, true);
  for (const auto &f : host_cpu().disabled) features.AddFeature(f, false);
  jtmb.getFeatures() = features;
  // Aggressive cost about 15% more compile time than Default for no run time (ResNet training
  // step).
  jtmb.setCodeGenOptLevel(llvm::CodeGenOpt::Default);
  return jtmb;
}

// The kernels arrive register-tiled and vectorized by their schedules, their unrolled loops marked:
// what LLVM must add is inlining the bodies, full unrolling of the marked (and small) loops, the
// accumulator arrays in registers, and the usual clean-ups. O3's loop and SLP vectorizers, runtime
// unroller, IndVarSimplify and interprocedural passes found nothing more to gain and tripled the
// compile time (ResNet training step: same run time, see docs/runtime.md).
constexpr const char *kPipeline =
    "always-inline,function(sroa,early-cse,simplifycfg,instcombine,loop(loop-rotate),"
    "loop(loop-unroll-full),sroa,instcombine,gvn,loop-mssa(licm),simplifycfg,instcombine)";

// The code generator prefetches ahead of every contiguous read of a buffer that asks for it
// (BufferParam::prefetch_ahead), once per read in the loop IR; a register tile reads the same
// panel vector for each of its rows, and GVN merges those loads into one but keeps every
// prefetch (a call with effects): seven prefetches of one line per multiply-add row in a 7-row
// tile, which cost ResNet-50's blocked convolutions three times their time. One per block.
void drop_repeated_prefetches(llvm::Module &m) {
  for (auto &f : m)
    for (auto &block : f) {
      std::set<llvm::Value *> seen;
      for (auto it = block.begin(); it != block.end();) {
        auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&*it++);
        if (call && call->getIntrinsicID() == llvm::Intrinsic::prefetch &&
            !seen.insert(call->getArgOperand(0)).second)
          call->eraseFromParent();
      }
    }
}

// The host's widest vectors for every function (LLVM prefers 256 bits on AVX-512 parts, which
// would split the kernels' explicit 512-bit vectors), then kPipeline.
void optimize(llvm::Module &m, llvm::TargetMachine &tm) {
  m.setDataLayout(tm.createDataLayout());
  m.setTargetTriple(tm.getTargetTriple().str());
  std::string bits = std::to_string(host_cpu().vector_bits);
  for (auto &f : m) {
    if (f.isDeclaration()) continue;
    f.addFnAttr("target-cpu", host_cpu().name);
    f.addFnAttr("target-features", tm.getTargetFeatureString());
    f.addFnAttr("prefer-vector-width", bits);
    f.addFnAttr("min-legal-vector-width", bits);
  }
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm;
  if (auto e = pb.parsePassPipeline(mpm, kPipeline))
    TESSERA_INTERNAL_ASSERT(false, "bad LLVM pass pipeline: " + error_text(std::move(e)));
  mpm.run(m, mam);
  drop_repeated_prefetches(m);
}

std::unique_ptr<llvm::TargetMachine> host_target_machine() {
  return check(host_builder().createTargetMachine(), "cannot create a target machine");
}

// Features whose instructions LLVM emits only for the intrinsics that name them (protection keys,
// shadow stacks, cache-line flushes, random numbers, state saves), none of which a kernel calls.
// Virtual machines hide some of them (this project's Zen 4 VMs hide pku), which must not make
// the host's own CPU name unusable.
bool only_through_intrinsics(llvm::StringRef feature) {
  static const llvm::StringSet<> names = {
      "pku",       "shstk",    "sgx",       "invpcid",    "rdpid",   "rdpru",   "rdrnd",
      "rdseed",    "wbnoinvd", "clwb",      "clflushopt", "clzero",  "mwaitx",  "xsave",
      "xsavec",    "xsaveopt", "xsaves",    "fsgsbase",   "ptwrite", "waitpkg", "movdiri",
      "movdir64b", "cldemote", "serialize", "tsxldtrk",   "uintr",   "enqcmd",  "hreset"};
  return names.contains(feature);
}

// The features of `cpu` among those the host query reports, each checked against the host's:
// code for a CPU with a feature the host lacks would stop the process at its first such
// instruction, so that is an error here instead. A feature no kernel can use is left off.
std::vector<std::string> features_of(const std::string &cpu, const llvm::StringMap<bool> &host) {
  init_llvm();
  const std::string triple = llvm::sys::getProcessTriple();
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) throw tile::Error("error: cpu: no LLVM target for " + triple + ": " + error);
  // Validated on a generic subtarget first: one made for an unknown name warns on stderr.
  std::unique_ptr<llvm::MCSubtargetInfo> generic(target->createMCSubtargetInfo(triple, "", ""));
  if (!generic || !generic->isCPUStringValid(cpu))
    throw tile::Error("error: TESSERA_CPU=" + cpu + ": LLVM 15 knows no such CPU (e.g. haswell; " +
                      "this machine is " + llvm::sys::getHostCPUName().str() + ")");
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(triple, cpu, ""));
  // The host query names every x86 feature LLVM checks for, present or not.
  std::vector<std::string> out;
  for (const auto &kv : host) {
    const std::string name = kv.first().str();
    if (!sti->checkFeatures("+" + name)) continue;
    if (!kv.second && only_through_intrinsics(name)) continue;
    if (!kv.second)
      throw tile::Error("error: TESSERA_CPU=" + cpu + ": its code would use " + name + ", which " +
                        llvm::sys::getHostCPUName().str() + " (this machine) lacks");
    out.push_back(name);
  }
  return out;
}

}  // namespace

const HostCpu &host_cpu() {
  // Initialized on first use; an override that throws is reported again at the next use.
  static const HostCpu cpu = [] {
    HostCpu h;
    llvm::StringMap<bool> f;
    llvm::sys::getHostCPUFeatures(f);
    const char *override_cpu = std::getenv("TESSERA_CPU");
    if (override_cpu && *override_cpu) {
      h.name = override_cpu;
      h.features = features_of(h.name, f);
    } else {
      h.name = llvm::sys::getHostCPUName().str();
      for (const auto &kv : f)
        if (kv.second) h.features.push_back(kv.first().str());
    }
    std::sort(h.features.begin(), h.features.end());
    for (const auto &kv : f)
      if (!std::binary_search(h.features.begin(), h.features.end(), kv.first().str()))
        h.disabled.push_back(kv.first().str());
    auto has = [&](const char *x) {
      return std::binary_search(h.features.begin(), h.features.end(), std::string(x));
    };
    h.vector_bits = has("avx512f") ? 512 : has("avx") ? 256 : 128;
    return h;
  }();
  return cpu;
}

struct JitModule::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::map<std::string, std::string> built_as;  // kernel name -> the name of its twin's build
};

JitModule::JitModule(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JitModule::~JitModule() = default;

namespace {

constexpr const char *kObjectKind = "llvm-object";

std::atomic<int> kernels_compiled{0}, objects_loaded{0};

/// The module's object code for the host: from `objects` when it has it, else compiled (the
/// optimization pipeline, then the host's code generator) and handed to `objects`. Runs on any
/// thread: everything LLVM here is its own.
std::unique_ptr<llvm::MemoryBuffer>
object_code(const std::vector<const compiler::Kernel *> &kernels, BinaryStore *objects) {
  std::string key;
  if (objects) {
    // Objects that call libmvec are kept apart from those that call libm lane by lane.
    key = host_vector_math_name() + "\n";
    for (const auto *k : kernels) key += compiler::print_kernel(*k);
    if (auto found = objects->find(kObjectKind, key)) {
      auto buffer = llvm::MemoryBuffer::getMemBufferCopy(*found, "tessera-cached");
      // Stored object code that does not parse is compiled again (and replaced).
      auto parsed = llvm::object::ObjectFile::createObjectFile(buffer->getMemBufferRef());
      if (parsed) {
        ++objects_loaded;
        return buffer;
      }
      llvm::consumeError(parsed.takeError());
    }
  }
  auto tm = host_target_machine();
  llvm::LLVMContext context;
  auto module = codegen(context, kernels, "tessera");
  optimize(*module, *tm);
  llvm::orc::SimpleCompiler compiler(*tm);
  auto object = check(compiler(*module), "cannot generate code");
  kernels_compiled += static_cast<int>(kernels.size());
  if (objects)
    objects->store(kObjectKind, key,
                   std::string(object->getBufferStart(), object->getBufferSize()));
  return object;
}

/// The kernels split into modules that compile in parallel: about four per thread of the pool,
/// so that a thread that loses its core to another process holds up little, balanced by the size
/// of the kernels' text (largest first, each to the smallest module), largest module first. The
/// split depends only on the kernels and the thread count: a module is also a key of `objects`.
std::vector<std::vector<const compiler::Kernel *>>
split_modules(const std::vector<const compiler::Kernel *> &kernels,
              const std::vector<size_t> &sizes) {
  size_t n = std::min(kernels.size(), static_cast<size_t>(4 * pool_threads()));
  std::vector<size_t> order(kernels.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sizes[a] > sizes[b]; });
  std::vector<std::vector<const compiler::Kernel *>> modules(n);
  std::vector<size_t> load(n, 0);
  for (size_t i : order) {
    size_t m = std::min_element(load.begin(), load.end()) - load.begin();
    modules[m].push_back(kernels[i]);
    load[m] += sizes[i];
  }
  return modules;
}

}  // namespace

JitStats jit_stats() { return {kernels_compiled.load(), objects_loaded.load()}; }

std::unique_ptr<JitModule> JitModule::compile(const std::vector<const compiler::Kernel *> &kernels,
                                              BinaryStore *objects) {
  auto impl = std::make_unique<Impl>();
  // Twins (the same canonical text: repeated layers, their gradients) are compiled once.
  std::map<std::string, std::string> first_of_text;
  std::vector<const compiler::Kernel *> distinct;
  std::vector<size_t> sizes;
  for (const auto *k : kernels) {
    std::string text = compiler::tune::canonical_text(*k);
    auto [it, first] = first_of_text.try_emplace(text, k->name);
    impl->built_as[k->name] = it->second;
    if (!first) continue;
    distinct.push_back(k);
    sizes.push_back(text.size());
  }
  auto modules = split_modules(distinct, sizes);
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects_of(modules.size());
  std::vector<std::exception_ptr> errors(modules.size());
  auto compile_range = [&](int64_t begin, int64_t end) {
    for (int64_t m = begin; m < end; ++m) try {
        objects_of[m] = object_code(modules[m], objects);
      } catch (...) {
        errors[m] = std::current_exception();
      }
  };
  using Range = decltype(compile_range);
  tessera_parallel_for(
      [](void *ctx, int64_t begin, int64_t end) { (*static_cast<Range *>(ctx))(begin, end); },
      &compile_range, static_cast<int64_t>(modules.size()));
  for (auto &e : errors)
    if (e) std::rethrow_exception(e);

  impl->jit = check(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(host_builder()).create(),
                    "cannot start the JIT");
  auto &dylib = impl->jit->getMainJITDylib();
  // libm and libmvec (loaded by host_vector_math) for the math functions; tessera_parallel_for
  // from this library; libgcc's helpers for what the target has no instruction for (half
  // conversions without F16C: __extendhfsf2, __truncsfhf2). This library links libgcc_s, but
  // Python loads extension modules and their dependencies locally, out of the process's search.
  host_vector_math();
  static void *const libgcc = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_GLOBAL);
  (void)libgcc;
  dylib.addGenerator(check(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                               impl->jit->getDataLayout().getGlobalPrefix()),
                           "cannot search the process for symbols"));
  llvm::orc::SymbolMap symbols;
  symbols[impl->jit->mangleAndIntern("tessera_parallel_for")] = llvm::JITEvaluatedSymbol(
      llvm::pointerToJITTargetAddress(&tessera_parallel_for), llvm::JITSymbolFlags::Exported);
  if (auto e = dylib.define(llvm::orc::absoluteSymbols(symbols)))
    throw tile::Error("error: cpu: " + error_text(std::move(e)));
  for (auto &object : objects_of)
    if (auto e = impl->jit->addObjectFile(std::move(object)))
      throw tile::Error("error: cpu: " + error_text(std::move(e)));
  auto result = std::unique_ptr<JitModule>(new JitModule(std::move(impl)));
  // Materialize every kernel now, so that compile time is spent in compile() and not in the first
  // run.
  for (const auto *k : distinct) result->lookup(k->name);
  return result;
}

KernelFn JitModule::lookup(const std::string &kernel_name) const {
  auto built = impl_->built_as.find(kernel_name);
  const std::string &name = built == impl_->built_as.end() ? kernel_name : built->second;
  auto addr = check(impl_->jit->lookup(kernel_symbol(name)), "kernel not found");
  return addr.toPtr<KernelFn>();
}

std::string kernels_ir(const std::vector<const compiler::Kernel *> &kernels, bool optimize_ir) {
  llvm::LLVMContext context;
  auto module = codegen(context, kernels, "tessera");
  if (optimize_ir) optimize(*module, *host_target_machine());
  std::string s;
  llvm::raw_string_ostream os(s);
  module->print(os, nullptr);
  return os.str();
}

}  // namespace tessera::llvm_backend
