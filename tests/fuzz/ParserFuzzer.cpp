// libFuzzer target for the Tile front end: any input must parse or fail with tile::Error.
// Anything else escaping (std::logic_error from an internal assertion, a sanitizer report, a
// hang) is a bug. A program that parses must also survive print -> parse unchanged.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "tile/Diagnostics.h"
#include "tile/Parser.h"
#include "tile/Printer.h"

namespace {

void check_round_trip(const tessera::tile::Program &program) {
  std::string printed = tessera::tile::print_program(program);
  tessera::tile::Program reparsed;
  try {
    reparsed = tessera::tile::parse_program(printed, "<printed>");
  } catch (const tessera::tile::Error &e) {
    // The printer wrote text the parser rejects: report it as a crash with both texts.
    TESSERA_INTERNAL_ASSERT(false, "printed program does not parse:\n" + printed + "\n" + e.what());
  }
  TESSERA_INTERNAL_ASSERT(tessera::tile::structurally_equal(program, reparsed),
                          "parse(print(p)) differs from p:\n" + printed);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto source = std::make_shared<const tessera::tile::SourceFile>(
      "<fuzz>", std::string(reinterpret_cast<const char *>(data), size));
  tessera::tile::Program program;
  try {
    program = tessera::tile::parse_program(source);
  } catch (const tessera::tile::Error &) {
    return 0;  // a diagnosed user error is the expected outcome for most inputs
  }
  check_round_trip(program);
  return 0;
}
