// One integer read by SQL from a trace file (tests that check what a tool shows against the file itself): -1 when
// the query returns no row or fails.
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

}  // namespace tg::test
