#include "viz/reader/reader.h"

#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <climits>
#include <functional>
#include <set>

#include "viz/reader/argfmt.h"
#include "viz/schema.h"

namespace tg::viz {

namespace {
const char* const kOpNames[] = {
    nullptr,      "SPECIAL",   "BUFFER",   "NOOP",     "REWRITE_ERROR", "PARAM",
    "FUNCTION",   "CALL",      "PROGRAM",  "LINEAR",   "SOURCE",        "BINARY",
    "SINK",       "AFTER",     "GROUP",    "STACK",    "TUPLE",         "GETTUPLE",
    "GETADDR",    "INDEX",     "SHRINK",   "LOAD",     "STORE",         "WMMA",
    "CAST",       "BITCAST",   "EXP2",     "LOG2",     "SIN",           "SQRT",
    "RECIPROCAL", "NEG",       "TRUNC",    "ADD",      "MUL",           "SHL",
    "SHR",        "CDIV",      "MAX",      "CMOD",     "CMPLT",         "CMPNE",
    "CMPEQ",      "XOR",       "OR",       "AND",      "THREEFRY",      "SUB",
    "FDIV",       "POW",       "FLOORDIV", "FLOORMOD", "WHERE",         "MULACC",
    "BARRIER",    "RANGE",     "IF",       "END",      "ENDIF",         "WAIT",
    "CONST",      "CUSTOM",    "CUSTOMI",  "INS",      "CONTIGUOUS",    "CONTIGUOUS_BACKWARD",
    "DETACH",     "STAGE",     "COPY",     "MSELECT",  "MSTACK",        "CUSTOM_FUNCTION",
    "RESHAPE",    "PERMUTE",   "EXPAND",   "PAD",      "FLIP",          "UNSHARD",
    "REDUCE",     "ALLREDUCE", "PYLITERAL"};
constexpr int kNumOps = 80;
constexpr const char* kStepColumns =
    "SELECT id, context, parent, depth, name, file, line, flags, input_root, output_root, t_start, t_end, n_matches, "
    "error FROM steps";
// steady-clock ns: a timestamp beyond this either way is damage (and any difference of two fits in an int64)
constexpr int64_t kMaxTime = (int64_t)1 << 61;
constexpr int64_t kMaxDtypes = 1024;   // dtype ids index a table; the engine has a few dozen
constexpr int64_t kMinMatchBytes = 8;  // a matches row takes at least this much of the file

}  // namespace

const char* trace_op_name(int op) { return op > 0 && op <= kNumOps ? kOpNames[op] : nullptr; }
int trace_num_ops() { return kNumOps; }

namespace {

thread_local bool g_load_catalog = true;
std::atomic<size_t> g_display_text_limit{0};  // open_for_queries: load() stops after the dtype names

std::string S(int64_t v) { return std::to_string(v); }

// the columns the reader uses, per table (the schema may have more); programs and kernel_events from schema 3
struct TableSpec {
  const char* name;
  std::vector<const char*> columns;
  int since;
};
const std::vector<TableSpec>& table_specs() {
  static const std::vector<TableSpec> specs = {
      {"meta", {"key", "value"}, 2},
      {"strings", {"id", "value"}, 2},
      {"dtypes", {"id", "name"}, 2},
      {"uops", {"id", "op", "dtype", "arg", "tag", "src"}, 2},
      {"rules", {"id", "matcher", "file", "line", "source"}, 2},
      {"contexts", {"id", "name", "thread", "t_start", "t_end"}, 2},
      {"steps",
       {"id", "context", "parent", "depth", "name", "file", "line", "flags", "input_root", "output_root", "t_start",
        "t_end", "n_matches", "error", "stats"},
       2},
      {"matches", {"step", "ordinal", "before", "after", "rule", "dur"}, 2},
      {"context_rule_stats",
       {"context", "rule", "candidates", "early_rejects", "attempts", "matches", "excl_ns", "incl_ns"},
       2},
      {"rule_errors", {"step", "ordinal", "before", "error_uop", "rule", "message"}, 2},
      {"step_uops", {"step", "uop"}, 2},
      {"programs",
       {"id", "name", "device", "context", "source", "uops", "global_size", "local_size", "ops", "mem", "lds"},
       3},
      {"kernel_events", {"id", "program", "name", "device", "t_start", "t_end", "bufs", "var_vals"}, 3},
      {"replay_checkpoints", {"step", "frame", "graph"}, 4},
      {"mem_events", {"id", "kind", "device", "t", "buffer", "dtype", "size", "nbytes"}, 5},
      {"markers", {"id", "t", "name", "color"}, 5},
      {"ranges", {"id", "device", "name", "t_start", "t_end"}, 5},
      {"devices", {"device", "tdiff", "props"}, 5},
      {"machine_code", {"program", "kind", "code"}, 6},
  };
  return specs;
}

const char* type_name(int type) {
  switch (type) {
    case SQLITE_INTEGER:
      return "an integer";
    case SQLITE_FLOAT:
      return "a float";
    case SQLITE_TEXT:
      return "text";
    case SQLITE_BLOB:
      return "a blob";
    default:
      return "NULL";
  }
}

// a prepared statement over one table. Every row error names the file, the table and the row (set with at()); an
// SQLite error while stepping (a corrupt page) becomes a TraceError too, never the silent end of the rows
struct Stmt {
  sqlite3_stmt* s = nullptr;
  const Trace& t;
  const char* table;
  // the row being read, named when an error is thrown (building its text for every row cost more than the row's
  // read): "" before its id is known, its id (at), "step S, ordinal K" (at_ordinal), or a text (name)
  std::string key;
  enum { kText, kRow, kOrdinal } key_kind = kText;
  int64_t key_row = 0, key_step = 0;
  bool owned = true;
  Stmt(sqlite3* db, const std::string& sql, const Trace& tr, const char* tbl) : t(tr), table(tbl) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) != SQLITE_OK)
      t.fail_key(table, "", std::string("cannot be read: ") + sqlite3_errmsg(db));
  }
  // a statement the Trace keeps prepared: left reset, not finalized
  Stmt(sqlite3_stmt* cached, const Trace& tr, const char* tbl) : s(cached), t(tr), table(tbl), owned(false) {}
  ~Stmt() {
    if (owned)
      sqlite3_finalize(s);
    else
      sqlite3_reset(s);
  }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool step() {
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    t.fail_key(table, key_text(), std::string("cannot be read: ") + sqlite3_errmsg(sqlite3_db_handle(s)));
  }
  void reset() {
    sqlite3_reset(s);
    name("");
  }
  void at(int64_t row) { key_kind = kRow, key_row = row; }
  void at_ordinal(int64_t step, int64_t ordinal) { key_kind = kOrdinal, key_step = step, key_row = ordinal; }
  void name(std::string k) { key_kind = kText, key = std::move(k); }
  std::string key_text() const {
    return key_kind == kRow       ? S(key_row)
           : key_kind == kOrdinal ? "step " + S(key_step) + ", ordinal " + S(key_row)
                                  : key;
  }
  [[noreturn]] void bad(int c, const std::string& what) {
    t.fail_key(table, key_text(), std::string(sqlite3_column_name(s, c)) + " " + what);
  }
  bool null(int c) { return sqlite3_column_type(s, c) == SQLITE_NULL; }
  int64_t i(int c) {  // an integer column (NULL, text, a float or a blob there is damage)
    int type = sqlite3_column_type(s, c);
    if (type != SQLITE_INTEGER) bad(c, std::string("holds ") + type_name(type) + ", not an integer");
    return sqlite3_column_int64(s, c);
  }
  int64_t i_or_0(int c) { return null(c) ? 0 : i(c); }  // a nullable integer column
  int64_t in_range(int c, int64_t lo, int64_t hi) {
    int64_t v = i(c);
    if (v < lo || v > hi) bad(c, S(v) + " is out of range (" + S(lo) + ".." + S(hi) + ")");
    return v;
  }
  std::string t_(int c) {
    const unsigned char* p = sqlite3_column_text(s, c);
    return p ? std::string((const char*)p, sqlite3_column_bytes(s, c)) : std::string();
  }
};

