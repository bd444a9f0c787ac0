#include "backends/Registry.h"

#include "backends/interp/InterpBackend.h"
#ifdef TESSERA_HAS_CPU
#include "backends/llvm/CpuBackend.h"
#endif
#ifdef TESSERA_HAS_OPENCL
#include "backends/opencl/OpenCLBackend.h"
#endif
#ifdef TESSERA_HAS_VULKAN
#include "backends/vulkan/VulkanBackend.h"
#endif

namespace tessera {

DeviceRegistry builtin_devices() {
  DeviceRegistry registry;
  // The first device added is the default (DESIGN.md §5): the compiled `cpu` device where this
  // build has it, else the interpreter.
#ifdef TESSERA_HAS_CPU
  registry.add("cpu", "LLVM 15 JIT for the host CPU (multi-threaded)",
               [] { return std::make_unique<Device>(cpu_backend()); });
#endif
  registry.add("interp", "reference interpreter (exact Tile semantics, slow)",
               [] { return std::make_unique<Device>(interp_backend()); });
#ifdef TESSERA_HAS_OPENCL
  // Every device of every OpenCL platform; a machine without a platform lists none.
  for (int i = 0; i < opencl_device_count(); ++i)
    registry.add("opencl:" + std::to_string(i), opencl_device_description(i),
                 [i] { return std::make_unique<Device>(opencl_backend(i)); });
#endif
#ifdef TESSERA_HAS_VULKAN
  // Every physical device with a compute queue; a machine without a Vulkan driver lists none.
  for (int i = 0; i < vulkan_device_count(); ++i)
    registry.add("vulkan:" + std::to_string(i), vulkan_device_description(i),
                 [i] { return std::make_unique<Device>(vulkan_backend(i)); });
#endif
  return registry;
}

}  // namespace tessera
