// A thin RAII layer over the SQLite C API for the kernel cache: statements, write transactions, and
// errors that carry SQLite's result code (so a bad file can be told apart from an unusable
// directory).
#pragma once

#include <cstdint>
#include <string>

#include "tile/Diagnostics.h"

struct sqlite3;
struct sqlite3_stmt;

namespace tessera::sqlite {

/// A failed SQLite call on `file`: "error: kernel cache FILE: MESSAGE"; code() is the primary
/// result code.
class Error : public tile::Error {
 public:
  Error(const std::string &file, int code, const std::string &message);
  int code() const { return code_; }

 private:
  int code_;
};

/// Throws Error with the connection's last message unless `rc` is SQLITE_OK.
void check(sqlite3 *db, int rc, const std::string &file);
/// Runs SQL that returns no rows.
void exec(sqlite3 *db, const char *sql, const std::string &file);
/// Runs a query whose first row's first column is an integer (a PRAGMA, a COUNT).
int64_t query_int(sqlite3 *db, const char *sql, const std::string &file);

/// One prepared statement; bind() takes 1-based positions, the column getters 0-based ones.
class Statement {
 public:
  Statement(sqlite3 *db, const char *sql, const std::string &file);
  ~Statement();
  Statement(const Statement &) = delete;
  Statement &operator=(const Statement &) = delete;

  Statement &bind(int pos, const std::string &text);
  Statement &bind(int pos, double value);
  Statement &bind(int pos, int64_t value);
  Statement &bind_blob(int pos, const std::string &bytes);
  /// True when a row is ready, false when the statement is done.
  bool step();

  std::string text(int col) const;
  std::string blob(int col) const;
  double real(int col) const;
  int64_t integer(int col) const;

 private:
  sqlite3 *db_;
  sqlite3_stmt *stmt_ = nullptr;
  std::string file_;
};

/// BEGIN IMMEDIATE: the write lock is taken up front (waiting out the busy timeout), so a writer
/// never fails halfway by upgrading a read lock another writer made stale. Rolled back unless
/// commit() ran.
class WriteTransaction {
 public:
  WriteTransaction(sqlite3 *db, const std::string &file);
  ~WriteTransaction();
  WriteTransaction(const WriteTransaction &) = delete;
  WriteTransaction &operator=(const WriteTransaction &) = delete;
  void commit();

 private:
  sqlite3 *db_;
  std::string file_;
  bool done_ = false;
};

}  // namespace tessera::sqlite