// one file's size (0 when it does not exist)
uint64_t size_of(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? (uint64_t)st.st_size : 0;
}
}  // namespace

void Trace::fail(const char* table, int64_t row, const std::string& what) const { fail_key(table, S(row), what); }
void Trace::fail_key(const char* table, const std::string& key, const std::string& what) const {
  std::string m = "trace '" + path_ + "'";
  if (table && *table) m += std::string(": table ") + table;
  if (!key.empty()) m += ", row " + key;
  // "table meta has no column value", "table steps is a view, not a table"; else "...: what"
  bool verb = table && *table && key.empty() && (what.rfind("has ", 0) == 0 || what.rfind("is ", 0) == 0);
  m += (verb ? " " : ": ") + what;
  std::replace(m.begin(), m.end(), '\n', ' ');  // one line (SQLite's messages can hold several)
  throw TraceError(m);
}

std::unique_ptr<Trace> Trace::open(const std::string& path, bool program_text) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) throw TraceError("cannot open trace '" + path + "': no such file");
  if (S_ISDIR(st.st_mode)) throw TraceError("cannot open trace '" + path + "': it is a directory");
  if (st.st_size < 100) throw TraceError("trace '" + path + "' is not a tinygrad trace (file is empty or truncated)");
  {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throw TraceError("cannot open trace '" + path + "': permission denied");
    char hdr[16] = {0};
    size_t n = std::fread(hdr, 1, 16, f);
    std::fclose(f);
    if (n < 16 || std::string(hdr, 15) != "SQLite format 3")
      throw TraceError("trace '" + path + "' is not a tinygrad trace (not an SQLite database)");
  }
  std::unique_ptr<Trace> t(new Trace());
  t->path_ = path;
  t->program_text_ = program_text;
  t->file_bytes_ = (uint64_t)st.st_size + size_of(path + "-wal");
  if (sqlite3_open_v2(path.c_str(), &t->db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK)
    throw TraceError("cannot open trace '" + path + "': " + (t->db_ ? sqlite3_errmsg(t->db_) : "out of memory"));
  // SQLite's advice for files from elsewhere (sqlite.org/security.html): no functions with side effects from the
  // schema, checked cell sizes, no memory-mapped reads
  sqlite3_db_config(t->db_, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(t->db_, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_exec(t->db_, "PRAGMA cell_size_check=ON; PRAGMA mmap_size=0", nullptr, nullptr, nullptr);
  auto pragma = [&](const char* q) -> int64_t {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(t->db_, q, -1, &s, nullptr) != SQLITE_OK)
      throw TraceError("trace '" + path + "' is corrupt or truncated: " + sqlite3_errmsg(t->db_));
    int rc = sqlite3_step(s);
    int64_t v = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW) throw TraceError("trace '" + path + "' is corrupt or truncated: " + sqlite3_errmsg(t->db_));
    return v;
  };
  int64_t app = pragma("PRAGMA application_id");
  if (app != TRACE_APPLICATION_ID)
    throw TraceError("trace '" + path + "' is not a tinygrad trace (application_id " + std::to_string(app) + ")");
  int64_t ver = pragma("PRAGMA user_version");
  if (ver > TRACE_SCHEMA_VERSION)
    throw TraceError("trace '" + path + "' was written by a newer tinygrad-cpp (schema " + std::to_string(ver) +
                     ", this reader understands up to " + std::to_string(TRACE_SCHEMA_VERSION) + ")");
  if (ver < 1) throw TraceError("trace '" + path + "' has no schema version (not a tinygrad trace)");
  if (ver < TRACE_SCHEMA_MIN_READ)
    throw TraceError("trace '" + path + "' was written by an older tinygrad-cpp (schema " + std::to_string(ver) +
                     ", this reader understands " + std::to_string(TRACE_SCHEMA_MIN_READ) + " to " +
                     std::to_string(TRACE_SCHEMA_VERSION) + "): record it again");
  t->schema_version_ = (int)ver;
  // 512 KB of page cache per connection instead of 2 MB (tinyviz keeps three; pages come back from the OS's file
  // cache: no stepping or query time measurable)
  sqlite3_exec(t->db_, "PRAGMA cache_size=-512", nullptr, nullptr, nullptr);
  try {
    t->check_schema();
    t->read_meta();
    if (g_load_catalog && (!t->complete_ || t->file_bytes_ <= kQuickCheckBytes)) t->quick_check();
    t->load();
  } catch (const TraceError&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw TraceError("trace '" + path + "' cannot be read: it asks for more memory than there is");
  } catch (const std::exception& e) {
    throw TraceError("trace '" + path + "' cannot be read: " + e.what());
  }
  return t;
}

Trace::~Trace() {
  sqlite3_finalize(str_stmt_);
  sqlite3_finalize(node_stmt_);
  if (db_) sqlite3_close(db_);
}

// every table the reader uses is a table (not a view: a view can be made to run without end) with the columns it reads
void Trace::check_schema() {
  struct Object {
    std::string type, sql;
    std::set<std::string> columns;
  };
  std::map<std::string, Object> objects;
  {
    // one query for every table's columns (the names are the reader's own, quoted as SQL strings)
    std::string names;
    for (const TableSpec& spec : table_specs()) names += std::string(names.empty() ? "'" : ",'") + spec.name + "'";
    Stmt q(db_,
           "SELECT m.name, m.type, m.sql, p.name FROM sqlite_master m LEFT JOIN pragma_table_info(m.name) p "
           "WHERE m.name IN (" +
               names + ")",
           *this, "sqlite_master");
    while (q.step()) {
      Object& o = objects[q.t_(0)];
      o.type = q.t_(1), o.sql = q.t_(2);
      if (!q.null(3)) o.columns.insert(q.t_(3));
    }
  }
  for (const TableSpec& spec : table_specs()) {
    auto it = objects.find(spec.name);
    if (it == objects.end()) {
      if (spec.since > schema_version_) continue;  // programs and kernel_events: schema 3
      fail_key(spec.name, "", "is missing (a truncated or damaged trace)");
    }
    if (it->second.type != "table" || it->second.sql.rfind("CREATE VIRTUAL", 0) == 0)
      fail_key(spec.name, "", "is a " + it->second.type + ", not a table");
    for (const char* c : spec.columns)
      if (!it->second.columns.count(c)) fail_key(spec.name, "", std::string("has no column ") + c);
  }
}

void Trace::read_meta() {
  Stmt q(db_, "SELECT key, value FROM meta", *this, "meta");
  while (q.step()) {
    if (sqlite3_column_type(q.s, 0) != SQLITE_TEXT) q.bad(0, "is not text");
    q.name("'" + q.t_(0).substr(0, 40) + "'");
    if (sqlite3_column_type(q.s, 1) != SQLITE_TEXT) q.bad(1, "is not text");
    if (q.t_(0) == "status") complete_ = q.t_(1) == "complete", truncated_ = q.t_(1) == "truncated";
  }
}

