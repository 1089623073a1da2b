// Export of a trace's profile to the Trace Event Format (the JSON that Perfetto, chrome://tracing and speedscope open).
#pragma once
#include <cstdint>
#include <ostream>
#include <string>

#include "viz/reader/reader.h"

namespace tg::viz {

// What the export wrote, besides the metadata events that name processes and threads
struct ExportCounts {
  uint64_t kernel_runs = 0;          // "X" events on the device lanes (kernel_events rows)
  uint64_t ranges = 0;               // "X" events on host lanes (ranges rows)
  uint64_t contexts = 0, steps = 0;  // "X" events per recording thread (contexts and steps rows)
  uint64_t memory = 0;   // "C" counter events: live bytes per device after each alloc and free (mem_events rows)
  uint64_t markers = 0;  // "i" global instant events (markers rows)
  uint64_t total() const { return kernel_runs + ranges + contexts + steps + memory + markers; }
};

// Writes {"traceEvents": [...], "displayTimeUnit": "ns", "metadata": {...}} to `out`. Times are µs from the run's first
// event. Processes: 1 "devices" (a thread per device lane: CPU, CPU:COPY, CL, ...), 2 "host" (USER and other host
// lanes, then one thread per thread that recorded rewrites: its contexts and steps nested), 3 "memory" (one counter
// per device). Markers are global instant events.
ExportCounts export_chrome(const Trace& t, std::ostream& out);

}  // namespace tg::viz
