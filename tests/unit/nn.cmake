# nn: datasets (issue 4). zlib only in the test: it checks our inflate against the reference implementation.
find_package(ZLIB REQUIRED)
tg_test(test_datasets LABEL unit SOURCES unit/test_datasets.cpp LIBS ZLIB::ZLIB)
tg_test(test_safetensors LABEL parity SOURCES unit/test_safetensors.cpp)
tg_test(test_gradient_goldens LABEL parity SOURCES parity/test_gradient_goldens.cpp)
tg_test(test_nn_goldens LABEL parity SOURCES parity/test_nn_goldens.cpp LIBS tg_backend_cpu tg_backend_interp)
tg_test(test_optim_goldens LABEL parity SOURCES parity/test_optim_goldens.cpp LIBS tg_backend_cpu tg_backend_interp)