// SQLite's structural check of every page: a run that was killed, or a file that was damaged, shows it here instead
// of as wrong rows later
void Trace::quick_check() {
  sqlite3_stmt* q = nullptr;
  std::string problems;
  int rc = sqlite3_prepare_v2(db_, "PRAGMA quick_check(3)", -1, &q, nullptr);
  if (rc == SQLITE_OK)
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
      const unsigned char* t = sqlite3_column_text(q, 0);
      std::string line = t ? (const char*)t : "";
      if (line == "ok") continue;
      std::replace(line.begin(), line.end(), '\n', ' ');
      problems += (problems.empty() ? "" : "; ") + line;
    }
  if (rc != SQLITE_DONE) problems += (problems.empty() ? "" : "; ") + std::string(sqlite3_errmsg(db_));
  sqlite3_finalize(q);
  if (!problems.empty())
    throw TraceError("trace '" + path_ + "' is corrupt (SQLite's quick_check: " + problems.substr(0, 400) + ")");
}

const ProgramRow* Trace::program(int64_t id) const {
  auto it = program_index_.find(id);
  return it == program_index_.end() ? nullptr : &programs_[it->second];
}

std::pair<std::string, std::string> Trace::program_text(int64_t id) const {
  Stmt q(db_, "SELECT source, uops FROM programs WHERE id=?", *this, "programs");
  sqlite3_bind_int64(q.s, 1, id);
  if (!q.step()) throw TraceError("trace '" + path_ + "' has no program " + std::to_string(id));
  return {q.t_(0), q.t_(1)};
}

std::optional<MachineCodeRow> Trace::machine_code(int64_t program) const {
  if (!has_machine_code()) return std::nullopt;
  Stmt q(db_, "SELECT kind, code FROM machine_code WHERE program=?", *this, "machine_code");
  sqlite3_bind_int64(q.s, 1, program);
  q.at(program);
  if (!q.step()) return std::nullopt;
  for (int c = 0; c < 2; c++) {
    int type = sqlite3_column_type(q.s, c);
    if (type != SQLITE_TEXT) q.bad(c, std::string("holds ") + type_name(type) + ", not text");
    if (sqlite3_column_bytes(q.s, c) > (c ? kMaxMachineCodeBytes : 4096))
      q.bad(c, "is " + S(sqlite3_column_bytes(q.s, c)) + " bytes long, more than a kernel's machine code can be");
  }
  return MachineCodeRow{q.t_(0), q.t_(1)};
}

const ProgramRow* Trace::program_of_context(int64_t context) const {
  auto it = program_by_ctx_.find(context);
  return it == program_by_ctx_.end() ? nullptr : &programs_[it->second];
}

std::unique_ptr<Trace> Trace::open_for_queries(const std::string& path) {
  g_load_catalog = false;
  try {
    auto t = open(path, false);
    g_load_catalog = true;
    return t;
  } catch (...) {
    g_load_catalog = true;
    throw;
  }
}

// a step row; its references to other rows are checked by load() (a trace opened for queries reads steps one by one)
StepRow Trace::read_step(void* stmt) const {
  Stmt& q = *static_cast<Stmt*>(stmt);
  StepRow s;
  s.id = q.i(0);
  q.at(s.id);
  if (s.id < 1) q.bad(0, S(s.id) + " is not a step id (ids start at 1)");
  s.context = q.i(1);
  s.parent = q.i(2);
  if (s.parent < 0 || s.parent >= s.id) q.bad(2, S(s.parent) + " is not an earlier step");
  // a step at depth d is nested in d steps, each with a smaller id
  s.depth = (int)q.in_range(3, 0, std::min<int64_t>(s.id - 1, INT_MAX));
  if (s.parent == 0 && s.depth != 0) q.bad(3, S(s.depth) + " for a step without a parent");
  std::string key = S(s.id);
  s.name = display_text(str_ref(q.i(4), "steps", key, "name"));
  s.file = display_text(str_ref(q.i(5), "steps", key, "file"));
  s.line = (int)q.in_range(6, INT_MIN, INT_MAX);
  int64_t f = q.i(7);
  s.bottom_up = f & 1, s.walk = f & 2, s.enter_calls = f & 4;
  s.input_root = q.i(8), s.output_root = q.i_or_0(9);
  if (s.input_root < 1) q.bad(8, S(s.input_root) + " is not a uop id");
  if (!q.null(9) && s.output_root < 1) q.bad(9, S(s.output_root) + " is not a uop id");
  s.t_start = q.in_range(10, -kMaxTime, kMaxTime);
  if (!q.null(11)) s.t_end = q.in_range(11, s.t_start, kMaxTime);
  // a count the file cannot hold is damage (and would size allocations)
  if (!q.null(12)) s.n_matches = q.in_range(12, 0, (int64_t)(file_bytes_ / kMinMatchBytes));
  if (!q.null(13)) s.error = display_text(str_ref(q.i(13), "steps", key, "error"));
  return s;
}

