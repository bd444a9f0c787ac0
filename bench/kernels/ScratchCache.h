// The kernel cache file the tuned benchmarks tune into: one per process, removed first, so a tuned
// figure never comes from an earlier run's cache (later repetitions of one run find it there).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace tessera::bench {

inline std::string scratch_cache() {
  static const std::string path = [] {
    auto p = std::filesystem::temp_directory_path() /
             ("tessera-bench-" + std::to_string(::getpid()) + ".db");
    std::filesystem::remove(p);
    return p.string();
  }();
  return path;
}

}  // namespace tessera::bench
