tg_test(test_jit LABEL unit SOURCES unit/test_jit.cpp LIBS tg_backend_cpu tg_backend_interp)
