#include "viz/reader.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>

#include "viz/argfmt.h"
#include "viz/schema.h"

namespace tg::viz {

namespace {
const char* const kOpNames[] = {nullptr, "SPECIAL", "BUFFER", "NOOP", "REWRITE_ERROR", "PARAM", "FUNCTION", "CALL",
                                "PROGRAM", "LINEAR", "SOURCE", "BINARY", "SINK", "AFTER", "GROUP", "STACK", "TUPLE",
                                "GETTUPLE", "GETADDR", "INDEX", "SHRINK", "LOAD", "STORE", "WMMA", "CAST", "BITCAST",
                                "EXP2", "LOG2", "SIN", "SQRT", "RECIPROCAL", "NEG", "TRUNC", "ADD", "MUL", "SHL", "SHR",
                                "CDIV", "MAX", "CMOD", "CMPLT", "CMPNE", "CMPEQ", "XOR", "OR", "AND", "THREEFRY", "SUB",
                                "FDIV", "POW", "FLOORDIV", "FLOORMOD", "WHERE", "MULACC", "BARRIER", "RANGE", "IF",
                                "END", "ENDIF", "WAIT", "CONST", "CUSTOM", "CUSTOMI", "INS", "CONTIGUOUS",
                                "CONTIGUOUS_BACKWARD", "DETACH", "STAGE", "COPY", "MSELECT", "MSTACK",
                                "CUSTOM_FUNCTION", "RESHAPE", "PERMUTE", "EXPAND", "PAD", "FLIP", "UNSHARD", "REDUCE",
                                "ALLREDUCE", "PYLITERAL"};
constexpr int kNumOps = 80;
constexpr const char* kStepColumns =
    "SELECT id, context, parent, depth, name, file, line, flags, input_root, output_root, t_start, t_end, n_matches, "
    "error FROM steps";

struct Stmt {
  sqlite3_stmt* s = nullptr;
  Stmt(sqlite3* db, const char* sql, const std::string& path) {
    if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK)
      throw TraceError("trace '" + path + "' cannot be read: " + sqlite3_errmsg(db));
  }
  ~Stmt() { sqlite3_finalize(s); }
  bool step() { return sqlite3_step(s) == SQLITE_ROW; }
  int64_t i(int c) { return sqlite3_column_int64(s, c); }
  bool null(int c) { return sqlite3_column_type(s, c) == SQLITE_NULL; }
  std::string t(int c) {
    const unsigned char* p = sqlite3_column_text(s, c);
    return p ? std::string((const char*)p, sqlite3_column_bytes(s, c)) : std::string();
  }
};

StepRow read_step(const Trace& t, Stmt& q) {
  StepRow s;
  s.id = q.i(0), s.context = q.i(1), s.parent = q.i(2), s.depth = (int)q.i(3);
  s.name = t.str(q.i(4)), s.file = t.str(q.i(5)), s.line = (int)q.i(6);
  int64_t f = q.i(7);
  s.bottom_up = f & 1, s.walk = f & 2, s.enter_calls = f & 4;
  s.input_root = q.i(8), s.output_root = q.null(9) ? 0 : q.i(9);
  s.t_start = q.i(10), s.t_end = q.null(11) ? 0 : q.i(11);
  s.n_matches = q.null(12) ? 0 : q.i(12);
  if (!q.null(13)) s.error = t.str(q.i(13));
  return s;
}
}  // namespace

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
  if (sqlite3_open_v2(path.c_str(), &t->db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK)
    throw TraceError("cannot open trace '" + path + "': " + (t->db_ ? sqlite3_errmsg(t->db_) : "out of memory"));
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
  if (app != TRACE_APPLICATION_ID) throw TraceError("trace '" + path + "' is not a tinygrad trace (application_id " +
                                                    std::to_string(app) + ")");
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
    t->load();
  } catch (const TraceError&) {
    throw;
  } catch (const std::exception& e) {
    throw TraceError("trace '" + path + "' cannot be read: " + e.what());
  }
  return t;
}

Trace::~Trace() {
  if (db_) sqlite3_close(db_);
}

