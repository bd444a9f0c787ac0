// The persistent kernel cache: tuned schedules and compiled binaries in one SQLite file, shared
// safely by concurrent processes (docs/kernel-cache.md).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

struct sqlite3;

namespace tessera {

struct CacheKey {
  std::string kernel;   // canonical kernel text; the cache stores it and keys by a stable 128-bit
                        // hex hash of it
  std::string device;   // device fingerprint (backend, vendor, name, driver, compute units, ISA...)
                        // as one string
  std::string version;  // Tessera version (the TESSERA_VERSION compile definition, e.g. "0.1.0")
};

struct CacheEntry {
  std::string kernel_hash;      // filled by the cache
  std::string kernel_name;      // for listings
  std::string device, version;  // filled by the cache from the key on find/list
  std::string schedule;         // Schedule::to_json()
  double seconds = 0;           // tuned median time
  double untuned_seconds = 0;
  int trials = 0;
  double flops = 0;
  int64_t created = 0;  // unix seconds, filled by store
};

class KernelCache {
 public:
  /// Opens or creates the SQLite file (parent directories created). A corrupt, truncated, foreign
  /// or newer-schema file is reported ONCE on stderr ("tessera: warning: kernel cache FILE ...
  /// (why); moved aside to FILE.bad-N") and replaced by a fresh one; never throws for a bad file.
  /// Throws tile::Error only when no cache can be opened at all (e.g. unwritable directory) —
  /// callers then run without a cache.
  static std::unique_ptr<KernelCache> open(const std::string &path);
  /// $TESSERA_CACHE, else $XDG_CACHE_HOME/tessera/cache.db, else $HOME/.cache/tessera/cache.db.
  static std::string default_path();
  /// The stable hex hash used as key (FNV-1a, 128 bits, 32 hex digits).
  static std::string hash(const std::string &kernel_text);
  /// The schema this build reads and writes (PRAGMA user_version of the file).
  static constexpr int kSchemaVersion = 1;

  ~KernelCache();
  KernelCache(const KernelCache &) = delete;
  KernelCache &operator=(const KernelCache &) = delete;

  const std::string &path() const { return path_; }
  /// The schedule stored for `key`; a hash collision (another kernel text) is a miss.
  std::optional<CacheEntry> find(const CacheKey &key);
  /// Throws tile::Error "error: kernel cache FILE: ..." unless this process can write to the
  /// cache (a read-only file or directory); writes nothing.
  void check_writable();
  /// Stores the schedule unless an entry for the key with a lower (better) `seconds` exists;
  /// returns whether it stored.
  bool store(const CacheKey &key, const CacheEntry &entry);
  /// Compiled binaries beside the schedules (OpenCL program binaries, Vulkan pipeline cache data,
  /// ...): keyed by `kind` ("opencl-program", "vulkan-pipeline-cache"), a key text (hashed), device
  /// fingerprint, version.
  std::optional<std::string> find_binary(const std::string &kind, const std::string &key_text,
                                         const std::string &device, const std::string &version);
  void store_binary(const std::string &kind, const std::string &key_text, const std::string &device,
                    const std::string &version, const std::string &bytes);
  struct Stats {
    int64_t schedules = 0, binaries = 0, file_bytes = 0;
    int64_t devices = 0;
  };
  Stats stats();
  /// Every schedule, ordered by kernel name, hash, device and version.
  std::vector<CacheEntry> list();
  /// JSON lines, one schedule per line (kernel text included, so an import on another machine keeps
  /// the full key); binaries are not exported.
  void export_jsonl(std::ostream &out);
  struct ImportResult {
    int added = 0, improved = 0, kept = 0;  // kept: the cache already had an equal or better timing
  };
  /// Throws tile::Error "FILE:LINE: error: ..." for a malformed line, importing nothing (one
  /// transaction).
  ImportResult import_jsonl(std::istream &in, const std::string &name_for_errors);
  /// Deletes every schedule and binary.
  void clear();

 private:
  KernelCache(std::string path, sqlite3 *db) : path_(std::move(path)), db_(db) {}
  /// Inserts or replaces `entry` under `key` unless the stored one is as fast; the caller holds a
  /// write transaction.
  enum class Stored { Added, Improved, Kept };
  Stored store_locked(const CacheKey &key, const CacheEntry &entry, int64_t created);

  std::string path_;
  sqlite3 *db_;
  std::mutex mutex_;  // one connection: its transactions must not interleave between threads
};

}  // namespace tessera
