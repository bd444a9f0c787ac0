// KernelCache: keys, the better-timing policy, binaries, export/import, bad files set aside, and
// two processes writing into one file at once.
#include "runtime/KernelCache.h"

#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "compiler/Schedule.h"
#include "tile/Diagnostics.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

std::string schedule_text(int64_t tile) {
  compiler::Schedule s;
  s.tile_sizes = {tile, 8, 1};
  s.loop_order = {0, 1, 2};
  s.vector_index = 1;
  s.vector_width = 8;
  s.parallel_loops = 1;
  return s.to_json();
}

CacheEntry entry(const std::string &name, double seconds, int64_t tile = 16) {
  CacheEntry e;
  e.kernel_name = name;
  e.schedule = schedule_text(tile);
  e.seconds = seconds;
  e.untuned_seconds = seconds * 3;
  e.trials = 7;
  e.flops = 2e9;
  return e;
}

CacheKey key(const std::string &kernel, const std::string &device = "backend=llvm;name=test-cpu",
             const std::string &version = "0.1.0") {
  return {kernel, device, version};
}

std::string read_file(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const fs::path &p, const std::string &bytes) {
  std::ofstream out(p, std::ios::binary);
  out << bytes;
}

/// Runs SQL on the file directly, behind the cache's back (to damage or age it).
void raw_sql(const fs::path &file, const std::string &sql) {
  sqlite3 *db = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
  char *err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  std::string message = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << message;
}

int count_of(const std::string &haystack, const std::string &needle) {
  int n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + 1))
    ++n;
  return n;
}

class KernelCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "tessera-cache-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    file_ = dir_ / "sub" / "cache.db";  // the parent is created by open()
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// Opens the cache and expects nothing on stderr.
  std::unique_ptr<KernelCache> open_quietly(const fs::path &file) {
    ::testing::internal::CaptureStderr();
    auto cache = KernelCache::open(file.string());
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
    return cache;
  }

  /// Opens a damaged file: exactly one warning naming it and FILE.bad-1, which holds the old bytes;
  /// the fresh cache works and a second open is silent.
  void expect_set_aside(const std::string &old_bytes, const std::string &why) {
    ::testing::internal::CaptureStderr();
    auto cache = KernelCache::open(file_.string());
    std::string err = ::testing::internal::GetCapturedStderr();
    std::string bad = file_.string() + ".bad-1";
    EXPECT_EQ(count_of(err, "tessera: warning: kernel cache " + file_.string()), 1) << err;
    EXPECT_EQ(count_of(err, "moved aside to " + bad), 1) << err;
    EXPECT_NE(err.find(why), std::string::npos) << err;
    ASSERT_TRUE(fs::exists(bad));
    EXPECT_EQ(read_file(bad), old_bytes);
    EXPECT_EQ(cache->stats().schedules, 0);
    EXPECT_TRUE(cache->store(key("K"), entry("k", 1.0)));
    ASSERT_TRUE(cache->find(key("K")));
    cache.reset();
    auto again = open_quietly(file_);
    EXPECT_TRUE(again->find(key("K")));
    EXPECT_FALSE(fs::exists(file_.string() + ".bad-2"));
  }

  fs::path dir_, file_;
};

TEST(KernelCacheHash, IsFnv1a128) {
  // FNV-1a 128 reference values (the empty string hashes to the offset basis).
  EXPECT_EQ(KernelCache::hash(""), "6c62272e07bb014262b821756295c58d");
  EXPECT_EQ(KernelCache::hash("a"), "d228cb696f1a8caf78912b704e4a8964");
  EXPECT_EQ(KernelCache::hash("foobar"), "343e1662793c64bf6f0d3597ba446f18");
}

TEST(KernelCacheDefaultPath, FollowsTheEnvironment) {
  std::string saved[3];
  const char *names[3] = {"TESSERA_CACHE", "XDG_CACHE_HOME", "HOME"};
  for (int i = 0; i < 3; ++i) saved[i] = std::getenv(names[i]) ? std::getenv(names[i]) : "";
  ::setenv("TESSERA_CACHE", "/x/mine.db", 1);
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  ::setenv("HOME", "/home/u", 1);
  EXPECT_EQ(KernelCache::default_path(), "/x/mine.db");
  ::unsetenv("TESSERA_CACHE");
  EXPECT_EQ(KernelCache::default_path(), "/xdg/tessera/cache.db");
  ::unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(KernelCache::default_path(), "/home/u/.cache/tessera/cache.db");
  for (int i = 0; i < 3; ++i) {
    if (saved[i].empty())
      ::unsetenv(names[i]);
    else
      ::setenv(names[i], saved[i].c_str(), 1);
  }
}

