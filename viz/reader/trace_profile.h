// The profile of a trace, as the reference's viewer derives it from its events (viz/serve.py get_profile): the lanes
// (kernel runs per device, host ranges, rewrite contexts and steps on TINY), the memory lane of each device with its
// buffers and the kernels that used them, markers, and the run's time span. tinyviz, `tinyviz-cli profile` and the
// Chrome export all read the profile through this.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "viz/reader/reader.h"

namespace tg::viz {

// one argument of a kernel run: the reference's "exec" event, `kernel read|write|write+read@dataN`
struct BufferArg {
  int64_t buffer = 0, nbytes = 0;
  int mode = 0;  // 0 read, 1 write, 2 write+read
};
// kernel_events.bufs ([[buffer, nbytes, mode], ...]); throws TraceError naming the row when it is not that
std::vector<BufferArg> parse_bufs(const Trace& t, const KernelEventRow& k);
const char* mode_name(int mode);  // "read", "write", "write+read"

struct BufferUser {
  int64_t kernel_event = 0;  // kernel_events.id
  std::string name;          // the kernel's name
  int num = 0;               // dataN
  int mode = 0;
};
// a buffer's life on its device: allocated at t_alloc, freed at t_free (the end of the run when it never was)
struct BufferLife {
  int64_t buffer = 0, size = 0, nbytes = 0, t_alloc = 0, t_free = 0;
  std::string dtype;
  bool freed = false;
  std::vector<BufferUser> users;  // in run order
};
// the reference's "<DEV> Memory" lane: live bytes after each alloc and free
struct MemoryLane {
  std::string device;
  std::vector<std::pair<int64_t, int64_t>> steps;  // (t, live bytes from t on), one per alloc and free, by time
  int64_t peak = 0, t_peak = 0;
  std::vector<BufferLife> buffers;  // by allocation time
};

// one span on a lane of the profile
struct Span {
  std::string name;
  int64_t t_start = 0, t_end = 0;
  int64_t program = 0;       // kernel runs: the program (programs.id), 0 for copies
  int64_t context = 0;       // the codegen context of a kernel run, or the context of a TINY span
  int64_t kernel_event = 0;  // kernel runs: kernel_events.id
  int depth = 0;             // TINY: nesting (context 0, its steps 1 + step depth)
};
struct Lane {
  std::string name;         // "CPU", "CL:COPY", "USER", "TINY", "CPU Graph"
  std::vector<Span> spans;  // by start
};

struct Profile {
  int64_t t_start = 0, t_end = 0;  // the whole run: every event of the trace lies inside
  std::vector<Lane> lanes;         // device lanes in first-run order, then the host lanes
  std::vector<MemoryLane> memory;  // one per device with buffers, in first-alloc order
  std::vector<MarkerRow> markers;  // by time
};
// `tiny` adds the TINY lane: one span per rewrite context and step (12,000+ on a training run)
Profile build_profile(const Trace& t, bool tiny = true);

// the most bytes ever live on each device at once, from the memory lane
const MemoryLane* memory_lane(const Profile& p, const std::string& device);

}  // namespace tg::viz
