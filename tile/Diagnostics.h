// User-facing errors (`file:line:col: error: message` with the line and a caret) and internal
// assertions. User errors are exceptions the CLI prints; internal ones mean a Tessera bug.
#pragma once

#include <stdexcept>
#include <string>

#include "tile/Source.h"

namespace tessera::tile {

/// An error in the user's program or input. what() is the complete, printable message.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string &message) : std::runtime_error(message) {}
};

/// Formats "file:line:col: error: message", the source line and `^~~~` under `range`.
/// Without a source (EDSL programs) it is just "error: message".
std::string format_diagnostic(const SourcePtr &source, SourceRange range,
                              const std::string &message);

/// Throws tile::Error with format_diagnostic's text.
[[noreturn]] void user_error(const SourcePtr &source, SourceRange range,
                             const std::string &message);

[[noreturn]] void internal_error(const char *file, int line, const std::string &message);

}  // namespace tessera::tile

#define TESSERA_INTERNAL_ASSERT(cond, msg)                                                  \
  do {                                                                                      \
    if (!(cond))                                                                            \
      ::tessera::tile::internal_error(__FILE__, __LINE__, std::string(#cond ": ") + (msg)); \
  } while (0)
