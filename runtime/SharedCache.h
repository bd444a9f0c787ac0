// The kernel cache file a compile uses, opened once per process and shared by every device and
// every compile: one location rule (CompileOptions::cache_path, else KernelCache::default_path()).
#pragma once

#include <string>

#include "runtime/CompileOptions.h"

namespace tessera {

class KernelCache;

/// The file a compile with `options` uses.
std::string cache_path(const CompileOptions &options);

/// The kernel cache at `path`, opened on first use in this process; null when it cannot be opened
/// (reported once per file: runs go on without a cache).
KernelCache *shared_cache(const std::string &path);

}  // namespace tessera
