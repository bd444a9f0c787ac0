#include "runtime/FileBatch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "tile/Diagnostics.h"

namespace tessera {

namespace {

[[noreturn]] void fail_write(const std::string &path, int err) {
  throw tile::Error(path + ": error: cannot write file: " + std::strerror(err));
}

}  // namespace

FileBatch::~FileBatch() {
  for (const auto &[temp, path] : staged_) ::unlink(temp.c_str());
}

void FileBatch::add(const std::string &path, std::string_view bytes) {
  std::filesystem::path target(path);
  std::filesystem::path dir = target.parent_path().empty() ? "." : target.parent_path();
  std::string name = ".";
  name += target.filename().string();
  name += ".tmp-XXXXXX";
  std::string temp = (dir / name).string();
  int fd = ::mkstemp(temp.data());
  if (fd < 0) fail_write(path, errno);
  staged_.emplace_back(temp, path);
  // mkstemp makes the file private to its owner; give it the permissions a plain open() would.
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      ::close(fd);
      fail_write(path, err);
    }
    written += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) fail_write(path, errno);
}

// All or nothing: a file already in place is moved aside first, so that a rename that fails
// (a directory where a file should go) can be undone for every file before it.
void FileBatch::commit() {
  struct Published {
    std::string path, old;  // `old`: where the file it replaced waits; "" when there was none
  };
  std::vector<Published> done;
  auto undo = [&] {
    for (auto it = done.rbegin(); it != done.rend(); ++it) {
      if (it->old.empty())
        ::unlink(it->path.c_str());
      else
        std::rename(it->old.c_str(), it->path.c_str());
    }
  };
  for (const auto &[temp, path] : staged_) {
    struct stat st;
    std::string old;
    if (::lstat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
      old = temp + ".old";
      if (std::rename(path.c_str(), old.c_str()) != 0) {
        int err = errno;
        undo();
        fail_write(path, err);
      }
    }
    if (std::rename(temp.c_str(), path.c_str()) != 0) {
      int err = errno;
      if (!old.empty()) std::rename(old.c_str(), path.c_str());
      undo();
      fail_write(path, err);
    }
    done.push_back({path, old});
  }
  for (const auto &p : done)
    if (!p.old.empty()) ::unlink(p.old.c_str());
  staged_.clear();
}

void write_file_atomically(const std::string &path, std::string_view bytes) {
  FileBatch batch;
  batch.add(path, bytes);
  batch.commit();
}

}  // namespace tessera
