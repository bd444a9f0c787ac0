// GLSL compute shaders to SPIR-V with shaderc, at run time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::vulkan {

/// SPIR-V of the GLSL compute shader `glsl` for Vulkan `api_version` (1.0 or 1.1 and later).
/// Throws tile::Error with shaderc's log and the numbered source when it does not compile;
/// `what` names the shader in that message ("vulkan:0 (llvmpipe): kernel C").
std::vector<uint32_t> compile_glsl(const std::string &glsl, uint32_t api_version,
                                   const std::string &what);

}  // namespace tessera::vulkan
