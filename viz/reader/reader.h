// Reads a trace file written by the trace writer. The GUI and tinyviz-cli use only this (no engine code).
// A trace is untrusted input: a truncated, corrupt, foreign or newer-schema file, and any row that breaks the schema's
// rules (ids out of range, references to rows that do not exist, srcs that are not earlier uops, which makes every
// graph acyclic, depths and counts the file cannot hold, malformed args and statistics) raises one TraceError naming
// the file, the table, the row and what is wrong. Nothing read from a file is trusted for an allocation size, a loop
// bound or a recursion depth.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lib/error.h"

struct sqlite3;
struct sqlite3_stmt;

namespace tg::viz {

class TraceError : public tg::Error {
 public:
  using tg::Error::Error;
};

struct ContextRow {
  int64_t id = 0;
  std::string name;       // without terminal colours ("E_4_4")
  std::string name_ansi;  // as recorded: kernel names carry the reference's ANSI colours
  int64_t thread = 0, t_start = 0, t_end = 0;  // t_end 0 when the run stopped inside the context
  std::vector<int64_t> steps;                   // step ids in order
};

struct StepRow {
  int64_t id = 0, context = 0, parent = 0;
  int depth = 0;
  std::string name, file;
  int line = 0;
  bool bottom_up = false, walk = false, enter_calls = false;
  int64_t input_root = 0, output_root = 0;  // output_root 0: the step did not finish
  int64_t t_start = 0, t_end = 0;
  int64_t n_matches = 0;
  std::string error;
};

struct MatchRow {
  int64_t step = 0;
  int64_t ordinal = 0;
  int64_t before = 0, after = 0;
  int64_t rule = 0;
  int64_t dur_ns = 0;
  int64_t error = 0;      // is_error: the message's string id (Trace::str), not a string: lists of matches can be
  bool is_error = false;  // 100,000 rows. A rule raised: `after` is the REWRITE_ERROR node
};

struct RuleRow {
  int64_t id = 0;
  std::string matcher, file, source;
  int line = 0;
};

struct RuleStatRow {
  int64_t rule = 0;
  uint64_t candidates = 0, early_rejects = 0, attempts = 0, matches = 0;
  int64_t excl_ns = 0, incl_ns = 0;
};

// a compiled kernel (schema 3): its codegen context (0 if not recorded), source and linearized UOps
struct ProgramRow {
  int64_t id = 0, context = 0;
  std::string name, device, source, uops, global_size, local_size;
  int64_t ops = -1, mem = -1, lds = -1;  // -1: symbolic
};

// what a compiled kernel ran as (schema 6): its machine code as text and what that is; an empty text: the device
// gave nothing readable, and kind says what it gave
struct MachineCodeRow {
  std::string kind, text;
};

// one kernel or copy run (PROFILE); bufs as JSON [[buffer, nbytes, mode], ...] (viz/reader/trace_profile.h parses it)
struct KernelEventRow {
  int64_t id = 0, program = 0;  // program 0: a copy or an unrecorded program
  std::string name, device;
  int64_t t_start = 0, t_end = 0;
  std::string bufs, var_vals;
};

// the profiler's events (schema 5; older files have none)
struct MemEventRow {  // a buffer's alloc or free on a device
  int64_t id = 0;
  bool alloc = false;
  std::string device, dtype;
  int64_t t = 0, buffer = 0, size = 0, nbytes = 0;
};
struct MarkerRow {  // tg::profile_marker
  int64_t id = 0, t = 0;
  std::string name, color;
};
struct RangeRow {  // a span on a host lane: USER (tg::profile_range), "<DEV> Graph"
  int64_t id = 0;
  std::string device, name;
  int64_t t_start = 0, t_end = 0;
};
struct DeviceRow {  // a device's clock offset (host = device + tdiff) and what it said about itself
  std::string device, props;
  int64_t tdiff = 0;
};

// a UOp of the trace. Recorded nodes have positive ids; nodes the replay had to build have negative ids.
struct Node {
  int64_t id = 0;
  int op = 0;
  std::string_view op_name;  // static text ("ADD")
  int dtype = 0;             // dtype id (Trace::dtype_name)
  int64_t arg = 0, tag = 0;  // string ids of the exact encodings (tag 0: None)
  int64_t shape = 0;         // string id of its shape, "(4,4)" (0: none, or a trace older than schema 7)
  std::vector<int64_t> src;
};

// What a viewer shows of the trace's text. A trace's strings can be any length (a context named by a million
// characters): with a limit set (tinyviz sets one at start; 0, the default, is none), every name, file, error, rule
// text, marker, range, meta value, node label and arg text the reader hands out is cut to it, ending "… (N more
// characters)", so no view lays out a megabyte line. The exact encodings (str(), what replay decodes) are never cut.
void set_display_text_limit(size_t n);
size_t display_text_limit();
// s cut to the limit (whole UTF-8 characters, and never inside a terminal colour code)
std::string display_text(std::string s);

// the name of an Ops value as traces store it ("ADD"; the engine's Ops order, which is the reference's), nullptr
// outside 1..trace_num_ops()
const char* trace_op_name(int op);
int trace_num_ops();

class Trace {
 public:
  // throws TraceError. program_text=false leaves ProgramRow::source and ::uops empty (a training run's 145 kernels
  // hold 6 MB of them): read them with program_text(id) when shown. A file the recording program did not finish
  // (status not complete), and any file up to kQuickCheckBytes, first passes SQLite's quick_check.
  static std::unique_ptr<Trace> open(const std::string& path, bool program_text = true);
  // a connection for SQL lookups only (rule_stats, matches_of_rule, steps_with_rules, matches, step, node, label): it
  // does not load the contexts, steps, programs and kernel runs (contexts(), steps(), ... are empty; step(id) reads
  // the one row it is asked for), saving their memory. It skips quick_check: open the file with open() first (the
  // GUI's session does)
  static std::unique_ptr<Trace> open_for_queries(const std::string& path);
  // quick_check reads every page: 10 MB took 90 ms on 2 busy cores (a finished file past this is checked as it is
  // read: SQLite's own checks and the reader's)
  static constexpr uint64_t kQuickCheckBytes = 8ull << 20;
  ~Trace();
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  const std::string& path() const { return path_; }
  std::map<std::string, std::string> meta() const;
  bool complete() const { return complete_; }  // the recording program finished (status=complete)
  // recording stopped early on a failed write (status=truncated): the trace holds what was committed before; why
  // is in meta()["stopped"]
  bool truncated() const { return truncated_; }

