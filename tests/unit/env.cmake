# environment variables: ranges checked at start-up (runs the hello_tensor example as a child process)
tg_test(test_env_ranges LABEL unit SOURCES test_env_ranges.cpp)
target_compile_definitions(test_env_ranges PRIVATE TG_HELLO_BIN="$<TARGET_FILE:hello_tensor>")
add_dependencies(test_env_ranges hello_tensor)
