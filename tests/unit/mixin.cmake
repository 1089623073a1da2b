# the builder mixins (lib/mixin): the C++ API
tg_test(test_mixin LABEL unit FAST SOURCES test_mixin.cpp)
