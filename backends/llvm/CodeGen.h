// Loop IR kernels to an LLVM module (IRBuilder). Internal to backends/llvm: it includes LLVM
// headers, which are heavy to compile, so only a few .cpp files of this backend include it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "compiler/IR.h"

namespace tessera::llvm_backend {

/// One function per kernel, named after it: `void name(ptr *buffers)`, where buffers[i] is the
/// base of kernel.params[i]. Parallel loops call `tessera_parallel_for` (ThreadPool.h).
/// Throws tile::Error for a kernel the generator cannot compile (a dtype without an LLVM type).
std::unique_ptr<llvm::Module> codegen(llvm::LLVMContext &context,
                                      const std::vector<const compiler::Kernel *> &kernels,
                                      const std::string &module_name);

/// The symbol name the JIT exports for `kernel_name` (identifier characters only).
std::string kernel_symbol(const std::string &kernel_name);

}  // namespace tessera::llvm_backend
