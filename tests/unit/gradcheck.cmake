# autograd: gradients of every op and layer against central finite differences of the forward (float64),
# Tensor::train / requires_grad / detach, dropout's values from the reference
tg_test(test_gradcheck LABEL unit SOURCES gradcheck.cpp gradcheck_train.cpp LIBS tg_backend_cpu tg_backend_interp)
