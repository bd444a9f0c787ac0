// A tensor in host memory: dtype, shape and C-order bytes. How inputs and outputs cross every API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "tile/Bind.h"
#include "tile/DataType.h"

namespace tessera {

/// Cache-line (64-byte) aligned storage: compiled kernels load and store whole vectors, and an
/// AVX-512 access at malloc's 16-byte alignment straddles two cache lines (a conv measured 1.4 ms
/// on aligned buffers took 2.2 ms on malloc's).
template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U> &) {}
  T *allocate(size_t n) { return static_cast<T *>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T *p, size_t) { ::operator delete(p, kAlign); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U> &) const {
    return true;
  }
  // Default-initialization: a sized vector is not zeroed element by element (HostTensor zeroes
  // its bytes itself, except for an output a kernel overwrites whole).
  template <typename U>
  void construct(U *p) {
    ::new (static_cast<void *>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U *p, Args &&...args) {
    ::new (static_cast<void *>(p)) U(std::forward<Args>(args)...);
  }
};

class HostTensor {
 public:
  HostTensor() = default;
  explicit HostTensor(tile::TensorType type);  // zero-filled
  /// Storage whose bytes are left as the allocator gave them, for an output that a kernel will
  /// overwrite whole (a fill of a large output costs as much as a small kernel).
  static HostTensor uninitialized(tile::TensorType type);

  const tile::TensorType &type() const { return type_; }
  tile::DType dtype() const { return type_.dtype; }
  const std::vector<int64_t> &shape() const { return type_.shape; }
  int64_t elements() const { return type_.elements(); }
  size_t bytes() const { return data_.size(); }

  std::byte *data() { return data_.data(); }
  const std::byte *data() const { return data_.data(); }
  template <typename T>
  T *as() {
    return reinterpret_cast<T *>(data_.data());
  }
  template <typename T>
  const T *as() const {
    return reinterpret_cast<const T *>(data_.data());
  }

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
  std::vector<std::byte, CacheLineAllocator<std::byte>> data_;
};

/// Tensors by name: a program's inputs or outputs.
using TensorMap = std::map<std::string, HostTensor>;

}  // namespace tessera
