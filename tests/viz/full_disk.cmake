# a full disk while recording: the trace keeps what was committed, marked truncated; the program goes on
tg_test(test_full_disk LABEL viz SOURCES test_full_disk.cpp LIBS tg_viz tg_viz_cli SQLite::SQLite3)
target_compile_definitions(test_full_disk PRIVATE TG_MNIST_BIN="$<TARGET_FILE:beautiful_mnist>")
add_dependencies(test_full_disk beautiful_mnist)
