// Builds the device registry from the backends compiled into this build.
#pragma once

#include "runtime/DeviceRegistry.h"

namespace tessera {

/// Every device this machine has, in the order `tessera devices` lists them.
DeviceRegistry builtin_devices();

}  // namespace tessera