TEST_F(KernelCacheTest, StoreThenFind) {
  auto cache = open_quietly(file_);
  EXPECT_FALSE(cache->find(key("C[i] = +(A[i, k]);")));
  int64_t before = std::time(nullptr);
  EXPECT_TRUE(cache->store(key("C[i] = +(A[i, k]);"), entry("sum", 0.25)));
  auto hit = cache->find(key("C[i] = +(A[i, k]);"));
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->kernel_hash, KernelCache::hash("C[i] = +(A[i, k]);"));
  EXPECT_EQ(hit->kernel_name, "sum");
  EXPECT_EQ(hit->device, "backend=llvm;name=test-cpu");
  EXPECT_EQ(hit->version, "0.1.0");
  EXPECT_EQ(hit->schedule, schedule_text(16));
  EXPECT_EQ(hit->seconds, 0.25);
  EXPECT_EQ(hit->untuned_seconds, 0.75);
  EXPECT_EQ(hit->trials, 7);
  EXPECT_EQ(hit->flops, 2e9);
  EXPECT_GE(hit->created, before);
  EXPECT_LE(hit->created, std::time(nullptr));
  EXPECT_EQ(cache->path(), file_.string());
  // Another process (here: another connection) sees it.
  cache.reset();
  EXPECT_TRUE(open_quietly(file_)->find(key("C[i] = +(A[i, k]);")));
}

TEST_F(KernelCacheTest, TheFasterTimingWins) {
  auto cache = open_quietly(file_);
  EXPECT_TRUE(cache->store(key("K"), entry("k", 2.0, 4)));
  EXPECT_FALSE(cache->store(key("K"), entry("k", 3.0, 8)));  // slower: kept out
  EXPECT_FALSE(cache->store(key("K"), entry("k", 2.0, 8)));  // equal: the first stays
  EXPECT_EQ(cache->find(key("K"))->schedule, schedule_text(4));
  EXPECT_TRUE(cache->store(key("K"), entry("k", 1.0, 32)));
  EXPECT_EQ(cache->find(key("K"))->schedule, schedule_text(32));
  EXPECT_EQ(cache->find(key("K"))->seconds, 1.0);
  EXPECT_EQ(cache->stats().schedules, 1);
}

TEST_F(KernelCacheTest, AnotherVersionOrDeviceMisses) {
  auto cache = open_quietly(file_);
  ASSERT_TRUE(cache->store(key("K", "backend=llvm;name=a", "0.1.0"), entry("k", 1.0)));
  EXPECT_FALSE(cache->find(key("K", "backend=llvm;name=a", "0.2.0")));
  EXPECT_FALSE(cache->find(key("K", "backend=llvm;name=b", "0.1.0")));
  EXPECT_FALSE(cache->find(key("K2", "backend=llvm;name=a", "0.1.0")));
  // The new version tunes its own schedule, even a slower one, without touching the old version's.
  EXPECT_TRUE(cache->store(key("K", "backend=llvm;name=a", "0.2.0"), entry("k", 5.0, 4)));
  EXPECT_EQ(cache->find(key("K", "backend=llvm;name=a", "0.2.0"))->schedule, schedule_text(4));
  EXPECT_EQ(cache->find(key("K", "backend=llvm;name=a", "0.1.0"))->schedule, schedule_text(16));
  EXPECT_EQ(cache->stats().schedules, 2);
}

TEST_F(KernelCacheTest, AnotherKernelTextUnderTheSameHashIsAMiss) {
  {
    auto cache = open_quietly(file_);
    ASSERT_TRUE(cache->store(key("REAL"), entry("k", 1.0)));
    cache->store_binary("opencl-program", "SRC", "dev", "0.1.0", "bytes");
  }
  // Forge a collision: the row keeps REAL's hash but holds another kernel's text.
  raw_sql(file_, "UPDATE schedules SET kernel = 'OTHER'; UPDATE binaries SET key_text = 'OTHER'");
  auto cache = open_quietly(file_);
  EXPECT_FALSE(cache->find(key("REAL")));
  EXPECT_FALSE(cache->find_binary("opencl-program", "SRC", "dev", "0.1.0"));
  // Storing for the real kernel replaces the impostor, whatever its timing.
  EXPECT_TRUE(cache->store(key("REAL"), entry("k", 9.0)));
  EXPECT_EQ(cache->find(key("REAL"))->seconds, 9.0);
}

