// The trace file: a SQLite database. This header is the single description of its schema, shared by the writer
// (trace_writer.cpp) and the reader (reader.cpp). Bump TRACE_SCHEMA_VERSION when a table changes.
#pragma once
#include <cstdint>

namespace tg::viz {

constexpr int32_t TRACE_APPLICATION_ID = 0x54477472;  // "TGtr"
constexpr int32_t TRACE_SCHEMA_VERSION = 1;

// uops.src: the node's srcs as zigzag varints of (node id - src id), so recent srcs take one byte.
// steps.flags: bit 0 bottom_up, bit 1 walk, bit 2 enter_calls.
// All times are steady-clock nanoseconds of the recording process.
inline constexpr const char* TRACE_SCHEMA_SQL = R"SQL(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS strings(id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS uops(id INTEGER PRIMARY KEY, op INTEGER NOT NULL, dtype INTEGER NOT NULL, arg INTEGER NOT NULL,
  argstr INTEGER NOT NULL, tag INTEGER NOT NULL, src BLOB);
CREATE TABLE IF NOT EXISTS rules(id INTEGER PRIMARY KEY, matcher INTEGER NOT NULL, file INTEGER NOT NULL,
  line INTEGER NOT NULL, source INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS contexts(id INTEGER PRIMARY KEY, name INTEGER NOT NULL, thread INTEGER NOT NULL,
  t_start INTEGER NOT NULL, t_end INTEGER);
CREATE TABLE IF NOT EXISTS steps(id INTEGER PRIMARY KEY, context INTEGER NOT NULL, parent INTEGER NOT NULL,
  depth INTEGER NOT NULL, name INTEGER NOT NULL, file INTEGER NOT NULL, line INTEGER NOT NULL, flags INTEGER NOT NULL,
  input_root INTEGER NOT NULL, output_root INTEGER, t_start INTEGER NOT NULL, t_end INTEGER, n_matches INTEGER,
  error INTEGER);
CREATE TABLE IF NOT EXISTS matches(step INTEGER NOT NULL, ordinal INTEGER NOT NULL, before INTEGER NOT NULL,
  after INTEGER NOT NULL, rule INTEGER NOT NULL, dur INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS rule_stats(step INTEGER NOT NULL, rule INTEGER NOT NULL, candidates INTEGER NOT NULL,
  early_rejects INTEGER NOT NULL, attempts INTEGER NOT NULL, matches INTEGER NOT NULL, excl_ns INTEGER NOT NULL,
  incl_ns INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS rule_errors(step INTEGER NOT NULL, ordinal INTEGER NOT NULL, before INTEGER NOT NULL,
  error_uop INTEGER NOT NULL, rule INTEGER NOT NULL, message INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS step_uops(step INTEGER NOT NULL, uop INTEGER NOT NULL);
)SQL";

// built when the trace is finished (a killed run has none; the reader copes)
inline constexpr const char* TRACE_INDEX_SQL = R"SQL(
CREATE INDEX IF NOT EXISTS matches_step ON matches(step, ordinal);
CREATE INDEX IF NOT EXISTS matches_rule ON matches(rule);
CREATE INDEX IF NOT EXISTS steps_context ON steps(context);
CREATE INDEX IF NOT EXISTS rule_stats_step ON rule_stats(step);
CREATE INDEX IF NOT EXISTS rule_stats_rule ON rule_stats(rule);
CREATE INDEX IF NOT EXISTS rule_errors_step ON rule_errors(step);
CREATE INDEX IF NOT EXISTS step_uops_step ON step_uops(step);
)SQL";

}  // namespace tg::viz
