# TinyJit: capture, replay, input mismatches
tg_test(test_jit LABEL unit SOURCES test_jit.cpp LIBS tg_backend_cpu tg_backend_interp)