  // the error of a row: "trace 'PATH': table TABLE, row ROW: WHAT" (key: how a row without an id is named, e.g.
  // "step 5, ordinal 3"; empty: the table as a whole)
  [[noreturn]] void fail(const char* table, int64_t row, const std::string& what) const;
  [[noreturn]] void fail_key(const char* table, const std::string& key, const std::string& what) const;

  const std::vector<ContextRow>& contexts() const { return contexts_; }
  const std::vector<StepRow>& steps() const { return steps_; }
  const StepRow& step(int64_t id) const;
  const ContextRow& context(int64_t id) const;
  std::vector<int64_t> child_steps(int64_t step) const;

  std::vector<MatchRow> matches(int64_t step) const;  // matches and rule errors in ordinal order
  std::vector<MatchRow> matches_of_rule(int64_t rule) const;
  std::optional<RuleRow> rule(int64_t id) const;
  std::vector<RuleRow> rules() const;
  // per-rule statistics: of one step (step>0), of a context (context>0), or of the whole trace
  std::vector<RuleStatRow> rule_stats(int64_t step = 0, int64_t context = 0) const;
  std::vector<int64_t> step_notes(int64_t step) const;
  // (frame, encoded graph) of the step's replay checkpoints, by frame (schema 4; none for older files)
  std::vector<std::pair<int64_t, std::string>> checkpoints(int64_t step) const;
  // the steps holding at least one match of any of these rules, ascending (tinyviz's search by rule)
  std::vector<int64_t> steps_with_rules(const std::vector<int64_t>& rules) const;

  // kernels (empty for schema 2 traces and runs without PROFILE)
  const std::vector<ProgramRow>& programs() const { return programs_; }
  const ProgramRow* program(int64_t id) const;
  const ProgramRow* program_of_context(int64_t context) const;  // the kernel a codegen context produced
  std::pair<std::string, std::string> program_text(int64_t id) const;  // source, linearized UOps (from the file)
  // the program's machine code, read from the file when asked: nullopt when the trace holds none for it (it was not
  // compiled while recording; traces older than schema 6 hold none at all: has_machine_code() is false). Throws
  // TraceError for a damaged row (not text, or longer than kMaxMachineCodeBytes).
  std::optional<MachineCodeRow> machine_code(int64_t program) const;
  bool has_machine_code() const { return schema_version_ >= 6; }
  static constexpr int kMaxMachineCodeBytes = 64 << 20;
  const std::vector<KernelEventRow>& kernel_events() const { return kernel_events_; }  // by start time
  int schema_version() const { return schema_version_; }
  // the profiler's events, by time (empty for schema 2-4 traces and runs without PROFILE)
  const std::vector<MemEventRow>& mem_events() const { return mem_events_; }
  const std::vector<MarkerRow>& markers() const { return markers_; }
  const std::vector<RangeRow>& ranges() const { return ranges_; }
  const std::vector<DeviceRow>& devices() const { return devices_; }

