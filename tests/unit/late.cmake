# the late stage of the pipeline: linearizer, renderers, interpreter
tg_test(test_kernel_goldens LABEL parity SOURCES parity/test_kernel_goldens.cpp LIBS tg_backend_interp)
tg_test(test_late_uops LABEL unit SOURCES unit/test_late_uops.cpp LIBS tg_backend_interp)
