#include "runtime/Sqlite.h"

#include <sqlite3.h>

namespace tessera::sqlite {

Error::Error(const std::string &file, int code, const std::string &message)
    : tile::Error("error: kernel cache " + file + ": " + message), code_(code & 0xff) {}

void check(sqlite3 *db, int rc, const std::string &file) {
  if (rc == SQLITE_OK) return;
  throw Error(file, rc, sqlite3_errmsg(db));
}

void exec(sqlite3 *db, const char *sql, const std::string &file) {
  check(db, sqlite3_exec(db, sql, nullptr, nullptr, nullptr), file);
}

int64_t query_int(sqlite3 *db, const char *sql, const std::string &file) {
  Statement s(db, sql, file);
  if (!s.step()) throw Error(file, SQLITE_ERROR, std::string("no result from ") + sql);
  return s.integer(0);
}

Statement::Statement(sqlite3 *db, const char *sql, const std::string &file) : db_(db), file_(file) {
  check(db, sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr), file);
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement &Statement::bind(int pos, const std::string &text) {
  check(db_,
        sqlite3_bind_text(stmt_, pos, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT),
        file_);
  return *this;
}

Statement &Statement::bind(int pos, double value) {
  check(db_, sqlite3_bind_double(stmt_, pos, value), file_);
  return *this;
}

Statement &Statement::bind(int pos, int64_t value) {
  check(db_, sqlite3_bind_int64(stmt_, pos, value), file_);
  return *this;
}

Statement &Statement::bind_blob(int pos, const std::string &bytes) {
  check(db_, sqlite3_bind_blob64(stmt_, pos, bytes.data(), bytes.size(), SQLITE_TRANSIENT), file_);
  return *this;
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw Error(file_, rc, sqlite3_errmsg(db_));
}

std::string Statement::text(int col) const {
  const unsigned char *p = sqlite3_column_text(stmt_, col);
  if (!p) return {};
  return std::string(reinterpret_cast<const char *>(p), sqlite3_column_bytes(stmt_, col));
}

std::string Statement::blob(int col) const {
  const void *p = sqlite3_column_blob(stmt_, col);
  if (!p) return {};
  return std::string(static_cast<const char *>(p), sqlite3_column_bytes(stmt_, col));
}

double Statement::real(int col) const { return sqlite3_column_double(stmt_, col); }

int64_t Statement::integer(int col) const { return sqlite3_column_int64(stmt_, col); }

WriteTransaction::WriteTransaction(sqlite3 *db, const std::string &file) : db_(db), file_(file) {
  exec(db, "BEGIN IMMEDIATE", file);
}

WriteTransaction::~WriteTransaction() {
  if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void WriteTransaction::commit() {
  exec(db_, "COMMIT", file_);
  done_ = true;
}

}  // namespace tessera::sqlite
