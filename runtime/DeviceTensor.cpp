#include "runtime/DeviceTensor.h"

#include "runtime/Backend.h"
#include "tile/Diagnostics.h"

namespace tessera {

DeviceTensor::DeviceTensor(tile::TensorType type, std::shared_ptr<DeviceBuffer> buffer)
    : type_(std::move(type)), buffer_(std::move(buffer)) {
  TESSERA_INTERNAL_ASSERT(buffer_ && buffer_->bytes() >= bytes(),
                          "a device tensor larger than its buffer");
}

size_t DeviceTensor::bytes() const {
  return static_cast<size_t>(type_.elements()) * tile::dtype_size(type_.dtype);
}

std::string DeviceTensor::device() const {
  if (!buffer_) return "";
  return buffer_->backend().info().name;
}

HostTensor DeviceTensor::read() const {
  if (!buffer_) throw tile::Error("error: reading a device tensor that holds nothing");
  HostTensor out = HostTensor::uninitialized(type_);
  std::lock_guard<std::recursive_mutex> lock(buffer_->backend().mutex());
  if (out.bytes() > 0) buffer_->backend().read(*buffer_, out.data(), out.bytes());
  return out;
}

void DeviceTensor::write(const HostTensor &value) {
  if (!buffer_) throw tile::Error("error: writing a device tensor that holds nothing");
  if (value.type() != type_)
    throw tile::Error("error: cannot write " + value.type().str() + " into a device tensor of " +
                      type_.str());
  std::lock_guard<std::recursive_mutex> lock(buffer_->backend().mutex());
  if (value.bytes() > 0) buffer_->backend().write(*buffer_, value.data(), value.bytes());
}

}  // namespace tessera
