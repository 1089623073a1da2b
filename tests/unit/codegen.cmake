# per-kernel codegen (lib/codegen): full_rewrite_to_sink against the reference pass by pass, opts, render, values
tg_test(test_codegen_goldens LABEL parity SOURCES parity/test_codegen_goldens.cpp LIBS tg_backend_interp)
# the codegen rule tables against the reference's UPats (test_patterns style)
tg_test(test_codegen_patterns LABEL parity SOURCES parity/test_codegen_patterns.cpp)
# transcribed unit tests (gpudims, transcendental helpers, linearizer tests on the reference's ASTs, opt checks)
tg_test(test_codegen LABEL unit SOURCES unit/test_codegen.cpp LIBS tg_backend_interp)
# benchmark (`make bench` style, not a test): full_rewrite_to_sink + linearize + render over the golden ASTs
add_executable(bench_codegen bench/bench_codegen.cpp)
target_link_libraries(bench_codegen PRIVATE tinygrad benchmark::benchmark)
# the reference runs its IR tests with SPEC=2: every UOp created is type-checked, and full_rewrite_to_sink verifies its
# input (spec_tensor) and output (spec_program)
add_test(NAME codegen_goldens_spec2 COMMAND test_codegen_goldens)
add_test(NAME codegen_unit_spec2 COMMAND test_codegen)
set_tests_properties(codegen_goldens_spec2 codegen_unit_spec2 PROPERTIES ENVIRONMENT SPEC=2 LABELS parity)
# BEAM search (codegen/opt/search.py): get_kernel_actions against the reference, the search and its disk cache
tg_test(test_beam LABEL parity SOURCES parity/test_beam.cpp LIBS tg_backend_cpu tg_backend_interp)
# codegen on PARALLEL worker threads: the same PROGRAMs on every thread, the same values
tg_test(test_parallel_codegen LABEL parity SOURCES parity/test_parallel_codegen.cpp LIBS tg_backend_cpu tg_backend_interp)
