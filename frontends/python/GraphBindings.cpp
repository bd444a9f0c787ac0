// The EDSL in Python: tensors of concrete shapes, ops by name, Tile text as an op, gradients and
// programs. tessera/graph.py builds its symbolic graph (dimensions unknown until run) on these.
#include <dlfcn.h>

#include <algorithm>
#include <set>

#include <pybind11/stl.h>

#include "Bindings.h"
#include "Convert.h"
#include "tessera/gradient.h"
#include "tessera/import.h"
#include "tile/Diagnostics.h"
#include "tile/Parser.h"

namespace tessera::python {
namespace {

/// A Python number or an EDSL tensor as an EDSL tensor (numbers become weakly typed literals).
Tensor as_tensor(const py::handle &h) {
  if (py::isinstance<Tensor>(h)) return h.cast<Tensor>();
  if (py::isinstance<py::bool_>(h)) return Tensor(h.cast<bool>() ? 1 : 0);
  if (py::isinstance<py::int_>(h)) return Tensor(h.cast<int64_t>());
  if (py::isinstance<py::float_>(h)) return Tensor(h.cast<double>());
  throw EdslError("expected a tensor or a number, got " +
                  std::string(py::str(py::type::of(h).attr("__name__"))));
}

tile::DType parse_dtype(const std::string &name) {
  auto t = tile::parse_dtype(name);
  if (!t) throw EdslError("unknown dtype '" + name + "'");
  return *t;
}

/// The names of the ops that op libraries added.
std::set<std::string> &loaded_op_names() {
  static std::set<std::string> names;
  return names;
}

/// Makes this module's symbols (the EDSL and the op registry) visible to libraries loaded after
/// it: Python opens extension modules with RTLD_LOCAL, and an op library is linked against them.
void export_own_symbols() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&export_own_symbols), &info) || !info.dli_fname)
    throw tile::Error("error: cannot locate the tessera native module to load op libraries");
  if (!dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL))
    throw tile::Error(std::string("error: ") + dlerror());
}

/// Loads an op library: a shared library defining
/// `extern "C" void tessera_register_ops(tessera::OpRegistry &)`. Returns the names it added.
std::vector<std::string> load_op_library(const std::string &path) {
  export_own_symbols();
  void *library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) throw tile::Error(std::string("error: cannot load op library: ") + dlerror());
  using Register = void (*)(OpRegistry &);
  auto add = reinterpret_cast<Register>(dlsym(library, "tessera_register_ops"));
  if (!add)
    throw tile::Error("error: " + path +
                      ": not an op library (it defines no extern \"C\" "
                      "tessera_register_ops(tessera::OpRegistry &))");
  // Registered into a copy first: a library whose ops clash with known ones changes nothing.
  OpRegistry updated = op_registry();
  std::vector<std::string> before = updated.names();
  add(updated);
  op_registry() = std::move(updated);
  std::vector<std::string> added;
  for (const auto &name : op_registry().names())
    if (!std::binary_search(before.begin(), before.end(), name)) added.push_back(name);
  loaded_op_names().insert(added.begin(), added.end());
  return added;
}

}  // namespace

OpRegistry &op_registry() {
  static OpRegistry ops = builtin_ops();
  return ops;
}

void bind_graph(py::module_ &m) {
  py::class_<Tensor>(m, "Tensor", "An EDSL tensor: a dtype, a concrete shape, how it is computed.")
      .def_property_readonly("dtype", [](const Tensor &t) { return dtype_str(t.dtype()); })
      .def_property_readonly("shape", [](const Tensor &t) { return t.shape(); })
      .def_property_readonly("name", &Tensor::name);

  m.def(
      "placeholder",
      [](const std::string &dtype, const std::vector<int64_t> &shape, const std::string &name) {
        return Placeholder(parse_dtype(dtype), shape, name);
      },
      py::arg("dtype"), py::arg("shape"), py::arg("name") = "");
  m.def("literal", [](const py::handle &v) { return as_tensor(v); });
  m.def(
      "intrinsic",
      [](const std::string &name, const std::vector<py::object> &args) {
        auto op = tile::lookup_intrinsic(name);
        if (!op) throw EdslError("unknown intrinsic '" + name + "'");
        std::vector<Tensor> in;
        for (const auto &a : args) in.push_back(as_tensor(a));
        return call(*op, in);
      },
      "An elementwise intrinsic by its Tile name (add, exp, cond, ...) on tensors and numbers.");
  m.def("cast",
        [](const Tensor &x, const std::string &dtype) { return cast(x, parse_dtype(dtype)); });
  m.def("reshape",
        [](const Tensor &x, const std::vector<int64_t> &shape) { return reshape(x, shape); });
  m.def(
      "call_op",
      [](const std::string &name, const std::vector<Tensor> &inputs, const py::dict &kwargs) {
        return op_registry().call(name, inputs, to_attrs(name, kwargs));
      },
      "A registered op of the op library on EDSL tensors; returns its outputs.");
  m.def(
      "op_names",
      [](bool loaded) {
        std::vector<std::string> names;
        for (const auto &name : op_registry().names())
          if (loaded || !loaded_op_names().count(name)) names.push_back(name);
        return names;
      },
      py::arg("loaded") = true,
      "The ops tessera.op and tessera.ops know; loaded=False: the op library's alone, without "
      "those op libraries added.");
  m.def("load_op_library", &load_op_library, py::arg("path"),
        "Loads a shared library of custom ops (extern \"C\" tessera_register_ops(OpRegistry &)); "
        "returns the names of the ops it added.");
  m.def(
      "call_tile",
      [](const std::string &text, const std::map<std::string, Tensor> &inputs,
         const std::string &source_name) {
        return import_program(tile::parse_program(text, source_name), inputs);
      },
      py::arg("text"), py::arg("inputs"), py::arg("source_name") = "<tile op>",
      "A Tile function (text) applied to EDSL tensors, one per input; returns its outputs.");
  m.def(
      "tile_signature",
      [](const std::string &text, const std::string &source_name) {
        tile::Program p = tile::parse_program(text, source_name);
        std::pair<std::vector<std::string>, std::vector<std::string>> names;
        for (const auto &in : p.inputs) names.first.push_back(in.name);
        for (const auto &out : p.outputs) names.second.push_back(out.name);
        return names;
      },
      py::arg("text"), py::arg("source_name") = "<tile op>",
      "A Tile function's input and output names, in order; TileError for text that does not "
      "parse.");
  m.def(
      "gradient",
      [](const Tensor &loss, const std::vector<Tensor> &wrt, const std::optional<Tensor> &seed) {
        return seed ? gradient(loss, wrt, *seed) : gradient(loss, wrt);
      },
      py::arg("loss"), py::arg("wrt"), py::arg("seed") = py::none());

  py::class_<Function>(m, "Function", "A program built from EDSL tensors.")
      .def_property_readonly("tile", &Function::tile_text)
      .def_property_readonly("inputs",
                             [](const Function &f) {
                               std::vector<std::string> names;
                               for (const auto &p : f.program.inputs) names.push_back(p.name);
                               return names;
                             })
      .def_property_readonly("outputs", [](const Function &f) {
        std::vector<std::string> names;
        for (const auto &p : f.program.outputs) names.push_back(p.name);
        return names;
      });
  m.def(
      "build",
      [](const std::vector<std::pair<std::string, Tensor>> &outputs,
         const std::vector<Tensor> &inputs) { return build(outputs, inputs); },
      py::arg("outputs"), py::arg("inputs") = std::vector<Tensor>{},
      "The program computing the named outputs from the given placeholders (in this order).");
}

}  // namespace tessera::python
