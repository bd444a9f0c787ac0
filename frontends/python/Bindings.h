// The parts of the _native module, each defined in its own file.
#pragma once

#include <pybind11/pybind11.h>

#include "tessera/ops.h"

namespace tessera::python {

/// The ops `tessera.op`, `tessera.ops` and graphs call: the op library and loaded op libraries.
OpRegistry &op_registry();

void bind_graph(pybind11::module_ &m);    // GraphBindings.cpp: EDSL tensors, ops, programs
void bind_devices(pybind11::module_ &m);  // DeviceBindings.cpp: devices, executables, tensors

}  // namespace tessera::python
