// The device-independent part of running a lowered program on the OpenCL and Vulkan devices:
// checking and uploading inputs, host steps through the interpreter, collecting outputs.
#pragma once

#include <functional>
#include <string>

#include "runtime/Device.h"
#include "tile/Bind.h"

namespace tessera::clike {

/// How a device moves a whole tensor between the host and the buffer of the same name.
struct BufferIO {
  std::function<void(const std::string &buffer, const HostTensor &from)> write;
  std::function<void(const std::string &buffer, HostTensor &to)> read;
};

/// Checks that `inputs` holds every input of `program` with its bound type (tile::Error if not) and
/// writes each to its buffer.
void write_inputs(const tile::BoundProgram &program, const TensorMap &inputs, const BufferIO &io);

/// A statement the compiler left to the host: evaluated by the interpreter on the tensors it reads
/// (read from their buffers), its result written to its buffer. `timer` times the evaluation as the
/// host step; the transfers are the BufferIO's to time.
void run_host_step(const tile::BoundProgram &program, const std::string &statement, const BufferIO &io,
                   StepTimer &timer);

/// The program's outputs: an output that is an input is passed through, the others read.
TensorMap read_outputs(const tile::BoundProgram &program, const TensorMap &inputs, const BufferIO &io);

}  // namespace tessera::clike
