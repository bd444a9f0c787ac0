#include "runtime/SharedCache.h"

#include <iostream>
#include <map>
#include <memory>
#include <mutex>

#include "runtime/KernelCache.h"

namespace tessera {

std::string cache_path(const CompileOptions &options) {
  return options.cache_path ? *options.cache_path : KernelCache::default_path();
}

KernelCache *shared_cache(const std::string &path) {
  static std::mutex mutex;
  static auto *open = new std::map<std::string, std::unique_ptr<KernelCache>>;  // lives to the end
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = open->find(path); it != open->end()) return it->second.get();
  std::unique_ptr<KernelCache> cache;
  try {
    cache = KernelCache::open(path);
  } catch (const std::exception &e) {
    std::cerr << "tessera: warning: running without a kernel cache: " << e.what() << "\n";
  }
  return ((*open)[path] = std::move(cache)).get();
}

}  // namespace tessera
