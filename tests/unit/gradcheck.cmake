# autograd: gradients of every op and layer against central finite differences of the forward (float64),
# Tensor::train / requires_grad / detach
tg_test(test_gradcheck LABEL unit SOURCES unit/gradcheck.cpp unit/gradcheck_train.cpp LIBS tg_backend_cpu tg_backend_interp)
# Tensor::setitem (tensor.py __setitem__): the programs of gen_setitem_goldens.py on CPU and INTERP
tg_test(test_setitem LABEL parity SOURCES parity/test_setitem.cpp LIBS tg_backend_cpu tg_backend_interp)
