# each way a trace once crashed or hung the reader, now one TraceError naming the file, the table and the row
tg_test(test_trace_errors LABEL viz SOURCES test_trace_errors.cpp LIBS tg_viz_cli SQLite::SQLite3)
target_compile_definitions(test_trace_errors PRIVATE TG_SAMPLE_TRACE="${CMAKE_SOURCE_DIR}/traces/demo.trace.db")
