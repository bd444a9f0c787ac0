// A lowered program on a `vulkan:N` device: its buffers (host-visible, mapped), one pipeline per
// kernel and one recorded command buffer per run of kernel steps between host steps.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "backends/vulkan/VulkanContext.h"
#include "compiler/Lower.h"
#include "runtime/Device.h"

namespace tessera::vulkan {

class VulkanExecutable : public Executable {
 public:
  /// The mapped memory of a buffer of the lowered program (the tuner fills and reads it directly).
  virtual std::byte *mapped(const std::string &buffer) = 0;
  /// Runs every kernel step once and waits, host steps skipped, buffers as they are (not zeroed).
  virtual void dispatch() = 0;
};

/// Builds every kernel of `lowered` (throws tile::Error when one does not build or does not fit
/// the device). `program` is what run() takes inputs and gives outputs of; the tuner passes an
/// empty one and uses mapped() and dispatch().
std::unique_ptr<VulkanExecutable> make_executable(Gpu &gpu, tile::BoundProgram program, compiler::LoweredProgram lowered);

}  // namespace tessera::vulkan
