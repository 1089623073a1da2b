// SQL on a trace file for tests that check what a tool shows against the file itself, or edit a copy of one: one
// integer read (-1 when the query returns no row or fails), and statements run ("" or SQLite's error and the SQL).
#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <string>

namespace tg::test {

inline int64_t sql_int(const std::string& path, const std::string& q) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* s = nullptr;
  int64_t v = -1;
  if (sqlite3_prepare_v2(db, q.c_str(), -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
    v = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  sqlite3_close(db);
  return v;
}

inline std::string sql_exec(const std::string& path, const std::string& q) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    return "cannot open " + path;
  }
  char* err = nullptr;
  std::string out;
  if (sqlite3_exec(db, q.c_str(), nullptr, nullptr, &err) != SQLITE_OK) out = std::string(err ? err : "?") + "\n" + q;
  sqlite3_free(err);
  sqlite3_close(db);
  return out;
}

}  // namespace tg::test
