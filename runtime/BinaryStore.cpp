#include "runtime/BinaryStore.h"

#include <iostream>
#include <mutex>

#include "runtime/KernelCache.h"

namespace tessera {

BinaryStore::BinaryStore(KernelCache &cache, std::string device_fingerprint)
    : cache_(cache), device_(std::move(device_fingerprint)) {}

std::optional<std::string> BinaryStore::find(const std::string &kind, const std::string &key_text) {
  try {
    return cache_.find_binary(kind, key_text, device_, TESSERA_VERSION);
  } catch (const std::exception &) {
    return std::nullopt;
  }
}

const std::string &BinaryStore::path() const { return cache_.path(); }

void BinaryStore::store(const std::string &kind, const std::string &key_text,
                        const std::string &bytes) {
  try {
    cache_.store_binary(kind, key_text, device_, TESSERA_VERSION, bytes);
  } catch (const std::exception &e) {
    static std::once_flag warned;
    std::call_once(warned, [&] {
      std::cerr << "tessera: warning: could not store compiled code in " << cache_.path() << ": "
                << e.what() << "\n";
    });
  }
}

}  // namespace tessera
