#include "backends/Registry.h"

#include "backends/interp/InterpDevice.h"
#ifdef TESSERA_HAS_CPU
#include "backends/llvm/CpuDevice.h"
#endif
#ifdef TESSERA_HAS_OPENCL
#include "backends/opencl/OpenCLDevice.h"
#endif
#ifdef TESSERA_HAS_VULKAN
#include "backends/vulkan/VulkanDevice.h"
#endif

namespace tessera {

DeviceRegistry builtin_devices() {
  DeviceRegistry registry;
  // The first device added is the default (DESIGN.md §5): the compiled `cpu` device where this
  // build has it, else the interpreter.
#ifdef TESSERA_HAS_CPU
  registry.add("cpu", "LLVM 15 JIT for the host CPU (multi-threaded)", [] { return make_cpu_device(); });
#endif
  registry.add("interp", "reference interpreter (exact Tile semantics, slow)",
               [] { return make_interp_device(); });
#ifdef TESSERA_HAS_OPENCL
  // Every device of every OpenCL platform; a machine without a platform lists none.
  for (int i = 0; i < opencl_device_count(); ++i)
    registry.add("opencl:" + std::to_string(i), opencl_device_description(i), [i] { return make_opencl_device(i); });
#endif
#ifdef TESSERA_HAS_VULKAN
  // Every physical device with a compute queue; a machine without a Vulkan driver lists none.
  for (int i = 0; i < vulkan_device_count(); ++i)
    registry.add("vulkan:" + std::to_string(i), vulkan_device_description(i), [i] { return make_vulkan_device(i); });
#endif
  return registry;
}

}  // namespace tessera
