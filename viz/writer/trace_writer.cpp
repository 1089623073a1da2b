#include "viz/writer/trace_writer.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <ctime>
#include <deque>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "lib/helpers.h"
#include "lib/uop/serialize.h"
#include "lib/uop/track.h"
#include "lib/uop/upat.h"
#include "viz/reader/reader.h"
#include "viz/reader/replay.h"
#include "viz/schema.h"

namespace tg::viz {

namespace {

std::atomic<uint32_t> g_generation{0};

// ***** what a producer thread buffers (no strings on the per-match path) *****
struct UopEv {
  uint32_t id;
  UOp u;  // kept alive until written
};
struct MatchEv {
  uint64_t step;
  uint32_t ordinal, before, after, rule;
  int64_t dur;
};
enum class Ev : uint8_t { Rule, CtxBegin, CtxRename, CtxEnd, StepBegin, StepEnd, Error, Note };
struct Event {
  Ev kind;
  uint64_t a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, g = 0;
  int64_t t = 0;
  std::string s, s2;
  std::vector<RuleStat> stats;
};
struct Batch {
  std::vector<Event> other;  // in order: contexts, steps, rules, errors
  std::vector<UopEv> uops;
  std::vector<MatchEv> matches;
  std::vector<std::pair<uint64_t, ProgramRecord>> programs;
  std::vector<std::pair<uint64_t, MachineCode>> codes;
  std::vector<KernelEvent> kernels;
  std::vector<ProfileEvent> profile;
  size_t size() const {
    return other.size() + uops.size() + matches.size() + programs.size() + codes.size() + kernels.size() +
           profile.size();
  }
  bool empty() const { return size() == 0; }
};

// set when the trace is finished because of SIGINT/SIGTERM: the program is to die soon, so no replay checkpoints
std::atomic<bool> g_finishing_on_signal{false};

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back((char)(v | 0x80));
    v >>= 7;
  }
  out.push_back((char)v);
}

struct Agg {
  uint64_t cand = 0, er = 0, att = 0, mat = 0;
  int64_t excl = 0, incl = 0;
};

// ***** claiming the trace path *****

// `<stem>-k.trace.db` (or `<path>-k` without that extension)
std::string numbered_path(const std::string& path, int k) {
  static const std::string ext = ".trace.db";
  bool has_ext = path.size() > ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0;
  std::string stem = has_ext ? path.substr(0, path.size() - ext.size()) : path;
  return stem + "-" + std::to_string(k) + (has_ext ? ext : "");
}

// a SQLite file whose header carries the trace's application_id
bool is_trace_file(int fd) {
  unsigned char h[72] = {};
  if (pread(fd, h, sizeof h, 0) != (ssize_t)sizeof h) return false;
  if (std::memcmp(h, "SQLite format 3", 16) != 0) return false;
  uint32_t app = (uint32_t)h[68] << 24 | (uint32_t)h[69] << 16 | (uint32_t)h[70] << 8 | (uint32_t)h[71];
  return app == (uint32_t)TRACE_APPLICATION_ID;
}

// Claims `want` for one recorder: an exclusive flock on the file, held until the trace is finished. The file may be
// new, empty, or an earlier trace that no process is recording (it is replaced). A path another recorder holds gives
// way to `<stem>-2.trace.db`, `-3`, ... (said on stderr); a directory, a non-regular file or a file that is not a
// trace is an error, never deleted.
std::string claim_trace_path(const std::string& want, int& lock_fd) {
  for (int k = 1; k <= 100; k++) {
    std::string p = k == 1 ? want : numbered_path(want, k);
    struct stat st;
    if (::stat(p.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode))
        throw Error("trace path '" + p + "' is a directory: name a file in it, e.g. VIZ_PATH=" + p + "/run.trace.db");
      if (!S_ISREG(st.st_mode)) throw Error("trace path '" + p + "' exists and is not a regular file");
    }
    int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw Error("cannot create trace file '" + p + "': " + std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int err = errno;
      ::close(fd);
      if (err == EWOULDBLOCK) continue;  // another recorder is writing this trace
      throw Error("cannot lock trace file '" + p + "': " + std::strerror(err));
    }
    if (::fstat(fd, &st) == 0 && st.st_size > 0 && !is_trace_file(fd)) {
      ::close(fd);
      throw Error("'" + p + "' exists and is not a trace: not overwriting it (remove it or choose another VIZ_PATH)");
    }
    if (::ftruncate(fd, 0) != 0) {
      int err = errno;
      ::close(fd);
      throw Error("cannot truncate trace file '" + p + "': " + std::strerror(err));
    }
    std::remove((p + "-wal").c_str());  // the earlier trace's; no recorder holds them (we hold the lock)
    std::remove((p + "-shm").c_str());
    if (k > 1)
      std::fprintf(stderr, "tinygrad: another process is recording '%s'; this trace goes to '%s'\n", want.c_str(),
                   p.c_str());
    lock_fd = fd;
    return p;
  }
  throw Error("trace path '" + want + "' and its 99 numbered alternatives are all being recorded by other processes");
}

}  // namespace

class TraceWriter final : public Recorder {
 public:
  explicit TraceWriter(const std::string& path);
  ~TraceWriter() override { finish(); }

  uint64_t context_begin(const std::string& name, int64_t t_ns) override;
  void context_rename(uint64_t ctx, const std::string& name) override;
  void context_end(uint64_t ctx, int64_t t_ns) override;
  uint64_t step_begin(const StepInfo& step, const UOp& input_root) override;
  void step_end(uint64_t step, const UOp* output_root, int64_t t_end_ns, std::vector<RuleStat>&& stats,
                const std::string& error) override;
  void match(uint64_t step, uint32_t ordinal, const UOp& before, const UOp& after, uint32_t rule,
             int64_t dur_ns) override;
  void rule_error(uint64_t step, uint32_t ordinal, const UOp& before, const UOp& error_node, uint32_t rule,
                  const std::string& message) override;
  void note_uop(const UOp& u) override;
  uint64_t program(const ProgramRecord& p) override;
  void program_code(uint64_t program, const MachineCode& code) override;
  void kernel_event(const KernelEvent& e) override;
  void profile_event(const ProfileEvent& e) override;
  void finish() override;
  void write_checkpoints();
  std::string path() const override { return path_; }
  std::string stopped() const override {
    std::lock_guard<std::mutex> lk(q_mu_);
    return stopped_;
  }
  WriterStats stats() const {
    std::lock_guard<std::mutex> lk(q_mu_);
    return stats_;
  }

