# the CPU backend (backends/cpu): LLVM 16 compile + ORC load + launcher, differential against the goldens
tg_test(test_cpu_backend LABEL unit SOURCES unit/test_cpu_backend.cpp LIBS tg_backend_cpu tg_backend_interp)
# DEV=CPU's CLANG renderer: clang's floating-point semantics in LLVM IR
tg_test(test_llvm_clang LABEL unit SOURCES unit/test_llvm_clang.cpp LIBS tg_backend_cpu tg_backend_interp)
tg_test(test_cpu_goldens LABEL parity SOURCES parity/test_cpu_goldens.cpp LIBS tg_backend_cpu tg_backend_interp)

# benchmark (`make bench`, not ctest): LLVM compile time per golden kernel, GB/s of a large add, GFLOPS of a matmul
add_executable(bench_cpu bench/bench_cpu.cpp)
target_link_libraries(bench_cpu PRIVATE tinygrad tg_backend_cpu benchmark::benchmark)
target_compile_definitions(bench_cpu PRIVATE TG_TEST_DATA="${CMAKE_SOURCE_DIR}/tests/parity")
