# the Tensor and the realize engine (lib/tensor, lib/engine, lib/device Buffer); again with SPEC=2
tg_test(test_tensor LABEL unit SOURCES test_tensor.cpp LIBS tg_backend_cpu tg_backend_interp)
tg_rerun(tensor_unit_spec2 test_tensor unit SPEC=2)
# bad input to the Tensor API: division by zero, tensors larger than the device, empty reductions
tg_test(test_bad_input LABEL unit SOURCES test_bad_input.cpp LIBS tg_backend_cpu tg_backend_interp)
