// The trace file: a SQLite database. This header is the single description of its schema, shared by the writer
// (trace_writer.cpp) and the reader (reader.cpp). Bump TRACE_SCHEMA_VERSION when a table changes.
#pragma once
#include <cstdint>

namespace tg::viz {

constexpr int32_t TRACE_APPLICATION_ID = 0x54477472;  // "TGtr"
// 2: steps.stats entries leave out trailing default fields
// 3: programs and kernel_events (kernel sources and timings); version 2 files are still read (they have neither)
// 4: replay_checkpoints; version 2 and 3 files are still read (their deep frames are replayed from the step's start)
// 5: the profiler's events: mem_events, markers, ranges, devices; kernel_events.bufs' third field is the mode
//    (0 read, 1 write, 2 write+read; older files hold 0/1 for read/written). Older files are still read (no memory
//    lanes, markers or user ranges).
// 6: machine_code (what each compiled kernel ran as: the CPU's disassembly of its object). Older files are still read
//    (they hold no machine code).
// 7: uops.shape (a strings id: the node's shape as the reference's VIZ prints it, "(4,4)", "()" for a scalar; NULL
//    when it has none). Older files are still read (their labels show no shapes).
constexpr int32_t TRACE_SCHEMA_VERSION = 7;
constexpr int32_t TRACE_SCHEMA_MIN_READ = 2;

// uops.op is the Ops value (names in table ops), uops.dtype an id into table dtypes, uops.arg/tag the exact arg
//   encoding of lib/uop/serialize.h (a strings id; tag NULL = None), uops.src the srcs as zigzag varints of
//   (node id - src id), so recent srcs take one byte.
// steps.flags: bit 0 bottom_up, bit 1 walk, bit 2 enter_calls. Times are steady-clock ns of the recording process.
// steps.stats: per step, the rules the step attempted, as JSON [[rule, attempts, matches, excl_ns, early_rejects,
//   incl_ns], ...] where trailing early_rejects = 0 and incl_ns = excl_ns are left out (one row per step; the view
//   rule_stats expands it with json_each and fills them in);
// context_rule_stats: per context, every candidate rule (including those only early-rejected), summed over its steps.
// programs: one row per compiled kernel: its codegen context (0 if not recorded), source, linearized UOps,
//   launch dims and estimates (ops/mem/lds, -1 when symbolic). kernel_events: one row per kernel or copy run
//   (PROFILE): device lane, steady-clock ns start/end, bufs as JSON [[buffer, nbytes, mode], ...] in argument order
//   (element N is the kernel's dataN; mode 0 read, 1 write, 2 write+read).
// machine_code: per program, once it was compiled: kind says what the code is (or, with an empty code, what the
//   device gave instead of readable machine code), code the text (the CPU: LLVM's disassembly of the object that was
//   loaded, jump targets labelled and loops marked). A program without a row was not compiled while recording.
// mem_events: the alloc (kind 1) and free (kind 0) of every device buffer (Buffer.allocate/deallocate): buffer is the
//   number kernel_events.bufs name it by, size in elements, nbytes in bytes. markers: tg::profile_marker (colour a
//   name or #rrggbb). ranges: spans on host lanes (USER: tg::profile_range; "<DEV> Graph": batched executions).
//   devices: each device's clock offset (host = device + tdiff ns) and what it says about itself.
// replay_checkpoints: written when the trace is finished, for top-down steps with many matches: the graph of every
//   StepReplay::kCheckpointEvery-th frame (StepReplay::encode_frame), so tinyviz reaches a deep frame by replaying
//   from the checkpoint before it instead of from the step's start.
inline constexpr const char* TRACE_SCHEMA_SQL = R"SQL(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS strings(id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ops(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS dtypes(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS uops(id INTEGER PRIMARY KEY, op INTEGER NOT NULL, dtype INTEGER NOT NULL,
  arg INTEGER NOT NULL, tag INTEGER, src BLOB, shape INTEGER);