void Trace::load() {
  catalog_ = g_load_catalog;
  {
    Stmt q(db_, "SELECT id, name FROM dtypes ORDER BY id", *this, "dtypes");
    while (q.step()) {
      int64_t id = q.i(0);
      q.at(id);
      if (id < 0 || id >= kMaxDtypes) q.bad(0, S(id) + " is out of range (0.." + S(kMaxDtypes - 1) + ")");
      if (dtype_names_.size() <= (size_t)id) dtype_names_.resize((size_t)id + 1, "?");
      dtype_names_[(size_t)id] = q.t_(1);
    }
  }
  {
    Stmt q(db_, "SELECT name FROM sqlite_master WHERE type='index' AND name='steps_context'", *this, "sqlite_master");
    has_index_ = q.step();
  }
  if (!catalog_) return;
  {
    Stmt q(db_, "SELECT id, name, thread, t_start, t_end FROM contexts ORDER BY id", *this, "contexts");
    while (q.step()) {
      ContextRow c;
      c.id = q.i(0);
      q.at(c.id);
      if (c.id < 1) q.bad(0, S(c.id) + " is not a context id (ids start at 1)");
      c.name_ansi = display_text(str_ref(q.i(1), "contexts", S(c.id), "name"));
      c.name = strip_ansi(c.name_ansi);
      c.thread = q.i(2);
      c.t_start = q.in_range(3, -kMaxTime, kMaxTime);
      if (!q.null(4)) c.t_end = q.in_range(4, c.t_start, kMaxTime);
      ctx_index_[c.id] = contexts_.size();
      contexts_.push_back(std::move(c));
    }
  }
  {
    Stmt n(db_, "SELECT COUNT(*) FROM steps", *this, "steps");
    if (n.step()) steps_.reserve((size_t)n.i(0));  // no doubling on the way: 12,000 steps of a training run
  }
  {
    Stmt q(db_, std::string(kStepColumns) + " ORDER BY id", *this, "steps");
    while (q.step()) {
      StepRow s = read_step(&q);
      if (!ctx_index_.count(s.context)) {
        // a killed run can have written a step whose context another thread began and had not handed over yet
        if (complete_) q.bad(1, S(s.context) + " does not exist in table contexts");
        ContextRow c;
        c.id = s.context;
        c.name = c.name_ansi = "(context " + S(s.context) + ": not in the file, the run stopped first)";
        c.t_start = s.t_start;
        ctx_index_[c.id] = contexts_.size();
        contexts_.push_back(std::move(c));
      }
      if (s.parent) {
        auto p = step_index_.find(s.parent);
        if (p == step_index_.end()) q.bad(2, S(s.parent) + " does not exist in table steps");
        if (s.depth != steps_[p->second].depth + 1)
          q.bad(3, S(s.depth) + " is not one more than its parent's (" + S(steps_[p->second].depth) + ")");
      }
      step_index_[s.id] = steps_.size();
      contexts_[ctx_index_[s.context]].steps.push_back(s.id);
      steps_.push_back(std::move(s));
    }
  }
  if (!has_index_) {
    // a trace from a killed run: steps still open have no match count, count them in one scan
    Stmt q(db_, "SELECT step, COUNT(*) FROM matches GROUP BY step", *this, "matches");
    while (q.step()) {
      auto it = step_index_.find(q.i(0));
      if (it != step_index_.end() && steps_[it->second].n_matches == 0) steps_[it->second].n_matches = q.i(1);
    }
  }
  bool has_kernels = false;
  {
    Stmt q(db_, "SELECT name FROM sqlite_master WHERE type='table' AND name='kernel_events'", *this, "sqlite_master");
    has_kernels = q.step();
  }
  if (!has_kernels) return;
  {
    Stmt q(db_,
           program_text_ ? "SELECT id, name, device, context, source, uops, global_size, local_size, ops, mem, lds "
                           "FROM programs ORDER BY id"
                         : "SELECT id, name, device, context, '', '', global_size, local_size, ops, mem, lds "
                           "FROM programs ORDER BY id",
           *this, "programs");
    while (q.step()) {
      ProgramRow p;
      p.id = q.i(0);
      q.at(p.id);
      if (p.id < 1) q.bad(0, S(p.id) + " is not a program id (ids start at 1)");
      p.name = display_text(str_ref(q.i(1), "programs", S(p.id), "name"));
      p.device = display_text(str_ref(q.i(2), "programs", S(p.id), "device"));
      p.context = q.i(3);
      if (p.context && !ctx_index_.count(p.context)) {
        if (complete_) q.bad(3, S(p.context) + " does not exist in table contexts");
        p.context = 0;  // a killed run: not recorded
      }
      p.source = q.t_(4), p.uops = q.t_(5), p.global_size = q.t_(6), p.local_size = q.t_(7);
      p.ops = q.in_range(8, -1, INT64_MAX), p.mem = q.in_range(9, -1, INT64_MAX), p.lds = q.in_range(10, -1, INT64_MAX);
      program_index_[p.id] = programs_.size();
      if (p.context) program_by_ctx_[p.context] = programs_.size();
      programs_.push_back(std::move(p));
    }
  }
  {
    Stmt n(db_, "SELECT COUNT(*) FROM kernel_events", *this, "kernel_events");
    if (n.step()) kernel_events_.reserve((size_t)n.i(0));  // a training run records ~10,000: no doubling
  }
  Stmt q(db_,
         "SELECT id, program, name, device, t_start, t_end, bufs, var_vals FROM kernel_events ORDER BY t_start, id",
         *this, "kernel_events");
  while (q.step()) {
    KernelEventRow k;
    k.id = q.i(0);
    q.at(k.id);
    k.program = q.i(1);
    if (k.program && !program_index_.count(k.program)) {
      if (complete_) q.bad(1, S(k.program) + " does not exist in table programs");
      k.program = 0;  // a killed run: not recorded
    }
    k.name = display_text(strip_ansi(str_ref(q.i(2), "kernel_events", S(k.id), "name")));
    k.device = display_text(str_ref(q.i(3), "kernel_events", S(k.id), "device"));
    while (!k.name.empty() && k.name.back() == ' ') k.name.pop_back();  // copy names are padded for DEBUG=2
    // (a device's clock mapped onto the host's can end a run a little before it starts: the timeline copes)
    k.t_start = q.in_range(4, -kMaxTime, kMaxTime), k.t_end = q.in_range(5, -kMaxTime, kMaxTime), k.bufs = q.t_(6);
    if (!q.null(7)) k.var_vals = q.t_(7);
    kernel_events_.push_back(std::move(k));
  }
  load_profile();
}

void Trace::load_profile() {
  if (schema_version_ < 5) return;
  {
    Stmt q(db_, "SELECT id, kind, device, t, buffer, dtype, size, nbytes FROM mem_events ORDER BY t, id", *this,
           "mem_events");
    while (q.step()) {
      MemEventRow m;
      m.id = q.i(0);
      q.at(m.id);
      m.alloc = q.in_range(1, 0, 1) == 1;
      m.device = display_text(str_ref(q.i(2), "mem_events", S(m.id), "device"));
      m.t = q.in_range(3, -kMaxTime, kMaxTime), m.buffer = q.in_range(4, 0, INT64_MAX);
      m.dtype = display_text(str_ref(q.i(5), "mem_events", S(m.id), "dtype"));
      // sizes a sum of many of which still fits in an int64
      m.size = q.in_range(6, 0, (int64_t)1 << 48), m.nbytes = q.in_range(7, 0, (int64_t)1 << 48);
      mem_events_.push_back(std::move(m));
    }
  }
  {
    Stmt q(db_, "SELECT id, t, name, color FROM markers ORDER BY t, id", *this, "markers");
    while (q.step()) {
      MarkerRow m;
      m.id = q.i(0);
      q.at(m.id);
      m.t = q.in_range(1, -kMaxTime, kMaxTime);
      m.name = display_text(str_ref(q.i(2), "markers", S(m.id), "name"));
      m.color = display_text(str_ref(q.i(3), "markers", S(m.id), "color"));
      markers_.push_back(std::move(m));
    }
  }
  {
    Stmt q(db_, "SELECT id, device, name, t_start, t_end FROM ranges ORDER BY t_start, id", *this, "ranges");
    while (q.step()) {
      RangeRow r;
      r.id = q.i(0);
      q.at(r.id);
      r.device = display_text(str_ref(q.i(1), "ranges", S(r.id), "device"));
      r.name = display_text(str_ref(q.i(2), "ranges", S(r.id), "name"));
      r.t_start = q.in_range(3, -kMaxTime, kMaxTime), r.t_end = q.in_range(4, -kMaxTime, kMaxTime);
      if (r.t_end < r.t_start) q.bad(4, "ends before it starts (" + S(r.t_start) + ")");
      ranges_.push_back(std::move(r));
    }
  }
  Stmt q(db_, "SELECT device, tdiff, props FROM devices ORDER BY device", *this, "devices");
  while (q.step()) {
    DeviceRow d;
    d.device = str_ref(q.i(0), "devices", "device " + S(q.i(0)), "device");
    q.at(q.i(0));
    d.tdiff = q.in_range(1, -kMaxTime, kMaxTime), d.props = q.t_(2);
    devices_.push_back(std::move(d));
  }
}

void set_display_text_limit(size_t n) { g_display_text_limit.store(n); }
size_t display_text_limit() { return g_display_text_limit.load(); }
std::string display_text(std::string s) {
  size_t lim = g_display_text_limit.load(std::memory_order_relaxed);
  if (!lim || s.size() <= lim) return s;
  size_t cut = lim;
  while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80) cut--;  // not inside a UTF-8 character
  size_t esc = s.rfind('\x1b', cut);                                 // not inside a colour code: ESC [ ... m
  if (esc != std::string::npos && s.find('m', esc) >= cut) cut = esc;
  size_t more = 0;  // characters, not bytes
  for (size_t i = cut; i < s.size(); i++) more += ((unsigned char)s[i] & 0xC0) != 0x80;
  s.resize(cut);
  return s + (s.find('\x1b') != std::string::npos ? "\x1b[0m" : "") + "… (" + std::to_string(more) +
         " more characters)";
}

