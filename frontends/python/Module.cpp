// The `tessera` Python module (pybind11): numpy arrays in and out, ops by name, Tile programs,
// devices. Python code lives beside it in tessera/ (the package this extension joins).
#include <cstring>
#include <optional>

#include <pybind11/stl.h>

#include "Bindings.h"
#include "Convert.h"
#include "autodiff/Gradient.h"
#include "backends/Registry.h"
#include "tessera/edsl.h"
#include "tessera/ops.h"
#include "tile/Diagnostics.h"
#include "tile/Parser.h"
#include "tile/Printer.h"

namespace tessera::python {
namespace {

std::string device_or_default(const std::string &device) {
  return device.empty() ? builtin_devices().default_name() : device;
}

// Runs a registered op on numpy inputs: placeholders of the inputs' types, the op's EDSL function,
// a program of its outputs, compiled and run on `device`.
py::object run_op(const std::string &name, const std::vector<py::object> &inputs,
                  const std::string &device, const py::kwargs &kwargs) {
  OpAttrs attrs = to_attrs(name, kwargs);
  std::vector<Tensor> placeholders;
  TensorMap values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    HostTensor h = to_host(inputs[i], name + ": input " + std::to_string(i));
    std::string in_name = "I" + std::to_string(i);
    placeholders.push_back(Placeholder(h.dtype(), h.shape(), in_name));
    values.emplace(in_name, std::move(h));
  }
  std::vector<Tensor> outs = op_registry().call(name, placeholders, attrs);
  std::vector<std::pair<std::string, Tensor>> named;
  for (size_t i = 0; i < outs.size(); ++i) named.emplace_back("O" + std::to_string(i), outs[i]);
  Function fn = build(named, placeholders);
  // Inputs the op does not read are still program inputs; give every one its value.
  auto exe = compile(fn, device_or_default(device));
  TensorMap result = exe->run(values);
  if (outs.size() == 1) return to_numpy(result.at("O0"));
  py::list list;
  for (size_t i = 0; i < outs.size(); ++i)
    list.append(to_numpy(result.at("O" + std::to_string(i))));
  return list;
}

py::dict run_tile(const std::string &text, const py::dict &inputs, const std::string &device) {
  tile::Program p = tile::parse_program(text, "<python>");
  TensorMap values;
  std::map<std::string, tile::TensorType> types;
  for (auto [k, v] : inputs) {
    HostTensor h = to_host(v, "input '" + to_name(k, "an input name") + "'");
    types[k.cast<std::string>()] = h.type();
    values.emplace(k.cast<std::string>(), std::move(h));
  }
  std::unique_ptr<Device> dev = builtin_devices().create(device_or_default(device));
  TensorMap out = dev->compile(tile::bind(p, types))->run(values);
  py::dict result;
  for (const auto &[name, t] : out) result[py::str(name)] = to_numpy(t);
  return result;
}

// tessera.grad: the gradient of a Tile program (text) as Tile text (autodiff::gradient).
std::string grad_tile(const std::string &text, const std::vector<std::string> &wrt,
                      const std::optional<std::string> &of) {
  tile::Program p = tile::parse_program(text, "<python>");
  std::string target = of.value_or("");
  if (target.empty()) {
    if (p.outputs.size() != 1)
      throw tile::Error("error: the program has " + std::to_string(p.outputs.size()) +
                        " outputs; say which one to differentiate with of=");
    target = p.outputs[0].name;
  }
  return tile::print_program(autodiff::gradient(p, target, wrt));
}

// tessera.op_grad: builds the op on placeholders of the inputs' types, differentiates its first
// output against `seed` w.r.t. every float input, runs the gradient program on `device`.
py::list op_grad(const std::string &name, const std::vector<py::object> &inputs,
                 const py::object &seed, const std::string &device, const py::kwargs &kwargs) {
  OpAttrs attrs = to_attrs(name, kwargs);
  std::vector<Tensor> placeholders;
  TensorMap values;
  std::map<std::string, tile::TensorType> types;
  std::map<std::string, tile::DType> dtypes;
  std::vector<std::string> wrt;
  for (size_t i = 0; i < inputs.size(); ++i) {
    HostTensor h = to_host(inputs[i], name + ": input " + std::to_string(i));
    std::string in_name = "I" + std::to_string(i);
    placeholders.push_back(Placeholder(h.dtype(), h.shape(), in_name));
    if (tile::is_float(h.dtype())) wrt.push_back(in_name);
    types[in_name] = h.type();
    dtypes[in_name] = h.dtype();
    values.emplace(in_name, std::move(h));
  }
  std::vector<Tensor> outs = op_registry().call(name, placeholders, attrs);
  Function fn = build({{"O0", outs.at(0)}}, placeholders);
  tile::Program g = autodiff::gradient(fn.program, "O0", wrt, {}, dtypes);
  HostTensor s = to_host(seed, name + ": seed");
  types["d_O0"] = s.type();
  values.emplace("d_O0", std::move(s));
  std::unique_ptr<Device> dev = builtin_devices().create(device_or_default(device));
  TensorMap out = dev->compile(tile::bind(g, types))->run(values);
  py::list result;
  for (const auto &x : wrt) result.append(to_numpy(out.at("d_" + x)));
  return result;
}

}  // namespace
}  // namespace tessera::python

PYBIND11_MODULE(_native, m) {
  using namespace tessera;
  using namespace tessera::python;
  m.doc() = "Tessera: Tile programs and ops on numpy arrays";
  // Messages quote the user's source, which may hold bytes that are not UTF-8: they are shown
  // escaped (\\xff) rather than lost in pybind11's default translation.
  static py::exception<tile::Error> tile_error(m, "TileError", PyExc_ValueError);
  static py::exception<EdslError> op_error(m, "OpError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    auto raise = [](PyObject *type, const char *what) {
      PyObject *text = PyUnicode_DecodeUTF8(what, std::strlen(what), "backslashreplace");
      PyErr_SetObject(type, text);
      Py_XDECREF(text);
    };
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tile::Error &e) {
      raise(tile_error.ptr(), e.what());
    } catch (const EdslError &e) {
      raise(op_error.ptr(), e.what());
    } catch (const std::bad_alloc &) {
      raise(PyExc_MemoryError, "out of host memory");
    }
  });
  m.def("op", &run_op, py::arg("name"), py::arg("inputs"), py::arg("device") = "",
        "Runs a registered op on numpy arrays; attributes as keyword arguments.");
  m.def("run", &run_tile, py::arg("program"), py::arg("inputs"), py::arg("device") = "",
        "Runs a Tile program (text) on a dict of numpy arrays; returns a dict of outputs.");
  m.def(
      "grad", &grad_tile, py::arg("program"), py::arg("wrt"), py::arg("of") = py::none(),
      "The gradient of a Tile program as Tile text: inputs + d_OF in, d_X for each X in wrt out.");
  m.def("op_grad", &op_grad, py::arg("name"), py::arg("inputs"), py::arg("seed"),
        py::arg("device") = "",
        "Gradients of an op's first output (against `seed`) w.r.t. each float input, as arrays.");
  bind_graph(m);
  bind_devices(m);
  m.attr("__version__") = TESSERA_VERSION;
}
