// Port of the tracking part of tinygrad/uop/ops.py: rewrite_group (trace contexts and steps), TrackedPatternMatcher
// (per-rule counters, TRACK_MATCH_STATS) and print_match_stats, feeding the Recorder (lib/recorder.h).
#pragma once
#include <cstdint>
#include <source_location>
#include <string>
#include <vector>

#include "lib/recorder.h"
#include "lib/uop/upat.h"

namespace tg::track {

// the tracked rewrite loop of PatternMatcher (TRACK_MATCH_STATS >= 1)
bool tracked_rewrite(const std::vector<const RuleData*>& bucket, const UOp& u, CtxRef ctx, void* out, bool uop_result);

// An untracked region: rewrites inside are counted but not recorded (the reference's Context(TRACK_MATCH_STATS=0)
// around simplify() and unnamed substitute()). Thread-local.
class Untracked {
 public:
  Untracked();
  ~Untracked();
  Untracked(const Untracked&) = delete;
  Untracked& operator=(const Untracked&) = delete;
};

// rewrite_group(new_ctx=True): a trace context ("Schedule 3 Kernels n1", a kernel name, ...)
class Group {
 public:
  explicit Group(const std::string& fn_name);
  ~Group();
  void rename(const std::string& name);    // str name: replaces the function name, keeps " nK"
  void set_name(const std::string& full);  // TracingKey: replaces the whole name
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

 private:
  uint64_t id_ = 0;
  std::string display_, fn_;
};

// rewrite_group(new_ctx=False) around one graph_rewrite: a step
class Step {
 public:
  Step(const char* name, const std::source_location& loc, const UOp& input, bool bottom_up, bool walk,
       bool enter_calls);
  ~Step();  // a step left by an exception records the error
  void done(const UOp& output);
  bool recording() const { return id_ != 0; }
  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;

 private:
  uint64_t id_ = 0;
  bool done_ = false;
};

// whether this thread currently records steps and matches
bool recording();
// the innermost trace context open on this thread (0: none, or nothing is recorded)
uint64_t current_context();
// ids the installed recorder gave to PROGRAM nodes (Recorder::program); forgotten when the recorder changes
uint64_t program_id(const UOp& prg);
void set_program_id(const UOp& prg, uint64_t id);
// true the first time it is asked for a PROGRAM since the recorder changed (its machine code is recorded once)
bool claim_machine_code(const UOp& prg);
// a node the trace must contain (when recording)
void note_uop(const UOp& u);

// ***** statistics (TRACK_MATCH_STATS >= 1) *****
struct RuleTotals {
  uint64_t candidates = 0, early_rejects = 0, attempts = 0, matches = 0;
  int64_t fail_ns = 0, match_ns = 0, excl_ns = 0;
};
// every rule that was a candidate at least once, merged across threads, by rule id
std::vector<std::pair<uint32_t, RuleTotals>> match_stats();
void reset_match_stats();
// the reference's table: "matches / attempts -- match ms / total ms -- file:line  source", TOTAL, "N rules, M matched once"
std::string format_match_stats();
// totals of what the installed recorder received (for the exit summary)
struct RecordTotals {
  uint64_t contexts = 0, steps = 0, matches = 0;
};
RecordTotals record_totals();
// flush and close the recorder, print the trace path and the statistics table (runs at exit; idempotent). After an
// interrupt (SIGINT/SIGTERM) the trace is finished the same way, but VIZ=1 does not open the viewer.
void finalize(bool interrupted = false);

}  // namespace tg::track