std::map<std::string, std::string> Trace::meta() const {
  std::map<std::string, std::string> m;
  Stmt q(db_, "SELECT key, value FROM meta", *this, "meta");
  while (q.step()) m[q.t_(0)] = display_text(q.t_(1));
  return m;
}

const StepRow& Trace::step(int64_t id) const {
  if (!catalog_) {  // opened for queries: read the row when asked for
    if (auto it = lazy_steps_.find(id); it != lazy_steps_.end()) return it->second;
    Stmt q(db_, std::string(kStepColumns) + " WHERE id=?", *this, "steps");
    sqlite3_bind_int64(q.s, 1, id);
    if (!q.step()) throw TraceError("trace '" + path_ + "' has no step " + std::to_string(id));
    StepRow s = read_step(&q);
    return lazy_steps_.emplace(id, std::move(s)).first->second;
  }
  auto it = step_index_.find(id);
  if (it == step_index_.end()) throw TraceError("trace '" + path_ + "' has no step " + std::to_string(id));
  return steps_[it->second];
}
const ContextRow& Trace::context(int64_t id) const {
  auto it = ctx_index_.find(id);
  if (it == ctx_index_.end()) throw TraceError("trace '" + path_ + "' has no context " + std::to_string(id));
  return contexts_[it->second];
}
std::vector<int64_t> Trace::child_steps(int64_t step_id) const {
  std::vector<int64_t> r;
  const StepRow& s = step(step_id);
  for (int64_t id : context(s.context).steps)
    if (this->step(id).parent == step_id) r.push_back(id);
  return r;
}

std::vector<MatchRow> Trace::matches(int64_t step_id) const {
  std::vector<MatchRow> out;
  // no doubling: a step can hold 18,000 matches (the count is bounded by the file's size; a larger one grows)
  auto reserve = [&](int64_t n) { out.reserve((size_t)std::clamp<int64_t>(n, 0, 1 << 20)); };
  if (auto it = step_index_.find(step_id); it != step_index_.end())
    reserve(steps_[it->second].n_matches);
  else if (!catalog_)
    try {
      reserve(step(step_id).n_matches);
    } catch (const TraceError&) {  // no such step: no matches
    }
  {
    Stmt q(db_, "SELECT ordinal, before, after, rule, dur FROM matches WHERE step=? ORDER BY ordinal", *this,
           "matches");
    sqlite3_bind_int64(q.s, 1, step_id);
    while (q.step()) {
      MatchRow m;
      m.step = step_id, m.ordinal = q.i(0);
      q.at_ordinal(step_id, m.ordinal);
      m.before = q.i(1), m.after = q.i(2), m.rule = q.i(3), m.dur_ns = q.i(4);
      if (m.before < 1) q.bad(1, S(m.before) + " is not a uop id");
      if (m.after < 1) q.bad(2, S(m.after) + " is not a uop id");
      out.push_back(m);
    }
  }
  size_t n_matches = out.size();
  {
    Stmt q(db_, "SELECT ordinal, before, error_uop, rule, message FROM rule_errors WHERE step=?", *this, "rule_errors");
    sqlite3_bind_int64(q.s, 1, step_id);
    while (q.step()) {
      MatchRow m;
      m.step = step_id, m.ordinal = q.i(0);
      q.at_ordinal(step_id, m.ordinal);
      m.before = q.i(1), m.after = q.i(2), m.rule = q.i(3);
      if (m.before < 1) q.bad(1, S(m.before) + " is not a uop id");
      if (m.after < 1) q.bad(2, S(m.after) + " is not a uop id");
      m.is_error = true;
      m.error = q.i(4);
      str_ref(m.error, "rule_errors", q.key_text(), "message");
      out.push_back(m);
    }
  }
  if (out.size() > n_matches)  // the matches came in ordinal order: merge the rule errors in
    std::stable_sort(out.begin(), out.end(),
                     [](const MatchRow& a, const MatchRow& b) { return a.ordinal < b.ordinal; });
  return out;
}

std::vector<MatchRow> Trace::matches_of_rule(int64_t rule_id) const {
  std::vector<MatchRow> out;
  {
    Stmt n(db_, "SELECT COUNT(*) FROM matches WHERE rule=?", *this, "matches");
    sqlite3_bind_int64(n.s, 1, rule_id);
    if (n.step()) out.reserve((size_t)n.i(0));
  }
  Stmt q(db_, "SELECT step, ordinal, before, after, dur FROM matches WHERE rule=? ORDER BY step, ordinal", *this,
         "matches");
  sqlite3_bind_int64(q.s, 1, rule_id);
  while (q.step()) {
    MatchRow m;
    m.step = q.i(0), m.ordinal = q.i(1), m.before = q.i(2), m.after = q.i(3), m.rule = rule_id, m.dur_ns = q.i(4);
    out.push_back(m);
  }
  return out;
}

std::optional<RuleRow> Trace::rule(int64_t id) const {
  Stmt q(db_, "SELECT matcher, file, line, source FROM rules WHERE id=?", *this, "rules");
  sqlite3_bind_int64(q.s, 1, id);
  q.at(id);
  if (!q.step()) return std::nullopt;
  RuleRow r;
  std::string key = S(id);
  r.id = id, r.matcher = display_text(str_ref(q.i(0), "rules", key, "matcher"));
  r.file = display_text(str_ref(q.i(1), "rules", key, "file"));
  r.line = (int)q.in_range(2, INT_MIN, INT_MAX), r.source = display_text(str_ref(q.i(3), "rules", key, "source"));
  return r;
}
std::vector<RuleRow> Trace::rules() const {
  std::vector<RuleRow> out;
  Stmt q(db_, "SELECT id, matcher, file, line, source FROM rules ORDER BY id", *this, "rules");
  while (q.step()) {
    RuleRow r;
    r.id = q.i(0);
    q.at(r.id);
    std::string key = S(r.id);
    r.matcher = display_text(str_ref(q.i(1), "rules", key, "matcher"));
    r.file = display_text(str_ref(q.i(2), "rules", key, "file"));
    r.line = (int)q.in_range(3, INT_MIN, INT_MAX), r.source = display_text(str_ref(q.i(4), "rules", key, "source"));
    out.push_back(r);
  }
  return out;
}

namespace {
// steps.stats: [[rule, attempts, matches, excl_ns(, early_rejects(, incl_ns))], ...] (schema.h), read strictly. Returns
// what is wrong, or an empty string.
std::string parse_stats_json(const std::string& text, std::vector<RuleStatRow>& out) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return "not JSON";
  if (!j.is_array()) return "not an array";
  for (size_t e = 0; e < j.size(); e++) {
    const nlohmann::json& row = j[e];
    std::string at = "entry " + std::to_string(e) + " ";
    if (!row.is_array()) return at + "is not an array";
    if (row.size() < 4 || row.size() > 6) return at + "has " + std::to_string(row.size()) + " numbers, not 4 to 6";
    int64_t v[6];
    for (size_t k = 0; k < row.size(); k++) {
      if (!row[k].is_number_integer() || (row[k].is_number_unsigned() && row[k].get<uint64_t>() > INT64_MAX))
        return at + "has a value that is not a 64-bit integer: " + row[k].dump();
      v[k] = row[k].get<int64_t>();
      if (k > 0 && v[k] < 0) return at + "has a negative count or time";
    }
    RuleStatRow r;
    r.rule = v[0], r.attempts = (uint64_t)v[1], r.matches = (uint64_t)v[2], r.excl_ns = v[3];
    r.early_rejects = row.size() > 4 ? (uint64_t)v[4] : 0;
    r.incl_ns = row.size() > 5 ? v[5] : r.excl_ns;
    r.candidates = r.early_rejects + r.attempts;
    out.push_back(r);
  }
  return "";
}

