// Fuzzes what reads trace files. A trace is untrusted input: nothing in it may crash or hang tinyviz-cli or tinyviz,
// and every problem is one error naming the file.
//
// Seeded and deterministic: mutants of the base traces (byte flips, truncation, header damage, and SQL-level edits:
// ids -1 and huge, self and cyclic srcs, deep nested args, wrapped string lengths, huge depths and match counts,
// dropped columns and tables, tables turned into endless views, bad JSON, ...) go through
//   - every tinyviz-cli subcommand, run in-process by worker processes (`trace_fuzz --cli-worker`): a worker that
//     dies of a signal or passes the time limit is counted against the run it was in, and a new one goes on after it;
//   - the real tinyviz-cli binary, one process per run, on a subset;
//   - tinyviz's opening, stepping and every tab (tinyviz_fuzz_gui, offscreen), on a subset.
// A run passes when it exits (no signal), in time, and an error it reports names the mutant's file (and is not an
// "internal error": an exception the reader let through unconverted). Mutants SQLite's quick_check calls corrupt that
// every subcommand accepted are counted too.
//
//   trace_fuzz [--seed N] [--mutants N] [--runs N] [--jobs N] [--timeout S] [--cli-bin P] [--gui-bin P]
//              [--gui-every N] [--bin-every N] [--keep DIR] [--verbose] BASE.trace.db...
// Each base gives two: the file itself and a copy cut to its two smallest contexts (made schema 3 with a few kernels
// when it has none), whose mutants also run verify. Every mutant runs `info` and --runs other subcommands (default 4,
// picked by its seed; 0: all 12); every --bin-every'th (default 20) also runs the binary, every --gui-every'th
// (default 40) opens in tinyviz. --timeout S (default 10) is the limit per run; --jobs N (default 2) processes at once.
// Exit status 0 when every run passed. --keep DIR keeps the failing mutants (and a line per failure in DIR/failures).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/viz/fuzz_protocol.h"
#include "viz/cli/cli.h"
#include "viz/schema.h"

namespace fs = std::filesystem;

namespace {

// ***** small helpers *****

std::string read_file(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
void write_file(const std::string& p, const std::string& data) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(data.data(), (std::streamsize)data.size());
}
std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep)
      out.push_back(cur), cur.clear();
    else
      cur += c;
  }
  out.push_back(cur);
  return out;
}
double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// ***** SQLite on a mutant (the driver's own connection, writable) *****

struct Db {
  sqlite3* db = nullptr;
  explicit Db(const std::string& path) {
    if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) db = nullptr;
    exec("PRAGMA synchronous=OFF");  // throwaway files: no fsync per edit
  }
  ~Db() {
    if (db) sqlite3_close(db);
  }
  bool exec(const std::string& sql) {
    return db && sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK;
  }
  std::vector<int64_t> ints(const std::string& sql) {
    std::vector<int64_t> out;
    sqlite3_stmt* s = nullptr;
    if (!db || sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) return out;
    while (sqlite3_step(s) == SQLITE_ROW) out.push_back(sqlite3_column_int64(s, 0));
    sqlite3_finalize(s);
    return out;
  }
  std::string text(const std::string& sql) {
    std::string out;
    sqlite3_stmt* s = nullptr;
    if (!db || sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) return out;
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
      out.assign((const char*)sqlite3_column_text(s, 0), sqlite3_column_bytes(s, 0));
    sqlite3_finalize(s);
    return out;
  }
  bool set_blob(const std::string& sql, const std::string& blob) {
    sqlite3_stmt* s = nullptr;
    if (!db || sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) return false;
    sqlite3_bind_blob(s, 1, blob.data(), (int)blob.size(), SQLITE_TRANSIENT);
    bool ok = sqlite3_step(s) == SQLITE_DONE;
    sqlite3_finalize(s);
    return ok;
  }
  bool set_text(const std::string& sql, const std::string& text) {
    sqlite3_stmt* s = nullptr;
    if (!db || sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) return false;
    sqlite3_bind_text(s, 1, text.data(), (int)text.size(), SQLITE_TRANSIENT);
    bool ok = sqlite3_step(s) == SQLITE_DONE;
    sqlite3_finalize(s);
    return ok;
  }
};

bool quick_check_ok(const std::string& path) {
  sqlite3* db = nullptr;
  bool ok = false;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &s, nullptr) == SQLITE_OK) {
      ok = sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0) &&
           std::string((const char*)sqlite3_column_text(s, 0)) == "ok";
      sqlite3_finalize(s);
    }
  }
  if (db) sqlite3_close(db);
  return ok;
}

std::string varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) out.push_back((char)(v | 0x80)), v >>= 7;
  out.push_back((char)v);
  return out;
}
std::string zigzag_src(int64_t node, int64_t src) {  // uops.src encoding of one src
  uint64_t d = (uint64_t)node - (uint64_t)src;       // wraps like the writer's int64 delta, without signed overflow
  return varint((d << 1) ^ (0 - (d >> 63)));
}

// ***** the base traces *****

struct Base {
  std::string path;  // a single-file copy (journal_mode=DELETE) in the work directory
  std::vector<int64_t> contexts, steps, matched_steps, uops, arg_strings, dtypes, programs;
  std::map<int64_t, int64_t> n_matches;
  bool kernels = false;
  bool profile = false;  // schema 5: mem_events, markers, ranges, devices
  size_t size = 0;
};

