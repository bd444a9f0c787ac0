// How `tessera run` learns its inputs: `--in NAME=FILE.npy` arguments and `--spec FILE.json`.
#pragma once

#include <map>
#include <string>

#include "tile/Bind.h"

namespace tessera::cli {

struct InputFile {
  std::string name;
  std::string path;
};

/// Splits `NAME=FILE.npy`; throws tile::Error for any other form.
InputFile parse_input_file(const std::string &argument);

/// Reads the inputs of a spec in the corpus format,
/// `{"inputs": {"A": {"dtype": "float32", "shape": [2, 3]}}, "outputs": {...}}`; other keys are
/// ignored. Throws tile::Error "PATH: error: ..." for a file that is not such JSON.
std::map<std::string, tile::TensorType> read_spec(const std::string &path);

}  // namespace tessera::cli
