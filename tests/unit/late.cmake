# the late stage of the pipeline: linearizer, renderers and interpreter on hand-built programs
tg_test(test_late_uops LABEL unit FAST SOURCES test_late_uops.cpp LIBS tg_backend_interp)
