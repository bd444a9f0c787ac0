// Opening (and setting aside bad files), keys, and the schedule and binary tables of the kernel
// cache.
#include "runtime/KernelCache.h"

#include <fcntl.h>
#include <pwd.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

#include "runtime/Sqlite.h"

namespace tessera {

namespace fs = std::filesystem;

namespace {

// PRAGMA application_id of a Tessera cache ("TSRA"): tells our file from another program's SQLite
// file.
constexpr int64_t kApplicationId = 0x54535241;
constexpr int kBusyTimeoutMs = 10000;

const char *kSchema = R"sql(
CREATE TABLE schedules (
  kernel_hash TEXT NOT NULL, device TEXT NOT NULL, version TEXT NOT NULL,
  kernel TEXT NOT NULL, kernel_name TEXT NOT NULL, schedule TEXT NOT NULL,
  seconds REAL NOT NULL, untuned_seconds REAL NOT NULL, trials INTEGER NOT NULL, flops REAL NOT NULL,
  created INTEGER NOT NULL,
  PRIMARY KEY (kernel_hash, device, version));
CREATE TABLE binaries (
  kind TEXT NOT NULL, key_hash TEXT NOT NULL, device TEXT NOT NULL, version TEXT NOT NULL,
  key_text TEXT NOT NULL, bytes BLOB NOT NULL, created INTEGER NOT NULL,
  PRIMARY KEY (kind, key_hash, device, version));
)sql";

int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string env(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "";
}

sqlite3 *connect(const std::string &path) {
  sqlite3 *db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (rc != SQLITE_OK) {
    std::string why = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    throw tile::Error("error: kernel cache " + path + " cannot be opened: " + why);
  }
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  return db;
}

/// Why the file behind `db` cannot serve as this build's cache, or nothing when it can (a Tessera
/// cache of this schema, or an empty file to initialize). Errors other than a bad file propagate.
std::optional<std::string> problem(sqlite3 *db, const std::string &path) {
  try {
    int64_t app = sqlite::query_int(db, "PRAGMA application_id", path);
    int64_t version = sqlite::query_int(db, "PRAGMA user_version", path);
    if (app == kApplicationId) {
      if (version > KernelCache::kSchemaVersion)
        return "its schema version " + std::to_string(version) + " is newer than this Tessera's " +
               std::to_string(KernelCache::kSchemaVersion);
      if (version < 1) return "its schema version " + std::to_string(version) + " is unknown";
      sqlite::Statement check(db, "PRAGMA quick_check", path);
      std::string result = check.step() ? check.text(0) : "no result";
      if (result != "ok") return "it is corrupt: " + result;
      return std::nullopt;
    }
    if (app != 0) return "it is not a Tessera cache: application_id " + std::to_string(app);
    if (sqlite::query_int(db, "SELECT COUNT(*) FROM sqlite_master", path) > 0)
      return "it is not a Tessera cache: a SQLite database of another program";
    return std::nullopt;
  } catch (const sqlite::Error &e) {
    if (e.code() == SQLITE_NOTADB) return "it is not a SQLite database";
    if (e.code() == SQLITE_CORRUPT) return std::string("it is corrupt: ") + sqlite3_errmsg(db);
    throw;
  }
}

/// Switching to WAL needs the file to itself, and SQLite answers SQLITE_BUSY at once, without its
/// busy handler, while another process reads it (two processes creating the cache together):
/// retried here for the busy timeout.
void enter_wal_mode(sqlite3 *db, const std::string &path) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  for (;;) {
    try {
      sqlite::exec(db, "PRAGMA journal_mode=WAL", path);
      return;
    } catch (const sqlite::Error &e) {
      if (e.code() != SQLITE_BUSY || std::chrono::steady_clock::now() > deadline) throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

/// WAL lets readers run beside the one writer; a fresh file gets the schema, in a write transaction
/// so that two processes creating the cache at once make it once.
void initialize(sqlite3 *db, const std::string &path) {
  std::string mode;
  {
    sqlite::Statement s(db, "PRAGMA journal_mode",
                        path);  // finished before the switch: it holds a read lock
    if (s.step()) mode = s.text(0);
  }
  if (mode != "wal") enter_wal_mode(db, path);
  // NORMAL under WAL never corrupts the file; a power cut may lose the last tuned schedules, which
  // a cache can afford.
  sqlite::exec(db, "PRAGMA synchronous=NORMAL", path);
  if (sqlite::query_int(db, "PRAGMA application_id", path) == kApplicationId) return;
  sqlite::WriteTransaction txn(db, path);
  if (sqlite::query_int(db, "PRAGMA application_id", path) == kApplicationId)
    return;  // another process won
  sqlite::exec(db, kSchema, path);
  sqlite::exec(db, ("PRAGMA application_id=" + std::to_string(kApplicationId)).c_str(), path);
  sqlite::exec(db, ("PRAGMA user_version=" + std::to_string(KernelCache::kSchemaVersion)).c_str(),
               path);
  txn.commit();
}

/// Holds flock() on a directory: processes that find the same bad file take turns setting it aside.
class DirectoryLock {
 public:
  explicit DirectoryLock(const fs::path &dir)
      : fd_(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~DirectoryLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  DirectoryLock(const DirectoryLock &) = delete;
  DirectoryLock &operator=(const DirectoryLock &) = delete;

 private:
  int fd_;
};

/// Moves the bad file (with its WAL) to PATH.bad-N and says so once. Another process may have done
/// it while this one waited for the lock: the file is checked again first.
void set_aside(const std::string &path, std::string why) {
  fs::path parent = fs::path(path).parent_path();
  DirectoryLock lock(parent.empty() ? fs::path(".") : parent);
  sqlite3 *db = connect(path);
  std::optional<std::string> still;
  try {
    still = problem(db, path);
  } catch (...) {
    sqlite3_close(db);
    throw;
  }
  sqlite3_close(db);
  if (!still) return;
  why = *still;
  std::string bad;
  std::error_code ec;
  for (int n = 1;; ++n) {
    bad = path + ".bad-" + std::to_string(n);
    if (!fs::exists(bad, ec) && !fs::exists(bad + "-wal", ec)) break;
  }
  fs::rename(path, bad, ec);
  if (ec)
    throw tile::Error("error: kernel cache " + path + " cannot be used (" + why +
                      ") nor moved aside: " + ec.message());
  // A WAL left beside the fresh file would be replayed into it.
  if (fs::exists(path + "-wal", ec)) fs::rename(path + "-wal", bad + "-wal", ec);
  fs::remove(path + "-shm", ec);
  fs::remove(path + "-journal", ec);
  std::cerr << "tessera: warning: kernel cache " << path << " cannot be used (" << why
            << "); moved aside to " << bad << "\n";
}

/// Whether timing `a` beats `b`; a non-positive time means "not timed" and loses to any timing.
bool faster(double a, double b) { return a > 0 && (b <= 0 || a < b); }

}  // namespace

std::unique_ptr<KernelCache> KernelCache::open(const std::string &path) {
  if (path.empty()) throw tile::Error("error: no kernel cache path (set TESSERA_CACHE or HOME)");
  fs::path parent = fs::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec)
    throw tile::Error("error: kernel cache " + path + ": cannot create " + parent.string() + ": " +
                      ec.message());
  // Twice at most: a bad file is replaced once; a second bad one means something keeps writing
  // garbage.
  for (int attempt = 0; attempt < 2; ++attempt) {
    sqlite3 *db = connect(path);
    std::optional<std::string> why;
    try {
      why = problem(db, path);
      if (!why) {
        initialize(db, path);
        return std::unique_ptr<KernelCache>(new KernelCache(path, db));
      }
    } catch (...) {
      sqlite3_close(db);
      throw;
    }
    sqlite3_close(db);
    set_aside(path, *why);
  }
  throw tile::Error("error: kernel cache " + path +
                    " was replaced by a bad file again after being set aside");
}

KernelCache::~KernelCache() { sqlite3_close_v2(db_); }

std::string KernelCache::default_path() {
  if (std::string p = env("TESSERA_CACHE"); !p.empty()) return p;
  if (std::string p = env("XDG_CACHE_HOME"); !p.empty() && p[0] == '/')
    return p + "/tessera/cache.db";
  std::string home = env("HOME");
  if (home.empty())
    if (const passwd *pw = ::getpwuid(::getuid()); pw && pw->pw_dir) home = pw->pw_dir;
  if (home.empty()) return "";  // open() then explains that there is no path
  return home + "/.cache/tessera/cache.db";
}

std::string KernelCache::hash(const std::string &kernel_text) {
  // FNV-1a, 128 bits: offset basis and prime from the FNV specification.
  using u128 = unsigned __int128;
  u128 h = (u128(0x6c62272e07bb0142ULL) << 64) | 0x62b821756295c58dULL;
  const u128 prime = (u128(1) << 88) | 0x13b;
  for (unsigned char c : kernel_text) {
    h ^= c;
    h *= prime;
  }
  static const char digits[] = "0123456789abcdef";
  std::string out(32, '0');
  for (int i = 31; i >= 0; --i, h >>= 4) out[i] = digits[static_cast<int>(h & 0xf)];
  return out;
}

std::optional<CacheEntry> KernelCache::find(const CacheKey &key) {
  std::lock_guard lock(mutex_);
  sqlite::Statement s(db_,
                      "SELECT kernel, kernel_name, schedule, seconds, untuned_seconds, trials, "
                      "flops, created, kernel_hash "
                      "FROM schedules WHERE kernel_hash = ?1 AND device = ?2 AND version = ?3",
                      path_);
  s.bind(1, hash(key.kernel)).bind(2, key.device).bind(3, key.version);
  if (!s.step() || s.text(0) != key.kernel)
    return std::nullopt;  // absent, or another kernel with the same hash
  CacheEntry e;
  e.kernel_name = s.text(1);
  e.schedule = s.text(2);
  e.seconds = s.real(3);
  e.untuned_seconds = s.real(4);
  e.trials = static_cast<int>(s.integer(5));
  e.flops = s.real(6);
  e.created = s.integer(7);
  e.kernel_hash = s.text(8);
  e.device = key.device;
  e.version = key.version;
  return e;
}

KernelCache::Stored KernelCache::store_locked(const CacheKey &key, const CacheEntry &entry,
                                              int64_t created) {
  const std::string h = hash(key.kernel);
  Stored result = Stored::Added;
  {
    sqlite::Statement old(db_,
                          "SELECT kernel, seconds FROM schedules WHERE kernel_hash = ?1 AND device "
                          "= ?2 AND version = ?3",
                          path_);
    old.bind(1, h).bind(2, key.device).bind(3, key.version);
    // A row of another kernel text (a hash collision) is simply replaced: find() never serves it
    // for this key.
    if (old.step() && old.text(0) == key.kernel) {
      if (!faster(entry.seconds, old.real(1))) return Stored::Kept;
      result = Stored::Improved;
    }
  }
  sqlite::Statement put(db_,
                        "INSERT OR REPLACE INTO schedules (kernel_hash, device, version, kernel, "
                        "kernel_name, schedule, "
                        "seconds, untuned_seconds, trials, flops, created) VALUES (?1, ?2, ?3, ?4, "
                        "?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                        path_);
  put.bind(1, h)
      .bind(2, key.device)
      .bind(3, key.version)
      .bind(4, key.kernel)
      .bind(5, entry.kernel_name);
  put.bind(6, entry.schedule).bind(7, entry.seconds).bind(8, entry.untuned_seconds);
  put.bind(9, static_cast<int64_t>(entry.trials)).bind(10, entry.flops).bind(11, created);
  put.step();
  return result;
}

void KernelCache::check_writable() {
  std::lock_guard lock(mutex_);
  if (sqlite3_db_readonly(db_, "main") == 1)
    throw tile::Error("error: kernel cache " + path_ + ": the file is read-only");
  // A write that is rolled back: it needs the locks, the journal and the file a real one needs.
  sqlite::WriteTransaction txn(db_, path_);
  sqlite::exec(db_, ("PRAGMA user_version=" + std::to_string(KernelCache::kSchemaVersion)).c_str(),
               path_);
}

bool KernelCache::store(const CacheKey &key, const CacheEntry &entry) {
  std::lock_guard lock(mutex_);
  sqlite::WriteTransaction txn(db_, path_);
  Stored stored = store_locked(key, entry, now_seconds());
  if (stored == Stored::Kept) return false;  // the transaction rolls back: nothing was written
  txn.commit();
  return true;
}

std::optional<std::string> KernelCache::find_binary(const std::string &kind,
                                                    const std::string &key_text,
                                                    const std::string &device,
                                                    const std::string &version) {
  std::lock_guard lock(mutex_);
  sqlite::Statement s(db_,
                      "SELECT key_text, bytes FROM binaries WHERE kind = ?1 AND key_hash = ?2 AND "
                      "device = ?3 AND version = ?4",
                      path_);
  s.bind(1, kind).bind(2, hash(key_text)).bind(3, device).bind(4, version);
  if (!s.step() || s.text(0) != key_text) return std::nullopt;
  return s.blob(1);
}

void KernelCache::store_binary(const std::string &kind, const std::string &key_text,
                               const std::string &device, const std::string &version,
                               const std::string &bytes) {
  std::lock_guard lock(mutex_);
  sqlite::WriteTransaction txn(db_, path_);
  sqlite::Statement s(
      db_,
      "INSERT OR REPLACE INTO binaries (kind, key_hash, device, version, key_text, bytes, created) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
      path_);
  s.bind(1, kind).bind(2, hash(key_text)).bind(3, device).bind(4, version).bind(5, key_text);
  s.bind_blob(6, bytes).bind(7, now_seconds());
  s.step();
  txn.commit();
}

KernelCache::Stats KernelCache::stats() {
  std::lock_guard lock(mutex_);
  Stats st;
  sqlite::Statement s(db_, "SELECT COUNT(*), COUNT(DISTINCT device) FROM schedules", path_);
  if (s.step()) {
    st.schedules = s.integer(0);
    st.devices = s.integer(1);
  }
  st.binaries = sqlite::query_int(db_, "SELECT COUNT(*) FROM binaries", path_);
  st.file_bytes = sqlite::query_int(db_, "PRAGMA page_count", path_) *
                  sqlite::query_int(db_, "PRAGMA page_size", path_);
  return st;
}

std::vector<CacheEntry> KernelCache::list() {
  std::lock_guard lock(mutex_);
  sqlite::Statement s(
      db_,
      "SELECT kernel_hash, kernel_name, device, version, schedule, seconds, untuned_seconds, "
      "trials, "
      "flops, created FROM schedules ORDER BY kernel_name, kernel_hash, device, version",
      path_);
  std::vector<CacheEntry> out;
  while (s.step()) {
    CacheEntry e;
    e.kernel_hash = s.text(0);
    e.kernel_name = s.text(1);
    e.device = s.text(2);
    e.version = s.text(3);
    e.schedule = s.text(4);
    e.seconds = s.real(5);
    e.untuned_seconds = s.real(6);
    e.trials = static_cast<int>(s.integer(7));
    e.flops = s.real(8);
    e.created = s.integer(9);
    out.push_back(std::move(e));
  }
  return out;
}

void KernelCache::clear() {
  std::lock_guard lock(mutex_);
  sqlite::WriteTransaction txn(db_, path_);
  sqlite::exec(db_, "DELETE FROM schedules; DELETE FROM binaries;", path_);
  txn.commit();
  // Shrinking the file is a courtesy: VACUUM waits for no reader, so while another process reads it
  // fails and the rows are gone all the same.
  sqlite3_exec(db_, "VACUUM", nullptr, nullptr, nullptr);
}

}  // namespace tessera
