#include "backends/vulkan/ShaderCompiler.h"

#include <shaderc/shaderc.hpp>
#include <vulkan/vulkan.h>

#include <sstream>

#include "tile/Diagnostics.h"

namespace tessera::vulkan {

namespace {

std::string numbered(const std::string &text) {
  std::istringstream in(text);
  std::string line, out;
  for (int n = 1; std::getline(in, line); ++n)
    out += (n < 10     ? "   "
            : n < 100  ? "  "
            : n < 1000 ? " "
                       : "") +
           std::to_string(n) + "  " + line + "\n";
  return out;
}

}  // namespace

std::vector<uint32_t> compile_glsl(const std::string &glsl, uint32_t api_version,
                                   const std::string &what) {
  // One compiler per thread: a compile needs its compiler to itself, and kernels of one program
  // compile on several threads (VulkanContext.cpp).
  thread_local shaderc::Compiler compiler;
  shaderc::CompileOptions options;
  // SPIR-V 1.3 (Vulkan 1.1) has the 8/16-bit storage capabilities without extensions.
  options.SetTargetEnvironment(shaderc_target_env_vulkan, api_version >= VK_API_VERSION_1_1
                                                              ? shaderc_env_version_vulkan_1_1
                                                              : shaderc_env_version_vulkan_1_0);
  // The driver optimizes the SPIR-V again (NIR, LLVM on lavapipe): spirv-opt would only add compile
  // time.
  options.SetOptimizationLevel(shaderc_optimization_level_zero);
  shaderc::SpvCompilationResult result =
      compiler.CompileGlslToSpv(glsl, shaderc_compute_shader, "kernel.comp", "main", options);
  if (result.GetCompilationStatus() != shaderc_compilation_status_success)
    throw tile::Error("error: " + what + " failed to compile (shaderc):\n" +
                      result.GetErrorMessage() + "--- GLSL ---\n" + numbered(glsl));
  return {result.cbegin(), result.cend()};
}

}  // namespace tessera::vulkan
