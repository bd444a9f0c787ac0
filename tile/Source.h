// Source text of a Tile program and positions within it, for diagnostics.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace tessera::tile {

/// A half-open byte range [begin, end) in a SourceFile. An empty range (begin == end == 0 and no
/// file) means "no location" (programs built with the EDSL).
struct SourceRange {
  uint32_t begin = 0;
  uint32_t end = 0;
  bool operator==(const SourceRange &) const = default;
};

struct LineCol {
  int line = 0;    // 1-based
  int column = 0;  // 1-based, in bytes
};

class SourceFile {
 public:
  SourceFile(std::string name, std::string text) : name_(std::move(name)), text_(std::move(text)) {}

  const std::string &name() const { return name_; }
  const std::string &text() const { return text_; }
  LineCol line_col(uint32_t offset) const;
  /// The whole line that holds `offset`, without its newline.
  std::string line_text(uint32_t offset) const;

 private:
  std::string name_;
  std::string text_;
};

using SourcePtr = std::shared_ptr<const SourceFile>;

/// Reads a file; throws tile::Error naming the file when it cannot be read.
SourcePtr read_source_file(const std::string &path);

}  // namespace tessera::tile
