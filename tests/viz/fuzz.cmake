# trace_fuzz: seeded mutants of the sample trace and of a trace hello_tensor records at test time (kernels, schema 3)
# through tinyviz-cli (in-process and the binary) and tinyviz's loading path (tinyviz_fuzz_gui, offscreen)
add_executable(trace_fuzz viz/trace_fuzz.cpp)
target_link_libraries(trace_fuzz PRIVATE tg_viz_cli SQLite::SQLite3 Threads::Threads)
add_dependencies(trace_fuzz tinyviz-cli tinyviz_fuzz_gui hello_tensor)
add_test(NAME trace_fuzz
         COMMAND sh -c "rm -f \"$1\"* && VIZ=-1 VIZ_PATH=\"$1\" \"$2\" > /dev/null && \"$3\" --cli-bin \"$4\" --gui-bin \"$5\" \"$6\" \"$1\""
                 sh ${CMAKE_CURRENT_BINARY_DIR}/fuzz_hello_tensor.trace.db $<TARGET_FILE:hello_tensor>
                 $<TARGET_FILE:trace_fuzz> $<TARGET_FILE:tinyviz-cli> $<TARGET_FILE:tinyviz_fuzz_gui>
                 ${CMAKE_SOURCE_DIR}/traces/demo.trace.db)
set_tests_properties(trace_fuzz PROPERTIES LABELS viz TIMEOUT 300
  ENVIRONMENT "XDG_RUNTIME_DIR=${CMAKE_BINARY_DIR}/xdg-runtime")
