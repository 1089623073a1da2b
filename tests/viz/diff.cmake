# tinyviz-cli diff: two recordings of one program agree; a seeded difference (one match's rule changed) is the first
# divergence, at its step and match
tg_test(test_trace_diff LABEL viz SOURCES test_trace_diff.cpp LIBS tg_viz_cli SQLite::SQLite3)
target_compile_definitions(test_trace_diff PRIVATE TG_TENSOR_BIN="$<TARGET_FILE:hello_tensor>")
add_dependencies(test_trace_diff hello_tensor)