 private:
  struct ThreadBuf {
    std::mutex mu;
    Batch batch;
    std::vector<uint64_t> open_steps;                     // steps this thread has begun and not ended
    std::vector<std::pair<detail::UOpNode*, bool>> walk;  // ensure_uop's reusable stack
    int64_t last_handover_ns = 0;
  };
  ThreadBuf& tbuf();
  // a thread's buffer goes to the writer when it is big, or at the end of a top-level step or a context once
  // kHandoverMs have passed since the last handover (the writer also pulls buffers that sit idle for kPullMs)
  static constexpr int64_t kHandoverMs = 20, kPullMs = 50;
  void maybe_handover(ThreadBuf& tb, bool boundary = false) {
    if (tb.batch.size() >= 16384) return handover(tb);
    if (boundary) {
      int64_t t = now_ns();
      if (t - tb.last_handover_ns >= kHandoverMs * 1000000) handover(tb);
    }
  }
  void pull_buffers();
  void handover(ThreadBuf& tb);  // tb.mu held
  // the node's id in this trace, 0 when it has none yet (spins the few ns another thread takes to number a node it
  // has claimed)
  uint32_t id_of(const UOp& u) const {
    for (;;) {
      uint64_t t = u.node()->trace_id.load(std::memory_order_acquire);
      if ((uint32_t)(t >> 32) != gen_) return 0;
      if ((uint32_t)t != 0xffffffffu) return (uint32_t)t;
    }
  }
  uint32_t ensure_uop(ThreadBuf& tb, const UOp& u);
  void ensure_rule(ThreadBuf& tb, uint32_t rule);
  void writer_loop();
  void write_batch(Batch& b);
  void flush_context_stats(uint64_t ctx);
  int64_t intern(const std::string& s);
  int64_t shape_string(const UOp& u);
  int64_t scalar_shape_ = 0;  // the strings id of "()"
  void exec(const char* sql);
  sqlite3_stmt* prep(const char* sql);
  [[noreturn]] void sql_fail(const char* what);
  std::string io_reason() const;
  void run(sqlite3_stmt* s);

  int lock_fd_ = -1;  // holds the flock that claims path_ (set while path_ is initialized, so declared before it);
                      // closed only after SQLite closes the file
  std::string path_;
  sqlite3* db_ = nullptr;
  uint32_t gen_;
  std::atomic<uint32_t> next_uop_{1};
  std::atomic<uint64_t> next_step_{1}, next_ctx_{1}, next_program_{1};
  // every recorded node stays alive until finish(): with hash-consing, a node built later with the same content is
  // the same object, so its id (kept on the node) is found without a content lookup and a UOp is written once
  std::vector<UOp> keep_;  // writer thread
  std::unique_ptr<std::atomic<uint8_t>[]> rule_seen_;
  uint32_t rule_seen_n_ = 0;

  std::mutex bufs_mu_;
  std::vector<std::shared_ptr<ThreadBuf>> bufs_;

  mutable std::mutex q_mu_;
  std::condition_variable q_cv_;
  std::deque<Batch> queue_;
  bool stop_ = false, finished_ = false;
  // why recording stopped before finish() (a write failed: a full disk, an I/O error), "" while it goes on; once set,
  // the producers record nothing more (dead_) and the writer writes nothing but the status
  std::string stopped_;
  std::atomic<bool> dead_{false};
  void stop_recording(const std::string& why);
  WriterStats stats_;
  std::thread thread_;

  // writer-thread state
  std::unordered_map<std::string, int64_t> strings_;
  // Nodes are numbered by the thread that meets them first and written with that thread's batch, so a row of one
  // thread can name a node whose row another thread has not handed over yet. A transaction commits only when every
  // node its rows name is written (missing_ empty), so a trace cut off after any commit names no node it lacks.
  std::vector<uint64_t> uop_written_;   // bitmap by node id
  std::unordered_set<uint32_t> missing_;  // nodes named by written rows and not written yet
  bool uop_is_written(uint32_t id) const {
    return id / 64 < uop_written_.size() && (uop_written_[id / 64] >> (id % 64) & 1);
  }
  void uop_ref(uint64_t id) {
    if (id && !uop_is_written((uint32_t)id)) missing_.insert((uint32_t)id);
  }
  void uop_mark_written(uint32_t id) {
    if (id / 64 >= uop_written_.size()) uop_written_.resize(std::max<size_t>(id / 64 + 1, uop_written_.size() * 2));
    uop_written_[id / 64] |= (uint64_t)1 << (id % 64);
    if (!missing_.empty()) missing_.erase(id);
  }
  // steps begun and not yet written: a step is one INSERT when it ends; one still open when a transaction commits is
  // inserted then (so a killed run keeps it) and completed by an UPDATE
  struct PendingStep {
    Event begin;
    bool inserted = false;
  };
  std::unordered_map<uint64_t, PendingStep> open_steps_;
  void insert_step(const Event& begin, const Event* end, const std::string* stats_json);
  void insert_open_steps();
  std::unordered_map<uint64_t, std::unordered_map<uint32_t, Agg>> ctx_stats_;
  sqlite3_stmt *st_str_ = nullptr, *st_uop_ = nullptr, *st_rule_ = nullptr, *st_ctx_ = nullptr, *st_ctx_name_ = nullptr,
               *st_ctx_end_ = nullptr, *st_step_ = nullptr, *st_step_end_ = nullptr, *st_match_ = nullptr,
               *st_cstat_ = nullptr, *st_err_ = nullptr, *st_note_ = nullptr, *st_prog_ = nullptr, *st_kev_ = nullptr,
               *st_mem_ = nullptr, *st_marker_ = nullptr, *st_range_ = nullptr, *st_dev_ = nullptr, *st_code_ = nullptr;
  void write_profile_event(const ProfileEvent& e);
};

