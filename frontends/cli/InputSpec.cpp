#include "frontends/cli/InputSpec.h"

#include <fstream>

#include <nlohmann/json.hpp>

#include "tile/Diagnostics.h"

namespace tessera::cli {

InputFile parse_input_file(const std::string &argument) {
  size_t eq = argument.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == argument.size())
    throw tile::Error("tessera: error: malformed --in '" + argument + "': expected NAME=FILE.npy");
  return {argument.substr(0, eq), argument.substr(eq + 1)};
}

namespace {

tile::TensorType parse_spec_type(const std::string &path, const std::string &name,
                                 const nlohmann::json &entry) {
  auto bad = [&](const std::string &what) {
    return tile::Error(path + ": error: input '" + name + "': " + what);
  };
  if (!entry.is_object()) throw bad("expected an object with \"dtype\" and \"shape\"");
  auto dtype = entry.find("dtype");
  if (dtype == entry.end() || !dtype->is_string()) throw bad("\"dtype\" must be a string");
  auto parsed = tile::parse_dtype(dtype->get<std::string>());
  if (!parsed) throw bad("unknown dtype '" + dtype->get<std::string>() + "'");
  auto shape = entry.find("shape");
  if (shape == entry.end() || !shape->is_array()) throw bad("\"shape\" must be an array of sizes");
  tile::TensorType type;
  type.dtype = *parsed;
  for (const auto &dim : *shape) {
    if (!dim.is_number_integer() || dim.get<int64_t>() < 0)
      throw bad("\"shape\" must hold non-negative integers, not " + dim.dump());
    type.shape.push_back(dim.get<int64_t>());
  }
  return type;
}

}  // namespace

std::map<std::string, tile::TensorType> read_spec(const std::string &path) {
  std::ifstream in(path);
  if (!in) throw tile::Error(path + ": error: cannot open file");
  nlohmann::json spec = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (spec.is_discarded()) throw tile::Error(path + ": error: not valid JSON");
  if (!spec.is_object())
    throw tile::Error(path + ": error: expected a JSON object with \"inputs\"");
  auto inputs = spec.find("inputs");
  if (inputs == spec.end() || !inputs->is_object())
    throw tile::Error(path + ": error: expected an \"inputs\" object mapping names to types");
  std::map<std::string, tile::TensorType> types;
  for (const auto &[name, entry] : inputs->items())
    types[name] = parse_spec_type(path, name, entry);
  return types;
}

}  // namespace tessera::cli
