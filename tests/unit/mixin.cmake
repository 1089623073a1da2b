# the builder mixins (lib/mixin): graph parity with the reference's UOp mixins, and unit tests of the C++ API
tg_test(test_mixin_goldens LABEL parity SOURCES parity/test_mixin_goldens.cpp)
add_test(NAME mixin_goldens_spec2 COMMAND test_mixin_goldens)
set_tests_properties(mixin_goldens_spec2 PROPERTIES ENVIRONMENT SPEC=2 LABELS parity)
tg_test(test_mixin LABEL unit SOURCES unit/test_mixin.cpp)
