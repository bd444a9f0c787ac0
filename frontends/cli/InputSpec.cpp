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

[[noreturn]] void fail_typed(const std::string &message) {
  throw tile::Error("tessera: error: " + message);
}

}  // namespace

std::pair<std::string, tile::TensorType> parse_typed_input(const std::string &arg) {
  auto eq = arg.find('='), open = arg.find('['), close = arg.rfind(']');
  if (eq == std::string::npos || open == std::string::npos || close != arg.size() - 1 || open < eq)
    fail_typed("--in expects NAME=DTYPE[D0,D1,...], e.g. A=f32[2,3]; got '" + arg + "'");
  std::string name = arg.substr(0, eq), dtype = arg.substr(eq + 1, open - eq - 1);
  auto t = tile::parse_dtype(dtype);
  if (!t) fail_typed("--in '" + arg + "': unknown dtype '" + dtype + "'");
  tile::TensorType type{*t, {}};
  std::string dims = arg.substr(open + 1, close - open - 1), cur;
  for (char ch : dims + ",") {
    if (ch == ' ') continue;
    if (ch != ',') {
      cur += ch;
      continue;
    }
    if (cur.empty() && dims.find_first_not_of(' ') == std::string::npos) break;
    try {
      size_t used = 0;
      long long v = std::stoll(cur, &used);
      if (used != cur.size() || v < 0) throw std::invalid_argument(cur);
      type.shape.push_back(v);
    } catch (const std::exception &) {
      fail_typed("--in '" + arg + "': '" + cur + "' is not a dimension size");
    }
    cur.clear();
  }
  return {name, type};
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

std::map<std::string, tile::TensorType> typed_inputs(const tile::Program &program,
                                                     const std::string &path,
                                                     const std::string &spec,
                                                     const std::vector<std::string> &ins) {
  std::map<std::string, tile::TensorType> inputs;
  if (!spec.empty()) inputs = read_spec(spec);
  for (const auto &arg : ins) {
    auto [name, type] = parse_typed_input(arg);
    if (!program.find_input(name))
      fail_typed("--in names '" + name + "', which is not an input of " + path);
    inputs[name] = type;
  }
  return inputs;
}

}  // namespace tessera::cli