// what the view rule_stats (schema.h) computes, spelled out: the reader never runs SQL stored in the file
constexpr const char* kRuleStatsSql =
    "(SELECT s.id AS step, json_extract(j.value, '$[0]') AS rule, coalesce(json_extract(j.value, '$[4]'), 0) AS "
    "early_rejects, json_extract(j.value, '$[1]') AS attempts, json_extract(j.value, '$[2]') AS matches, "
    "json_extract(j.value, '$[3]') AS excl_ns, coalesce(json_extract(j.value, '$[5]'), json_extract(j.value, '$[3]')) "
    "AS incl_ns FROM steps s, json_each(s.stats) j)";
}  // namespace

std::vector<RuleStatRow> Trace::rule_stats(int64_t step_id, int64_t context_id) const {
  std::vector<RuleStatRow> out;
  if (step_id > 0) {
    // the rules the step attempted
    Stmt q(db_, "SELECT stats FROM steps WHERE id=?", *this, "steps");
    sqlite3_bind_int64(q.s, 1, step_id);
    q.at(step_id);
    if (!q.step() || q.null(0)) return out;
    std::string j = q.t_(0);
    if (std::string err = parse_stats_json(j, out); !err.empty())
      q.bad(0, "is not [[rule, attempts, matches, excl_ns(, early_rejects(, incl_ns))], ...]: " + err);
    std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.rule < b.rule; });
    return out;
  }
  // every candidate rule, from the per-context table; a context still open when the run was killed has no rows
  // there, its steps' rows are summed instead
  std::string sql =
      "SELECT rule, SUM(candidates), SUM(early_rejects), SUM(attempts), SUM(matches), SUM(excl_ns), SUM(incl_ns) FROM ("
      " SELECT rule, candidates, early_rejects, attempts, matches, excl_ns, incl_ns, context FROM context_rule_stats"
      " UNION ALL SELECT s.rule, s.early_rejects + s.attempts, s.early_rejects, s.attempts, s.matches, s.excl_ns,"
      " s.incl_ns, st.context FROM " +
      std::string(kRuleStatsSql) +
      " s JOIN steps st ON st.id = s.step"
      " WHERE st.context NOT IN (SELECT DISTINCT context FROM context_rule_stats))";
  if (context_id > 0) sql += " WHERE context=?";
  sql += " GROUP BY rule ORDER BY rule";
  Stmt q(db_, sql, *this, "context_rule_stats");
  if (context_id > 0) sqlite3_bind_int64(q.s, 1, context_id);
  try {
    while (q.step()) {
      RuleStatRow r;
      r.rule = q.i(0);
      q.name("rule " + S(r.rule));
      r.candidates = (uint64_t)q.in_range(1, 0, INT64_MAX), r.early_rejects = (uint64_t)q.in_range(2, 0, INT64_MAX);
      r.attempts = (uint64_t)q.in_range(3, 0, INT64_MAX), r.matches = (uint64_t)q.in_range(4, 0, INT64_MAX);
      r.excl_ns = q.in_range(5, 0, INT64_MAX), r.incl_ns = q.in_range(6, 0, INT64_MAX);
      out.push_back(r);
    }
  } catch (const TraceError&) {
    // a step's statistics that are not JSON stop the query: name the step
    Stmt bad(db_, "SELECT id FROM steps WHERE stats IS NOT NULL AND NOT json_valid(stats) LIMIT 1", *this, "steps");
    if (bad.step()) fail("steps", bad.i(0), "stats is not JSON");
    throw;
  }
  return out;
}

std::vector<int64_t> Trace::step_notes(int64_t step_id) const {
  std::vector<int64_t> out;
  Stmt q(db_, "SELECT uop FROM step_uops WHERE step=?", *this, "step_uops");
  sqlite3_bind_int64(q.s, 1, step_id);
  q.name("step " + S(step_id));
  while (q.step()) out.push_back(q.i(0));
  return out;
}

std::vector<int64_t> Trace::steps_with_rules(const std::vector<int64_t>& rules) const {
  std::vector<int64_t> out;
  if (rules.empty()) return out;
  std::string sql = "SELECT DISTINCT step FROM matches WHERE rule IN (";
  for (size_t i = 0; i < rules.size(); i++) sql += i ? ",?" : "?";
  sql += ") ORDER BY step";
  Stmt q(db_, sql, *this, "matches");
  for (size_t i = 0; i < rules.size(); i++) sqlite3_bind_int64(q.s, (int)i + 1, rules[i]);
  while (q.step()) out.push_back(q.i(0));
  return out;
}

const std::string& Trace::str(int64_t id) const { return str_ref(id, "", "", nullptr); }

const std::string& Trace::str_ref(int64_t id, const char* table, const std::string& key, const char* column) const {
  auto it = strings_.find(id);
  if (it != strings_.end()) return it->second;
  // one statement for every lookup (opening a trace looks up two strings per step)
  if (!str_stmt_ &&
      sqlite3_prepare_v2(db_, "SELECT value FROM strings WHERE id=?", -1, &str_stmt_, nullptr) != SQLITE_OK)
    fail_key("strings", "", std::string("cannot be read: ") + sqlite3_errmsg(db_));
  sqlite3_reset(str_stmt_);
  sqlite3_bind_int64(str_stmt_, 1, id);
  int rc = sqlite3_step(str_stmt_);
  if (rc == SQLITE_DONE) {
    if (column)
      fail_key(table, key, std::string(column) + " refers to string " + S(id) + ", which table strings does not have");
    fail_key("strings", "", "has no row " + S(id));
  }
  if (rc != SQLITE_ROW) fail_key("strings", S(id), std::string("cannot be read: ") + sqlite3_errmsg(db_));
  const unsigned char* p = sqlite3_column_text(str_stmt_, 0);
  std::string v = p ? std::string((const char*)p, sqlite3_column_bytes(str_stmt_, 0)) : std::string();
  sqlite3_reset(str_stmt_);
  return strings_.emplace(id, std::move(v)).first->second;
}

const Node& Trace::node_ref(int64_t id, const char* table, const std::string& key, const char* column) const {
  if (auto it = nodes_.find(id); it != nodes_.end()) return it->second;
  if (id < 1) fail_key(table, key, std::string(column) + " " + S(id) + " is not a uop id");
  return load_node(id, [&] {
    fail_key(table, key, std::string(column) + " refers to uop " + S(id) + ", which table uops does not have");
  });
}

void Trace::check_roots(const StepRow& step) const {
  std::string key = S(step.id);
  node_ref(step.input_root, "steps", key, "input_root");
  if (step.output_root) node_ref(step.output_root, "steps", key, "output_root");
}

void Trace::check_matches(int64_t step, const std::vector<MatchRow>& matches) const {
  for (const MatchRow& m : matches) {
    std::string key = "step " + S(step) + ", ordinal " + S(m.ordinal);
    const char* table = m.is_error ? "rule_errors" : "matches";
    node_ref(m.before, table, key, "before"), node_ref(m.after, table, key, m.is_error ? "error_uop" : "after");
  }
}

