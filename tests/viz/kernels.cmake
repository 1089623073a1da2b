tg_test(test_kernel_trace LABEL viz SOURCES viz/test_kernel_trace.cpp LIBS tg_viz SQLite::SQLite3)
