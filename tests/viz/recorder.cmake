# recorded equals performed, replay, rule errors, crashed runs, bad files, the statistics table, threads
tg_test(test_recorder LABEL viz SOURCES test_recorder.cpp LIBS tg_viz SQLite::SQLite3)
target_compile_definitions(test_recorder PRIVATE TG_DEMO_BIN="$<TARGET_FILE:rewrite_demo>")
add_dependencies(test_recorder rewrite_demo)
