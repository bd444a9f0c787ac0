#include "tile/Diagnostics.h"

#include <algorithm>

namespace tessera::tile {

std::string format_diagnostic(const SourcePtr &source, SourceRange range,
                              const std::string &message) {
  if (!source) return "error: " + message;
  LineCol lc = source->line_col(range.begin);
  std::string out = source->name() + ":" + std::to_string(lc.line) + ":" +
                    std::to_string(lc.column) + ": error: " + message + "\n";
  std::string line = source->line_text(range.begin);
  out += line + "\n";
  // The caret line copies tabs so that it lines up under the source line.
  std::string caret;
  for (int i = 0; i < lc.column - 1 && i < static_cast<int>(line.size()); ++i)
    caret += line[i] == '\t' ? '\t' : ' ';
  caret += '^';
  size_t line_end = static_cast<size_t>(lc.column - 1) + 0;
  size_t width = range.end > range.begin ? range.end - range.begin : 1;
  width = std::min(width, line.size() > line_end ? line.size() - line_end : size_t{1});
  for (size_t i = 1; i < width; ++i) caret += '~';
  out += caret;
  return out;
}

void user_error(const SourcePtr &source, SourceRange range, const std::string &message) {
  throw Error(format_diagnostic(source, range, message));
}

void internal_error(const char *file, int line, const std::string &message) {
  throw std::logic_error(std::string("internal error (a Tessera bug) at ") + file + ":" +
                         std::to_string(line) + ": " + message);
}

}  // namespace tessera::tile
