// Reading and writing numpy .npy files (versions 1.0-3.0, C order, little-endian) as HostTensors.
#pragma once

#include <string>
#include <string_view>

#include "runtime/HostTensor.h"

namespace tessera {

/// Reads `path`. Throws tile::Error "PATH: error: ..." for a file that cannot be read, is not a
/// .npy file, has a bad header, is truncated, is Fortran-ordered or big-endian, or holds a dtype
/// Tessera does not have (complex, strings, objects, structured arrays).
HostTensor read_npy(const std::string &path);

/// Decodes the bytes of a .npy file; `name` is the file name used in error messages.
HostTensor decode_npy(std::string_view bytes, const std::string &name);

/// The bytes of a .npy file holding `tensor`: format 1.0, or 2.0 when the header needs it.
std::string encode_npy(const HostTensor &tensor);

/// Writes `tensor` to `path` safely (runtime/FileBatch.h): `path` never holds a partial file.
void write_npy(const std::string &path, const HostTensor &tensor);

}  // namespace tessera
