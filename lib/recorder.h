// The Recorder contract: the narrow interface through which the engine becomes observable.
// lib/ calls it; viz/ implements it (the SQLite trace writer). A null recorder costs one predictable branch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "profiler/events.h"

namespace tg {

class UOp;

// one graph_rewrite call (tinygrad's TrackedGraphRewrite, plus the output root and times)
struct StepInfo {
  uint64_t context = 0;     // the context (rewrite group) it belongs to
  uint64_t parent = 0;      // enclosing step, 0 at depth 0
  int depth = 0;
  std::string name;         // name= ("graph_rewrite" when unnamed)
  std::string file;         // call site
  int line = 0;
  bool bottom_up = false, walk = false, enter_calls = false;
  int64_t t_start_ns = 0;
};

// per-step statistics of one rule (TRACK_MATCH_STATS, scoped to a step)
struct RuleStat {
  uint32_t rule = 0;
  uint64_t candidates = 0;     // times the rule was in the node's op bucket
  uint64_t early_rejects = 0;  // rejected by the src-op check before matching
  uint64_t attempts = 0;       // matcher invoked
  uint64_t matches = 0;        // returned a new node
  int64_t excl_ns = 0;         // time in the rule minus time in nested rule attempts
  int64_t incl_ns = 0;         // time in the rule including nested rewrites
};

class Recorder {
 public:
  virtual ~Recorder() = default;
  virtual uint64_t context_begin(const std::string& name, int64_t t_ns) = 0;
  virtual void context_rename(uint64_t ctx, const std::string& name) = 0;
  virtual void context_end(uint64_t ctx, int64_t t_ns) = 0;
  virtual uint64_t step_begin(const StepInfo& step, const UOp& input_root) = 0;
  virtual void step_end(uint64_t step, const UOp* output_root, int64_t t_end_ns, std::vector<RuleStat>&& stats,
                        const std::string& error) = 0;
  virtual void match(uint64_t step, uint32_t ordinal, const UOp& before, const UOp& after, uint32_t rule,
                     int64_t dur_ns) = 0;
  virtual void rule_error(uint64_t step, uint32_t ordinal, const UOp& before, const UOp& error_node, uint32_t rule,
                          const std::string& message) = 0;
  virtual void note_uop(const UOp& u) = 0;  // a node the trace must hold (e.g. a rebuild that re-derived its dtype)
  // kernels and their runs (PROFILE): a program is recorded once and gets an id kernel events refer to
  virtual uint64_t program(const ProgramRecord& p) { return 0; }
  virtual void kernel_event(const KernelEvent& e) {}
  // the machine code of a recorded program, once it is compiled (after program(), possibly on another thread)
  virtual void program_code(uint64_t program, const MachineCode& code) {}
  // the profiler's other events (profiler/events.h): buffers, markers, user ranges, device clocks, graphs
  virtual void profile_event(const ProfileEvent& e) {}
  virtual void finish() = 0;                // flush everything, build indexes, close
  // why recording stopped before finish() (a failed write: a full disk), "" while it records; the program goes on
  virtual std::string stopped() const { return {}; }
  virtual std::string path() const = 0;
};

// The installed recorder (nullptr: nothing is recorded). Installed at first use from the registered factory when
// VIZ/TRACK_MATCH_STATS>=2 ask for recording.
Recorder* recorder();
void set_recorder(Recorder* r);
using RecorderFactory = Recorder* (*)();
void set_recorder_factory(RecorderFactory f);

// The recorder kernels and their runs go to: the installed one when PROFILE>=1 or a trace is recorded (installing
// it on first use), else nullptr.
Recorder* profile_recorder();

// VIZ=1: at exit, after the trace is saved, the launcher opens it in the workbench (registered by tg::viz)
using VizLauncher = void (*)(const std::string& trace_path);
void set_viz_launcher(VizLauncher f);

}  // namespace tg
