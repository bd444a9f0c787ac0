// Devices, executables and device tensors in Python: data that stays on a device between runs
// (variables), runs that update it in place. Compiles and runs release the GIL.
#include <pybind11/stl.h>

#include "Bindings.h"
#include "Convert.h"
#include "backends/Registry.h"
#include "runtime/TunePolicyNames.h"
#include "tile/Diagnostics.h"

namespace tessera::python {
namespace {

/// A device of the registry with its name (Device itself knows only its backend).
struct PyDevice {
  std::string name;
  std::shared_ptr<Device> device;
};

const DeviceRegistry &devices() {
  static const DeviceRegistry registry = builtin_devices();
  return registry;
}

PyDevice open_device(const std::string &name) {
  // An empty name is not a device: "" must not silently mean the default.
  if (name.empty())
    throw tile::Error("error: empty device name; known: " + [] {
      std::string s;
      for (const auto &n : devices().names()) s += (s.empty() ? "" : ", ") + n;
      return s;
    }());
  return {name, std::shared_ptr<Device>(devices().create(name))};
}

TunePolicy parse_policy(const std::string &name) {
  if (auto policy = tune_policy_named(name)) return *policy;
  throw tile::Error("error: tune must be 'online', 'full', 'cached' or 'off', not '" + name + "'");
}

py::dict report_dict(const CompileReport &r) {
  py::dict d;
  d["kernels"] = r.kernels.size();
  d["cache_hits"] = r.cache_hits;
  d["cache_misses"] = r.cache_misses;
  d["tuning_trials"] = r.tuning_trials;
  d["tune_seconds"] = r.tune_seconds;
  d["compile_seconds"] = r.compile_seconds;
  py::list origins;
  for (const auto &k : r.kernels) origins.append(k.origin);
  d["origins"] = origins;
  return d;
}

py::dict tuning_dict(const OnlineReport &r) {
  py::dict d;
  d["runs"] = r.runs;
  d["run_seconds"] = r.run_seconds;
  d["tune_seconds"] = r.tune_seconds;
  d["trials"] = r.trials;
  py::list kernels, swaps;
  for (const auto &k : r.kernels) {
    py::dict e;
    e["kernel"] = k.name;
    e["hash"] = k.hash;
    e["steps"] = k.steps;
    e["trials"] = k.trials;
    e["tune_seconds"] = k.tune_seconds;
    e["seconds_before"] = k.seconds_before;
    e["seconds_after"] = k.seconds_after;
    e["outcome"] = k.outcome;
    e["first_run"] = k.first_run;
    e["schedule"] = k.schedule;
    kernels.append(e);
    if (k.outcome != "swapped") continue;
    py::dict s;
    s["run"] = k.first_run;
    s["kernel"] = k.name;
    s["hash"] = k.hash;
    swaps.append(s);
  }
  d["kernels"] = kernels;
  d["swaps"] = swaps;
  return d;
}

}  // namespace

void bind_devices(py::module_ &m) {
  m.def("devices", [] { return devices().names(); });
  m.def(
      "default_device", [] { return devices().default_name(); },
      "The device named by $TESSERA_DEVICE, else the preferred one of this machine.");

  py::class_<DeviceTensor>(m, "DeviceTensor", "A tensor in a device's memory.")
      .def_property_readonly("dtype",
                             [](const DeviceTensor &t) { return dtype_str(t.type().dtype); })
      .def_property_readonly("shape", [](const DeviceTensor &t) { return t.type().shape; })
      .def_property_readonly("device", &DeviceTensor::device)
      .def("read",
           [](const DeviceTensor &t) {
             HostTensor h;
             {
               py::gil_scoped_release release;
               h = t.read();
             }
             return to_numpy(h);
           })
      .def("write", [](DeviceTensor &t, const py::handle &value) {
        HostTensor h = to_host(value, "DeviceTensor.write");
        py::gil_scoped_release release;
        t.write(h);
      });

  py::class_<Executable, std::shared_ptr<Executable>>(m, "Executable",
                                                      "A program compiled for one device.")
      .def("run",
           [](Executable &exe, const py::dict &inputs) {
             TensorMap in;
             for (auto [k, v] : inputs) {
               std::string name = to_name(k, "an input name");
               in.emplace(name, to_host(v, "input '" + name + "'"));
             }
             TensorMap out;
             {
               py::gil_scoped_release release;
               out = exe.run(in);
             }
             py::dict result;
             for (const auto &[name, t] : out) result[py::str(name)] = to_numpy(t);
             return result;
           })
      .def(
          "run_on_device",
          [](Executable &exe, const DeviceTensorMap &inputs, const DeviceTensorMap &outputs) {
            py::gil_scoped_release release;
            return exe.run_on_device(inputs, outputs);
          },
          py::arg("inputs"), py::arg("outputs") = DeviceTensorMap{},
          "Runs on device tensors; an output named in `outputs` is written into that tensor.")
      .def_property_readonly("kernel_count", &Executable::kernel_count)
      .def_property_readonly("report", [](const Executable &e) { return report_dict(e.report()); })
      .def_property_readonly(
          "tuning", [](const Executable &e) { return tuning_dict(e.tuning()); },
          "What tuning between runs (tune='online') did so far: runs, run_seconds, tune_seconds, "
          "trials, every kernel tuned (kernels) and the swaps, each with the first run (counting "
          "from 1) that ran the tuned kernel")
      .def("loops", &Executable::loops);

  py::class_<PyDevice>(m, "Device", "A device: compiles programs, holds tensors.")
      .def(py::init(&open_device), py::arg("name"))
      .def_readonly("name", &PyDevice::name)
      .def("upload",
           [](PyDevice &d, const py::handle &value) {
             HostTensor h = to_host(value, "Device.upload");
             py::gil_scoped_release release;
             return d.device->upload(h);
           })
      .def("allocate",
           [](PyDevice &d, const std::string &dtype, const std::vector<int64_t> &shape) {
             auto t = tile::parse_dtype(dtype);
             if (!t) throw tile::Error("error: unknown dtype '" + dtype + "'");
             py::gil_scoped_release release;
             return d.device->allocate({*t, shape});
           })
      .def(
          "compile",
          [](PyDevice &d, const Function &fn, const std::optional<std::string> &tune,
             double tune_seconds, const py::dict &constants) {
            CompileOptions options;
            if (tune) options.policy = parse_policy(*tune);
            options.total_seconds = tune_seconds;
            for (auto [k, v] : constants) {
              std::string name = to_name(k, "a constant's name");
              options.constants.emplace(name, to_host(v, "constant '" + name + "'"));
            }
            tile::BoundProgram bound = tile::bind(fn.program, fn.input_types);
            py::gil_scoped_release release;
            return std::shared_ptr<Executable>(d.device->compile(bound, options));
          },
          py::arg("function"), py::arg("tune") = py::none(), py::arg("tune_seconds") = 0.0,
          py::arg("constants") = py::dict(),
          "Compiles for this device. tune: 'online' (hot kernels tuned between runs), 'full' "
          "(every kernel the cache lacks tuned now), 'cached' or 'off' (default: $TESSERA_TUNE, "
          "else online); tune_seconds: the tuning time for the whole program (0: no limit); "
          "constants: {input name: array} compiled in (inference weights: batch norm folded into "
          "the convolutions), which runs then leave out.");
}

}  // namespace tessera::python