TraceWriter::TraceWriter(const std::string& path) : path_(claim_trace_path(path, lock_fd_)), gen_(++g_generation) {
  if (sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    if (db_) sqlite3_close(db_);
    db_ = nullptr;
    ::close(lock_fd_);
    throw Error("cannot create trace file '" + path_ + "': " + msg);
  }
  exec("PRAGMA journal_mode=WAL");
  exec("PRAGMA synchronous=NORMAL");
  exec("PRAGMA wal_autocheckpoint=4000");  // checkpoint 16 MB at a time on the writer thread, not all at close
  exec(("PRAGMA application_id=" + std::to_string(TRACE_APPLICATION_ID)).c_str());
  exec(("PRAGMA user_version=" + std::to_string(TRACE_SCHEMA_VERSION)).c_str());
  exec(TRACE_SCHEMA_SQL);
  st_str_ = prep("INSERT INTO strings(id, value) VALUES(?, ?)");
  st_uop_ = prep("INSERT INTO uops(id, op, dtype, arg, tag, src, shape) VALUES(?,?,?,?,?,?,?)");
  st_rule_ = prep("INSERT OR IGNORE INTO rules(id, matcher, file, line, source) VALUES(?,?,?,?,?)");
  st_ctx_ = prep("INSERT INTO contexts(id, name, thread, t_start) VALUES(?,?,?,?)");
  st_ctx_name_ = prep("UPDATE contexts SET name=? WHERE id=?");
  st_ctx_end_ = prep("UPDATE contexts SET t_end=? WHERE id=?");
  st_step_ = prep(
      "INSERT INTO steps(id, context, parent, depth, name, file, line, flags, input_root, t_start, output_root, t_end, "
      "n_matches, error, stats) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  st_step_end_ = prep("UPDATE steps SET output_root=?, t_end=?, n_matches=?, error=?, stats=? WHERE id=?");
  st_match_ = prep("INSERT INTO matches(step, ordinal, before, after, rule, dur) VALUES(?,?,?,?,?,?)");
  st_cstat_ = prep(
      "INSERT OR REPLACE INTO context_rule_stats(context, rule, candidates, early_rejects, attempts, matches, excl_ns, "
      "incl_ns) VALUES(?,?,?,?,?,?,?,?)");
  st_err_ = prep("INSERT INTO rule_errors(step, ordinal, before, error_uop, rule, message) VALUES(?,?,?,?,?,?)");
  st_note_ = prep("INSERT INTO step_uops(step, uop) VALUES(?,?)");
  st_prog_ = prep(
      "INSERT INTO programs(id, name, device, context, source, uops, global_size, local_size, ops, mem, lds) "
      "VALUES(?,?,?,?,?,?,?,?,?,?,?)");
  st_code_ = prep("INSERT OR REPLACE INTO machine_code(program, kind, code) VALUES(?,?,?)");
  st_kev_ =
      prep("INSERT INTO kernel_events(program, name, device, t_start, t_end, bufs, var_vals) VALUES(?,?,?,?,?,?,?)");
  st_mem_ = prep("INSERT INTO mem_events(kind, device, t, buffer, dtype, size, nbytes) VALUES(?,?,?,?,?,?,?)");
  st_marker_ = prep("INSERT INTO markers(t, name, color) VALUES(?,?,?)");
  st_range_ = prep("INSERT INTO ranges(device, name, t_start, t_end) VALUES(?,?,?,?)");
  st_dev_ = prep("INSERT OR REPLACE INTO devices(device, tdiff, props) VALUES(?,?,?)");
  exec("BEGIN");
  {
    sqlite3_stmt* s = prep("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)");
    auto meta = [&](const std::string& k, const std::string& v) {
      sqlite3_bind_text(s, 1, k.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(s, 2, v.c_str(), -1, SQLITE_TRANSIENT);
      run(s);
    };
    std::string cmdline;
    std::ifstream f("/proc/self/cmdline", std::ios::binary);
    std::string arg;
    while (std::getline(f, arg, '\0')) cmdline += (cmdline.empty() ? "" : " ") + arg;
    meta("schema_version", std::to_string(TRACE_SCHEMA_VERSION));
    meta("producer", "tinygrad-cpp");
    meta("reference", "tinygrad a9069c177a9da9cca18593edf55acd2e6073cca6");
    meta("command", cmdline);
    meta("pid", std::to_string(getpid()));
    meta("created_unix", std::to_string((long long)std::time(nullptr)));
    meta("clock", "steady_clock ns");
    meta("source_root", TG_SOURCE_ROOT);  // rule and step files are relative to it (tinyviz opens them in an editor)
    meta("status", "recording");
    sqlite3_finalize(s);
    sqlite3_stmt* o = prep("INSERT INTO ops(id, name) VALUES(?, ?)");
    for (int i = 1; i <= NUM_OPS; i++) {
      sqlite3_bind_int(o, 1, i);
      sqlite3_bind_text(o, 2, op_name((Ops)i), -1, SQLITE_STATIC);
      run(o);
    }
    sqlite3_finalize(o);
    sqlite3_stmt* d = prep("INSERT INTO dtypes(id, name) VALUES(?, ?)");
    for (DType dt : dtypes::every()) {
      std::string n = dt.repr().substr(7);
      sqlite3_bind_int(d, 1, dt.id());
      sqlite3_bind_text(d, 2, n.c_str(), -1, SQLITE_TRANSIENT);
      run(d);
    }
    sqlite3_finalize(d);
  }
  exec("COMMIT");
  rule_seen_n_ = std::max<uint32_t>(rule_count() + 4096, 8192);
  rule_seen_.reset(new std::atomic<uint8_t>[rule_seen_n_]);
  for (uint32_t i = 0; i < rule_seen_n_; i++) rule_seen_[i].store(0);
  thread_ = std::thread([this] { writer_loop(); });
}

void TraceWriter::exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string m = err ? err : "?";
    sqlite3_free(err);
    throw Error("trace file '" + path_ + "': " + m + io_reason());
  }
}
sqlite3_stmt* TraceWriter::prep(const char* sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_, sql, -1, &s, nullptr) != SQLITE_OK) sql_fail("prepare");
  return s;
}
// SQLite says only "disk I/O error" for a failed write() (and keeps the system's errno only for some calls): what
// the user can do about it
std::string TraceWriter::io_reason() const {
  if (int e = sqlite3_system_errno(db_)) return std::string(" (") + std::strerror(e) + ")";
  if (sqlite3_extended_errcode(db_) == SQLITE_IOERR_WRITE)
    return " (a write failed: no space left on the device, or the file reached its size limit)";
  return {};
}
void TraceWriter::sql_fail(const char* what) {
  throw Error("trace file '" + path_ + "': " + what + ": " + sqlite3_errmsg(db_) + io_reason());
}
void TraceWriter::run(sqlite3_stmt* s) {
  if (sqlite3_step(s) != SQLITE_DONE) sql_fail("write");
  sqlite3_reset(s);
}

// ***** producer side *****

TraceWriter::ThreadBuf& TraceWriter::tbuf() {
  thread_local std::shared_ptr<ThreadBuf> buf;
  thread_local uint32_t buf_gen = 0;
  if (!buf || buf_gen != gen_) {
    buf = std::make_shared<ThreadBuf>();
    buf_gen = gen_;
    std::lock_guard<std::mutex> lk(bufs_mu_);
    bufs_.push_back(buf);
  }
  return *buf;
}

void TraceWriter::handover(ThreadBuf& tb) {
  tb.last_handover_ns = now_ns();
  if (tb.batch.empty()) return;
  Batch b;
  std::swap(b, tb.batch);
  {
    std::lock_guard<std::mutex> lk(q_mu_);
    // once finish() has taken the last buffers, what threads still record is dropped: the writer must reach an empty
    // queue and stop even while the program goes on (a trace finished on SIGINT while the main thread still rewrites)
    if (stop_) return;  // b is released outside the lock
    queue_.push_back(std::move(b));
  }
  q_cv_.notify_one();
}

// gives every not-yet-recorded node under root an id (srcs first), queueing the new ones for the writer. A node is
// claimed with a CAS, so two threads meeting the same new node give it one id.
uint32_t TraceWriter::ensure_uop(ThreadBuf& tb, const UOp& root) {
  if (uint32_t id = id_of(root)) return id;
  auto& st = tb.walk;
  st.clear();
  st.push_back({root.node(), false});
  const uint64_t claimed = ((uint64_t)gen_ << 32) | 0xffffffffu;
  while (!st.empty()) {
    auto [n, expanded] = st.back();
    const UOp& u = *reinterpret_cast<const UOp*>(&n);
    if (id_of(u)) {
      st.pop_back();
      continue;
    }
    if (!expanded) {
      st.back().second = true;
      for (uint32_t i = n->nsrc; i > 0; i--)
        if (!id_of(*reinterpret_cast<const UOp*>(&n->srcs[i - 1]))) st.push_back({n->srcs[i - 1], false});
      continue;
    }
    st.pop_back();
    // every src has its id before this node takes one: a src that another thread claimed gets its id from that thread
    // in a moment (between its CAS and its store), and this node's id must be the larger one (the reader requires a
    // node's srcs to have earlier ids; without the wait, a node could take its id first)
    for (uint32_t i = 0; i < n->nsrc; i++) (void)id_of(*reinterpret_cast<const UOp*>(&n->srcs[i]));
    uint64_t old = n->trace_id.load(std::memory_order_acquire);
    if ((uint32_t)(old >> 32) == gen_) continue;  // claimed by another thread: id_of waits for its id
    if (!n->trace_id.compare_exchange_strong(old, claimed, std::memory_order_acq_rel)) continue;
    uint32_t id = next_uop_.fetch_add(1, std::memory_order_relaxed);
    n->trace_id.store(((uint64_t)gen_ << 32) | id, std::memory_order_release);
    tb.batch.uops.push_back(UopEv{id, u});
  }
  return id_of(root);
}

