#include "backends/Registry.h"

#include "backends/interp/InterpDevice.h"
#ifdef TESSERA_HAS_CPU
#include "backends/llvm/CpuDevice.h"
#endif

namespace tessera {

DeviceRegistry builtin_devices() {
  DeviceRegistry registry;
  registry.add("interp", "reference interpreter (exact Tile semantics, slow)",
               [] { return make_interp_device(); });
#ifdef TESSERA_HAS_CPU
  registry.add("cpu", "LLVM 15 JIT for the host CPU (multi-threaded)", [] { return make_cpu_device(); });
#endif
  return registry;
}

}  // namespace tessera
