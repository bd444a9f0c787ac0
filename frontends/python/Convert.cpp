#include "Convert.h"

#include <cstring>
#include <limits>

#include "tile/Diagnostics.h"

namespace tessera::python {

tile::DType dtype_of(const py::array &a) {
  py::dtype d = a.dtype();
  if (d.kind() == 'b') return tile::DType::Bool;
  std::string name = py::str(d.attr("name"));
  auto t = tile::parse_dtype(name);
  if (!t || d.byteorder() == '>')
    throw tile::Error("error: unsupported array dtype '" + std::string(py::str(d)) + "'");
  return *t;
}

std::string dtype_str(tile::DType t) { return std::string(tile::dtype_name(t)); }

HostTensor to_host(const py::handle &h, const std::string &what) {
  if (!py::isinstance<py::array>(h) && !py::isinstance<py::buffer>(h) &&
      !py::isinstance<py::float_>(h) && !py::isinstance<py::int_>(h) &&
      !py::isinstance<py::bool_>(h) && !py::isinstance<py::list>(h) &&
      !py::isinstance<py::tuple>(h))
    throw tile::Error("error: " + what + ": expected a numpy array, got " +
                      std::string(py::str(py::type::of(h).attr("__name__"))));
  py::array a = py::array::ensure(h);
  if (!a) throw tile::Error("error: " + what + ": cannot be read as a numpy array");
  tile::TensorType type{dtype_of(a), {}};
  // Checked before the copy: a view (np.lib.stride_tricks.as_strided) may claim far more bytes
  // than it has, and its C-contiguous copy must not be attempted.
  uint64_t bytes = tile::dtype_size(type.dtype);
  for (py::ssize_t i = 0; i < a.ndim(); ++i) {
    uint64_t n = static_cast<uint64_t>(a.shape(i));
    type.shape.push_back(a.shape(i));
    if (n != 0 && bytes > std::numeric_limits<int64_t>::max() / n)
      throw tile::Error("error: " + what + ": an array of shape " + type.str() +
                        " has more bytes than a tensor may hold (2^63)");
    bytes *= n;
  }
  try {
    HostTensor t = HostTensor::uninitialized(type);
    if (!t.bytes()) return t;
    // A non-contiguous array is copied into place by numpy, straight into the tensor's memory.
    py::array c = py::array::ensure(a, py::array::c_style);
    if (!c) throw py::error_already_set();
    std::memcpy(t.data(), c.data(), t.bytes());
    return t;
  } catch (const std::bad_alloc &) {
  } catch (const py::error_already_set &e) {
    if (!e.matches(PyExc_MemoryError)) throw;
  }
  throw tile::Error("error: " + what + ": an array of shape " + type.str() + " needs " +
                    std::to_string(bytes) + " bytes, more than this host could allocate");
}

py::array to_numpy(const HostTensor &t) {
  std::string name = dtype_str(t.dtype());
  py::dtype d(name == "bool" ? "?" : name);
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  py::array a(d, shape);
  if (t.bytes()) std::memcpy(a.mutable_data(), t.data(), t.bytes());
  return a;
}

std::string to_name(const py::handle &h, const std::string &what) {
  if (!py::isinstance<py::str>(h))
    throw tile::Error("error: " + what + " must be a str, got " +
                      std::string(py::str(py::type::of(h).attr("__name__"))));
  return h.cast<std::string>();
}

namespace {

int64_t to_int(const std::string &op, const std::string &key, const py::handle &v) {
  try {
    return v.cast<int64_t>();
  } catch (const py::cast_error &) {
    throw EdslError(op + ": attribute '" + key + "': " + std::string(py::repr(v)) +
                    " does not fit a 64-bit integer");
  }
}

OpAttr to_attr(const std::string &op, const std::string &key, const py::handle &v) {
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>();
  if (py::isinstance<py::int_>(v)) return to_int(op, key, v);
  if (py::isinstance<py::float_>(v)) return v.cast<double>();
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    std::vector<int64_t> out;
    for (auto x : v) {
      if (!py::isinstance<py::int_>(x) || py::isinstance<py::bool_>(x))
        throw EdslError(op + ": attribute '" + key + "': a list of integers expected, got " +
                        std::string(py::repr(v)));
      out.push_back(to_int(op, key, x));
    }
    return out;
  }
  // numpy integers and floats (np.int64(3)) are taken by value.
  if (py::hasattr(v, "dtype") && py::hasattr(v, "item")) return to_attr(op, key, v.attr("item")());
  throw EdslError(op + ": attribute '" + key + "' has an unsupported type " +
                  std::string(py::str(py::type::of(v).attr("__name__"))) +
                  " (int, float, str, bool or a list of ints)");
}

}  // namespace

OpAttrs to_attrs(const std::string &op, const py::dict &kwargs) {
  OpAttrs attrs;
  for (auto [k, v] : kwargs) {
    std::string key = to_name(k, op + ": an attribute name");
    attrs.set(key, to_attr(op, key, v));
  }
  return attrs;
}

}  // namespace tessera::python