  const Node& node(int64_t id) const;  // throws TraceError for an unknown id
  // node(id) for an id read from a row: the error names that row when the id is not a uop of the trace
  const Node& node_ref(int64_t id, const char* table, const std::string& key, const char* column) const;
  // str(id) for an id read from a row: the error names that row when the string does not exist
  const std::string& str_ref(int64_t id, const char* table, const std::string& key, const char* column) const;
  // node_ref of a step's roots, and of the before and after of each of its matches (the rows it got from matches())
  void check_roots(const StepRow& step) const;
  void check_matches(int64_t step, const std::vector<MatchRow>& matches) const;
  size_t node_count() const { return nodes_.size(); }  // loaded and synthesized
  // loads these nodes (and what is under them) ahead of node(): one scan when they lie together in the file
  void preload(std::vector<int64_t> ids) const;
  // reads inside one read transaction while it lives (loading a step's thousands of nodes)
  class Batch {
   public:
    explicit Batch(const Trace& t);
    ~Batch();
    Batch(const Batch&) = delete;
    Batch& operator=(const Batch&) = delete;

   private:
    sqlite3* db_;
    bool open_ = false;
  };
  const std::string& str(int64_t id) const;            // throws TraceError for an unknown id
  const std::string& dtype_name(int dtype) const;  // "float", "weakint"
  std::string arg_text(int64_t node) const;        // python repr of the node's arg
  // the label and arg as a graph draws them, as the reference's VIZ does: a float CONST's value as f"{x:g}" ("0.001"),
  // everything else as label() and arg_text()
  std::string graph_label(int64_t node) const;
  std::string graph_arg_text(int64_t node) const;
  std::string label(int64_t node) const;           // "ADD\ndtypes.weakint\narg"
  // the same label, without loading the node's sources (label() reads the whole graph under a node): for lists
  std::string shallow_label(int64_t node) const;
  uint64_t uop_count() const;
  uint64_t match_count() const;
  std::map<int64_t, uint64_t> match_count_per_rule() const;  // the rows of table matches by rule id
  uint64_t file_bytes() const { return file_bytes_; }  // the database and its WAL when opened

  // nodes synthesized by replay live here too
  int64_t intern_node(int op, int dtype, int64_t arg, int64_t tag, const std::vector<int64_t>& src);
  // a loaded node with this content and any dtype (0 if none): a rebuild whose srcs changed dtype re-derives its own
  int64_t find_any_dtype(int op, int64_t arg, int64_t tag, const std::vector<int64_t>& src) const;

 private:
  Trace() = default;
  void load();
  void check_schema();
  void read_meta();
  void quick_check();
  StepRow read_step(void* stmt) const;
  sqlite3* db_ = nullptr;
  std::string path_;
  bool complete_ = false, truncated_ = false;
  uint64_t file_bytes_ = 0;
  std::vector<ContextRow> contexts_;
  std::vector<StepRow> steps_;
  std::vector<ProgramRow> programs_;
  std::vector<KernelEventRow> kernel_events_;
  std::vector<MemEventRow> mem_events_;
  std::vector<MarkerRow> markers_;
  std::vector<RangeRow> ranges_;
  std::vector<DeviceRow> devices_;
  void load_profile();
  std::unordered_map<int64_t, size_t> program_index_, program_by_ctx_;
  int schema_version_ = 0;
  std::unordered_map<int64_t, size_t> step_index_, ctx_index_;
  mutable std::unordered_map<int64_t, std::string> strings_;
  mutable sqlite3_stmt* str_stmt_ = nullptr;  // str()'s lookup
  mutable sqlite3_stmt* node_stmt_ = nullptr;  // node()'s
  // loads a node missing from nodes_ and what is under it; `missing` throws when the node has no row
  const Node& load_node(int64_t id, const std::function<void()>& missing) const;
  mutable std::unordered_map<int64_t, Node> nodes_;
  mutable std::unordered_map<int64_t, StepRow> lazy_steps_;  // step(id) of a trace opened for queries
  // content hash -> node ids with that hash, compared field by field on lookup (a key vector per node cost ~240
  // bytes per loaded node): of (op, dtype, arg, tag, srcs), and of the same without the dtype
  std::unordered_multimap<uint64_t, int64_t> content_, content_any_;
  static uint64_t content_hash(int op, int dtype, int64_t arg, int64_t tag, const std::vector<int64_t>& src,
                               bool with_dtype);
  int64_t find_content(int op, int dtype, int64_t arg, int64_t tag, const std::vector<int64_t>& src,
                       bool with_dtype) const;
  void index_content(const Node& n, bool also_any);
  std::vector<std::string> dtype_names_;
  bool has_index_ = false;
  bool program_text_ = true, catalog_ = true;
};

}  // namespace tg::viz
