// How `tessera run` learns its inputs: `--in NAME=FILE.npy` arguments and `--spec FILE.json`.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tile/Bind.h"
#include "tile/Program.h"

namespace tessera::cli {

struct InputFile {
  std::string name;
  std::string path;
};

/// Splits `NAME=FILE.npy`; throws tile::Error for any other form.
InputFile parse_input_file(const std::string &argument);

/// Parses `--in NAME=DTYPE[D0,D1,...]` of `lower` and `tune` ("A=f32[2,3]", "A=float32[2, 3]",
/// "S=f32[]" for a scalar); throws tile::Error for any other form.
std::pair<std::string, tile::TensorType> parse_typed_input(const std::string &arg);

/// The input types of `lower` and `tune`: the spec's (when `spec` is not empty), then each
/// `--in NAME=DTYPE[...]`, which must name an input of `program` (read from `path`).
std::map<std::string, tile::TensorType> typed_inputs(const tile::Program &program,
                                                     const std::string &path,
                                                     const std::string &spec,
                                                     const std::vector<std::string> &ins);

/// Reads the inputs of a spec in the corpus format,
/// `{"inputs": {"A": {"dtype": "float32", "shape": [2, 3]}}, "outputs": {...}}`; other keys are
/// ignored. Throws tile::Error "PATH: error: ..." for a file that is not such JSON.
std::map<std::string, tile::TensorType> read_spec(const std::string &path);

}  // namespace tessera::cli