Trace::Batch::Batch(const Trace& t) : db_(t.db_) {
  // one read transaction: SQLite otherwise takes and drops its file lock (two fcntl calls) per statement
  if (sqlite3_get_autocommit(db_) && sqlite3_exec(db_, "BEGIN", nullptr, nullptr, nullptr) == SQLITE_OK) open_ = true;
}

Trace::Batch::~Batch() {
  if (open_) sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
}

const Node& Trace::node(int64_t id) const {
  auto it = nodes_.find(id);
  if (it != nodes_.end()) return it->second;
  if (id < 1) fail_key("uops", "", "has no row " + S(id) + " (uop ids start at 1)");
  return load_node(id, [&] { fail_key("uops", "", "has no row " + S(id) + " (truncated trace?)"); });
}

// a uops row's op, dtype, arg, tag and src columns from column `c` on (the statement stands on row `cur`)
static Node parse_uop(Stmt& q, int64_t cur, int col) {
  Node n;
  n.id = cur;
  n.op = (int)q.in_range(col, INT_MIN, INT_MAX);
  n.op_name = n.op > 0 && n.op <= kNumOps ? kOpNames[n.op] : "?";
  n.dtype = (int)q.in_range(col + 1, INT_MIN, INT_MAX), n.arg = q.i(col + 2), n.tag = q.i_or_0(col + 3);
  int type = sqlite3_column_type(q.s, col + 4);
  if (type != SQLITE_BLOB && type != SQLITE_NULL)
    q.bad(col + 4, std::string("holds ") + type_name(type) + ", not a blob");
  const unsigned char* b = (const unsigned char*)sqlite3_column_blob(q.s, col + 4);
  int len = sqlite3_column_bytes(q.s, col + 4);
  size_t count = 0;  // a varint ends at each byte without the continuation bit
  for (int p = 0; p < len; p++) count += !(b[p] & 0x80);
  n.src.reserve(count);
  for (int p = 0; p < len;) {
    uint64_t v = 0;
    int shift = 0, start = p;
    bool end = false;
    while (p < len && !end) {
      uint8_t ch = b[p++];
      if (shift == 63 && (ch & 0x7e)) q.bad(col + 4, "has a varint past 64 bits at byte " + S(start));
      v |= (uint64_t)(ch & 0x7f) << shift;
      shift += 7;
      end = !(ch & 0x80);
      if (!end && shift > 63) q.bad(col + 4, "has a varint past 64 bits at byte " + S(start));
    }
    if (!end) q.bad(col + 4, "ends inside a varint");
    int64_t delta = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
    auto which = [&] { return " as src " + S((int64_t)n.src.size()); };
    if (delta < 1)
      q.bad(col + 4, std::string("names ") + (delta ? "a later uop" : "the uop itself") + which() +
                         ": a src must be an earlier uop (a cycle)");
    if (delta >= cur) q.bad(col + 4, "names uop " + S(cur - delta) + which() + ", not a uop id");
    n.src.push_back(cur - delta);
  }
  if (!q.null(col + 5)) {
    n.shape = q.i(col + 5);
    if (n.shape < 1) q.bad(col + 5, S(n.shape) + " is not a string id");
  }
  return n;
}

const Node& Trace::load_node(int64_t id, const std::function<void()>& missing) const {
  // load the node and, iteratively, its srcs. Every src is an earlier uop (the writer numbers srcs first), so a
  // graph read from the file has no cycles; one that breaks the rule is damage
  if (!node_stmt_ && sqlite3_prepare_v2(db_,
                                        schema_version_ >= 7 ? "SELECT op, dtype, arg, tag, src, shape FROM uops WHERE id=?"
                                                             : "SELECT op, dtype, arg, tag, src, NULL FROM uops WHERE id=?",
                                        -1, &node_stmt_, nullptr) != SQLITE_OK)
    fail_key("uops", "", std::string("cannot be read: ") + sqlite3_errmsg(db_));
  Stmt q(node_stmt_, *this, "uops");
  std::vector<std::pair<int64_t, int64_t>> todo{{id, 0}};  // (uop, the uop that has it as a src)
  while (!todo.empty()) {
    auto [cur, user] = todo.back();
    todo.pop_back();
    if (nodes_.count(cur)) continue;
    q.reset();
    sqlite3_bind_int64(q.s, 1, cur);
    if (!q.step()) {
      if (user) fail("uops", user, "src " + S(cur) + " does not exist in table uops (truncated trace?)");
      missing();
    }
    q.at(cur);
    Node n = parse_uop(q, cur, 0);
    for (int64_t s : n.src)
      if (!nodes_.count(s)) todo.push_back({s, cur});
    const_cast<Trace*>(this)->index_content(n, true);
    nodes_.emplace(cur, std::move(n));
  }
  return nodes_.at(id);
}

std::vector<std::pair<int64_t, std::string>> Trace::checkpoints(int64_t step) const {
  std::vector<std::pair<int64_t, std::string>> out;
  if (schema_version_ < 4) return out;
  Stmt q(db_, "SELECT frame, graph FROM replay_checkpoints WHERE step=? ORDER BY frame", *this, "replay_checkpoints");
  sqlite3_bind_int64(q.s, 1, step);
  while (q.step()) {
    q.name("step " + S(step) + ", frame " + S(q.i(0)));
    if (sqlite3_column_type(q.s, 1) != SQLITE_BLOB) q.bad(1, "is not a blob");
    out.push_back({q.i(0), std::string((const char*)sqlite3_column_blob(q.s, 1), sqlite3_column_bytes(q.s, 1))});
  }
  return out;
}

void Trace::preload(std::vector<int64_t> ids) const {
  ids.erase(std::remove_if(ids.begin(), ids.end(), [&](int64_t id) { return id < 1 || nodes_.count(id); }), ids.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  if (ids.size() < 256) return;
  // the nodes a step recorded were numbered as it ran: skipping the oldest twentieth (its input graph), they lie
  // together, and one scan of that id range is faster than a lookup per node. A range where they are sparse is left
  // to node()
  size_t first = ids.size() / 20;
  int64_t lo = ids[first], hi = ids.back();
  if ((uint64_t)(hi - lo) + 1 > 4 * (ids.size() - first)) return;
  std::vector<std::pair<int64_t, int64_t>> outside;  // (src, its user) below the range and not loaded
  size_t more = (size_t)(hi - lo) + 1;               // growing the tables row by row rehashed them a dozen times
  nodes_.reserve(nodes_.size() + more);
  const_cast<Trace*>(this)->content_.reserve(content_.size() + more);
  const_cast<Trace*>(this)->content_any_.reserve(content_any_.size() + more);
  {
    Stmt q(db_,
           schema_version_ >= 7 ? "SELECT id, op, dtype, arg, tag, src, shape FROM uops WHERE id BETWEEN ? AND ? ORDER BY id"
                                : "SELECT id, op, dtype, arg, tag, src, NULL FROM uops WHERE id BETWEEN ? AND ? ORDER BY id",
           *this, "uops");
    sqlite3_bind_int64(q.s, 1, lo), sqlite3_bind_int64(q.s, 2, hi);
    while (q.step()) {
      int64_t cur = q.i(0);
      if (nodes_.count(cur)) continue;
      q.at(cur);
      Node n = parse_uop(q, cur, 1);
      for (int64_t x : n.src)
        if (x < lo && !nodes_.count(x)) outside.push_back({x, cur});
      const_cast<Trace*>(this)->index_content(n, true);
      nodes_.emplace(cur, std::move(n));
    }
  }
  for (auto [x, user] : outside)
    if (!nodes_.count(x))
      load_node(x, [&] { fail("uops", user, "src " + S(x) + " does not exist in table uops (truncated trace?)"); });
}

uint64_t Trace::content_hash(int op, int dtype, int64_t arg, int64_t tag, const std::vector<int64_t>& src,
                             bool with_dtype) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  auto mix = [&](uint64_t x) { h = (h ^ x) * 0xff51afd7ed558ccdull, h ^= h >> 32; };
  mix((uint64_t)op), mix(with_dtype ? (uint64_t)dtype : 0), mix((uint64_t)arg), mix((uint64_t)tag);
  for (int64_t s : src) mix((uint64_t)s);
  return h;
}