void TraceWriter::ensure_rule(ThreadBuf& tb, uint32_t rule) {
  if (rule < rule_seen_n_) {
    if (rule_seen_[rule].load(std::memory_order_relaxed)) return;
    uint8_t expected = 0;
    if (!rule_seen_[rule].compare_exchange_strong(expected, 1)) return;
  }
  Event e{Ev::Rule};
  e.a = rule;
  tb.batch.other.push_back(std::move(e));
}

uint64_t TraceWriter::program(const ProgramRecord& p) {
  if (dead_.load(std::memory_order_relaxed)) return next_program_.fetch_add(1);
  ThreadBuf& tb = tbuf();
  std::lock_guard<std::mutex> lk(tb.mu);
  uint64_t id = next_program_.fetch_add(1);
  tb.batch.programs.emplace_back(id, p);
  maybe_handover(tb, true);
  return id;
}
void TraceWriter::program_code(uint64_t program, const MachineCode& code) {
  if (dead_.load(std::memory_order_relaxed)) return;
  ThreadBuf& tb = tbuf();
  std::lock_guard<std::mutex> lk(tb.mu);
  tb.batch.codes.emplace_back(program, code);
  maybe_handover(tb, true);
}
void TraceWriter::kernel_event(const KernelEvent& e) {
  if (dead_.load(std::memory_order_relaxed)) return;
  ThreadBuf& tb = tbuf();
  std::lock_guard<std::mutex> lk(tb.mu);
  tb.batch.kernels.push_back(e);
  maybe_handover(tb, true);
}
void TraceWriter::profile_event(const ProfileEvent& e) {
  if (dead_.load(std::memory_order_relaxed)) return;
  ThreadBuf& tb = tbuf();
  std::lock_guard<std::mutex> lk(tb.mu);
  tb.batch.profile.push_back(e);
  maybe_handover(tb);
}

void TraceWriter::write_profile_event(const ProfileEvent& ev) {
  if (auto* p = std::get_if<ProfilePointEvent>(&ev)) {
    if (p->kind == ProfilePointEvent::Kind::marker) {
      sqlite3_bind_int64(st_marker_, 1, p->ts_ns);
      sqlite3_bind_int64(st_marker_, 2, intern(p->name));
      sqlite3_bind_int64(st_marker_, 3, intern(p->color));
      return run(st_marker_);
    }
    sqlite3_bind_int64(st_mem_, 1, p->kind == ProfilePointEvent::Kind::alloc ? 1 : 0);
    sqlite3_bind_int64(st_mem_, 2, intern(p->device));
    sqlite3_bind_int64(st_mem_, 3, p->ts_ns);
    sqlite3_bind_int64(st_mem_, 4, (int64_t)p->buffer);
    sqlite3_bind_int64(st_mem_, 5, intern(p->dtype));
    sqlite3_bind_int64(st_mem_, 6, (int64_t)p->size);
    sqlite3_bind_int64(st_mem_, 7, (int64_t)p->nbytes);
    return run(st_mem_);
  }
  auto range = [&](const std::string& device, const std::string& name, int64_t st, int64_t en) {
    sqlite3_bind_int64(st_range_, 1, intern(device));
    sqlite3_bind_int64(st_range_, 2, intern(name));
    sqlite3_bind_int64(st_range_, 3, st);
    sqlite3_bind_int64(st_range_, 4, en);
    run(st_range_);
  };
  if (auto* r = std::get_if<ProfileRangeEvent>(&ev)) return range(r->device, r->name, r->t_start_ns, r->t_end_ns);
  if (auto* d = std::get_if<ProfileDeviceEvent>(&ev)) {
    sqlite3_bind_int64(st_dev_, 1, intern(d->device));
    sqlite3_bind_int64(st_dev_, 2, d->tdiff_ns);
    sqlite3_bind_text(st_dev_, 3, d->props.data(), (int)d->props.size(), SQLITE_STATIC);
    return run(st_dev_);
  }
  // a batched execution: one span over its entries on "<DEV> Graph" (as the reference's viewer draws it); the entries
  // themselves are kernel events
  if (auto* g = std::get_if<ProfileGraphEvent>(&ev); g && !g->ents.empty()) {
    int64_t st = INT64_MAX, en = INT64_MIN;
    for (const ProfileGraphEntry& e : g->ents)
      for (uint32_t i : {e.st_id, e.en_id})
        if (i < g->sigs_ns.size()) st = std::min(st, g->sigs_ns[i]), en = std::max(en, g->sigs_ns[i]);
    std::string dev = g->ents[0].device.substr(0, g->ents[0].device.find(':'));
    if (st <= en) range(dev + " Graph", "batched " + std::to_string(g->ents.size()), st, en);
  }
}