Base load_base(const std::string& src, const std::string& dst, bool shrink) {
  fs::copy_file(src, dst, fs::copy_options::overwrite_existing);
  for (const char* ext : {"-wal", "-shm"})
    if (fs::exists(src + ext)) fs::copy_file(src + ext, dst + ext, fs::copy_options::overwrite_existing);
  {
    Db d(dst);
    d.exec("PRAGMA journal_mode=DELETE");
    if (shrink) {  // the two smallest contexts: verify replays every step of every mutant
      d.exec(
          "DELETE FROM contexts WHERE id NOT IN (SELECT context FROM steps GROUP BY context ORDER BY COUNT(*) "
          "LIMIT 2)");
      d.exec("DELETE FROM steps WHERE context NOT IN (SELECT id FROM contexts)");
      d.exec("DELETE FROM matches WHERE step NOT IN (SELECT id FROM steps)");
      d.exec("DELETE FROM rule_errors WHERE step NOT IN (SELECT id FROM steps)");
      d.exec("DELETE FROM context_rule_stats WHERE context NOT IN (SELECT id FROM contexts)");
      if (!d.ints("SELECT 1 FROM sqlite_master WHERE name='step_uops'").empty())
        d.exec("DELETE FROM step_uops WHERE step NOT IN (SELECT id FROM steps)");
      if (!d.ints("SELECT 1 FROM sqlite_master WHERE name='programs'").empty())  // their kernels stay, without context
        d.exec("UPDATE programs SET context=0 WHERE context NOT IN (SELECT id FROM contexts)");
      if (d.ints("SELECT 1 FROM sqlite_master WHERE name='kernel_events'").empty()) {
        // a schema 2 trace: made a schema 3 one with a few kernels and runs, so the kernel paths get mutants too
        d.exec(tg::viz::TRACE_SCHEMA_SQL);
        d.exec("PRAGMA user_version=3");
        int64_t s0 = d.ints("SELECT MAX(id) FROM strings").at(0), ctx = d.ints("SELECT MIN(id) FROM contexts").at(0),
                t0 = d.ints("SELECT MIN(t_start) FROM contexts").at(0);
        auto S = [](int64_t v) { return std::to_string(v); };
        d.exec("INSERT INTO strings VALUES(" + S(s0 + 1) + ", 'E_4_4'), (" + S(s0 + 2) + ", 'CPU'), (" + S(s0 + 3) +
               ", 'r_16'), (" + S(s0 + 4) + ", 'copy    64,     CPU <- NPY')");
        d.exec("INSERT INTO programs VALUES(1, " + S(s0 + 1) + ", " + S(s0 + 2) + ", " + S(ctx) +
               ", 'void E_4_4(float* a) { a[0] = 1; }', 'SINK', '[4, 1, 1]', '[1, 1, 1]', 16, 64, 0), (2, " +
               S(s0 + 3) + ", " + S(s0 + 2) + ", 0, 'void r_16() {}', 'SINK', '[1, 1, 1]', '[16, 1, 1]', -1, -1, -1)");
        for (int k = 0; k < 12; k++)
          d.exec("INSERT INTO kernel_events(program, name, device, t_start, t_end, bufs, var_vals) VALUES(" +
                 S(k % 3 == 2 ? 0 : 1 + k % 3) + ", " + S(k % 3 == 2 ? s0 + 4 : s0 + 1 + 2 * (k % 3)) + ", " +
                 S(s0 + 2) + ", " + S(t0 + 1000 * k) + ", " + S(t0 + 1000 * k + 700) + ", '[[1,64,1],[2,64,0]]', " +
                 (k == 5 ? "'{\"n\": 3}'" : "NULL") + ")");
      }
      d.exec("VACUUM");
    }
  }
  Base b;
  b.path = dst;
  b.size = fs::file_size(dst);
  Db d(dst);
  b.contexts = d.ints("SELECT id FROM contexts ORDER BY id");
  b.steps = d.ints("SELECT id FROM steps ORDER BY id");
  b.matched_steps = d.ints("SELECT step FROM matches GROUP BY step ORDER BY step");
  for (int64_t s : b.matched_steps)
    b.n_matches[s] = d.ints("SELECT COUNT(*) FROM matches WHERE step=" + std::to_string(s)).at(0);
  b.uops = d.ints("SELECT id FROM uops ORDER BY id");
  b.arg_strings = d.ints("SELECT DISTINCT arg FROM uops ORDER BY arg");
  b.dtypes = d.ints("SELECT id FROM dtypes ORDER BY id");
  b.kernels = !d.ints("SELECT 1 FROM sqlite_master WHERE name='kernel_events'").empty();
  if (b.kernels) b.programs = d.ints("SELECT id FROM programs ORDER BY id");
  b.profile = !d.ints("SELECT 1 FROM sqlite_master WHERE name='mem_events'").empty();
  return b;
}

// ***** mutants *****

// the table an UPDATE, INSERT INTO or DELETE FROM statement writes
std::string statement_table(const std::string& q) {
  for (const char* verb : {"UPDATE ", "INSERT INTO ", "DELETE FROM "})
    if (q.rfind(verb, 0) == 0) {
      std::string rest = q.substr(strlen(verb));
      return rest.substr(0, rest.find(' '));
    }
  return "";
}

struct Mutant {
  std::string path, what;
  std::string base_path;  // the undamaged trace it was made from
  size_t base = 0;
  std::vector<int64_t> steps;  // steps the runs look at (the mutated ones first)
  bool quick_check_ok = true;
  uint64_t runs_seed = 0;  // which subcommands run on it
  // the table whose rows the one SQL-level mutation damaged ("" for byte-level damage, two mutations, or damage that
  // is no table's, like the schema version): an error the runs report must name it
  std::string table;
};

