// The profile event model: the reference's ProfileEvent classes (helpers.py, device.py) as plain records. The engine
// emits them (lib/), the trace writer stores them (viz/), tinyviz and tinyviz-cli read them back. Times are host
// steady-clock ns (profiler/clock.h); a device's own timestamps are converted with its ProfileDeviceEvent::tdiff_ns
// before they become events.
#pragma once
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace tg {

// ProfileRangeEvent: a span on a lane. Host lanes are "USER" (tg::profile_range in user code) and "TINY" (the
// engine's own phases); "<DEV> Graph" holds batched executions.
struct ProfileRangeEvent {
  std::string device;  // the lane
  std::string name;
  int64_t t_start_ns = 0, t_end_ns = 0;
};

// ProfilePointEvent: an instant. "alloc"/"free" of a buffer on a device (Buffer.allocate/deallocate), "marker" from
// tg::profile_marker (on the TINY lane, a vertical line across the timeline).
struct ProfilePointEvent {
  enum class Kind { alloc, free, marker };
  Kind kind = Kind::marker;
  std::string device;
  int64_t ts_ns = 0;
  uint64_t buffer = 0;  // alloc/free: the buffer's number (Buffer::trace_num, the one kernel events name)
  std::string dtype;    // alloc/free: the dtype's name ("float")
  uint64_t size = 0;    // alloc/free: elements
  uint64_t nbytes = 0;  // alloc/free: bytes
  std::string name;     // marker: its text
  std::string color;    // marker: its colour name ("gray", "red", ...) or "#rrggbb"
};

// ProfileDeviceEvent: a device and the offset that converts its clock to the host's (host = device + tdiff)
struct ProfileDeviceEvent {
  std::string device;
  int64_t tdiff_ns = 0;
  std::string props;  // what the device reports about itself (name, driver), free text
};

// ProfileGraphEvent: one batched execution of several kernels (a graph runner); entries index into sigs, the
// timestamps of the batch's signals
struct ProfileGraphEntry {
  std::string device, name;
  uint32_t st_id = 0, en_id = 0;
};
struct ProfileGraphEvent {
  std::vector<ProfileGraphEntry> ents;
  std::vector<int64_t> sigs_ns;
};

using ProfileEvent = std::variant<ProfileRangeEvent, ProfilePointEvent, ProfileDeviceEvent, ProfileGraphEvent>;

// ProfileProgramEvent, plus what the workbench shows: a compiled kernel, written once per program
struct ProgramRecord {
  std::string name;                      // the kernel name, E_4_4 (no colours)
  std::string device;                    // CPU, PYTHON, ...
  uint64_t context = 0;                  // the trace context of its codegen (to_program), 0 when that was not recorded
  std::string source;                    // the rendered source (C or LLVM IR)
  std::string uops;                      // the linearized UOps, one per line (print_uops)
  std::string global_size, local_size;   // python reprs, e.g. "[4, 1, 1]"
  int64_t ops = -1, mem = -1, lds = -1;  // Estimates (FLOPs, bytes); -1 when symbolic
};

// what a compiled kernel runs as, for the trace (Recorder::program_code): the device's machine code as text (a
// disassembly of the object that was loaded) and what that text is
struct MachineCode {
  std::string kind;  // "x86-64 machine code (znver3): LLVM's disassembly of the loaded ELF object", or what the
                     // device gave when it is nothing readable ("PoCL program binary, 12 KB: no machine code in it")
  std::string text;  // empty: the device gives no readable machine code (kind says what it gives)
};

// one buffer a kernel touched: the reference's "exec" point event arg (bufs, outputs, inputs), i.e. its
// "kernel read|write|write+read@dataN" in the memory lane
struct BufferUse {
  enum Mode : uint8_t { read = 0, write = 1, write_read = 2 };
  uint64_t id = 0;  // the buffer's number (Buffer::trace_num): the key of its alloc/free events
  uint64_t nbytes = 0;
  Mode mode = read;
  bool written() const { return mode != read; }
};

// one kernel (or copy) run on a device: the reference's ProfileRangeEvent(device, name, st, en, profile_key) and its
// "exec" point event together
struct KernelEvent {
  uint64_t program = 0;                  // id the recorder gave the program, 0 for copies and unrecorded programs
  std::string name;                      // kernel name, or "copy 4.00 KB CPU <- PYTHON"
  std::string device;                    // lane: "CPU", "CPU:COPY", ...
  int64_t t_start_ns = 0, t_end_ns = 0;  // host clock
  std::vector<BufferUse> bufs;           // in argument order: bufs[N] is dataN
  std::string var_vals;                  // "{'n': 3}" when the kernel has symbolic variables
};

}  // namespace tg