uint64_t TraceWriter::context_begin(const std::string& name, int64_t t_ns) {
  if (dead_.load(std::memory_order_relaxed)) return next_ctx_.fetch_add(1);
  ThreadBuf& tb = tbuf();
  std::lock_guard<std::mutex> lk(tb.mu);
  uint64_t id = next_ctx_.fetch_add(1);
  Event e{Ev::CtxBegin};
  e.a = id;
  e.b = std::hash<std::thread::id>()(std::this_thread::get_id()) & 0xffffff;
  e.t = t_ns;
  e.s = name;
  tb.batch.other.push_back(std::move(e));
  return id;
}
void TraceWriter::context_rename(uint64_t ctx, const std::string& name) {
  if (dead_.load(std::memory_order_relaxed)) return;
  ThreadBuf& tb = tbuf();
  std::lock_guard<std::mutex> lk(tb.mu);
  Event e{Ev::CtxRename};
  e.a = ctx;
  e.s = name;
  tb.batch.other.push_back(std::move(e));
}
void TraceWriter::context_end(uint64_t ctx, int64_t t_ns) {
  if (dead_.load(std::memory_order_relaxed)) return;
  ThreadBuf& tb = tbuf();
  std::lock_guard<std::mutex> lk(tb.mu);
  Event e{Ev::CtxEnd};
  e.a = ctx;
  e.t = t_ns;
  tb.batch.other.push_back(std::move(e));
  maybe_handover(tb, true);
}
uint64_t TraceWriter::step_begin(const StepInfo& step, const UOp& input_root) {
  if (dead_.load(std::memory_order_relaxed)) return next_step_.fetch_add(1);
  ThreadBuf& tb = tbuf();
  std::lock_guard<std::mutex> lk(tb.mu);
  uint64_t id = next_step_.fetch_add(1);
  uint32_t in = ensure_uop(tb, input_root);
  Event e{Ev::StepBegin};
  e.a = id, e.b = step.context, e.c = step.parent, e.d = (uint64_t)step.depth, e.e = in;
  e.f = (step.bottom_up ? 1 : 0) | (step.walk ? 2 : 0) | (step.enter_calls ? 4 : 0);
  e.g = (uint64_t)step.line;
  e.t = step.t_start_ns;
  e.s = step.name;
  e.s2 = step.file;
  tb.batch.other.push_back(std::move(e));
  tb.open_steps.push_back(id);
  return id;
}
void TraceWriter::step_end(uint64_t step, const UOp* output_root, int64_t t_end_ns, std::vector<RuleStat>&& stats,
                           const std::string& error) {
  if (dead_.load(std::memory_order_relaxed)) return;
  ThreadBuf& tb = tbuf();
  std::lock_guard<std::mutex> lk(tb.mu);
  uint64_t n_matches = 0;
  for (const RuleStat& s : stats) {
    if (s.attempts) ensure_rule(tb, s.rule);
    n_matches += s.matches;
  }
  Event e{Ev::StepEnd};
  e.a = step;
  e.b = output_root ? ensure_uop(tb, *output_root) : 0;
  e.c = n_matches;
  e.t = t_end_ns;
  e.s = error;
  e.stats = std::move(stats);
  if (!tb.open_steps.empty()) tb.open_steps.pop_back();
  tb.batch.other.push_back(std::move(e));
  maybe_handover(tb, tb.open_steps.empty());  // a boundary: the end of a top-level step
}
void TraceWriter::match(uint64_t step, uint32_t ordinal, const UOp& before, const UOp& after, uint32_t rule,
                        int64_t dur_ns) {
  if (dead_.load(std::memory_order_relaxed)) return;
  ThreadBuf& tb = tbuf();
  std::lock_guard<std::mutex> lk(tb.mu);
  ensure_rule(tb, rule);
  uint32_t b = ensure_uop(tb, before), a = ensure_uop(tb, after);
  tb.batch.matches.push_back(MatchEv{step, ordinal, b, a, rule, dur_ns});
  maybe_handover(tb);
}
void TraceWriter::rule_error(uint64_t step, uint32_t ordinal, const UOp& before, const UOp& error_node, uint32_t rule,
                             const std::string& message) {
  if (dead_.load(std::memory_order_relaxed)) return;
  ThreadBuf& tb = tbuf();
  std::lock_guard<std::mutex> lk(tb.mu);
  ensure_rule(tb, rule);
  Event e{Ev::Error};
  e.a = step, e.b = ordinal, e.c = ensure_uop(tb, before), e.d = ensure_uop(tb, error_node), e.e = rule;
  e.s = message;
  tb.batch.other.push_back(std::move(e));
}
void TraceWriter::note_uop(const UOp& u) {
  if (dead_.load(std::memory_order_relaxed)) return;
  ThreadBuf& tb = tbuf();
  std::lock_guard<std::mutex> lk(tb.mu);
  if (tb.open_steps.empty()) return;
  Event e{Ev::Note};
  e.a = tb.open_steps.back();
  e.b = ensure_uop(tb, u);
  tb.batch.other.push_back(std::move(e));
}

// ***** writer thread *****

int64_t TraceWriter::intern(const std::string& s) {
  auto it = strings_.find(s);
  if (it != strings_.end()) return it->second;
  int64_t id = (int64_t)strings_.size() + 1;
  strings_.emplace(s, id);
  sqlite3_bind_int64(st_str_, 1, id);
  sqlite3_bind_text(st_str_, 2, s.data(), (int)s.size(), SQLITE_STATIC);
  run(st_str_);
  return id;
}

// the node's shape as the reference's VIZ labels it (shape_to_str: "(4,4)", "()" for a scalar, symbolic dims
// rendered), interned; 0 when it has none. Most nodes have theirs cached already (the engine asked for it), and every
// scalar op of a kernel shares the one "()" string.
int64_t TraceWriter::shape_string(const UOp& u) {
  const std::optional<Shape>* sh = nullptr;
  try {
    sh = &u.shape_opt();
  } catch (const std::exception&) {  // a node whose shape rules fail (the reference's label leaves it out too)
    return 0;
  }
  if (!*sh) return 0;
  if ((*sh)->empty()) {
    if (!scalar_shape_) scalar_shape_ = intern("()");
    return scalar_shape_;
  }
  std::string out = "(";
  for (size_t i = 0; i < (*sh)->size(); i++) {
    const sint& d = (**sh)[i];
    out += (i ? "," : "") + (d.is_int() ? std::to_string((long long)d.i()) : d.u().render());
  }
  return intern(out + ")");
}

void TraceWriter::flush_context_stats(uint64_t ctx) {
  auto it = ctx_stats_.find(ctx);
  if (it == ctx_stats_.end()) return;
  for (const auto& [rule, a] : it->second) {
    sqlite3_bind_int64(st_cstat_, 1, (int64_t)ctx);
    sqlite3_bind_int64(st_cstat_, 2, rule);
    sqlite3_bind_int64(st_cstat_, 3, (int64_t)a.cand);
    sqlite3_bind_int64(st_cstat_, 4, (int64_t)a.er);
    sqlite3_bind_int64(st_cstat_, 5, (int64_t)a.att);
    sqlite3_bind_int64(st_cstat_, 6, (int64_t)a.mat);
    sqlite3_bind_int64(st_cstat_, 7, a.excl);
    sqlite3_bind_int64(st_cstat_, 8, a.incl);
    run(st_cstat_);
  }
  ctx_stats_.erase(it);
}

// one per-step stats entry, "[rule,attempts,matches,excl_ns(,early_rejects(,incl_ns))]" (schema.h): the trailing
// fields are left out when they hold their usual values (no early rejects, no nested rule time)
// a step's statistics entry: [rule, attempts, matches, excl_ns(, early_rejects(, incl_ns))], trailing defaults left out
static nlohmann::json stat_entry(const RuleStat& st) {
  int64_t v[6] = {(int64_t)st.rule, (int64_t)st.attempts,      (int64_t)st.matches,
                  st.excl_ns,       (int64_t)st.early_rejects, st.incl_ns};
  int n = st.incl_ns != st.excl_ns ? 6 : st.early_rejects ? 5 : 4;
  return nlohmann::json(std::vector<int64_t>(v, v + n));
}

