#include "runtime/Npy.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <vector>

#include "runtime/FileBatch.h"
#include "tile/Diagnostics.h"

namespace tessera {

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

[[noreturn]] void fail(const std::string &file, const std::string &message) {
  throw tile::Error(file + ": error: " + message);
}

// A value of the header, which is a Python literal: a dict of strings, booleans, integers and
// tuples. Lists appear only in the descr of structured arrays, which we reject by name.
struct PyValue {
  enum class Kind { Str, Bool, Int, Tuple, List };
  Kind kind = Kind::Int;
  std::string str;
  bool boolean = false;
  int64_t integer = 0;
  std::vector<PyValue> items;
};

class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string &file) : text_(text), file_(file) {}

  std::vector<std::pair<std::string, PyValue>> parse_dict() {
    std::vector<std::pair<std::string, PyValue>> entries;
    expect('{');
    while (!accept('}')) {
      PyValue key = parse_value();
      if (key.kind != PyValue::Kind::Str) bad("dictionary keys must be strings");
      expect(':');
      entries.emplace_back(key.str, parse_value());
      if (accept('}')) break;
      expect(',');
    }
    skip_space();
    // numpy pads the header with spaces and ends it with a newline; nothing else may follow.
    if (pos_ != text_.size()) bad("unexpected text after the dictionary");
    return entries;
  }

 private:
  PyValue parse_value() {
    skip_space();
    if (pos_ >= text_.size()) bad("unexpected end of header");
    char c = text_[pos_];
    if (c == '\'' || c == '"') return parse_string(c);
    if (c == '(' || c == '[') return parse_sequence(c);
    if (c >= '0' && c <= '9') return parse_int();
    for (auto [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      if (text_.substr(pos_, std::strlen(word)) == word) {
        pos_ += std::strlen(word);
        PyValue v;
        v.kind = PyValue::Kind::Bool;
        v.boolean = value;
        return v;
      }
    }
    bad(std::string("unexpected character '") + c + "'");
  }

  PyValue parse_string(char quote) {
    PyValue v;
    v.kind = PyValue::Kind::Str;
    ++pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
      v.str += text_[pos_++];
    }
    if (pos_ >= text_.size()) bad("unterminated string");
    ++pos_;
    return v;
  }

  PyValue parse_int() {
    PyValue v;
    v.kind = PyValue::Kind::Int;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      int digit = text_[pos_++] - '0';
      if (v.integer > (std::numeric_limits<int64_t>::max() - digit) / 10) bad("integer too large");
      v.integer = v.integer * 10 + digit;
    }
    if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;  // Python 2 longs: (3L, 4L)
    return v;
  }

  PyValue parse_sequence(char open) {
    PyValue v;
    v.kind = open == '(' ? PyValue::Kind::Tuple : PyValue::Kind::List;
    char close = open == '(' ? ')' : ']';
    ++pos_;
    while (!accept(close)) {
      v.items.push_back(parse_value());
      if (accept(close)) break;
      expect(',');
    }
    return v;
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\t' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!accept(c)) bad(std::string("expected '") + c + "'");
  }
  [[noreturn]] void bad(const std::string &what) {
    fail(file_, "bad .npy header: " + what + " in \"" +
                    std::string(text_.substr(0, text_.find_last_not_of(" \n") + 1)) + "\"");
  }

  std::string_view text_;
  size_t pos_ = 0;
  const std::string &file_;
};

struct DescrCode {
  std::string_view code;
  tile::DType dtype;
};

constexpr DescrCode kCodes[] = {
    {"b1", tile::DType::Bool},    {"i1", tile::DType::Int8},    {"i2", tile::DType::Int16},
    {"i4", tile::DType::Int32},   {"i8", tile::DType::Int64},   {"u1", tile::DType::UInt8},
    {"u2", tile::DType::UInt16},  {"u4", tile::DType::UInt32},  {"u8", tile::DType::UInt64},
    {"f2", tile::DType::Float16}, {"f4", tile::DType::Float32}, {"f8", tile::DType::Float64},
};

// numpy's name for a dtype Tessera lacks, so the message says what the file holds.
std::string unsupported_dtype_name(std::string_view code) {
  static const std::pair<std::string_view, std::string_view> kNames[] = {
      {"c8", "complex64"}, {"c16", "complex128"}, {"c32", "complex256"}, {"f12", "float96"},
      {"f16", "float128"}, {"O", "object"},       {"O8", "object"},
  };
  for (auto [c, name] : kNames)
    if (code == c) return std::string(name);
  if (code.empty()) return "";
  switch (code[0]) {
    case 'U': return "unicode string";
    case 'S':
    case 'a': return "byte string";
    case 'V': return "void";
    case 'M': return "datetime64";
    case 'm': return "timedelta64";
  }
  return "";
}

tile::DType dtype_from_descr(const std::string &descr, const std::string &file) {
  std::string_view code = descr;
  char order = '|';
  if (!code.empty() && std::string_view("<>|=").find(code[0]) != std::string_view::npos) {
    order = code[0];
    code.remove_prefix(1);
  }
  for (const auto &c : kCodes) {
    if (c.code != code) continue;
    if (order == '>' && tile::dtype_size(c.dtype) > 1)
      fail(file, "big-endian arrays are not supported (dtype '" + descr +
                     "'; save with arr.astype('<" + std::string(code) + "'))");
    return c.dtype;
  }
  std::string name = unsupported_dtype_name(code);
  fail(file, "unsupported dtype '" + descr + "'" + (name.empty() ? "" : " (" + name + ")"));
}

