# the profiler's events in the trace (schema 5): buffers, markers, user ranges; tinyviz-cli profile and export; the
# export read by a real Trace Event consumer (tracerbench's trace model under node, installed by install-deps.sh)
tg_test(test_profile_trace LABEL viz SOURCES test_profile_trace.cpp LIBS tg_viz tg_viz_cli tg_backend_cpu tg_backend_interp
        SQLite::SQLite3)
target_compile_definitions(test_profile_trace PRIVATE TG_MNIST_BIN="$<TARGET_FILE:beautiful_mnist>"
                           TG_CHROME_CONSUMER="${CMAKE_SOURCE_DIR}/tests/viz/chrome_consumer")
add_dependencies(test_profile_trace beautiful_mnist)
