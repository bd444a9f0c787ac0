#include "backends/interp/InterpDevice.h"

namespace tessera {

namespace {

class InterpExecutable : public Executable {
public:
  explicit InterpExecutable(tile::BoundProgram program) : program_(std::move(program)) {}
  TensorMap run(const TensorMap &inputs) override { return interpret(program_, inputs); }
  // The interpreter runs statements, not kernels; it counts one per statement.
  int kernel_count() const override { return static_cast<int>(program_.statements.size()); }

private:
  tile::BoundProgram program_;
};

class InterpDevice : public Device {
public:
  DeviceInfo info() const override {
    return {"interp",
            "interp",
            "reference interpreter (exact Tile semantics, slow)",
            {{"threads", "1"}}};
  }
  std::unique_ptr<Executable> compile(const tile::BoundProgram &program, const CompileOptions &) override {
    return std::make_unique<InterpExecutable>(program);
  }
};

} // namespace

std::unique_ptr<Device> make_interp_device() { return std::make_unique<InterpDevice>(); }

} // namespace tessera