TEST_F(KernelCacheTest, Binaries) {
  auto cache = open_quietly(file_);
  std::string bytes("\x7f"
                    "ELF\0\x01\xff\x00 tail",
                    12);
  EXPECT_FALSE(cache->find_binary("opencl-program", "kernel source", "dev", "0.1.0"));
  cache->store_binary("opencl-program", "kernel source", "dev", "0.1.0", bytes);
  EXPECT_EQ(cache->find_binary("opencl-program", "kernel source", "dev", "0.1.0"), bytes);
  EXPECT_FALSE(cache->find_binary("vulkan-pipeline-cache", "kernel source", "dev", "0.1.0"));
  EXPECT_FALSE(cache->find_binary("opencl-program", "kernel source", "dev2", "0.1.0"));
  EXPECT_FALSE(cache->find_binary("opencl-program", "kernel source", "dev", "0.2.0"));
  EXPECT_FALSE(cache->find_binary("opencl-program", "other source", "dev", "0.1.0"));
  cache->store_binary("opencl-program", "kernel source", "dev", "0.1.0", "new");
  EXPECT_EQ(cache->find_binary("opencl-program", "kernel source", "dev", "0.1.0"), "new");
  EXPECT_EQ(cache->stats().binaries, 1);
  EXPECT_EQ(cache->stats().schedules, 0);
}

TEST_F(KernelCacheTest, StatsListAndClear) {
  auto cache = open_quietly(file_);
  cache->store(key("K1", "d1"), entry("b", 1.0));
  cache->store(key("K2", "d2"), entry("a", 1.0));
  cache->store(key("K2", "d1"), entry("a", 1.0));
  cache->store_binary("opencl-program", "S", "d1", "0.1.0", "x");
  KernelCache::Stats s = cache->stats();
  EXPECT_EQ(s.schedules, 3);
  EXPECT_EQ(s.binaries, 1);
  EXPECT_EQ(s.devices, 2);
  EXPECT_GT(s.file_bytes, 0);
  std::vector<CacheEntry> all = cache->list();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].kernel_name, "a");
  EXPECT_EQ(all[0].device, "d1");
  EXPECT_EQ(all[1].device, "d2");
  EXPECT_EQ(all[2].kernel_name, "b");
  EXPECT_EQ(all[2].kernel_hash, KernelCache::hash("K1"));
  cache->clear();
  s = cache->stats();
  EXPECT_EQ(s.schedules, 0);
  EXPECT_EQ(s.binaries, 0);
  EXPECT_FALSE(cache->find(key("K1", "d1")));
}

TEST_F(KernelCacheTest, ExportImportRoundTrip) {
  auto cache = open_quietly(file_);
  cache->store(key("A[i] = B[i];\nnext line \"quoted\"", "backend=llvm;name=x"),
               entry("copy", 0.5, 4));
  cache->store(key("K", "backend=opencl;name=gpu", "0.1.0"), entry("conv", 0.125, 8));
  cache->store(key("K", "backend=opencl;name=gpu", "0.0.9"), entry("conv", 0.25, 2));
  cache->store_binary("opencl-program", "S", "d", "0.1.0", "binary");
  std::ostringstream out;
  cache->export_jsonl(out);
  EXPECT_EQ(count_of(out.str(), "\n"), 3);

  auto fresh = open_quietly(dir_ / "other" / "fresh.db");
  std::istringstream in(out.str());
  KernelCache::ImportResult r = fresh->import_jsonl(in, "export.jsonl");
  EXPECT_EQ(r.added, 3);
  EXPECT_EQ(r.improved, 0);
  EXPECT_EQ(r.kept, 0);
  std::vector<CacheEntry> a = cache->list(), b = fresh->list();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].kernel_hash, b[i].kernel_hash);
    EXPECT_EQ(a[i].kernel_name, b[i].kernel_name);
    EXPECT_EQ(a[i].device, b[i].device);
    EXPECT_EQ(a[i].version, b[i].version);
    EXPECT_EQ(a[i].schedule, b[i].schedule);
    EXPECT_EQ(a[i].seconds, b[i].seconds);
    EXPECT_EQ(a[i].untuned_seconds, b[i].untuned_seconds);
    EXPECT_EQ(a[i].trials, b[i].trials);
    EXPECT_EQ(a[i].flops, b[i].flops);
    EXPECT_EQ(a[i].created, b[i].created);
  }
  // The full key came along: the imported cache serves the same lookups.
  EXPECT_EQ(fresh->find(key("A[i] = B[i];\nnext line \"quoted\"", "backend=llvm;name=x"))->schedule,
            schedule_text(4));
  EXPECT_EQ(fresh->stats().binaries, 0);
  std::ostringstream again;
  fresh->export_jsonl(again);
  EXPECT_EQ(again.str(), out.str());
  // Importing the same file again changes nothing.
  std::istringstream in2(out.str());
  r = fresh->import_jsonl(in2, "export.jsonl");
  EXPECT_EQ(r.added + r.improved, 0);
  EXPECT_EQ(r.kept, 3);
}

