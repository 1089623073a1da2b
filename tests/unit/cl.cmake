# the CL backend (backends/cl) on the machine's OpenCL platform (PoCL): buffers, launches, device timing, errors,
# mixed CPU/CL graphs, TinyJit and BEAM on CL
tg_test(test_cl_backend LABEL unit SOURCES test_cl_backend.cpp LIBS tg_backend_cl tg_backend_cpu tg_backend_interp)
target_compile_definitions(test_cl_backend PRIVATE TG_HELLO_BIN="$<TARGET_FILE:hello_tensor>")
add_dependencies(test_cl_backend hello_tensor)