struct Mutator {
  std::mt19937_64 rng;
  const Base& b;
  Mutant& m;
  uint64_t pick(uint64_t n) { return n ? rng() % n : 0; }
  template <class V>
  auto any(const V& v) {
    return v.empty() ? typename V::value_type{} : v[pick(v.size())];
  }
  int64_t huge() {
    static const int64_t v[] = {-1,        0,         1'000'000'000, 4'000'000'000LL, (int64_t)1 << 40,
                                INT64_MAX, INT64_MIN, -1'000'000'000};
    return v[pick(sizeof v / sizeof v[0])];
  }
  std::string S(int64_t v) { return std::to_string(v); }

  void flip_bytes(std::string& data, size_t from, int n) {
    if (data.size() <= from) return;
    for (int i = 0; i < n; i++) data[from + pick(data.size() - from)] ^= (char)(1 + pick(255));
  }

  std::string table;  // the table the last sql() damaged, if one

  // an SQL-level mutation; returns its description and sets `table`
  std::string sql(Db& d) {
    table.clear();
    int64_t step = any(b.matched_steps.empty() ? b.steps : b.matched_steps), uop = any(b.uops);
    if (step) m.steps.push_back(step);
    std::string st = S(step), u = S(uop);
    switch (pick(45)) {
      case 0:
        d.exec("UPDATE dtypes SET id=-1 WHERE id=" + S(any(b.dtypes)));
        table = "dtypes";
        return "dtypes id -1";
      case 1: {
        int64_t h = huge();
        d.exec("INSERT OR REPLACE INTO dtypes VALUES(" + S(h) + ",'x')");
        table = "dtypes";
        return "dtypes id " + S(h);
      }
      case 2:
        d.exec("UPDATE uops SET dtype=" + S(huge()) + " WHERE id=" + u);
        table = "uops";
        return "uops.dtype huge, uop " + u;
      case 3:
        d.exec("UPDATE uops SET op=" + S(huge()) + " WHERE id=" + u);
        table = "uops";
        return "uops.op huge, uop " + u;
      case 4:
        d.exec("UPDATE uops SET arg=" + S(huge()) + " WHERE id=" + u);
        table = "uops";
        return "uops.arg dangling, uop " + u;
      case 5:
        d.set_blob("UPDATE uops SET src=? WHERE id=" + u, zigzag_src(uop, uop));
        table = "uops";
        return "self src, uop " + u;
      case 6: {  // a two-node cycle: a src of uop gets uop as its src
        auto srcs = d.ints("SELECT id FROM uops WHERE id<" + u + " ORDER BY id DESC LIMIT 8");
        int64_t a = any(srcs);
        if (!a) return "no cycle";
        d.set_blob("UPDATE uops SET src=? WHERE id=" + S(a), zigzag_src(a, uop));
        d.set_blob("UPDATE uops SET src=? WHERE id=" + u, zigzag_src(uop, a));
        table = "uops";
        return "src cycle " + u + " <-> " + S(a);
      }
      case 7:
        d.set_blob("UPDATE uops SET src=? WHERE id=" + u, zigzag_src(uop, huge()));
        table = "uops";
        return "src dangling, uop " + u;
      case 8: {
        static const char* blobs[] = {"\x80", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", "\x81\x80\x80\x80",
                                      "\x03\x03\x03\x03\x03\x03"};
        const char* bl = blobs[pick(4)];
        d.set_blob("UPDATE uops SET src=? WHERE id=" + u, std::string(bl));
        table = "uops";
        return "src bad varint, uop " + u;
      }
      case 9: {  // random src bytes
        std::string r(1 + pick(12), '\0');
        for (char& c : r) c = (char)pick(256);
        d.set_blob("UPDATE uops SET src=? WHERE id=" + u, r);
        table = "uops";
        return "src random bytes, uop " + u;
      }
      case 10:
      case 11: {
        static const size_t depths[] = {200'000, 20'000, 1'000, 100};
        size_t n = depths[pick(4)];
        bool param = pick(3) == 0;
        std::string a = param ? "" : std::string(n, '(') + "i1" + std::string(n, ')');
        if (param)
          for (size_t i = 0; i < n; i++) a += "P(";
        d.set_text("UPDATE strings SET value=? WHERE id=" + S(any(b.arg_strings)), a);
        table = "strings";
        return "arg nested " + S(n) + (param ? " P(" : " (");
      }
      case 12: {
        // the first wraps the parser's position back to the 's' (colon + 1 + length = 1 modulo 2^64)
        static const char* v[] = {"(s18446744073709551594:x",
                                  "s18446744073709551615:ab",
                                  "s18446744073709551610:abc",
                                  "s999999999999:ab",
                                  "s-1:ab",
                                  "s5:ab",
                                  "s:ab",
                                  "s99999999999999999999999:a",
                                  "R18446744073709551615:x",
                                  "(s18446744073709551614:ab,i1)"};
        std::string a = v[pick(sizeof v / sizeof v[0])];
        d.set_text("UPDATE strings SET value=? WHERE id=" + S(any(b.arg_strings)), a);
        table = "strings";
        return "arg string length " + a;
      }
      case 13: {
        static const char* v[] = {"fZZZZZZZZZZZZZZZZ",
                                  "f12",
                                  "f-000000000000000",
                                  "i99999999999999999999999",
                                  "i",
                                  "i-",
                                  "d",
                                  "P(",
                                  "P(i1,i2)",
                                  "(",
                                  "((",
                                  "(i1,",
                                  "x",
                                  "",
                                  "a\xff",
                                  "o"};
        std::string a = v[pick(sizeof v / sizeof v[0])];
        d.set_text("UPDATE strings SET value=? WHERE id=" + S(any(b.arg_strings)), a);
        table = "strings";
        return "arg malformed '" + a + "'";
      }
      case 14: {
        std::string r(1 + pick(40), '\0');
        for (char& c : r) c = "()isfPdoaARNTFI,:0123456789-"[pick(28)];
        d.set_text("UPDATE strings SET value=? WHERE id=" + S(any(b.arg_strings)), r);
        table = "strings";
        return "arg random '" + r + "'";
      }
      case 15: {
        static const int64_t v[] = {1'000'000'000, -1, 1LL << 31, 1LL << 40, INT64_MAX, 100'000};
        int64_t x = v[pick(6)];
        d.exec("UPDATE steps SET depth=" + S(x) + " WHERE id=" + st);
        table = "steps";
        return "steps.depth " + S(x) + ", step " + st;
      }
      case 16:
      case 17: {
        static const int64_t v[] = {-1, 1'000'000'000'000LL, 1LL << 62, INT64_MAX, INT64_MIN, 100'000'000};
        int64_t x = v[pick(6)];
        d.exec("UPDATE steps SET n_matches=" + S(x) + " WHERE id=" + st);
        table = "steps";
        return "steps.n_matches " + S(x) + ", step " + st;
      }
      case 18: {
        int64_t x = pick(2) ? huge() : 999'999;
        d.exec("UPDATE steps SET context=" + S(x) + " WHERE id=" + st);
        table = "steps";
        return "steps.context " + S(x) + ", step " + st;
      }
      case 19: {
        int64_t x = pick(3) == 0 ? step : pick(2) ? huge() : step + 1;
        d.exec("UPDATE steps SET parent=" + S(x) + " WHERE id=" + st);
        if (pick(2)) d.exec("UPDATE steps SET parent=" + st + " WHERE id=" + S(step - 1));  // parents in a cycle
        table = "steps";
        return "steps.parent " + S(x) + ", step " + st;
      }
      case 20: {
        const char* col = pick(2) ? "input_root" : "output_root";
        int64_t x = huge();
        d.exec(std::string("UPDATE steps SET ") + col + "=" + S(x) + " WHERE id=" + st);
        table = "steps";
        return std::string("steps.") + col + " " + S(x) + ", step " + st;
      }
      case 21: {
        static const char* v[] = {
            "[[1,-,3,4]]", "[[99999999999999999999999,1,1,1]]", "[[1]]", "[[1,2,3,4,5,6,7]]", "[",
            "[[-]]",       "[[1,2,3,-9223372036854775808]]",    "]]]]",  "[[1,2,3,4]",        "x"};
        std::string j = pick(5) ? v[pick(10)] : std::string(100'000, '[');
        d.set_text("UPDATE steps SET stats=? WHERE id=" + st, j);
        table = "steps";
        return "steps.stats '" + j.substr(0, 40) + "'";
      }
      case 22: {
        int64_t x = huge();
        d.exec("UPDATE steps SET id=" + S(x) + " WHERE id=" + st);
        // (no table: the step renumbered is read as another trace's step, and a run that asks for the old number
        // is told the trace has no such step)
        return "steps.id " + S(x);
      }
      case 23: {
        const char* col = pick(2) ? "before" : "after";
        int64_t x = huge();
        d.exec(std::string("UPDATE matches SET ") + col + "=" + S(x) + " WHERE step=" + st +
               " AND ordinal=(SELECT MIN(ordinal) FROM matches WHERE step=" + st + ")");
        table = "matches";
        return std::string("matches.") + col + " " + S(x) + ", step " + st;
      }
      case 24: {
        int64_t x = huge();
        d.exec("UPDATE OR IGNORE matches SET ordinal=" + S(x) + " WHERE step=" + st);
        d.exec("UPDATE matches SET rule=" + S(huge()) + " WHERE step=" + st);
        table = "matches";
        return "matches.ordinal/rule " + S(x) + ", step " + st;
      }
      case 25: {
        int64_t c = any(b.contexts), x = huge();
        d.exec("UPDATE contexts SET " + std::string(pick(2) ? "id" : "name") + "=" + S(x) + " WHERE id=" + S(c));
        table = "contexts";
        return "contexts id/name " + S(x);
      }
      case 26: {  // (picked here: SQLite's random() is not seeded by us)
        auto ids = d.ints("SELECT id FROM strings ORDER BY id");
        std::string list;
        for (int k = 0; k < 5; k++) list += (k ? "," : "") + S(any(ids));
        d.exec("DELETE FROM strings WHERE id IN (" + list + ")");
        table = "strings";
        return "strings " + list + " deleted";
      }
      case 27:
        d.exec("ALTER TABLE meta RENAME COLUMN value TO v");
        return "meta without value";
      case 28:
        d.exec("DROP TABLE meta");
        return "meta dropped";
      case 29: {
        static const char* t[] = {"strings",      "ops",       "dtypes",
                                  "uops",         "rules",     "contexts",
                                  "steps",        "matches",   "context_rule_stats",
                                  "rule_errors",  "step_uops", "programs",
                                  "kernel_events"};
        std::string name = t[pick(13)];
        d.exec("DROP TABLE " + name);
        table = name;
        return "dropped table " + name;
      }
      case 30:
      case 31: {  // a column dropped (views go first: SQLite keeps them consistent)
        for (auto& v :
             {"kernel_events_view", "uops_view", "steps_view", "matches_view", "rule_stats_view", "rule_stats"})
          d.exec(std::string("DROP VIEW IF EXISTS ") + v);
        static const char* tc[][2] = {{"steps", "depth"},        {"steps", "stats"},
                                      {"steps", "n_matches"},    {"uops", "src"},
                                      {"uops", "tag"},           {"uops", "arg"},
                                      {"contexts", "t_end"},     {"strings", "value"},
                                      {"dtypes", "name"},        {"matches", "dur"},
                                      {"rules", "source"},       {"programs", "uops"},
                                      {"kernel_events", "bufs"}, {"rule_errors", "message"},
                                      {"step_uops", "uop"}};
        auto& c = tc[pick(15)];
        d.exec(std::string("ALTER TABLE ") + c[0] + " DROP COLUMN " + c[1]);
        table = c[0];
        return std::string("dropped column ") + c[0] + "." + c[1];
      }
      case 32: {  // a table turned into a view: harmless, or without end
        static const char* t[] = {"steps", "contexts", "uops", "strings", "matches", "dtypes", "meta"};
        std::string name = t[pick(7)];
        d.exec("ALTER TABLE " + name + " RENAME TO " + name + "_old");
        if (pick(2)) {
          d.exec("CREATE VIEW " + name + " AS SELECT * FROM " + name + "_old");
          return "table " + name + " as a view";
        }
        d.exec("CREATE VIEW " + name + " AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT " +
               "o.* FROM r, " + name + "_old o");
        return "table " + name + " as an endless view";
      }
      case 33: {
        static const char* v[] = {"UPDATE steps SET depth='abc'",
                                  "UPDATE uops SET src='text'",
                                  "UPDATE strings SET value=x'00ff00'",
                                  "UPDATE steps SET n_matches=1.5e300",
                                  "UPDATE steps SET input_root='12'",
                                  "UPDATE matches SET before=NULL",
                                  "UPDATE contexts SET t_start=-9223372036854775808"};
        std::string q = v[pick(7)];
        d.exec(q);
        table = statement_table(q);
        if (table == "strings") table.clear();  // every string changed: names read as they are, nothing to catch
        return q;
      }
      case 34: {
        int v = pick(2) ? 99 : (int)pick(4);
        d.exec("PRAGMA user_version=" + S(v));
        return "user_version " + S(v);
      }
      case 35: {  // kernels (schema 3)
        static const char* v[] = {"UPDATE kernel_events SET t_start=-9223372036854775808",
                                  "UPDATE kernel_events SET t_end=9223372036854775807",
                                  "UPDATE kernel_events SET program=4000000000",
                                  "UPDATE programs SET context=-5",
                                  "UPDATE programs SET global_size='[[[[', local_size='x'",
                                  "UPDATE programs SET ops=-7, mem=9223372036854775807",
                                  "UPDATE kernel_events SET bufs='[[1,2', var_vals='{'",
                                  "UPDATE kernel_events SET name=99999999, device=-1",
                                  "UPDATE programs SET id=-1",
                                  "UPDATE kernel_events SET t_start=t_end+1000000000000"};
        std::string q = v[pick(10)];
        d.exec(q);
        table = statement_table(q);
        return q;
      }
      case 36: {
        d.exec("INSERT INTO rule_errors VALUES(" + st + ", 0, " + S(huge()) + ", " + S(huge()) + ", " + S(huge()) +
               ", " + S(huge()) + ")");
        table = "rule_errors";
        return "rule_errors row dangling, step " + st;
      }
      case 37:
        d.exec("INSERT INTO step_uops VALUES(" + st + ", " + S(huge()) + ")");
        table = "step_uops";
        return "step_uops dangling";
      case 38:
        d.exec("UPDATE context_rule_stats SET candidates=9223372036854775807, excl_ns=9223372036854775807");
        table = "context_rule_stats";
        return "context_rule_stats huge";
      case 39:
        d.exec("UPDATE meta SET value='recording' WHERE key='status'");
        return "status recording";
      case 40: {  // many more matches than the step says
        d.exec("INSERT OR IGNORE INTO matches SELECT " + st +
               ", ordinal + 1000000, before, after, rule, dur FROM "
               "matches");
        table = "matches";
        return "matches copied into step " + st;
      }
      case 41: {  // a deep chain of uops (replay and layout iterate, never recurse)
        int64_t top = d.ints("SELECT MAX(id) FROM uops").at(0);
        d.exec(
            "WITH RECURSIVE c(i) AS (SELECT 2 UNION ALL SELECT i+1 FROM c WHERE i<20000) INSERT INTO uops(id, op, "
            "dtype, arg, tag, src) SELECT " +
            S(top) + "+i, 31, 1, " + S(any(b.arg_strings)) + ", NULL, x'02' FROM c");
        d.set_blob("INSERT INTO uops(id, op, dtype, arg, tag, src) VALUES(" + S(top + 1) + ", 31, 1, " +
                       S(any(b.arg_strings)) + ", NULL, ?)",
                   zigzag_src(top + 1, uop));
        d.exec("UPDATE steps SET input_root=" + S(top + 20000) + " WHERE id=" + st);
        return "a chain of 20000 uops under step " + st;
      }
      case 42:
        d.exec("UPDATE steps SET flags=" + S(huge()) + ", line=" + S(huge()) + " WHERE id=" + st);
        table = "steps";
        return "steps.flags/line huge";
      case 43: {  // the profile's rows (schema 5)
        if (!b.profile) return sql(d);
        static const char* v[] = {
            "UPDATE mem_events SET kind=7",
            "UPDATE mem_events SET nbytes=9223372036854775807",
            "UPDATE mem_events SET t=-9223372036854775808",
            "UPDATE mem_events SET device=99999999",
            "UPDATE markers SET name=-1",
            "UPDATE ranges SET t_end=t_start-1",
            "UPDATE kernel_events SET bufs='[[1,2,7]]'",
            "UPDATE kernel_events SET bufs='{\"a\":1}'",
            "INSERT INTO mem_events SELECT id+100000, kind, device, t, buffer, dtype, size, nbytes FROM mem_events",
            "UPDATE mem_events SET buffer=1",
            "UPDATE devices SET tdiff=9223372036854775807",
            "DELETE FROM mem_events WHERE kind=1",
            "UPDATE mem_events SET t=t*1000000",
            "UPDATE kernel_events SET bufs='[[9223372036854775807,9223372036854775807,2]]'"};
        std::string q = v[pick(sizeof v / sizeof v[0])];
        d.exec(q);
        table = statement_table(q);
        return q;
      }
      default:
        d.exec("PRAGMA application_id=7");
        return "application_id 7";
    }
  }

  void make(size_t index, const std::string& dir) {
    m.path = dir + "/m" + std::to_string(index) + ".trace.db";
    m.base_path = b.path;
    std::string data = read_file(b.path);
    uint64_t kind = pick(100);
    bool bytes_damaged = kind < 36 || (kind >= 88 && kind < 94);
    if (kind < 25) {  // byte flips anywhere past the header
      int n = 1 + (int)pick(8);
      flip_bytes(data, 100, n);
      write_file(m.path, data);
      m.what = "flipped " + S(n) + " bytes";
    } else if (kind < 29) {
      flip_bytes(data, 0, 1 + (int)pick(3));
      write_file(m.path, data);
      m.what = "header bytes flipped";
    } else if (kind < 36) {
      size_t len = pick(2) ? pick(data.size()) : 4096 * (1 + pick(data.size() / 4096));
      data.resize(std::min(len, data.size()));
      write_file(m.path, data);
      m.what = "truncated to " + S((int64_t)data.size());
    } else {
      write_file(m.path, data);
      {
        Db d(m.path);
        m.what = sql(d);
        m.table = table;
        if (kind >= 94) m.what += "; " + sql(d), m.table.clear();  // two at once
        if (kind >= 88 && kind < 94) d.exec("UPDATE meta SET value='recording' WHERE key='status'");
      }
      if (kind >= 88 && kind < 94) {  // an unfinished trace with damage: quick_check's turn
        m.table.clear();
        std::string bytes = read_file(m.path);
        int n = 1 + (int)pick(4);
        flip_bytes(bytes, 100, n);
        write_file(m.path, bytes);
        m.what += "; status recording; flipped " + S(n) + " bytes";
      }
    }
    // the runs look at the mutated step, a step with matches and the step with the most
    if (!b.matched_steps.empty()) {
      m.steps.push_back(b.matched_steps.front());
      m.steps.push_back(std::max_element(b.n_matches.begin(), b.n_matches.end(), [](auto& x, auto& y) {
                          return x.second < y.second;
                        })->first);
    }
    std::sort(m.steps.begin(), m.steps.end());
    m.steps.erase(std::unique(m.steps.begin(), m.steps.end()), m.steps.end());
    // an SQL edit leaves a well-formed file: only byte damage needs SQLite's verdict
    m.quick_check_ok = !bytes_damaged || quick_check_ok(m.path);
    m.runs_seed = rng();
  }
};

// ***** runs *****

enum class Runner { CliInProcess, CliBinary, Gui };
const char* runner_name(Runner r) {
  return r == Runner::CliInProcess ? "cli (in-process)" : r == Runner::CliBinary ? "tinyviz-cli" : "tinyviz";
}

struct Job {
  size_t mutant;
  Runner runner;
  std::vector<std::string> args;  // the CLI's argv[1..] (the GUI: the trace)
};
struct Result {
  bool done = false;
  int rc = 0, sig = 0;
  bool hang = false;
  std::string msg;
  double secs = 0;
};

// the subcommands run on a mutant: info, then `n` others picked by its seed (0: all of them), verify on the small bases
std::vector<std::string> cli_runs(const Base& b, const Mutant& m, bool verify, size_t n) {
  std::vector<std::vector<std::string>> r{{"contexts"}, {"steps"}, {"stats"}, {"kernels"}};
  if (b.profile)  // the profile's views and the export (into nothing)
    for (auto args : std::vector<std::vector<std::string>>{{"profile"},
                                                           {"profile", "-t", "--json"},
                                                           {"profile", "-s", "CPU Memory"},
                                                           {"export", "--chrome", "/dev/null"}})
      r.push_back(args);
  r.push_back({"diff", m.path});  // the mutant against itself: both sides read the damage
  if (!b.contexts.empty()) {
    r.push_back({"steps", std::to_string(b.contexts.front())});
    r.push_back({"stats", "--context", std::to_string(b.contexts.back())});
  }
  for (int64_t s : m.steps) {
    std::string id = std::to_string(s);
    r.push_back({"matches", id});
    r.push_back({"stats", "--step", id});
    r.push_back({"frame", id, "0"});
    auto n = b.n_matches.find(s);
    if (n != b.n_matches.end()) r.push_back({"frame", id, std::to_string(n->second)});
  }
  if (n && n < r.size()) {
    std::mt19937_64 rng(m.runs_seed);
    std::shuffle(r.begin(), r.end(), rng);
    r.resize(n);
  }
  r.insert(r.begin(), {"info"});
  if (verify) r.push_back({"verify"});
  std::vector<std::string> lines;
  for (auto& args : r) {
    std::string l = args[0] + "\t" + m.path;
    for (size_t i = 1; i < args.size(); i++) l += "\t" + args[i];
    lines.push_back(l);
  }
  return lines;
}

// a process working through jobs: a worker (reports "B i" / "E i rc message" lines on fd 3) or one CLI binary run
struct Proc {
  std::vector<size_t> jobs;  // indices into the job list
  size_t next = 0;           // first job not finished
  pid_t pid = -1;
  int fd = -1;  // progress (workers) or stderr (binary runs)
  std::string buf;
  double deadline = 0, started = 0;
  bool in_job = false;
  size_t cur = 0;
};

struct Fuzz {
  std::string self, cli_bin, gui_bin, dir, keep;
  double timeout = 10;
  int jobs_n = 2;
  bool verbose = false;
  std::vector<Job> jobs;
  std::vector<Result> results;
  std::map<Runner, double> cpu;  // CPU seconds of the processes, per runner

  void spawn(Proc& p, Runner r) {
    int pipefd[2];
    if (pipe(pipefd) != 0) std::perror("pipe"), std::exit(3);
    std::string jobfile;
    if (r != Runner::CliBinary) {
      jobfile = dir + "/jobs." + std::to_string(p.jobs[p.next]) + ".txt";
      std::ofstream out(jobfile);
      for (size_t i = p.next; i < p.jobs.size(); i++) {
        const Job& j = jobs[p.jobs[i]];
        out << p.jobs[i];
        for (auto& a : j.args) out << '\t' << a;
        out << '\n';
      }
    }
    pid_t pid = fork();
    if (pid == 0) {
      setpgid(0, 0);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
      // runaway allocation ends in bad_alloc, not in swap (not under a sanitizer: its shadow memory reserves terabytes
      // of address space; the timeout still catches a runaway there)
      rlimit lim{(rlim_t)6 << 30, (rlim_t)6 << 30};
      setrlimit(RLIMIT_AS, &lim);
#endif
      int devnull = open("/dev/null", O_RDWR);
      dup2(devnull, 0);
      dup2(devnull, 1);
      if (r == Runner::CliBinary) {
        dup2(pipefd[1], 2);
        const Job& j = jobs[p.jobs[p.next]];
        std::vector<char*> argv{(char*)cli_bin.c_str()};
        for (auto& a : j.args) argv.push_back((char*)a.c_str());
        argv.push_back(nullptr);
        execv(cli_bin.c_str(), argv.data());
      } else {
        dup2(pipefd[1], 3);
        if (r == Runner::Gui) {
          int log = open((dir + "/gui.log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
          dup2(log, 2);
          setenv("QT_QPA_PLATFORM", "offscreen", 1);
          setenv("XDG_CONFIG_HOME", (dir + "/config").c_str(), 1);  // recent files and settings stay in here
          if (!getenv("XDG_RUNTIME_DIR")) setenv("XDG_RUNTIME_DIR", dir.c_str(), 1);
          execl(gui_bin.c_str(), gui_bin.c_str(), jobfile.c_str(), (char*)nullptr);
        } else {
          execl(self.c_str(), self.c_str(), "--cli-worker", jobfile.c_str(), (char*)nullptr);
        }
      }
      _exit(127);
    }
    close(pipefd[1]);
    p.pid = pid;
    p.fd = pipefd[0];
    p.buf.clear();
    p.started = now_s();
    if (r == Runner::CliBinary) {
      p.in_job = true, p.cur = p.jobs[p.next], p.deadline = p.started + timeout;
    } else {
      p.in_job = false, p.deadline = p.started + timeout + (r == Runner::Gui ? 20 : 5);  // startup
    }
  }

  // the process ended (or was killed): the job it was in failed, unless it reported it
  void reap(Proc& p, Runner r, bool killed) {
    int status = 0;
    rusage ru{};
    wait4(p.pid, &status, 0, &ru);
    cpu[r] += ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    close(p.fd);
    p.fd = -1;
    p.pid = -1;
    if (r == Runner::CliBinary) {
      Result& res = results[p.cur];
      res.done = true, res.hang = killed, res.secs = now_s() - p.started;
      if (!killed) {
        res.sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
        res.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      res.msg = p.buf;
      p.next++;
      return;
    }
    if (p.in_job) {
      Result& res = results[p.cur];
      res.done = true, res.hang = killed, res.secs = now_s() - p.started;
      res.sig = !killed && WIFSIGNALED(status) ? WTERMSIG(status) : 0;
      if (!killed && !res.sig) res.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1, res.msg = "worker exited";
      while (p.next < p.jobs.size() && p.jobs[p.next] != p.cur) p.next++;
      p.next++;
      p.in_job = false;
    } else if (p.next < p.jobs.size()) {
      // died between jobs (or never started): blame the next one so the run goes on
      Result& res = results[p.jobs[p.next]];
      res.done = true, res.hang = killed, res.sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
      res.msg = "worker failed between jobs";
      p.next++;
    }
  }

  void on_line(Proc& p, Runner r, const std::string& line) {
    if (line.size() > 2 && line[0] == 'B') {
      p.cur = std::stoull(line.substr(2));
      p.in_job = true;
      p.started = now_s();
      p.deadline = p.started + timeout;
    } else if (line.size() > 2 && line[0] == 'E') {
      auto f = split(line, '\t');
      size_t i = std::stoull(f[0].substr(2));
      Result& res = results[i];
      res.done = true, res.rc = std::stoi(f.at(1)), res.msg = f.size() > 2 ? fuzz::unescape(f[2]) : "";
      res.secs = now_s() - p.started;
      while (p.next < p.jobs.size() && p.jobs[p.next] != i) p.next++;
      p.next++;
      p.in_job = false;
      p.deadline = now_s() + timeout;  // until the next B line
    }
  }

  // runs every job of these batches, `jobs_n` processes at a time
  void run(std::vector<std::pair<Runner, std::vector<size_t>>> batches) {
    struct Slot {
      Runner r;
      Proc p;
    };
    std::vector<Slot> queue, running;
    for (auto& [r, js] : batches) {
      if (js.empty()) continue;
      if (r == Runner::CliBinary) {
        for (size_t j : js) queue.push_back({r, Proc{{j}}});
      } else {
        queue.push_back({r, Proc{js}});
      }
    }
    std::reverse(queue.begin(), queue.end());
    while (!queue.empty() || !running.empty()) {
      while ((int)running.size() < jobs_n && !queue.empty()) {
        running.push_back(std::move(queue.back()));
        queue.pop_back();
        spawn(running.back().p, running.back().r);
      }
      std::vector<pollfd> fds;
      double t = now_s(), wait = 1.0;
      for (auto& s : running) {
        fds.push_back({s.p.fd, POLLIN, 0});
        wait = std::min(wait, s.p.deadline - t);
      }
      poll(fds.data(), fds.size(), std::max(0, (int)(wait * 1000)));
      for (size_t k = 0; k < running.size(); k++) {
        Slot& s = running[k];
        bool ended = false, killed = false;
        if (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) {
          char chunk[65536];
          ssize_t n = read(s.p.fd, chunk, sizeof chunk);
          if (n <= 0) {
            ended = true;
          } else {
            s.p.buf.append(chunk, (size_t)n);
            if (s.r != Runner::CliBinary) {
              size_t nl;
              while ((nl = s.p.buf.find('\n')) != std::string::npos) {
                std::string line = s.p.buf.substr(0, nl);
                s.p.buf.erase(0, nl + 1);
                on_line(s.p, s.r, line);
              }
            } else if (s.p.buf.size() > (1 << 20)) {
              s.p.buf.resize(1 << 20);
            }
          }
        }
        if (!ended && now_s() > s.p.deadline) {
          kill(-s.p.pid, SIGKILL);
          kill(s.p.pid, SIGKILL);
          ended = killed = true;
        }
        if (ended) {
          reap(s.p, s.r, killed);
          if (s.p.next < s.p.jobs.size() && s.r != Runner::CliBinary)
            spawn(s.p, s.r);
          else
            s.p.fd = -1;
        }
      }
      running.erase(std::remove_if(running.begin(), running.end(), [](const Slot& s) { return s.p.fd < 0; }),
                    running.end());
    }
  }
};

// tinyviz-cli's message for the run's arguments on the mutant's undamaged base, with the mutant's path in it (run
// in-process, once per arguments)
std::string base_message(const Job& j, const Mutant& m) {
  static std::map<std::vector<std::string>, std::string> cache;
  std::vector<std::string> args{"tinyviz-cli"};
  for (const std::string& a : j.args) args.push_back(a == m.path ? m.base_path : a);
  auto it = cache.find(args);
  if (it == cache.end()) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int cap = memfd_create("stderr", 0), saved = dup(2), out = dup(1), null = open("/dev/null", O_WRONLY);
    std::fflush(stdout);
    std::fflush(stderr);
    dup2(cap, 2);
    dup2(null, 1);
    tg::viz::cli_main((int)args.size(), argv.data());
    std::fflush(stdout);
    std::fflush(stderr);
    dup2(saved, 2);
    dup2(out, 1);
    std::string msg(std::min<off_t>(lseek(cap, 0, SEEK_END), 1 << 16), '\0');
    pread(cap, msg.data(), msg.size(), 0);
    for (int fd : {cap, saved, out, null}) close(fd);
    it = cache.emplace(args, msg).first;
  }
  std::string msg = it->second;
  for (size_t at = 0; (at = msg.find(m.base_path, at)) != std::string::npos; at += m.path.size())
    msg.replace(at, m.base_path.size(), m.path);
  return msg;
}

// a run's verdict: "" when it passed
std::string verdict(const Job& j, const Result& r, const Mutant& m) {
  if (!r.done) return "never ran";
  if (r.hang) return "hang (over the time limit)";
  if (r.sig) return "crash (signal " + std::to_string(r.sig) + ", " + strsignal(r.sig) + ")";
  // verify and diff exit 1 with no message when the trace fails a replay or differs from the other: an answer
  bool verify = j.runner != Runner::Gui && (j.args[0] == "verify" || j.args[0] == "diff");
  if (r.rc == 0 || (verify && r.rc == 1 && r.msg.empty())) return "";
  for (const std::string& line : split(r.msg, '\n'))
    if (!line.empty() && line.find(m.path) == std::string::npos) return "unclear message (does not name the file)";
  if (r.msg.empty()) return "error status without a message";
  if (r.msg.find("internal error") != std::string::npos) return "unclear message (an unconverted exception)";
  // an error about damage names the damaged table; one the undamaged base gives too is the answer to the run's
  // arguments (a source or step the trace does not have), not about the damage
  auto answer = [](const std::string& msg) {  // without the listing or suggestion after it (names from the trace)
    return msg.substr(0, std::min(msg.find(" ("), msg.find(", did you mean")));
  };
  if (!m.table.empty() && j.runner != Runner::Gui && r.msg.find(m.table) == std::string::npos &&
      answer(r.msg) != answer(base_message(j, m)))
    return "unclear message (does not name the damaged table " + m.table + ")";
  if (j.runner != Runner::Gui && r.msg.rfind("tinyviz-cli: ", 0) != 0)
    return "unclear message (no tinyviz-cli: prefix)";
  return "";
}

// ***** the in-process CLI worker *****

int cli_worker(const std::string& jobfile) {
  std::ifstream in(jobfile);
  FILE* progress = fdopen(3, "w");
  if (!progress) return 3;
  int cap = memfd_create("stderr", 0);
  for (std::string line; std::getline(in, line);) {
    auto f = split(line, '\t');
    std::fprintf(progress, "B %s\n", f[0].c_str());
    std::fflush(progress);
    std::vector<std::string> args{"tinyviz-cli"};
    args.insert(args.end(), f.begin() + 1, f.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ftruncate(cap, 0);
    lseek(cap, 0, SEEK_SET);
    std::fflush(stderr);
    dup2(cap, 2);
    int rc = tg::viz::cli_main((int)args.size(), argv.data());
    std::fflush(stdout);
    std::fflush(stderr);
    std::string msg(std::min<off_t>(lseek(cap, 0, SEEK_END), 1 << 16), '\0');
    pread(cap, msg.data(), msg.size(), 0);
    std::fprintf(progress, "E %s\t%d\t%s\n", f[0].c_str(), rc, fuzz::escape(msg).c_str());
    std::fflush(progress);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && !std::strcmp(argv[1], "--cli-worker")) return cli_worker(argv[2]);
  Fuzz fz;
  fz.self = fs::canonical("/proc/self/exe");
  uint64_t seed = 1;
  size_t n_mutants = 2000, gui_every = 40, bin_every = 20, runs_per_mutant = 4;
  std::vector<std::string> bases;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) std::fprintf(stderr, "trace_fuzz: %s needs a value\n", a.c_str()), std::exit(2);
      return argv[++i];
    };
    if (a == "--seed")
      seed = std::stoull(next());
    else if (a == "--mutants")
      n_mutants = std::stoull(next());
    else if (a == "--jobs")
      fz.jobs_n = std::max(1, std::stoi(next()));
    else if (a == "--timeout")
      fz.timeout = std::stod(next());
    else if (a == "--cli-bin")
      fz.cli_bin = next();
    else if (a == "--gui-bin")
      fz.gui_bin = next();
    else if (a == "--gui-every")
      gui_every = std::stoull(next());
    else if (a == "--bin-every")
      bin_every = std::stoull(next());
    else if (a == "--runs")
      runs_per_mutant = std::stoull(next());
    else if (a == "--keep")
      fz.keep = next();
    else if (a == "--verbose")
      fz.verbose = true;
    else if (a.rfind("--", 0) == 0)
      std::fprintf(stderr, "trace_fuzz: unknown option %s\n", a.c_str()), std::exit(2);
    else
      bases.push_back(a);
  }
  if (bases.empty()) {
    std::fprintf(stderr, "usage: trace_fuzz [options] BASE.trace.db...\n");
    return 2;
  }
  double t0 = now_s();
  char tmpl[] = "/tmp/trace_fuzz.XXXXXX";
  fz.dir = mkdtemp(tmpl);
  std::vector<Base> base;
  for (size_t i = 0; i < bases.size(); i++) {
    base.push_back(load_base(bases[i], fz.dir + "/base" + std::to_string(2 * i) + ".trace.db", false));
    base.push_back(load_base(bases[i], fz.dir + "/base" + std::to_string(2 * i + 1) + ".trace.db", true));
  }
  // mutants: even ones from the whole traces, odd ones from the two-context copies (those also run verify)
  std::vector<Mutant> mutants(n_mutants);
  {
    // made on every core: each mutant is its own file, its own SQLite connection and its own random stream
    std::vector<std::thread> makers;
    for (int k = 0; k < fz.jobs_n; k++)
      makers.emplace_back([&, k] {
        for (size_t i = (size_t)k; i < n_mutants; i += (size_t)fz.jobs_n) {
          Mutant& m = mutants[i];
          m.base = i % base.size();
          std::seed_seq ss{seed, (uint64_t)i};
          std::mt19937_64 rng(ss);
          Mutator mu{rng, base[m.base], m};
          mu.make(i, fz.dir);
        }
      });
    for (auto& t : makers) t.join();
  }
  double t_made = now_s();
  std::vector<size_t> in_proc, binary, gui;
  for (size_t i = 0; i < n_mutants; i++) {
    const Mutant& m = mutants[i];
    bool small = m.base % 2 == 1;
    for (auto& l : cli_runs(base[m.base], m, small, runs_per_mutant)) {
      in_proc.push_back(fz.jobs.size());
      fz.jobs.push_back({i, Runner::CliInProcess, split(l, '\t')});
    }
    if (!fz.cli_bin.empty() && bin_every && i % bin_every == 0)
      for (const char* cmd : {"steps", "stats"}) {
        binary.push_back(fz.jobs.size());
        fz.jobs.push_back({i, Runner::CliBinary, {cmd, m.path}});
      }
    if (!fz.gui_bin.empty() && gui_every && i % gui_every == 0) {
      gui.push_back(fz.jobs.size());
      fz.jobs.push_back({i, Runner::Gui, {m.path}});
    }
  }
  fz.results.resize(fz.jobs.size());
  // the in-process runs in shards, so both cores work
  std::vector<std::pair<Runner, std::vector<size_t>>> batches;
  size_t shards = 4 * (size_t)fz.jobs_n;  // small enough to share the cores with the GUI's batch
  for (size_t s = 0; s < shards; s++) {
    std::vector<size_t> part;
    for (size_t k = s * in_proc.size() / shards; k < (s + 1) * in_proc.size() / shards; k++) part.push_back(in_proc[k]);
    batches.push_back({Runner::CliInProcess, part});
  }
  if (!gui.empty()) batches.insert(batches.begin(), {Runner::Gui, gui});
  batches.push_back({Runner::CliBinary, binary});
  fz.run(batches);

  // ***** the report *****
  struct Tally {
    size_t runs = 0, crashes = 0, hangs = 0, unclear = 0, errors = 0;
    double secs = 0, cpu = 0;
  };
  std::map<std::string, Tally> by_runner;
  std::map<std::string, size_t> by_kind;
  std::set<size_t> bad_mutants, rejected;
  std::vector<std::string> failures;
  for (size_t k = 0; k < fz.jobs.size(); k++) {
    const Job& j = fz.jobs[k];
    const Result& r = fz.results[k];
    const Mutant& m = mutants[j.mutant];
    Tally& t = by_runner[runner_name(j.runner)];
    t.cpu = fz.cpu[j.runner];
    t.runs++;
    t.secs += r.secs;
    std::string v = verdict(j, r, m);
    if (r.done && !r.hang && !r.sig && r.rc != 0 &&
        !(j.runner != Runner::Gui && (j.args[0] == "verify" || j.args[0] == "diff") && r.msg.empty()))
      t.errors++, rejected.insert(j.mutant);
    if (v.empty()) continue;
    if (v.rfind("crash", 0) == 0)
      t.crashes++;
    else if (v.rfind("hang", 0) == 0)
      t.hangs++;
    else
      t.unclear++;
    by_kind[v.substr(0, v.find(' '))]++;
    if (!bad_mutants.insert(j.mutant).second && !fz.verbose) continue;  // the first failure of each mutant
    std::string cmd = runner_name(j.runner);
    for (auto& a : j.args) cmd += " " + a;
    std::string msg = r.msg.substr(0, 300);
    std::replace(msg.begin(), msg.end(), '\n', ' ');
    failures.push_back(v + ": " + cmd + "  [" + m.what + "]  " + msg);
  }
  size_t corrupt_accepted = 0, corrupt = 0;
  for (size_t i = 0; i < n_mutants; i++)
    if (!mutants[i].quick_check_ok) {
      corrupt++;
      if (!rejected.count(i)) corrupt_accepted++;
    }
  rusage self_use{}, child_use{};
  getrusage(RUSAGE_SELF, &self_use);
  getrusage(RUSAGE_CHILDREN, &child_use);
  auto cpu = [](const rusage& u) {
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  };
  std::printf(
      "trace_fuzz: seed %llu, %zu mutants of %zu base traces (%zu corrupt to SQLite's quick_check), %zu runs "
      "in %.1f s, %.1f s CPU (mutants made in %.1f s)\n",
      (unsigned long long)seed, n_mutants, bases.size(), corrupt, fz.jobs.size(), now_s() - t0,
      cpu(self_use) + cpu(child_use), t_made - t0);
  for (auto& [name, t] : by_runner)
    std::printf("  %-18s %6zu runs (%5.1f s CPU): %zu crashes, %zu hangs, %zu unclear messages, %zu clear errors\n",
                name.c_str(), t.runs, t.cpu, t.crashes, t.hangs, t.unclear, t.errors);
  std::printf("  mutants failing a run: %zu; corrupt mutants every run accepted: %zu of %zu\n", bad_mutants.size(),
              corrupt_accepted, corrupt);
  size_t shown = 0;
  for (auto& f : failures)
    if (fz.verbose || shown++ < 25) std::printf("  FAIL %s\n", f.c_str());
  if (!fz.keep.empty() && !bad_mutants.empty()) {
    fs::create_directories(fz.keep);
    std::ofstream out(fz.keep + "/failures");
    for (auto& f : failures) out << f << '\n';
    for (size_t i : bad_mutants)
      fs::copy_file(mutants[i].path, fz.keep + "/" + fs::path(mutants[i].path).filename().string(),
                    fs::copy_options::overwrite_existing);
  }
  fs::remove_all(fz.dir);
  return failures.empty() ? 0 : 1;
}
