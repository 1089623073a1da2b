# each way a trace once crashed or hung the reader, now one TraceError naming the file, the table and the row
add_executable(test_trace_errors viz/test_trace_errors.cpp)
target_link_libraries(test_trace_errors PRIVATE tg_viz_cli SQLite::SQLite3 GTest::gtest GTest::gtest_main)
target_compile_definitions(test_trace_errors PRIVATE TG_SAMPLE_TRACE="${CMAKE_SOURCE_DIR}/traces/demo.trace.db")
gtest_discover_tests(test_trace_errors PROPERTIES LABELS viz DISCOVERY_TIMEOUT 60)
