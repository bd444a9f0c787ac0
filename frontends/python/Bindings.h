// The parts of the _native module, each defined in its own file.
#pragma once

#include <pybind11/pybind11.h>

namespace tessera::python {

void bind_graph(pybind11::module_ &m);    // GraphBindings.cpp: EDSL tensors, ops, programs
void bind_devices(pybind11::module_ &m);  // DeviceBindings.cpp: devices, executables, tensors

}  // namespace tessera::python
