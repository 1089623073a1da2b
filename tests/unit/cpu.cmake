# the CPU backend (backends/cpu): LLVM 16 compile, ORC load and the launcher; DEV=CPU's clang numerics in LLVM IR
tg_test(test_cpu_backend LABEL unit SOURCES test_cpu_backend.cpp LIBS tg_backend_cpu tg_backend_interp)
tg_test(test_llvm_clang LABEL unit SOURCES test_llvm_clang.cpp LIBS tg_backend_cpu tg_backend_interp)
