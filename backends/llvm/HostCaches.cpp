#include "backends/llvm/HostCaches.h"

#include <fstream>
#include <string>

namespace tessera::llvm_backend {

namespace {

std::string read_line(const std::string &path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}

// "48K", "2048K", "16M" -> bytes; 0 when unreadable.
int64_t parse_size(const std::string &s) {
  if (s.empty()) return 0;
  int64_t n = 0;
  size_t i = 0;
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i)
    n = n * 10 + (s[i] - '0');
  if (i < s.size() && s[i] == 'K')
    n <<= 10;
  else if (i < s.size() && s[i] == 'M')
    n <<= 20;
  return n;
}

}  // namespace

const HostCaches &host_caches() {
  static const HostCaches caches = [] {
    HostCaches c;
    for (int i = 0; i < 8; ++i) {
      std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
      std::string level = read_line(dir + "level"), type = read_line(dir + "type");
      int64_t size = parse_size(read_line(dir + "size"));
      if (level.empty() || size == 0) continue;
      if (level == "1" && type == "Data")
        c.l1d_bytes = size;
      else if (level == "2")
        c.l2_bytes = size;
      else if (level == "3")
        c.l3_bytes = size;
    }
    return c;
  }();
  return caches;
}

}  // namespace tessera::llvm_backend