// ESC [ ... letter: the SGR colour sequences tinygrad puts in kernel names
static std::string strip_ansi(const std::string& s) {
  if (s.find('\x1b') == std::string::npos) return s;
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') {
      i += 2;
      while (i < s.size() && !((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z'))) i++;
      continue;
    }
    out += s[i];
  }
  return out;
}

const ProgramRow* Trace::program(int64_t id) const {
  auto it = program_index_.find(id);
  return it == program_index_.end() ? nullptr : &programs_[it->second];
}

std::pair<std::string, std::string> Trace::program_text(int64_t id) const {
  Stmt q(db_, "SELECT source, uops FROM programs WHERE id=?", path_);
  sqlite3_bind_int64(q.s, 1, id);
  if (!q.step()) throw TraceError("trace '" + path_ + "' has no program " + std::to_string(id));
  return {q.t(0), q.t(1)};
}

const ProgramRow* Trace::program_of_context(int64_t context) const {
  auto it = program_by_ctx_.find(context);
  return it == program_by_ctx_.end() ? nullptr : &programs_[it->second];
}

namespace {
thread_local bool g_load_catalog = true;  // open_for_queries: load() stops after the dtype names
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

void Trace::load() {
  catalog_ = g_load_catalog;
  bool has_kernels = false;
  {
    Stmt q(db_, "SELECT name FROM sqlite_master WHERE type='table' AND name='kernel_events'", path_);
    has_kernels = q.step();
  }
  if (has_kernels && catalog_) {
    {
      Stmt q(db_,
             program_text_ ? "SELECT id, name, device, context, source, uops, global_size, local_size, ops, mem, lds "
                             "FROM programs ORDER BY id"
                           : "SELECT id, name, device, context, '', '', global_size, local_size, ops, mem, lds "
                             "FROM programs ORDER BY id",
             path_);
      while (q.step()) {
        ProgramRow p;
        p.id = q.i(0), p.name = str(q.i(1)), p.device = str(q.i(2)), p.context = q.i(3);
        p.source = q.t(4), p.uops = q.t(5), p.global_size = q.t(6), p.local_size = q.t(7);
        p.ops = q.i(8), p.mem = q.i(9), p.lds = q.i(10);
        program_index_[p.id] = programs_.size();
        if (p.context) program_by_ctx_[p.context] = programs_.size();
        programs_.push_back(std::move(p));
      }
    }
    {
      Stmt n(db_, "SELECT COUNT(*) FROM kernel_events", path_);
      if (n.step()) kernel_events_.reserve((size_t)n.i(0));  // a training run records ~10,000: no doubling
    }
    Stmt q(db_,
           "SELECT id, program, name, device, t_start, t_end, bufs, var_vals FROM kernel_events ORDER BY t_start, id",
           path_);
    while (q.step()) {
      KernelEventRow k;
      k.id = q.i(0), k.program = q.i(1), k.name = strip_ansi(str(q.i(2))), k.device = str(q.i(3));
      while (!k.name.empty() && k.name.back() == ' ') k.name.pop_back();  // copy names are padded for DEBUG=2
      k.t_start = q.i(4), k.t_end = q.i(5), k.bufs = q.t(6);
      if (!q.null(7)) k.var_vals = q.t(7);
      kernel_events_.push_back(std::move(k));
    }
  }
  {
    Stmt q(db_, "SELECT name FROM sqlite_master WHERE type='index' AND name='steps_context'", path_);
    has_index_ = q.step();
  }
  {
    Stmt q(db_, "SELECT id, name FROM dtypes ORDER BY id", path_);
    while (q.step()) {
      size_t id = (size_t)q.i(0);
      if (dtype_names_.size() <= id) dtype_names_.resize(id + 1, "?");
      dtype_names_[id] = q.t(1);
    }
  }
  if (!catalog_) return;
  {
    Stmt q(db_, "SELECT id, name, thread, t_start, t_end FROM contexts ORDER BY id", path_);
    while (q.step()) {
      ContextRow c;
      c.id = q.i(0);
      c.name_ansi = str(q.i(1));
      c.name = strip_ansi(c.name_ansi);
      c.thread = q.i(2);
      c.t_start = q.i(3);
      c.t_end = q.null(4) ? 0 : q.i(4);
      ctx_index_[c.id] = contexts_.size();
      contexts_.push_back(std::move(c));
    }
  }
  {
    Stmt n(db_, "SELECT COUNT(*) FROM steps", path_);
    if (n.step()) steps_.reserve((size_t)n.i(0));  // no doubling on the way: 12,000 steps of a training run
  }
  {
    Stmt q(db_, (std::string(kStepColumns) + " ORDER BY id").c_str(), path_);
    while (q.step()) {
      StepRow s = read_step(*this, q);
      step_index_[s.id] = steps_.size();
      auto it = ctx_index_.find(s.context);
      if (it != ctx_index_.end()) contexts_[it->second].steps.push_back(s.id);
      steps_.push_back(std::move(s));
    }
  }
  if (!has_index_) {
    // a trace from a killed run: steps still open have no match count, count them in one scan
    Stmt q(db_, "SELECT step, COUNT(*) FROM matches GROUP BY step", path_);
    while (q.step()) {
      auto it = step_index_.find(q.i(0));
      if (it != step_index_.end() && steps_[it->second].n_matches == 0) steps_[it->second].n_matches = q.i(1);
    }
  }
}

std::map<std::string, std::string> Trace::meta() const {
  std::map<std::string, std::string> m;
  Stmt q(db_, "SELECT key, value FROM meta", path_);
  while (q.step()) m[q.t(0)] = q.t(1);
  return m;
}
bool Trace::complete() const {
  auto m = meta();
  return m["status"] == "complete";
}

const StepRow& Trace::step(int64_t id) const {
  if (!catalog_) {  // opened for queries: read the row when asked for
    if (auto it = lazy_steps_.find(id); it != lazy_steps_.end()) return it->second;
    Stmt q(db_, (std::string(kStepColumns) + " WHERE id=?").c_str(), path_);
    sqlite3_bind_int64(q.s, 1, id);
    if (!q.step()) throw TraceError("trace '" + path_ + "' has no step " + std::to_string(id));
    return lazy_steps_.emplace(id, read_step(*this, q)).first->second;
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
  if (auto it = step_index_.find(step_id); it != step_index_.end())
    out.reserve((size_t)steps_[it->second].n_matches);  // no doubling: a step can hold 18,000 matches
  else if (!catalog_)
    try {
      out.reserve((size_t)step(step_id).n_matches);
    } catch (const TraceError&) {  // no such step: no matches
    }
  {
    Stmt q(db_, "SELECT ordinal, before, after, rule, dur FROM matches WHERE step=? ORDER BY ordinal", path_);
    sqlite3_bind_int64(q.s, 1, step_id);
    while (q.step()) {
      MatchRow m;
      m.step = step_id, m.ordinal = q.i(0), m.before = q.i(1), m.after = q.i(2), m.rule = q.i(3), m.dur_ns = q.i(4);
      out.push_back(m);
    }
  }
  {
    Stmt q(db_, "SELECT ordinal, before, error_uop, rule, message FROM rule_errors WHERE step=?", path_);
    sqlite3_bind_int64(q.s, 1, step_id);
    while (q.step()) {
      MatchRow m;
      m.step = step_id, m.ordinal = q.i(0), m.before = q.i(1), m.after = q.i(2), m.rule = q.i(3);
      m.is_error = true;
      m.error = q.i(4);
      out.push_back(m);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const MatchRow& a, const MatchRow& b) { return a.ordinal < b.ordinal; });
  return out;
}

std::vector<MatchRow> Trace::matches_of_rule(int64_t rule_id) const {
  std::vector<MatchRow> out;
  {
    Stmt n(db_, "SELECT COUNT(*) FROM matches WHERE rule=?", path_);
    sqlite3_bind_int64(n.s, 1, rule_id);
    if (n.step()) out.reserve((size_t)n.i(0));
  }
  Stmt q(db_, "SELECT step, ordinal, before, after, dur FROM matches WHERE rule=? ORDER BY step, ordinal", path_);
  sqlite3_bind_int64(q.s, 1, rule_id);
  while (q.step()) {
    MatchRow m;
    m.step = q.i(0), m.ordinal = q.i(1), m.before = q.i(2), m.after = q.i(3), m.rule = rule_id, m.dur_ns = q.i(4);
    out.push_back(m);
  }
  return out;
}

std::optional<RuleRow> Trace::rule(int64_t id) const {
  Stmt q(db_, "SELECT matcher, file, line, source FROM rules WHERE id=?", path_);
  sqlite3_bind_int64(q.s, 1, id);
  if (!q.step()) return std::nullopt;
  RuleRow r;
  r.id = id, r.matcher = str(q.i(0)), r.file = str(q.i(1)), r.line = (int)q.i(2), r.source = str(q.i(3));
  return r;
}
std::vector<RuleRow> Trace::rules() const {
  std::vector<RuleRow> out;
  Stmt q(db_, "SELECT id, matcher, file, line, source FROM rules ORDER BY id", path_);
  while (q.step()) {
    RuleRow r;
    r.id = q.i(0), r.matcher = str(q.i(1)), r.file = str(q.i(2)), r.line = (int)q.i(3), r.source = str(q.i(4));
    out.push_back(r);
  }
  return out;
}

std::vector<RuleStatRow> Trace::rule_stats(int64_t step_id, int64_t context_id) const {
  std::vector<RuleStatRow> out;
  auto read = [&](Stmt& q, bool with_candidates) {
    while (q.step()) {
      RuleStatRow r;
      r.rule = q.i(0);
      int c = 1;
      if (with_candidates) r.candidates = (uint64_t)q.i(c++);
      r.early_rejects = (uint64_t)q.i(c++), r.attempts = (uint64_t)q.i(c++), r.matches = (uint64_t)q.i(c++);
      r.excl_ns = q.i(c++), r.incl_ns = q.i(c++);
      if (!with_candidates) r.candidates = r.early_rejects + r.attempts;
      out.push_back(r);
    }
  };
  if (step_id > 0) {
    // the rules the step attempted: steps.stats is [[rule, attempts, matches, excl_ns(, early_rejects(, incl_ns))], ...]
    Stmt q(db_, "SELECT stats FROM steps WHERE id=?", path_);
    sqlite3_bind_int64(q.s, 1, step_id);
    if (!q.step() || q.null(0)) return out;
    std::string j = q.t(0);
    std::vector<int64_t> nums;
    for (size_t i = 0; i < j.size();) {
      char ch = j[i];
      if (ch == ']' && !nums.empty()) {  // the end of an entry
        if (nums.size() < 4 || nums.size() > 6) throw TraceError("trace '" + path_ + "': malformed per-step rule statistics in step " + std::to_string(step_id));
        RuleStatRow r;
        r.rule = nums[0], r.attempts = (uint64_t)nums[1], r.matches = (uint64_t)nums[2], r.excl_ns = nums[3];
        r.early_rejects = nums.size() > 4 ? (uint64_t)nums[4] : 0;
        r.incl_ns = nums.size() > 5 ? nums[5] : r.excl_ns;
        r.candidates = r.early_rejects + r.attempts;
        out.push_back(r);
        nums.clear();
        i++;
      } else if (isdigit((unsigned char)ch) || ch == '-') {
        size_t e = i + 1;
        while (e < j.size() && isdigit((unsigned char)j[e])) e++;
        nums.push_back(std::stoll(j.substr(i, e - i)));
        i = e;
      } else {
        i++;
      }
    }
    std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.rule < b.rule; });
    return out;
  }
  // every candidate rule, from the per-context table; a context still open when the run was killed has no rows
  // there, its steps' rows are summed instead
  std::string sql =
      "SELECT rule, SUM(candidates), SUM(early_rejects), SUM(attempts), SUM(matches), SUM(excl_ns), SUM(incl_ns) FROM ("
      " SELECT rule, candidates, early_rejects, attempts, matches, excl_ns, incl_ns, context FROM context_rule_stats"
      " UNION ALL SELECT s.rule, s.early_rejects + s.attempts, s.early_rejects, s.attempts, s.matches, s.excl_ns,"
      " s.incl_ns, st.context FROM rule_stats s JOIN steps st ON st.id = s.step"
      " WHERE st.context NOT IN (SELECT DISTINCT context FROM context_rule_stats))";
  if (context_id > 0) sql += " WHERE context=?";
  sql += " GROUP BY rule ORDER BY rule";
  Stmt q(db_, sql.c_str(), path_);
  if (context_id > 0) sqlite3_bind_int64(q.s, 1, context_id);
  read(q, true);
  return out;
}

std::vector<int64_t> Trace::step_notes(int64_t step_id) const {
  std::vector<int64_t> out;
  Stmt q(db_, "SELECT uop FROM step_uops WHERE step=?", path_);
  sqlite3_bind_int64(q.s, 1, step_id);
  while (q.step()) out.push_back(q.i(0));
  return out;
}

std::vector<int64_t> Trace::steps_with_rules(const std::vector<int64_t>& rules) const {
  std::vector<int64_t> out;
  if (rules.empty()) return out;
  std::string sql = "SELECT DISTINCT step FROM matches WHERE rule IN (";
  for (size_t i = 0; i < rules.size(); i++) sql += i ? ",?" : "?";
  sql += ") ORDER BY step";
  Stmt q(db_, sql.c_str(), path_);
  for (size_t i = 0; i < rules.size(); i++) sqlite3_bind_int64(q.s, (int)i + 1, rules[i]);
  while (q.step()) out.push_back(q.i(0));
  return out;
}

const std::string& Trace::str(int64_t id) const {
  auto it = strings_.find(id);
  if (it != strings_.end()) return it->second;
  Stmt q(db_, "SELECT value FROM strings WHERE id=?", path_);
  sqlite3_bind_int64(q.s, 1, id);
  std::string v = q.step() ? q.t(0) : std::string();
  return strings_.emplace(id, std::move(v)).first->second;
}

const Node& Trace::node(int64_t id) const {
  auto it = nodes_.find(id);
  if (it != nodes_.end()) return it->second;
  // load the node and, iteratively, its srcs
  Stmt q(db_, "SELECT op, dtype, arg, tag, src FROM uops WHERE id=?", path_);
  std::vector<int64_t> todo{id};
  while (!todo.empty()) {
    int64_t cur = todo.back();
    todo.pop_back();
    if (nodes_.count(cur)) continue;
    sqlite3_reset(q.s);
    sqlite3_bind_int64(q.s, 1, cur);
    if (!q.step()) throw TraceError("trace '" + path_ + "' has no uop " + std::to_string(cur) + " (truncated trace?)");
    Node n;
    n.id = cur;
    n.op = (int)q.i(0);
    n.op_name = n.op > 0 && n.op <= kNumOps ? kOpNames[n.op] : "?";
    n.dtype = (int)q.i(1), n.arg = q.i(2), n.tag = q.null(3) ? 0 : q.i(3);
    const unsigned char* b = (const unsigned char*)sqlite3_column_blob(q.s, 4);
    int len = sqlite3_column_bytes(q.s, 4);
    for (int p = 0; p < len;) {
      uint64_t v = 0;
      int shift = 0;
      while (p < len) {
        uint8_t c = b[p++];
        v |= (uint64_t)(c & 0x7f) << shift;
        shift += 7;
        if (!(c & 0x80)) break;
      }
      int64_t delta = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
      n.src.push_back(cur - delta);
    }
    for (int64_t s : n.src)
      if (!nodes_.count(s)) todo.push_back(s);
    const_cast<Trace*>(this)->index_content(n, true);
    nodes_.emplace(cur, std::move(n));
  }
  return nodes_.at(id);
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
  Node n;
  n.id = next_synth_--;
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

std::string Trace::arg_text(int64_t id) const { return arg_display(str(node(id).arg)); }

std::string Trace::label(int64_t id) const {
  const Node& n = node(id);
  std::string l(n.op_name);
  const std::string& dt = dtype_name(n.dtype);
  if (dt != "void") l += "\ndtypes." + dt;
  std::string a = arg_text(id);
  if (a != "None") l += "\n" + a;
  if (n.tag) l += "\ntag=" + arg_display(str(n.tag));
  return l;
}

std::string Trace::shallow_label(int64_t id) const {
  if (nodes_.count(id) || id < 0) return label(id);
  Stmt q(db_, "SELECT op, dtype, arg, tag FROM uops WHERE id=?", path_);
  sqlite3_bind_int64(q.s, 1, id);
  if (!q.step()) throw TraceError("trace '" + path_ + "' has no uop " + std::to_string(id) + " (truncated trace?)");
  int op = (int)q.i(0);
  std::string l = op > 0 && op <= kNumOps ? kOpNames[op] : "?";
  const std::string& dt = dtype_name((int)q.i(1));
  if (dt != "void") l += "\ndtypes." + dt;
  std::string a = arg_display(str(q.i(2)));
  if (a != "None") l += "\n" + a;
  if (!q.null(3)) l += "\ntag=" + arg_display(str(q.i(3)));
  return l;
}

uint64_t Trace::uop_count() const {
  Stmt q(db_, "SELECT COUNT(*) FROM uops", path_);
  return q.step() ? (uint64_t)q.i(0) : 0;
}
uint64_t Trace::match_count() const {
  Stmt q(db_, "SELECT COUNT(*) FROM matches", path_);
  return q.step() ? (uint64_t)q.i(0) : 0;
}

}  // namespace tg::viz
