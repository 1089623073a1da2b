# autograd (issue 4): gradients of every op and layer against central finite differences of the forward (float64),
# Tensor::train / requires_grad / detach
tg_test(test_gradcheck LABEL unit SOURCES unit/gradcheck.cpp unit/gradcheck_train.cpp LIBS tg_backend_cpu tg_backend_interp)
