# programs linked to their codegen contexts, kernel events, PROFILE=1
tg_test(test_kernel_trace LABEL viz SOURCES test_kernel_trace.cpp LIBS tg_viz SQLite::SQLite3)
