// .npy reading and writing: byte-exact agreement with numpy's np.save, round trips of every
// dtype, the 2.0 and 3.0 header formats, and one test per error message.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "runtime/Npy.h"
#include "tile/Diagnostics.h"

namespace tessera {
namespace {

using tile::DType;

// Builds a .npy file: magic, version, header length, the header padded to 64 bytes, then data.
std::string npy_file(const std::string &dict, std::string_view data, int major = 1) {
  size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < prefix - 8; ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + std::string(data);
}

std::string header(const std::string &descr, const std::string &shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + shape + ", }";
}

std::string error_of(std::string_view bytes, const std::string &name = "a.npy") {
  try {
    decode_npy(bytes, name);
  } catch (const tile::Error &e) {
    return e.what();
  }
  return "no error";
}

TEST(NpyTest, EncodesExactlyAsNumpySavesFloat32Matrix) {
  // np.save(f, np.arange(6, dtype='<f4').reshape(2, 3)): 152 bytes.
  HostTensor t(tile::TensorType{DType::Float32, {2, 3}});
  for (int i = 0; i < 6; ++i) t.as<float>()[i] = static_cast<float>(i);
  std::string bytes = encode_npy(t);
  ASSERT_EQ(bytes.size(), 152u);
  EXPECT_EQ(bytes.substr(0, 10), std::string("\x93NUMPY\x01\x00v\x00", 10));
  EXPECT_EQ(bytes.substr(10, 59), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  EXPECT_EQ(bytes[127], '\n');
  float expected[6] = {0, 1, 2, 3, 4, 5};
  EXPECT_EQ(std::memcmp(bytes.data() + 128, expected, sizeof expected), 0);
}

TEST(NpyTest, EncodesScalarsAndVectorsAsNumpyDoes) {
  HostTensor scalar(tile::TensorType{DType::Float64, {}});
  scalar.as<double>()[0] = 3.5;
  std::string s = encode_npy(scalar);
  ASSERT_EQ(s.size(), 136u);  // np.save(f, np.array(3.5))
  EXPECT_EQ(s.substr(10, 55), "{'descr': '<f8', 'fortran_order': False, 'shape': (), }");

  HostTensor flags(tile::TensorType{DType::Bool, {3}});
  flags.as<uint8_t>()[0] = 1;
  flags.as<uint8_t>()[2] = 1;
  std::string b = encode_npy(flags);
  ASSERT_EQ(b.size(), 131u);  // np.save(f, np.array([True, False, True]))
  EXPECT_EQ(b.substr(10, 57), "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }");
  EXPECT_EQ(b.substr(128), std::string("\x01\x00\x01", 3));
}

TEST(NpyTest, RoundTripsEveryDtype) {
  const DType all[] = {DType::Bool,   DType::Int8,    DType::Int16,   DType::Int32,
                       DType::Int64,  DType::UInt8,   DType::UInt16,  DType::UInt32,
                       DType::UInt64, DType::Float16, DType::Float32, DType::Float64};
  for (DType dtype : all) {
    SCOPED_TRACE(std::string(tile::dtype_name(dtype)));
    HostTensor t(tile::TensorType{dtype, {2, 3, 1}});
    for (size_t i = 0; i < t.bytes(); ++i)
      t.data()[i] = std::byte(dtype == DType::Bool ? i % 2 : (i * 37 + 11) % 256);
    HostTensor back = decode_npy(encode_npy(t), "x.npy");
    EXPECT_EQ(back.type(), t.type());
    ASSERT_EQ(back.bytes(), t.bytes());
    EXPECT_EQ(std::memcmp(back.data(), t.data(), t.bytes()), 0);
  }
}

TEST(NpyTest, ReadsEveryDescrNumpyWrites) {
  const std::pair<const char *, DType> descrs[] = {
      {"|b1", DType::Bool},    {"|i1", DType::Int8},    {"<i1", DType::Int8},
      {"<i2", DType::Int16},   {"<i4", DType::Int32},   {"<i8", DType::Int64},
      {"|u1", DType::UInt8},   {"<u1", DType::UInt8},   {"<u2", DType::UInt16},
      {"<u4", DType::UInt32},  {"<u8", DType::UInt64},  {"<f2", DType::Float16},
      {"<f4", DType::Float32}, {"<f8", DType::Float64},
  };
  for (auto [descr, dtype] : descrs) {
    SCOPED_TRACE(descr);
    std::string data(2 * tile::dtype_size(dtype), '\0');
    HostTensor t = decode_npy(npy_file(header(descr, "(2,)"), data), "x.npy");
    EXPECT_EQ(t.type(), (tile::TensorType{dtype, {2}}));
  }
}

TEST(NpyTest, ReadsVersion2And3Headers) {
  // np.lib.format.write_array(f, np.arange(3, dtype='<i2'), version=(2, 0)) and (3, 0).
  for (int major : {2, 3}) {
    std::string data("\x00\x00\x01\x00\x02\x00", 6);
    HostTensor t = decode_npy(npy_file(header("<i2", "(3,)"), data, major), "x.npy");
    ASSERT_EQ(t.type(), (tile::TensorType{DType::Int16, {3}}));
    EXPECT_EQ(t.as<int16_t>()[0], 0);
    EXPECT_EQ(t.as<int16_t>()[2], 2);
  }
}

TEST(NpyTest, AcceptsPython2LongsAndKeysInAnyOrder) {
  std::string dict = "{'shape': (2L, 1L), 'fortran_order': False, 'descr': '<u2'}";
  HostTensor t = decode_npy(npy_file(dict, std::string(4, '\x07')), "x.npy");
  EXPECT_EQ(t.type(), (tile::TensorType{DType::UInt16, {2, 1}}));
  EXPECT_EQ(t.as<uint16_t>()[1], 0x0707);
}

TEST(NpyTest, NormalizesBoolBytes) {
  HostTensor t =
      decode_npy(npy_file(header("|b1", "(3,)"), std::string("\x00\x05\x01", 3)), "x.npy");
  EXPECT_EQ(t.as<uint8_t>()[0], 0);
  EXPECT_EQ(t.as<uint8_t>()[1], 1);
  EXPECT_EQ(t.as<uint8_t>()[2], 1);
}

TEST(NpyTest, FortranOrderIsAcceptedWhereTheLayoutIsTheSame) {
  HostTensor t =
      decode_npy(npy_file(header("<f4", "(1, 3)", true), std::string(12, '\0')), "x.npy");
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{1, 3}));
}

TEST(NpyTest, RejectsFortranOrder) {
  EXPECT_EQ(
      error_of(npy_file(header("<f4", "(2, 3)", true), std::string(24, '\0'))),
      "a.npy: error: Fortran-order arrays are not supported (save with np.ascontiguousarray)");
}

TEST(NpyTest, RejectsTruncatedData) {
  EXPECT_EQ(error_of(npy_file(header("<f8", "(3, 4)"), std::string(40, '\0'))),
            "a.npy: error: truncated file: expected 96 bytes of data, found 40");
}

TEST(NpyTest, RejectsTrailingData) {
  EXPECT_EQ(error_of(npy_file(header("<f4", "(2,)"), std::string(9, '\0'))),
            "a.npy: error: unexpected data after the array: expected 8 bytes of data, found 9");
}

TEST(NpyTest, RejectsTruncatedHeader) {
  std::string file = npy_file(header("<f4", "(2,)"), std::string(8, '\0'));
  EXPECT_EQ(error_of(file.substr(0, 40)),
            "a.npy: error: truncated file: the .npy header is incomplete");
  EXPECT_EQ(error_of(file.substr(0, 8)),
            "a.npy: error: truncated file: the .npy header is incomplete");
}

TEST(NpyTest, RejectsUnsupportedDtypesByName) {
  EXPECT_EQ(error_of(npy_file(header("<c8", "(2,)"), std::string(16, '\0'))),
            "a.npy: error: unsupported dtype '<c8' (complex64)");
  EXPECT_EQ(error_of(npy_file(header("<U3", "(1,)"), std::string(12, '\0'))),
            "a.npy: error: unsupported dtype '<U3' (unicode string)");
  EXPECT_EQ(error_of(npy_file(header("|O", "(1,)"), std::string(8, '\0'))),
            "a.npy: error: unsupported dtype '|O' (object)");
  std::string structured =
      "{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, 'shape': (1,), }";
  EXPECT_EQ(error_of(npy_file(structured, std::string(8, '\0'))),
            "a.npy: error: unsupported dtype: structured arrays are not supported");
}

TEST(NpyTest, RejectsBigEndian) {
  EXPECT_EQ(error_of(npy_file(header(">f4", "(2,)"), std::string(8, '\0'))),
            "a.npy: error: big-endian arrays are not supported (dtype '>f4'; save with "
            "arr.astype('<f4'))");
}

TEST(NpyTest, RejectsFilesThatAreNotNpy) {
  EXPECT_EQ(error_of("PK\x03\x04 a zip file, perhaps .npz"), "a.npy: error: not a .npy file");
  EXPECT_EQ(error_of(""), "a.npy: error: not a .npy file");
}

TEST(NpyTest, RejectsUnknownVersions) {
  std::string file = npy_file(header("<f4", "(2,)"), std::string(8, '\0'));
  file[6] = 4;
  EXPECT_EQ(error_of(file), "a.npy: error: unsupported .npy format version 4.0");
}

TEST(NpyTest, RejectsBadHeaders) {
  EXPECT_EQ(
      error_of(npy_file("{'descr': '<f4', 'shape': (2,), }", std::string(8, '\0'))),
      "a.npy: error: bad .npy header: it needs the keys 'descr', 'fortran_order' and 'shape'");
  EXPECT_EQ(error_of(npy_file(header("<f4", "(2,)") + " extra", std::string(8, '\0'))),
            "a.npy: error: bad .npy header: unexpected text after the dictionary in "
            "\"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } extra\"");
  EXPECT_EQ(error_of(npy_file(header("<f4", "(2, 'x')"), std::string(8, '\0'))),
            "a.npy: error: bad .npy header: 'shape' holds a non-integer");
  EXPECT_EQ(error_of(npy_file(header("<f4", "[2]"), std::string(8, '\0'))),
            "a.npy: error: bad .npy header: 'shape' is not a tuple");
  EXPECT_EQ(error_of(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,", "")),
            "a.npy: error: bad .npy header: unexpected end of header in "
            "\"{'descr': '<f4', 'fortran_order': False, 'shape': (2,\"");
}

class NpyFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tessera-npy-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(NpyFileTest, WritesThenReadsAFileLeavingNoTemporaryFile) {
  HostTensor t(tile::TensorType{DType::Int32, {4}});
  for (int i = 0; i < 4; ++i) t.as<int32_t>()[i] = -i;
  std::string path = (dir_ / "t.npy").string();
  write_npy(path, t);
  HostTensor back = read_npy(path);
  EXPECT_EQ(back.type(), t.type());
  EXPECT_EQ(back.as<int32_t>()[3], -3);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_), {}), 1);
  // Permissions follow the umask, as np.save's would, not mkstemp's private 0600.
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);
}

TEST_F(NpyFileTest, FailedWriteLeavesTheOldFileAndNoTemporary) {
  std::string path = (dir_ / "missing-dir" / "t.npy").string();
  HostTensor t(tile::TensorType{DType::Float32, {1}});
  try {
    write_npy(path, t);
    FAIL() << "no error";
  } catch (const tile::Error &e) {
    EXPECT_EQ(std::string(e.what()),
              path + ": error: cannot write file: No such file or directory");
  }
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_), {}), 0);
}

TEST_F(NpyFileTest, ReadErrorsNameTheFile) {
  std::string path = (dir_ / "nope.npy").string();
  try {
    read_npy(path);
    FAIL() << "no error";
  } catch (const tile::Error &e) {
    EXPECT_EQ(std::string(e.what()), path + ": error: cannot open file: No such file or directory");
  }
  std::string bad = (dir_ / "bad.npy").string();
  std::ofstream(bad) << "not numpy";
  try {
    read_npy(bad);
    FAIL() << "no error";
  } catch (const tile::Error &e) {
    EXPECT_EQ(std::string(e.what()), bad + ": error: not a .npy file");
  }
}

}  // namespace
}  // namespace tessera