void TraceWriter::insert_step(const Event& e, const Event* end, const std::string* stats_json) {
  uop_ref(e.e);
  if (end) uop_ref(end->b);
  sqlite3_bind_int64(st_step_, 1, (int64_t)e.a);
  sqlite3_bind_int64(st_step_, 2, (int64_t)e.b);
  sqlite3_bind_int64(st_step_, 3, (int64_t)e.c);
  sqlite3_bind_int64(st_step_, 4, (int64_t)e.d);
  sqlite3_bind_int64(st_step_, 5, intern(e.s));
  sqlite3_bind_int64(st_step_, 6, intern(e.s2));
  sqlite3_bind_int64(st_step_, 7, (int64_t)e.g);
  sqlite3_bind_int64(st_step_, 8, (int64_t)e.f);
  sqlite3_bind_int64(st_step_, 9, (int64_t)e.e);
  sqlite3_bind_int64(st_step_, 10, e.t);
  for (int i = 11; i <= 15; i++) sqlite3_bind_null(st_step_, i);
  if (end) {
    if (end->b) sqlite3_bind_int64(st_step_, 11, (int64_t)end->b);
    sqlite3_bind_int64(st_step_, 12, end->t);
    sqlite3_bind_int64(st_step_, 13, (int64_t)end->c);
    if (!end->s.empty()) sqlite3_bind_int64(st_step_, 14, intern(end->s));
    if (!stats_json->empty())
      sqlite3_bind_text(st_step_, 15, stats_json->data(), (int)stats_json->size(), SQLITE_STATIC);
  }
  run(st_step_);
}

void TraceWriter::insert_open_steps() {
  for (auto& [id, p] : open_steps_)
    if (!p.inserted) insert_step(p.begin, nullptr, nullptr), p.inserted = true;
}

void TraceWriter::write_batch(Batch& b) {
  std::string json;
  for (Event& e : b.other) {
    switch (e.kind) {
      case Ev::Rule: {
        const RuleData* r = rule_by_id((uint32_t)e.a);
        if (!r) break;
        sqlite3_bind_int64(st_rule_, 1, (int64_t)e.a);
        sqlite3_bind_int64(st_rule_, 2, intern(r->matcher));
        sqlite3_bind_int64(st_rule_, 3, intern(r->file));
        sqlite3_bind_int(st_rule_, 4, r->src.line);
        sqlite3_bind_int64(st_rule_, 5, intern(r->text));
        run(st_rule_);
        break;
      }
      case Ev::CtxBegin:
        sqlite3_bind_int64(st_ctx_, 1, (int64_t)e.a);
        sqlite3_bind_int64(st_ctx_, 2, intern(e.s));
        sqlite3_bind_int64(st_ctx_, 3, (int64_t)e.b);
        sqlite3_bind_int64(st_ctx_, 4, e.t);
        run(st_ctx_);
        stats_.contexts++;
        break;
      case Ev::CtxRename:
        sqlite3_bind_int64(st_ctx_name_, 1, intern(e.s));
        sqlite3_bind_int64(st_ctx_name_, 2, (int64_t)e.a);
        run(st_ctx_name_);
        break;
      case Ev::CtxEnd:
        sqlite3_bind_int64(st_ctx_end_, 1, e.t);
        sqlite3_bind_int64(st_ctx_end_, 2, (int64_t)e.a);
        run(st_ctx_end_);
        flush_context_stats(e.a);
        break;
      case Ev::StepBegin:
        open_steps_[e.a] = PendingStep{std::move(e), false};
        stats_.steps++;
        break;
      case Ev::StepEnd: {
        auto it = open_steps_.find(e.a);
        auto& agg = ctx_stats_[it == open_steps_.end() ? 0 : it->second.begin.b];
        json.clear();
        {
          nlohmann::json entries = nlohmann::json::array();
          for (const RuleStat& st : e.stats) {
            Agg& a = agg[st.rule];
            a.cand += st.candidates, a.er += st.early_rejects, a.att += st.attempts, a.mat += st.matches;
            a.excl += st.excl_ns, a.incl += st.incl_ns;
            if (st.attempts) entries.push_back(stat_entry(st));
          }
          if (!entries.empty()) json = entries.dump();
        }
        if (it == open_steps_.end()) break;  // its begin was never recorded
        if (!it->second.inserted) {
          insert_step(it->second.begin, &e, &json);
        } else {
          if (e.b)
            sqlite3_bind_int64(st_step_end_, 1, (int64_t)e.b);
          else
            sqlite3_bind_null(st_step_end_, 1);
          sqlite3_bind_int64(st_step_end_, 2, e.t);
          sqlite3_bind_int64(st_step_end_, 3, (int64_t)e.c);
          if (e.s.empty())
            sqlite3_bind_null(st_step_end_, 4);
          else
            sqlite3_bind_int64(st_step_end_, 4, intern(e.s));
          if (json.empty())
            sqlite3_bind_null(st_step_end_, 5);
          else
            sqlite3_bind_text(st_step_end_, 5, json.data(), (int)json.size(), SQLITE_STATIC);
          sqlite3_bind_int64(st_step_end_, 6, (int64_t)e.a);
          run(st_step_end_);
          uop_ref(e.b);
        }
        open_steps_.erase(it);
        break;
      }
      case Ev::Error:
        sqlite3_bind_int64(st_err_, 1, (int64_t)e.a);
        sqlite3_bind_int64(st_err_, 2, (int64_t)e.b);
        sqlite3_bind_int64(st_err_, 3, (int64_t)e.c);
        sqlite3_bind_int64(st_err_, 4, (int64_t)e.d);
        sqlite3_bind_int64(st_err_, 5, (int64_t)e.e);
        sqlite3_bind_int64(st_err_, 6, intern(e.s));
        run(st_err_);
        uop_ref(e.c), uop_ref(e.d);
        break;
      case Ev::Note:
        sqlite3_bind_int64(st_note_, 1, (int64_t)e.a);
        sqlite3_bind_int64(st_note_, 2, (int64_t)e.b);
        run(st_note_);
        uop_ref(e.b);
        break;
    }
  }
  std::string src;
  for (UopEv& ev : b.uops) {
    const UOp& u = ev.u;
    src.clear();
    for (const UOp& s : u.src()) {
      uint32_t sid = id_of(s);  // waits out a src another thread is numbering
      uop_ref(sid);
      int64_t delta = (int64_t)ev.id - (int64_t)sid;
      put_varint(src, (uint64_t)((delta << 1) ^ (delta >> 63)));
    }
    sqlite3_bind_int64(st_uop_, 1, ev.id);
    sqlite3_bind_int(st_uop_, 2, (int)u.op());
    sqlite3_bind_int(st_uop_, 3, u.dtype().id());
    sqlite3_bind_int64(st_uop_, 4, intern(encode_arg(u.arg())));
    if (u.tag().is_none())
      sqlite3_bind_null(st_uop_, 5);
    else
      sqlite3_bind_int64(st_uop_, 5, intern(encode_arg(u.tag())));
    if (src.empty())
      sqlite3_bind_null(st_uop_, 6);
    else
      sqlite3_bind_blob(st_uop_, 6, src.data(), (int)src.size(), SQLITE_STATIC);
    if (int64_t sh = shape_string(u))
      sqlite3_bind_int64(st_uop_, 7, sh);
    else
      sqlite3_bind_null(st_uop_, 7);
    run(st_uop_);
    uop_mark_written(ev.id);
    stats_.uops++;
    keep_.push_back(std::move(ev.u));
  }
  for (const MatchEv& m : b.matches) {
    sqlite3_bind_int64(st_match_, 1, (int64_t)m.step);
    sqlite3_bind_int64(st_match_, 2, m.ordinal);
    sqlite3_bind_int64(st_match_, 3, m.before);
    sqlite3_bind_int64(st_match_, 4, m.after);
    sqlite3_bind_int64(st_match_, 5, m.rule);
    sqlite3_bind_int64(st_match_, 6, m.dur);
    run(st_match_);
    uop_ref(m.before), uop_ref(m.after);
    stats_.matches++;
  }
  for (auto& [id, p] : b.programs) {
    sqlite3_bind_int64(st_prog_, 1, (int64_t)id);
    sqlite3_bind_int64(st_prog_, 2, intern(p.name));
    sqlite3_bind_int64(st_prog_, 3, intern(p.device));
    sqlite3_bind_int64(st_prog_, 4, (int64_t)p.context);
    sqlite3_bind_text(st_prog_, 5, p.source.data(), (int)p.source.size(), SQLITE_STATIC);
    sqlite3_bind_text(st_prog_, 6, p.uops.data(), (int)p.uops.size(), SQLITE_STATIC);
    sqlite3_bind_text(st_prog_, 7, p.global_size.data(), (int)p.global_size.size(), SQLITE_STATIC);
    sqlite3_bind_text(st_prog_, 8, p.local_size.data(), (int)p.local_size.size(), SQLITE_STATIC);
    sqlite3_bind_int64(st_prog_, 9, p.ops);
    sqlite3_bind_int64(st_prog_, 10, p.mem);
    sqlite3_bind_int64(st_prog_, 11, p.lds);
    run(st_prog_);
  }
  for (auto& [id, c] : b.codes) {
    sqlite3_bind_int64(st_code_, 1, (int64_t)id);
    sqlite3_bind_text(st_code_, 2, c.kind.data(), (int)c.kind.size(), SQLITE_STATIC);
    sqlite3_bind_text(st_code_, 3, c.text.data(), (int)c.text.size(), SQLITE_STATIC);
    run(st_code_);
  }
  for (const KernelEvent& k : b.kernels) {
    nlohmann::json bufs = nlohmann::json::array();
    for (const BufferUse& u : k.bufs) bufs.push_back({u.id, u.nbytes, (int)u.mode});
    json = bufs.dump();
    sqlite3_bind_int64(st_kev_, 1, (int64_t)k.program);
    sqlite3_bind_int64(st_kev_, 2, intern(k.name));
    sqlite3_bind_int64(st_kev_, 3, intern(k.device));
    sqlite3_bind_int64(st_kev_, 4, k.t_start_ns);
    sqlite3_bind_int64(st_kev_, 5, k.t_end_ns);
    sqlite3_bind_text(st_kev_, 6, json.data(), (int)json.size(), SQLITE_STATIC);
    if (k.var_vals.empty())
      sqlite3_bind_null(st_kev_, 7);
    else
      sqlite3_bind_text(st_kev_, 7, k.var_vals.data(), (int)k.var_vals.size(), SQLITE_STATIC);
    run(st_kev_);
  }
  for (const ProfileEvent& e : b.profile) write_profile_event(e);
}

