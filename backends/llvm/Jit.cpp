#include "backends/llvm/Jit.h"

#include <mutex>

#include <llvm/ADT/StringMap.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "backends/llvm/CodeGen.h"
#include "backends/llvm/ThreadPool.h"
#include "compiler/IRPrinter.h"
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
  jtmb.setCPU(host_cpu().name);
  llvm::SubtargetFeatures features;
  for (const auto &f : host_cpu().features) features.AddFeature(f);
  jtmb.addFeatures(features.getFeatures());
  jtmb.setCodeGenOptLevel(llvm::CodeGenOpt::Aggressive);
  return jtmb;
}

// The host's widest vectors for every function (LLVM prefers 256 bits on AVX-512 parts, which
// would split the kernels' explicit 512-bit vectors), then the O3 pipeline.
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
  llvm::PipelineTuningOptions pto;
  pto.LoopUnrolling = true;
  pto.LoopVectorization = true;
  pto.SLPVectorization = true;
  llvm::PassBuilder pb(&tm, pto);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(m, mam);
}

std::unique_ptr<llvm::TargetMachine> host_target_machine() {
  return check(host_builder().createTargetMachine(), "cannot create a target machine");
}

}  // namespace

const HostCpu &host_cpu() {
  static const HostCpu cpu = [] {
    HostCpu h;
    h.name = llvm::sys::getHostCPUName().str();
    llvm::StringMap<bool> f;
    if (llvm::sys::getHostCPUFeatures(f))
      for (const auto &kv : f)
        if (kv.second) h.features.push_back("+" + kv.first().str());
    std::sort(h.features.begin(), h.features.end());
    auto has = [&](const char *x) { return f.count(x) && f.lookup(x); };
    h.vector_bits = has("avx512f") ? 512 : has("avx") ? 256 : 128;
    for (auto &s : h.features) s = s.substr(1);
    // Callers want plain names; the target machine builder wants "+name".
    return h;
  }();
  return cpu;
}

struct JitModule::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
};

JitModule::JitModule(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JitModule::~JitModule() = default;

namespace {

constexpr const char *kObjectKind = "llvm-object";

/// The module's object code for the host: from `objects` when it has it, else compiled (O3, then
/// the host's code generator) and handed to `objects`.
std::unique_ptr<llvm::MemoryBuffer>
object_code(const std::vector<const compiler::Kernel *> &kernels, BinaryStore *objects) {
  std::string key;
  if (objects) {
    for (const auto *k : kernels) key += compiler::print_kernel(*k);
    if (auto found = objects->find(kObjectKind, key)) {
      auto buffer = llvm::MemoryBuffer::getMemBufferCopy(*found, "tessera-cached");
      // Stored object code that does not parse is compiled again (and replaced).
      auto parsed = llvm::object::ObjectFile::createObjectFile(buffer->getMemBufferRef());
      if (parsed) return buffer;
      llvm::consumeError(parsed.takeError());
    }
  }
  auto tm = host_target_machine();
  llvm::LLVMContext context;
  auto module = codegen(context, kernels, "tessera");
  optimize(*module, *tm);
  llvm::orc::SimpleCompiler compiler(*tm);
  auto object = check(compiler(*module), "cannot generate code");
  if (objects)
    objects->store(kObjectKind, key,
                   std::string(object->getBufferStart(), object->getBufferSize()));
  return object;
}

}  // namespace

std::unique_ptr<JitModule> JitModule::compile(const std::vector<const compiler::Kernel *> &kernels,
                                              BinaryStore *objects) {
  auto object = object_code(kernels, objects);
  auto impl = std::make_unique<Impl>();
  impl->jit = check(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(host_builder()).create(),
                    "cannot start the JIT");
  auto &dylib = impl->jit->getMainJITDylib();
  // libm for the math functions; tessera_parallel_for from this library.
  dylib.addGenerator(check(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                               impl->jit->getDataLayout().getGlobalPrefix()),
                           "cannot search the process for symbols"));
  llvm::orc::SymbolMap symbols;
  symbols[impl->jit->mangleAndIntern("tessera_parallel_for")] = llvm::JITEvaluatedSymbol(
      llvm::pointerToJITTargetAddress(&tessera_parallel_for), llvm::JITSymbolFlags::Exported);
  if (auto e = dylib.define(llvm::orc::absoluteSymbols(symbols)))
    throw tile::Error("error: cpu: " + error_text(std::move(e)));
  if (auto e = impl->jit->addObjectFile(std::move(object)))
    throw tile::Error("error: cpu: " + error_text(std::move(e)));
  auto result = std::unique_ptr<JitModule>(new JitModule(std::move(impl)));
  // Materialize every kernel now, so that compile time is spent in compile() and not in the first
  // run.
  for (const auto *k : kernels) result->lookup(k->name);
  return result;
}

KernelFn JitModule::lookup(const std::string &kernel_name) const {
  auto addr = check(impl_->jit->lookup(kernel_symbol(kernel_name)), "kernel not found");
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
