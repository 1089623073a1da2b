// The SQLite trace writer: implements the engine's Recorder hook (lib/recorder.h).
// Producer threads append to per-thread buffers (no lock shared between threads on the hot path); one writer thread
// turns them into batched transactions with prepared statements, interned strings, WAL. A run killed at any point
// leaves a readable trace holding everything up to the last committed batch.
#pragma once
#include <memory>
#include <string>

#include "lib/recorder.h"

namespace tg::viz {

class TraceWriter;

// Opens (truncates) `path` and returns a recorder writing to it. Throws tg::Error naming the file on failure.
std::unique_ptr<Recorder> open_trace_writer(const std::string& path);

// The default trace path: VIZ_PATH, else <tmp>/tinygrad-<program>-<date>-<pid>.trace.db
std::string default_trace_path();

// Installs the factory that creates a TraceWriter when VIZ / TRACK_MATCH_STATS>=2 ask for a trace.
// Programs get this automatically by linking tg::viz (see viz/writer/autoinit.cpp).
void install_trace_writer_factory();

// Writer statistics (for benchmarks and the exit summary)
struct WriterStats {
  uint64_t uops = 0, matches = 0, steps = 0, contexts = 0, batches = 0, transactions = 0;
};
WriterStats writer_stats(const Recorder* r);

}  // namespace tg::viz
