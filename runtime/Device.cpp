#include "runtime/Device.h"

#include "runtime/Backend.h"
#include "runtime/Compile.h"
#include "tile/Diagnostics.h"

namespace tessera {

DeviceInfo Device::info() const { return backend_->info(); }

std::unique_ptr<Executable> Device::compile(const tile::BoundProgram &program,
                                            const CompileOptions &options) {
  return tessera::compile(program, *backend_, options);
}

DeviceTensor Device::upload(const HostTensor &value) {
  DeviceTensor t(value.type(), backend_->allocate(std::max<size_t>(value.bytes(), 1)));
  t.write(value);
  return t;
}

DeviceTensor Device::allocate(const tile::TensorType &type) {
  DeviceTensor t(type,
                 backend_->allocate(std::max<size_t>(
                     static_cast<size_t>(type.elements()) * tile::dtype_size(type.dtype), 1)));
  std::lock_guard<std::recursive_mutex> lock(backend_->mutex());
  backend_->fill(*t.buffer(), 0);
  backend_->finish();
  return t;
}

std::string Device::loops(const tile::BoundProgram &program, const CompileOptions &options) {
  return compiler::print_lowered(lower_for(program, *backend_, options));
}

std::string Device::source(const tile::BoundProgram &program, const CompileOptions &options) {
  if (!backend_->runs_kernels())
    throw tile::Error("error: device '" + info().name + "' has no source form to show");
  compiler::LoweredProgram lowered = lower_for(program, *backend_, options);
  std::string out;
  std::vector<const compiler::Kernel *> kernels;
  for (const auto &s : lowered.steps) {
    if (s.kind == compiler::Step::Kind::Host)
      out += "// host step: " + s.host_statement + "\n";
    else
      kernels.push_back(&s.kernel);
  }
  std::lock_guard<std::recursive_mutex> lock(backend_->mutex());
  return out + backend_->source(kernels);
}

}  // namespace tessera
