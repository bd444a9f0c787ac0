#include "backends/Registry.h"

#include "backends/interp/InterpDevice.h"

namespace tessera {

DeviceRegistry builtin_devices() {
  DeviceRegistry registry;
  registry.add("interp", "reference interpreter (exact Tile semantics, slow)",
               [] { return make_interp_device(); });
  return registry;
}

}  // namespace tessera
