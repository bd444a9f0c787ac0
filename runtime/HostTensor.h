// A tensor in host memory: dtype, shape and C-order bytes. How inputs and outputs cross every API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tile/Bind.h"
#include "tile/DataType.h"

namespace tessera {

class HostTensor {
 public:
  HostTensor() = default;
  explicit HostTensor(tile::TensorType type);  // zero-filled

  const tile::TensorType &type() const { return type_; }
  tile::DType dtype() const { return type_.dtype; }
  const std::vector<int64_t> &shape() const { return type_.shape; }
  int64_t elements() const { return type_.elements(); }
  size_t bytes() const { return data_.size(); }

  std::byte *data() { return data_.data(); }
  const std::byte *data() const { return data_.data(); }
  template <typename T> T *as() { return reinterpret_cast<T *>(data_.data()); }
  template <typename T> const T *as() const { return reinterpret_cast<const T *>(data_.data()); }

  /// Element i converted to double / int64 (floats truncate toward zero, saturating).
  double get_double(int64_t i) const;
  int64_t get_int(int64_t i) const;
  uint64_t get_uint(int64_t i) const;
  /// Stores v converted to the tensor's dtype (floats round to nearest; ints wrap as in C++
  /// conversions of in-range values and saturate otherwise).
  void set_double(int64_t i, double v);
  void set_int(int64_t i, int64_t v);
  void set_uint(int64_t i, uint64_t v);

 private:
  tile::TensorType type_;
  std::vector<std::byte> data_;
};

}  // namespace tessera