CREATE TABLE IF NOT EXISTS rules(id INTEGER PRIMARY KEY, matcher INTEGER NOT NULL, file INTEGER NOT NULL,
  line INTEGER NOT NULL, source INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS contexts(id INTEGER PRIMARY KEY, name INTEGER NOT NULL, thread INTEGER NOT NULL,
  t_start INTEGER NOT NULL, t_end INTEGER);
CREATE TABLE IF NOT EXISTS steps(id INTEGER PRIMARY KEY, context INTEGER NOT NULL, parent INTEGER NOT NULL,
  depth INTEGER NOT NULL, name INTEGER NOT NULL, file INTEGER NOT NULL, line INTEGER NOT NULL, flags INTEGER NOT NULL,
  input_root INTEGER NOT NULL, output_root INTEGER, t_start INTEGER NOT NULL, t_end INTEGER, n_matches INTEGER,
  error INTEGER, stats TEXT);
CREATE TABLE IF NOT EXISTS matches(step INTEGER NOT NULL, ordinal INTEGER NOT NULL, before INTEGER NOT NULL,
  after INTEGER NOT NULL, rule INTEGER NOT NULL, dur INTEGER NOT NULL, PRIMARY KEY(step, ordinal)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS context_rule_stats(context INTEGER NOT NULL, rule INTEGER NOT NULL,
  candidates INTEGER NOT NULL, early_rejects INTEGER NOT NULL, attempts INTEGER NOT NULL, matches INTEGER NOT NULL,
  excl_ns INTEGER NOT NULL, incl_ns INTEGER NOT NULL, PRIMARY KEY(context, rule)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rule_errors(step INTEGER NOT NULL, ordinal INTEGER NOT NULL, before INTEGER NOT NULL,
  error_uop INTEGER NOT NULL, rule INTEGER NOT NULL, message INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS step_uops(step INTEGER NOT NULL, uop INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS programs(id INTEGER PRIMARY KEY, name INTEGER NOT NULL, device INTEGER NOT NULL,
  context INTEGER NOT NULL, source TEXT NOT NULL, uops TEXT NOT NULL, global_size TEXT NOT NULL,
  local_size TEXT NOT NULL, ops INTEGER NOT NULL, mem INTEGER NOT NULL, lds INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS machine_code(program INTEGER PRIMARY KEY, kind TEXT NOT NULL, code TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS kernel_events(id INTEGER PRIMARY KEY, program INTEGER NOT NULL, name INTEGER NOT NULL,
  device INTEGER NOT NULL, t_start INTEGER NOT NULL, t_end INTEGER NOT NULL, bufs TEXT NOT NULL, var_vals TEXT);
CREATE TABLE IF NOT EXISTS mem_events(id INTEGER PRIMARY KEY, kind INTEGER NOT NULL, device INTEGER NOT NULL,
  t INTEGER NOT NULL, buffer INTEGER NOT NULL, dtype INTEGER NOT NULL, size INTEGER NOT NULL, nbytes INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS markers(id INTEGER PRIMARY KEY, t INTEGER NOT NULL, name INTEGER NOT NULL,
  color INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS ranges(id INTEGER PRIMARY KEY, device INTEGER NOT NULL, name INTEGER NOT NULL,
  t_start INTEGER NOT NULL, t_end INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS devices(device INTEGER PRIMARY KEY, tdiff INTEGER NOT NULL, props TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS replay_checkpoints(step INTEGER NOT NULL, frame INTEGER NOT NULL, graph BLOB NOT NULL,
  PRIMARY KEY(step, frame)) WITHOUT ROWID;
CREATE VIEW IF NOT EXISTS kernel_events_view AS SELECT k.id, n.value AS name, d.value AS device, k.t_start,
  k.t_end - k.t_start AS ns, k.program, p.context,
  CASE WHEN p.ops >= 0 AND k.t_end > k.t_start THEN p.ops * 1.0 / (k.t_end - k.t_start) END AS gflops,
  CASE WHEN p.mem >= 0 AND k.t_end > k.t_start THEN p.mem * 1.0 / (k.t_end - k.t_start) END AS gbs, k.bufs
  FROM kernel_events k JOIN strings n ON n.id=k.name JOIN strings d ON d.id=k.device
  LEFT JOIN programs p ON p.id=k.program;
CREATE VIEW IF NOT EXISTS mem_events_view AS SELECT m.id, CASE m.kind WHEN 1 THEN 'alloc' ELSE 'free' END AS event,
  d.value AS device, m.t, m.buffer, t.value AS dtype, m.size, m.nbytes FROM mem_events m JOIN strings d ON d.id=m.device
  JOIN strings t ON t.id=m.dtype;
CREATE VIEW IF NOT EXISTS uops_view AS SELECT u.id, o.name AS op, d.name AS dtype, a.value AS arg, t.value AS tag,
  length(u.src) AS src_bytes FROM uops u JOIN ops o ON o.id=u.op JOIN dtypes d ON d.id=u.dtype
  JOIN strings a ON a.id=u.arg LEFT JOIN strings t ON t.id=u.tag;
CREATE VIEW IF NOT EXISTS steps_view AS SELECT s.id, c.value AS context, s.depth, n.value AS name,
  f.value || ':' || s.line AS site, s.input_root, s.output_root, s.n_matches, (s.t_end - s.t_start) AS ns
  FROM steps s JOIN (SELECT contexts.id, strings.value FROM contexts JOIN strings ON strings.id=contexts.name) c
  ON c.id=s.context JOIN strings n ON n.id=s.name JOIN strings f ON f.id=s.file;
CREATE VIEW IF NOT EXISTS matches_view AS SELECT m.step, m.ordinal, m.before, m.after, m.dur,
  f.value || ':' || r.line AS rule_site, src.value AS rule_source FROM matches m JOIN rules r ON r.id=m.rule
  JOIN strings f ON f.id=r.file JOIN strings src ON src.id=r.source;
CREATE VIEW IF NOT EXISTS rule_stats AS SELECT s.id AS step, json_extract(j.value, '$[0]') AS rule,
  coalesce(json_extract(j.value, '$[4]'), 0) AS early_rejects, json_extract(j.value, '$[1]') AS attempts,
  json_extract(j.value, '$[2]') AS matches, json_extract(j.value, '$[3]') AS excl_ns,
  coalesce(json_extract(j.value, '$[5]'), json_extract(j.value, '$[3]')) AS incl_ns FROM steps s, json_each(s.stats) j;
CREATE VIEW IF NOT EXISTS rule_stats_view AS SELECT s.step, f.value || ':' || r.line AS rule_site, s.attempts,
  s.matches, s.early_rejects, s.excl_ns, s.incl_ns, src.value AS rule_source FROM rule_stats s
  JOIN rules r ON r.id=s.rule JOIN strings f ON f.id=r.file JOIN strings src ON src.id=r.source;
)SQL";

// built when the trace is finished (a killed run has none; the reader copes)
inline constexpr const char* TRACE_INDEX_SQL = R"SQL(
CREATE INDEX IF NOT EXISTS steps_context ON steps(context);
CREATE INDEX IF NOT EXISTS rule_errors_step ON rule_errors(step);
CREATE INDEX IF NOT EXISTS step_uops_step ON step_uops(step);
CREATE INDEX IF NOT EXISTS kernel_events_t ON kernel_events(t_start);
)SQL";

}  // namespace tg::viz
