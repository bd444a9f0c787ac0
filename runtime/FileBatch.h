// Writing files all or nothing, so that a reader never sees a partial file or half of a result set.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera {

/// A set of files published together. add() writes each file's bytes to a new temporary file in
/// the destination's directory (so the final rename stays within one file system); commit()
/// renames them all into place. Temporary files that were never committed are removed when the
/// batch dies, so an error thrown between add() and commit() leaves no trace.
class FileBatch {
 public:
  FileBatch() = default;
  FileBatch(const FileBatch &) = delete;
  FileBatch &operator=(const FileBatch &) = delete;
  ~FileBatch();

  /// Throws tile::Error "PATH: error: cannot write file: ..." when the temporary file fails.
  void add(const std::string &path, std::string_view bytes);
  /// Throws tile::Error naming the file whose rename failed; then every file of the batch is as it
  /// was before (files already renamed into place are taken back, the ones they replaced restored).
  void commit();

 private:
  std::vector<std::pair<std::string, std::string>> staged_;  // (temporary, destination)
};

/// Writes one file through a FileBatch.
void write_file_atomically(const std::string &path, std::string_view bytes);

}  // namespace tessera