TEST_F(KernelCacheTest, ImportNeverReplacesABetterTiming) {
  auto cache = open_quietly(file_);
  cache->store(key("K"), entry("k", 1.0, 4));
  auto line = [](double seconds, int64_t tile) {
    return "{\"kernel\": \"K\", \"device\": \"backend=llvm;name=test-cpu\", \"version\": "
           "\"0.1.0\", \"seconds\": " +
           std::to_string(seconds) + ", \"schedule\": " + schedule_text(tile) + "}\n";
  };
  std::istringstream slower(line(2.0, 8));
  KernelCache::ImportResult r = cache->import_jsonl(slower, "slower.jsonl");
  EXPECT_EQ(r.kept, 1);
  EXPECT_EQ(r.added + r.improved, 0);
  EXPECT_EQ(cache->find(key("K"))->schedule, schedule_text(4));
  std::istringstream faster(line(0.5, 32) +
                            line(0.75, 8));  // the better of the two lines wins as well
  r = cache->import_jsonl(faster, "faster.jsonl");
  EXPECT_EQ(r.improved, 1);
  EXPECT_EQ(r.kept, 1);
  EXPECT_EQ(cache->find(key("K"))->schedule, schedule_text(32));
  EXPECT_EQ(cache->find(key("K"))->seconds, 0.5);
}

TEST_F(KernelCacheTest, AMalformedLineImportsNothing) {
  auto cache = open_quietly(file_);
  std::string good =
      "{\"kernel\": \"K1\", \"device\": \"d\", \"version\": \"v\", \"seconds\": 1, \"schedule\": " +
      schedule_text(4) + "}\n";
  struct Case {
    std::string third_line, message;
  };
  Case cases[] = {
      {"{\"kernel\": \"K3\", \"device\": ", "bad.jsonl:4: error: malformed JSON"},
      {"[1, 2]", "bad.jsonl:4: error: a line must be a JSON object"},
      {"{\"kernel\": \"K3\", \"device\": \"d\", \"version\": \"v\", \"schedule\": " +
           schedule_text(4) + "}",
       "bad.jsonl:4: error: missing field 'seconds'"},
      {"{\"kernel\": \"K3\", \"device\": \"d\", \"version\": \"v\", \"seconds\": -1, "
       "\"schedule\": " +
           schedule_text(4) + "}",
       "bad.jsonl:4: error: field 'seconds' must be a non-negative number"},
      {"{\"kernel\": \"K3\", \"device\": \"d\", \"version\": \"v\", \"seconds\": 1, \"schedule\": "
       "{\"unroll\": 2}}",
       "bad.jsonl:4: error: field 'schedule': malformed schedule JSON"},
      {"{\"kernel\": \"K3\", \"kernel_hash\": \"00\", \"device\": \"d\", \"version\": \"v\", "
       "\"seconds\": 1, "
       "\"schedule\": " +
           schedule_text(4) + "}",
       "bad.jsonl:4: error: field 'kernel_hash' 00 is not the hash"},
  };
  for (const Case &c : cases) {
    // Line 3 is blank (skipped, but counted).
    std::istringstream in(good +
                          "{\"kernel\": \"K2\", \"device\": \"d\", \"version\": \"v\", "
                          "\"seconds\": 1, \"schedule\": " +
                          schedule_text(8) + "}\n\n" + c.third_line + "\n");
    try {
      cache->import_jsonl(in, "bad.jsonl");
      ADD_FAILURE() << "no error for " << c.third_line;
    } catch (const tile::Error &e) {
      EXPECT_EQ(std::string(e.what()).rfind(c.message, 0), 0u) << e.what();
    }
    EXPECT_EQ(cache->stats().schedules, 0) << c.third_line;
  }
}

