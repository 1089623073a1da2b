# trace_fuzz: seeded mutants of the sample trace and of a trace hello_tensor records at test time (kernels, schema 3)
# through tinyviz-cli (in-process and the binary) and tinyviz's loading path (tinyviz_fuzz_gui, offscreen)
add_executable(trace_fuzz trace_fuzz.cpp)
target_link_libraries(trace_fuzz PRIVATE tg_viz_cli SQLite::SQLite3 Threads::Threads)
add_dependencies(trace_fuzz tinyviz-cli hello_tensor)
# without the GUI (TG_BUILD_GUI=OFF) the mutants go through tinyviz-cli only
set(gui_args "")
if(TARGET tinyviz_fuzz_gui)
  add_dependencies(trace_fuzz tinyviz_fuzz_gui)
  set(gui_args --gui-bin $<TARGET_FILE:tinyviz_fuzz_gui>)
endif()
add_test(NAME trace_fuzz
         COMMAND sh -c "f=\"$1\" && hello=\"$2\" && shift 2 && rm -f \"$f\"* && VIZ=-1 VIZ_PATH=\"$f\" \"$hello\" > /dev/null && \"$@\" \"$f\""
                 sh ${CMAKE_CURRENT_BINARY_DIR}/fuzz_hello_tensor.trace.db $<TARGET_FILE:hello_tensor>
                 $<TARGET_FILE:trace_fuzz> --cli-bin $<TARGET_FILE:tinyviz-cli> ${gui_args}
                 ${CMAKE_SOURCE_DIR}/traces/demo.trace.db)
set_tests_properties(trace_fuzz PROPERTIES LABELS viz TIMEOUT 300
  ENVIRONMENT "XDG_RUNTIME_DIR=${CMAKE_BINARY_DIR}/xdg-runtime")
