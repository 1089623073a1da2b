# tg::Function (@function on Tensors)
tg_test(test_tensor_function LABEL unit SOURCES test_tensor_function.cpp LIBS tg_backend_cpu tg_backend_interp)
