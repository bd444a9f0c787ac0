#include "tile/Source.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tile/Diagnostics.h"

namespace tessera::tile {

LineCol SourceFile::line_col(uint32_t offset) const {
  LineCol lc{1, 1};
  for (uint32_t i = 0; i < offset && i < text_.size(); ++i) {
    if (text_[i] == '\n') {
      ++lc.line;
      lc.column = 1;
    } else {
      ++lc.column;
    }
  }
  return lc;
}

std::string SourceFile::line_text(uint32_t offset) const {
  if (offset > text_.size()) offset = static_cast<uint32_t>(text_.size());
  size_t begin = text_.rfind('\n', offset == 0 ? std::string::npos : offset - 1);
  begin = (begin == std::string::npos || (offset > 0 && begin >= offset)) ? 0 : begin + 1;
  if (offset == 0) begin = 0;
  size_t end = text_.find('\n', offset);
  if (end == std::string::npos) end = text_.size();
  return text_.substr(begin, end - begin);
}

SourcePtr read_source_file(const std::string &path) {
  // An ifstream opens a directory and reads nothing from it.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error(path + ": error: is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": error: cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return std::make_shared<SourceFile>(path, ss.str());
}

}  // namespace tessera::tile
