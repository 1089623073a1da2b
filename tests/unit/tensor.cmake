# the Tensor and the realize engine (lib/tensor, lib/engine, lib/device Buffer, backends/interp's device)
tg_test(test_tensor_goldens LABEL parity SOURCES parity/test_tensor_goldens.cpp LIBS tg_backend_cpu tg_backend_interp)
tg_test(test_tensor LABEL unit SOURCES unit/test_tensor.cpp LIBS tg_backend_cpu tg_backend_interp)
# forward op cases in the style of the reference's test_ops.py, values from the reference, on CPU and INTERP
tg_test(test_tensor_ops LABEL parity SOURCES parity/test_tensor_ops.cpp LIBS tg_backend_cpu tg_backend_interp)
# the reference runs its tests with SPEC=2: every UOp created is type-checked
add_test(NAME tensor_goldens_spec2 COMMAND test_tensor_goldens)
add_test(NAME tensor_unit_spec2 COMMAND test_tensor)
set_tests_properties(tensor_goldens_spec2 tensor_unit_spec2 PROPERTIES ENVIRONMENT SPEC=2 LABELS parity)
# the CPU's other renderer: the reference's DEV=CPU:LLVM programs (tensor_goldens.txt)
add_test(NAME tensor_goldens_llvm COMMAND test_tensor_goldens)
set_tests_properties(tensor_goldens_llvm PROPERTIES ENVIRONMENT DEV=CPU:LLVM LABELS parity)
# bad input to the Tensor API: division by zero, tensors larger than the device, empty reductions
tg_test(test_bad_input LABEL unit SOURCES unit/test_bad_input.cpp LIBS tg_backend_cpu tg_backend_interp)
