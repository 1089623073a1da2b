# machine code in the trace (schema 6): the CPU's disassembly of each compiled kernel, older traces without it,
# tinyviz-cli code --asm
tg_test(test_machine_code LABEL viz SOURCES test_machine_code.cpp LIBS tg_viz tg_viz_cli tg_backend_cpu tg_backend_interp
        SQLite::SQLite3)
