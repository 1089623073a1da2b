# a recorded run with schedule groups (get_kernel_graph, run_rangeify): `tinyviz-cli verify` replays every step
add_test(NAME tinyviz_cli_verify_hello_tensor
         COMMAND sh -c "rm -f \"$1\"* && VIZ=-1 VIZ_PATH=\"$1\" \"$2\" > /dev/null && \"$3\" verify \"$1\""
                 sh ${CMAKE_CURRENT_BINARY_DIR}/verify_hello_tensor.trace.db $<TARGET_FILE:hello_tensor>
                 $<TARGET_FILE:tinyviz-cli>)
set_tests_properties(tinyviz_cli_verify_hello_tensor PROPERTIES LABELS viz)