void TraceWriter::writer_loop() {
  std::unique_lock<std::mutex> lk(q_mu_);
  bool open = false;  // a transaction is open: rows written that name nodes not written yet (missing_)
  for (;;) {
    if (open) {
      // the rows written name nodes of other threads' buffers: take them now (a node is claimed and queued in its
      // thread's buffer under that buffer's lock, so one pull brings every node named so far), however busy the queue
      lk.unlock();
      pull_buffers();
      lk.lock();
    } else if (!q_cv_.wait_for(lk, std::chrono::milliseconds(kPullMs), [&] { return stop_ || !queue_.empty(); })) {
      // nothing handed over for a while: take what the threads have buffered, so a run that goes quiet (or is killed
      // later) has its last steps in the file
      lk.unlock();
      pull_buffers();
      lk.lock();
    }
    if (queue_.empty() && !(stop_ && open)) {
      if (stop_) return;
      if (open) q_cv_.wait_for(lk, std::chrono::milliseconds(1));  // (not a spin while nothing comes)
      continue;
    }
    std::deque<Batch> work;
    std::swap(work, queue_);
    bool last = stop_;
    lk.unlock();
    try {
      if (!open) exec("BEGIN"), open = true;
      for (Batch& b : work) write_batch(b);
      insert_open_steps();
      // commit once every node the rows name is written; at the end everything is (finish() took every buffer)
      if (missing_.empty() || last) exec("COMMIT"), open = false;
    } catch (const std::exception& e) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      open = false;
      work.clear();
      stop_recording(e.what());
      return;
    }
    size_t n = work.size();
    work.clear();  // releases the UOps the batches held, outside the queue lock
    lk.lock();
    stats_.batches += n;
    if (!open) stats_.transactions++;
  }
}

// A write failed (SQLITE_FULL on a full disk, SQLITE_IOERR, a file that went away): its transaction is rolled back,
// so the file holds exactly what earlier transactions committed, each of which names only rows committed with it or
// before. Recording ends there: the producers drop what they record from now on, the status becomes 'truncated'
// (with why, in meta 'stopped'), one line says so, and the program goes on.
void TraceWriter::stop_recording(const std::string& why) {
  dead_.store(true, std::memory_order_relaxed);
  std::deque<Batch> dropped;
  {
    std::lock_guard<std::mutex> lk(q_mu_);
    stopped_ = why;
    stop_ = true;
    std::swap(dropped, queue_);
  }
  std::fprintf(stderr,
               "tinygrad: recording stopped: %s; the trace keeps everything written before (status 'truncated'), "
               "and the program goes on without recording\n",
               why.c_str());
  // the status is one row: after a checkpoint empties the write-ahead log, its update needs no new space there
  sqlite3_exec(db_, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr);
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_, "INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", -1, &s, nullptr) == SQLITE_OK) {
    sqlite3_exec(db_, "BEGIN", nullptr, nullptr, nullptr);
    bool ok = true;
    for (auto [k, v] : {std::pair<const char*, std::string>{"status", "truncated"}, {"stopped", why}}) {
      sqlite3_bind_text(s, 1, k, -1, SQLITE_STATIC);
      sqlite3_bind_text(s, 2, v.c_str(), -1, SQLITE_TRANSIENT);
      ok &= sqlite3_step(s) == SQLITE_DONE;
      sqlite3_reset(s);
    }
    if (!ok || sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK)
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_finalize(s);
  }
}

void TraceWriter::pull_buffers() {
  std::lock_guard<std::mutex> lk(bufs_mu_);
  for (auto& b : bufs_) {
    std::lock_guard<std::mutex> lk2(b->mu);
    handover(*b);
  }
}