TEST_F(KernelCacheTest, GarbageFileIsSetAside) {
  fs::create_directories(file_.parent_path());
  std::mt19937 rng(7);
  std::string garbage(65536, '\0');
  for (char &c : garbage) c = static_cast<char>(rng());
  write_file(file_, garbage);
  expect_set_aside(garbage, "not a SQLite database");
}

TEST_F(KernelCacheTest, TruncatedFileIsSetAside) {
  {
    auto cache = open_quietly(file_);
    for (int i = 0; i < 400; ++i)
      cache->store(key("kernel number " + std::to_string(i) + std::string(200, 'x')),
                   entry("k", 1.0));
  }
  ASSERT_FALSE(fs::exists(file_.string() + "-wal") &&
               fs::file_size(file_.string() + "-wal") > 0);  // checkpointed at close
  std::string bytes = read_file(file_);
  ASSERT_GT(bytes.size(), 65536u);
  bytes.resize(bytes.size() / 2);
  write_file(file_, bytes);
  expect_set_aside(bytes, "corrupt");
}

TEST_F(KernelCacheTest, NewerSchemaIsSetAside) {
  open_quietly(file_)->store(key("K"), entry("k", 1.0));
  raw_sql(file_, "PRAGMA user_version = " + std::to_string(KernelCache::kSchemaVersion + 1));
  std::string bytes = read_file(file_);
  expect_set_aside(bytes, "newer");
}

TEST_F(KernelCacheTest, AnotherProgramsDatabaseIsSetAside) {
  fs::create_directories(file_.parent_path());
  raw_sql(file_, "CREATE TABLE photos (id INTEGER); INSERT INTO photos VALUES (1)");
  std::string bytes = read_file(file_);
  expect_set_aside(bytes, "not a Tessera cache");
}

TEST_F(KernelCacheTest, NoUsableDirectoryThrows) {
  // A regular file where the directory should be (permission bits would not stop root).
  write_file(dir_ / "plain-file", "x");
  EXPECT_THROW(KernelCache::open((dir_ / "plain-file" / "cache.db").string()), tile::Error);
  EXPECT_THROW(KernelCache::open(""), tile::Error);
}

TEST_F(KernelCacheTest, TwoProcessesWritingAtOnceLoseNothing) {
  constexpr int kPerProcess = 300;
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  pid_t children[2];
  for (int p = 0; p < 2; ++p) {
    children[p] = ::fork();
    ASSERT_GE(children[p], 0);
    if (children[p] != 0) continue;
    // Child: wait for the start signal, so both open (creating the file) and write at the same
    // time.
    char c;
    ::close(go[1]);
    int code = ::read(go[0], &c, 1) == 0 ? 0 : 3;
    try {
      auto cache = KernelCache::open(file_.string());
      for (int i = 0; i < kPerProcess; ++i) {
        std::string k = "process " + std::to_string(p) + " kernel " + std::to_string(i);
        if (!cache->store(key(k), entry(k, 1.0 + i))) code = 1;
        if (i % 50 == 0) cache->store_binary("opencl-program", k, "d", "0.1.0", k);
      }
    } catch (const std::exception &e) {
      std::fprintf(stderr, "child %d: %s\n", p, e.what());
      code = 2;
    }
    ::_exit(code);
  }
  ::close(go[0]);
  ::close(go[1]);  // EOF: both children start
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  auto cache = open_quietly(file_);
  KernelCache::Stats s = cache->stats();
  EXPECT_EQ(s.schedules, 2 * kPerProcess);
  EXPECT_EQ(s.binaries, 2 * kPerProcess / 50);
  for (int p = 0; p < 2; ++p)
    for (int i = 0; i < kPerProcess; ++i) {
      std::string k = "process " + std::to_string(p) + " kernel " + std::to_string(i);
      auto hit = cache->find(key(k));
      ASSERT_TRUE(hit) << k;
      EXPECT_EQ(hit->seconds, 1.0 + i);
    }
}

}  // namespace
}  // namespace tessera
