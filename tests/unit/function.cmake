# function: FUNCTIONs (lib/function.h) realized with gradients through them, against tinygrad.function.function
tg_test(test_function LABEL parity SOURCES parity/test_function.cpp LIBS tg_backend_cpu tg_backend_interp)
tg_test(test_tensor_function LABEL unit SOURCES unit/test_tensor_function.cpp LIBS tg_backend_cpu tg_backend_interp)