void TraceWriter::finish() {
  {
    std::lock_guard<std::mutex> lk(q_mu_);
    if (finished_) return;
    finished_ = true;
  }
  pull_buffers();
  {
    std::lock_guard<std::mutex> lk(q_mu_);
    stop_ = true;
  }
  q_cv_.notify_one();
  if (thread_.joinable()) thread_.join();
  if (dead_.load()) {
    // recording stopped on a failed write: the file keeps its committed rows and status 'truncated'
  } else try {
    exec("BEGIN");
    while (!ctx_stats_.empty()) flush_context_stats(ctx_stats_.begin()->first);  // contexts still open at exit
    exec(TRACE_INDEX_SQL);
    exec("UPDATE meta SET value='complete' WHERE key='status'");
    exec("COMMIT");
    if (!g_finishing_on_signal) write_checkpoints();
  } catch (const std::exception& e) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    stop_recording(e.what());
  }
  for (sqlite3_stmt* s :
       {st_str_, st_uop_, st_rule_, st_ctx_, st_ctx_name_, st_ctx_end_, st_step_, st_step_end_, st_match_, st_cstat_,
        st_err_, st_note_, st_prog_, st_kev_, st_mem_, st_marker_, st_range_, st_dev_, st_code_})
    sqlite3_finalize(s);
  sqlite3_exec(db_, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr);
  sqlite3_close(db_);
  db_ = nullptr;
  if (lock_fd_ >= 0) ::close(lock_fd_);  // after SQLite's close: closing a descriptor drops the process's fcntl locks
  lock_fd_ = -1;
  std::vector<UOp>().swap(keep_);
}

// The graph of every kCheckpointEvery-th frame of the top-down steps with many matches, replayed from the finished
// file (tinyviz's replay, so what it reads back is what it would compute): a jump to a deep frame then replays at
// most kCheckpointEvery matches. A 10-step beautiful_mnist trace has six such steps; their replays run on up to two
// threads (the program is done with the cores by now), each with its own reader.
void TraceWriter::write_checkpoints() {
  auto t0 = std::chrono::steady_clock::now();
  sqlite3_stmt* ins = nullptr;
  try {
    std::vector<std::pair<int64_t, int64_t>> todo;  // (matches, step), the longest replay first
    {
      sqlite3_stmt* q = nullptr;
      if (sqlite3_prepare_v2(db_, "SELECT id, n_matches FROM steps WHERE flags & 3 = 0 AND n_matches >= ?", -1, &q,
                             nullptr) != SQLITE_OK)
        sql_fail("read steps");
      sqlite3_bind_int64(q, 1, (int64_t)StepReplay::kCheckpointMin);
      while (sqlite3_step(q) == SQLITE_ROW) todo.push_back({sqlite3_column_int64(q, 1), sqlite3_column_int64(q, 0)});
      sqlite3_finalize(q);
    }
    if (todo.empty()) return;
    std::sort(todo.rbegin(), todo.rend());
    struct Row {
      int64_t step, frame;
      std::string graph;
    };
    std::vector<Row> rows;
    std::string failed;
    std::mutex mu;
    std::atomic<size_t> next{0};
    auto work = [&] {
      try {
        auto t = Trace::open_for_queries(path_);
        for (size_t i; (i = next++) < todo.size();) {
          int64_t id = todo[i].second;
          StepReplay r(*t, id, StepReplay::Mode::scratch);
          for (size_t k = StepReplay::kCheckpointEvery; k < r.num_frames(); k += StepReplay::kCheckpointEvery) {
            std::string g = r.encode_frame(k);
            if (g.empty()) break;  // the replay stopped (a rule error): frames after it are the same
            std::lock_guard<std::mutex> lk(mu);
            rows.push_back({id, (int64_t)k, std::move(g)});
          }
        }
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lk(mu);
        failed = e.what();
      }
    };
    std::thread helper;
    if (todo.size() > 1) helper = std::thread(work);
    work();
    if (helper.joinable()) helper.join();
    if (!failed.empty()) throw std::runtime_error(failed);
    if (sqlite3_prepare_v2(db_, "INSERT OR REPLACE INTO replay_checkpoints(step, frame, graph) VALUES(?, ?, ?)", -1,
                           &ins, nullptr) != SQLITE_OK)
      sql_fail("prepare replay_checkpoints");
    exec("BEGIN");
    for (const Row& row : rows) {
      sqlite3_bind_int64(ins, 1, row.step), sqlite3_bind_int64(ins, 2, row.frame);
      sqlite3_bind_blob(ins, 3, row.graph.data(), (int)row.graph.size(), SQLITE_STATIC);
      run(ins);
    }
    exec("COMMIT");
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s > 1 || getenv_int("DEBUG", 0) >= 2)
      std::fprintf(stderr, "tinygrad: trace writer: replay checkpoints of %zu steps with %zu+ matches in %.2f s\n",
                   todo.size(), StepReplay::kCheckpointMin, s);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tinygrad: trace writer: replay checkpoints not written: %s\n", e.what());
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  sqlite3_finalize(ins);
}

// ***** factory *****

std::unique_ptr<Recorder> open_trace_writer(const std::string& path) { return std::make_unique<TraceWriter>(path); }

WriterStats writer_stats(const Recorder* r) {
  auto* w = dynamic_cast<const TraceWriter*>(r);
  return w ? w->stats() : WriterStats{};
}

std::string default_trace_path() {
  std::string p = getenv_str("VIZ_PATH", "");
  if (!p.empty()) return p;
  std::string prog = "program";
  {
    std::ifstream f("/proc/self/comm");
    std::getline(f, prog);
  }
  char date[32];
  std::time_t t = std::time(nullptr);
  std::strftime(date, sizeof(date), "%Y%m%d-%H%M%S", std::localtime(&t));
  std::string tmp = getenv_str("TMPDIR", "/tmp");
  return tmp + "/tinygrad-" + prog + "-" + date + "-" + std::to_string(getpid()) + ".trace.db";
}

namespace {

// SIGINT / SIGTERM while recording: the handler only writes the signal number to a pipe; a watcher thread finishes
// the trace (flush, indexes, status 'complete', the "saved to" line) and then dies of the same signal, so the
// program's exit status is the signal's. Handlers the program installed itself are left alone.
int g_signal_pipe[2] = {-1, -1};

void on_stop_signal(int sig) {
  unsigned char b = (unsigned char)sig;
  ssize_t n = ::write(g_signal_pipe[1], &b, 1);
  (void)n;
}

void finish_trace_on_signals() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (::pipe2(g_signal_pipe, O_CLOEXEC) != 0) return;
    bool any = false;
    for (int sig : {SIGINT, SIGTERM}) {
      struct sigaction old {};
      if (sigaction(sig, nullptr, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue;
      struct sigaction sa {};
      sa.sa_handler = on_stop_signal;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = SA_RESTART;
      any |= sigaction(sig, &sa, nullptr) == 0;
    }
    if (!any) return;
    std::thread([] {
      unsigned char b = 0;
      ssize_t n;
      while ((n = ::read(g_signal_pipe[0], &b, 1)) < 0 && errno == EINTR) {
      }
      if (n != 1) return;
      int sig = b;
      std::fprintf(stderr, "\ntinygrad: %s: finishing the trace\n", strsignal(sig));
      g_finishing_on_signal = true;
      track::finalize(true);
      std::fflush(nullptr);
      std::signal(sig, SIG_DFL);
      ::kill(::getpid(), sig);  // to the process: any thread that does not block it takes it
    }).detach();
  });
}

}  // namespace

void install_trace_writer_factory() {
  set_recorder_factory([]() -> Recorder* {
    std::string path = default_trace_path();
    try {
      Recorder* r = open_trace_writer(path).release();
      finish_trace_on_signals();
      return r;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "tinygrad: not recording a trace: %s\n", e.what());
      return nullptr;
    }
  });
}

}  // namespace tg::viz