std::string descr_of(tile::DType t) {
  for (const auto &c : kCodes)
    if (c.dtype == t) {
      std::string descr(tile::dtype_size(t) == 1 ? "|" : "<");
      return descr += c.code;
    }
  TESSERA_INTERNAL_ASSERT(false, "dtype without a .npy code");
  return "";
}

uint64_t read_le(std::string_view bytes, size_t offset, size_t width) {
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i)
    v |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[offset + i])) << (8 * i);
  return v;
}

std::string plural_bytes(uint64_t n) { return std::to_string(n) + (n == 1 ? " byte" : " bytes"); }

}  // namespace

HostTensor decode_npy(std::string_view bytes, const std::string &name) {
  if (bytes.substr(0, kMagic.size()) != kMagic) fail(name, "not a .npy file");
  if (bytes.size() < 10) fail(name, "truncated file: the .npy header is incomplete");
  int major = static_cast<unsigned char>(bytes[6]), minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    fail(name,
         "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor));
  size_t length_width = major == 1 ? 2 : 4;
  size_t header_begin = 8 + length_width;
  if (bytes.size() < header_begin) fail(name, "truncated file: the .npy header is incomplete");
  uint64_t header_length = read_le(bytes, 8, length_width);
  if (bytes.size() - header_begin < header_length)
    fail(name, "truncated file: the .npy header is incomplete");

  HeaderParser parser(bytes.substr(header_begin, header_length), name);
  std::optional<PyValue> descr, fortran, shape;
  for (auto &[key, value] : parser.parse_dict()) {
    if (key == "descr")
      descr = value;
    else if (key == "fortran_order")
      fortran = value;
    else if (key == "shape")
      shape = value;
    else
      fail(name, "bad .npy header: unexpected key '" + key + "'");
  }
  if (!descr || !fortran || !shape)
    fail(name, "bad .npy header: it needs the keys 'descr', 'fortran_order' and 'shape'");
  if (descr->kind == PyValue::Kind::List)
    fail(name, "unsupported dtype: structured arrays are not supported");
  if (descr->kind != PyValue::Kind::Str) fail(name, "bad .npy header: 'descr' is not a string");
  if (fortran->kind != PyValue::Kind::Bool)
    fail(name, "bad .npy header: 'fortran_order' is not True or False");
  if (shape->kind != PyValue::Kind::Tuple) fail(name, "bad .npy header: 'shape' is not a tuple");

  tile::TensorType type;
  type.dtype = dtype_from_descr(descr->str, name);
  uint64_t count = 1;
  int non_unit_dims = 0;
  for (const auto &dim : shape->items) {
    if (dim.kind != PyValue::Kind::Int) fail(name, "bad .npy header: 'shape' holds a non-integer");
    if (dim.integer != 0 && count > (uint64_t{1} << 48) / static_cast<uint64_t>(dim.integer))
      fail(name, "bad .npy header: the shape is too large");
    count *= static_cast<uint64_t>(dim.integer);
    non_unit_dims += dim.integer > 1;
    type.shape.push_back(dim.integer);
  }
  // With at most one dimension longer than 1, Fortran and C order lay the data out the same way.
  if (fortran->boolean && non_unit_dims > 1)
    fail(name, "Fortran-order arrays are not supported (save with np.ascontiguousarray)");

  uint64_t expected = count * tile::dtype_size(type.dtype);
  uint64_t found = bytes.size() - header_begin - header_length;
  if (found < expected)
    fail(name, "truncated file: expected " + plural_bytes(expected) + " of data, found " +
                   std::to_string(found));
  if (found > expected)
    fail(name, "unexpected data after the array: expected " + plural_bytes(expected) +
                   " of data, found " + std::to_string(found));

  HostTensor tensor(type);
  TESSERA_INTERNAL_ASSERT(tensor.bytes() == expected, "HostTensor size differs from the .npy data");
  if (expected > 0)
    std::memcpy(tensor.data(), bytes.data() + header_begin + header_length, expected);
  // numpy bools are bytes 0 and 1; keep them canonical so every device can rely on it.
  if (type.dtype == tile::DType::Bool)
    for (size_t i = 0; i < tensor.bytes(); ++i)
      tensor.data()[i] = tensor.data()[i] != std::byte{0} ? std::byte{1} : std::byte{0};
  return tensor;
}

HostTensor read_npy(const std::string &path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail(path, "is a directory, not a .npy file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, std::string("cannot open file: ") + std::strerror(errno));
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) fail(path, "cannot read file");
  return decode_npy(contents.str(), path);
}

std::string encode_npy(const HostTensor &tensor) {
  std::string header =
      "{'descr': '" + descr_of(tensor.dtype()) + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < tensor.shape().size(); ++i)
    header += (i ? ", " : "") + std::to_string(tensor.shape()[i]);
  header += tensor.shape().size() == 1 ? ",), }" : "), }";

  // Version 1.0 stores the header length in 2 bytes; 2.0 in 4. numpy aligns the data to 64 bytes.
  int major = header.size() + 1 + 10 > 0xffff ? 2 : 1;
  size_t prefix = major == 1 ? 10 : 12;
  size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';

  std::string out(kMagic);
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < prefix - 8; ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  out += header;
  out.append(reinterpret_cast<const char *>(tensor.data()), tensor.bytes());
  return out;
}

void write_npy(const std::string &path, const HostTensor &tensor) {
  write_file_atomically(path, encode_npy(tensor));
}

}  // namespace tessera
