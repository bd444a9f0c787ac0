// numpy arrays and Python values to and from Tessera's C++ types, with errors a Python user can
// act on (what was passed, what was expected) instead of pybind11's cast messages.
#pragma once

#include <string>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "runtime/HostTensor.h"
#include "tessera/ops.h"
#include "tile/Bind.h"

namespace tessera::python {

namespace py = pybind11;

/// The dtype of a numpy array; tile::Error for one Tessera has no type for.
tile::DType dtype_of(const py::array &a);
/// A C-contiguous copy of `a` as a host tensor. Checks its byte count before copying.
HostTensor to_host(const py::handle &a, const std::string &what);
py::array to_numpy(const HostTensor &t);
/// Keyword arguments as op attributes: ints, floats, strings, bools, lists of ints.
OpAttrs to_attrs(const std::string &op, const py::dict &kwargs);
/// A str argument; tile::Error naming `what` for anything else.
std::string to_name(const py::handle &h, const std::string &what);
std::string dtype_str(tile::DType t);

}  // namespace tessera::python