// the first indexed node with this content (0: none)
int64_t Trace::find_content(int op, int dtype, int64_t arg, int64_t tag, const std::vector<int64_t>& src,
                            bool with_dtype) const {
  const auto& index = with_dtype ? content_ : content_any_;
  auto [lo, hi] = index.equal_range(content_hash(op, dtype, arg, tag, src, with_dtype));
  for (auto it = lo; it != hi; ++it) {
    auto n = nodes_.find(it->second);
    if (n == nodes_.end()) continue;
    const Node& c = n->second;
    if (c.op == op && (!with_dtype || c.dtype == dtype) && c.arg == arg && c.tag == tag && c.src == src)
      return it->second;
  }
  return 0;
}

// index a node (before it is in nodes_) under its content; the first recorded node with a content keeps it. A node
// a replay built (negative id) gives its content up to a recorded node loaded later: replays of later steps then
// build the recorded node, as the program did (nodes are loaded lazily, so a replay can build a node the file holds)
void Trace::index_content(const Node& n, bool also_any) {
  auto put = [&](bool with_dtype) {
    auto& index = with_dtype ? content_ : content_any_;
    uint64_t h = content_hash(n.op, n.dtype, n.arg, n.tag, n.src, with_dtype);
    int64_t old = find_content(n.op, n.dtype, n.arg, n.tag, n.src, with_dtype);
    if (old > 0 || (old < 0 && n.id < 0)) return;
    if (old < 0) {
      auto [lo, hi] = index.equal_range(h);
      for (auto it = lo; it != hi; ++it)
        if (it->second == old) {
          index.erase(it);
          break;
        }
    }
    index.emplace(h, n.id);
  };
  put(true);
  if (also_any) put(false);
}

int64_t Trace::intern_node(int op, int dtype, int64_t arg, int64_t tag, const std::vector<int64_t>& src) {
  if (int64_t id = find_content(op, dtype, arg, tag, src, true)) return id;
  // the id comes from the content, so two readers of one trace (or two orders of asking for frames) name a built
  // node alike; a 62-bit collision takes the next free id
  Node n;
  n.id = -1 - (int64_t)(content_hash(op, dtype, arg, tag, src, true) >> 2);
  while (nodes_.count(n.id)) n.id = n.id == INT64_MIN + 1 ? -1 : n.id - 1;
  n.op = op;
  n.op_name = op > 0 && op <= kNumOps ? kOpNames[op] : "?";
  n.dtype = dtype, n.arg = arg, n.tag = tag, n.src = src;
  index_content(n, false);
  int64_t id = n.id;
  nodes_.emplace(id, std::move(n));
  return id;
}

int64_t Trace::find_any_dtype(int op, int64_t arg, int64_t tag, const std::vector<int64_t>& src) const {
  return find_content(op, 0, arg, tag, src, false);
}

const std::string& Trace::dtype_name(int dtype) const {
  static const std::string unknown = "?";
  return dtype >= 0 && (size_t)dtype < dtype_names_.size() ? dtype_names_[dtype] : unknown;
}

std::string Trace::arg_text(int64_t id) const {
  const Node& n = node(id);
  const std::string& enc = str_ref(n.arg, "uops", S(id), "arg");
  try {
    return display_text(arg_display(enc));
  } catch (const ArgFormatError& e) {
    fail("uops", id, "arg (strings row " + S(n.arg) + ") is not an encoded arg: " + e.what());
  }
}

std::string Trace::graph_arg_text(int64_t id) const {
  const Node& n = node(id);
  if (n.op_name == "CONST")
    if (auto g = float_arg_g(str_ref(n.arg, "uops", S(id), "arg"))) return *g;
  return arg_text(id);
}

std::string Trace::graph_label(int64_t id) const {
  const Node& n = node(id);
  std::string l = label(id);
  if (n.op_name != "CONST") return l;
  std::string a = arg_text(id), g = graph_arg_text(id);
  if (a == g) return l;
  size_t at = l.find("\n" + a);
  return at == std::string::npos ? l : l.replace(at + 1, a.size(), g);
}

std::string Trace::label(int64_t id) const {
  const Node& n = node(id);
  std::string l(n.op_name);
  const std::string& dt = dtype_name(n.dtype);
  if (dt != "void") l += "\ndtypes." + dt;
  std::string a = arg_text(id);
  if (a != "None") l += "\n" + a;
  if (n.tag) {
    try {
      l += "\ntag=" + display_text(arg_display(str_ref(n.tag, "uops", S(id), "tag")));
    } catch (const ArgFormatError& e) {
      fail("uops", id, "tag (strings row " + S(n.tag) + ") is not an encoded arg: " + e.what());
    }
  }
  return l;
}

std::string Trace::shallow_label(int64_t id) const {
  if (nodes_.count(id) || id < 0) return label(id);
  Stmt q(db_, "SELECT op, dtype, arg, tag FROM uops WHERE id=?", *this, "uops");
  sqlite3_bind_int64(q.s, 1, id);
  if (!q.step()) fail_key("uops", "", "has no row " + S(id) + " (truncated trace?)");
  q.at(id);
  int op = (int)q.in_range(0, INT_MIN, INT_MAX);
  std::string l = op > 0 && op <= kNumOps ? kOpNames[op] : "?";
  const std::string& dt = dtype_name((int)q.in_range(1, INT_MIN, INT_MAX));
  if (dt != "void") l += "\ndtypes." + dt;
  int64_t arg = q.i(2), tag = q.i_or_0(3);
  try {
    std::string a = display_text(arg_display(str_ref(arg, "uops", S(id), "arg")));
    if (a != "None") l += "\n" + a;
    if (!q.null(3)) l += "\ntag=" + display_text(arg_display(str_ref(tag, "uops", S(id), "tag")));
  } catch (const ArgFormatError& e) {
    fail("uops", id, std::string("arg or tag (table strings) is not an encoded arg: ") + e.what());
  }
  return l;
}

uint64_t Trace::uop_count() const {
  Stmt q(db_, "SELECT COUNT(*) FROM uops", *this, "uops");
  return q.step() ? (uint64_t)q.i(0) : 0;
}
std::map<int64_t, uint64_t> Trace::match_count_per_rule() const {
  std::map<int64_t, uint64_t> out;
  Stmt q(db_, "SELECT rule, COUNT(*) FROM matches GROUP BY rule", *this, "matches");
  while (q.step()) out[q.i(0)] = (uint64_t)q.i(1);
  return out;
}
uint64_t Trace::match_count() const {
  Stmt q(db_, "SELECT COUNT(*) FROM matches", *this, "matches");
  return q.step() ? (uint64_t)q.i(0) : 0;
}

}  // namespace tg::viz
