# the recording process and its trace file: signals, two recorders on one path, VIZ_PATH that is not a trace
add_executable(record_until_signal record_until_signal.cpp)
target_link_libraries(record_until_signal PRIVATE tinygrad tg::viz)
tg_test(test_trace_claim LABEL viz SOURCES test_trace_claim.cpp LIBS tg_viz)
target_compile_definitions(test_trace_claim PRIVATE TG_RECORD_BIN="$<TARGET_FILE:record_until_signal>")
add_dependencies(test_trace_claim record_until_signal)
