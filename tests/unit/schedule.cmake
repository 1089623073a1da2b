# the scheduler (lib/schedule): create_linear_with_vars against the reference's schedules
tg_test(test_schedule_goldens LABEL parity SOURCES parity/test_schedule_goldens.cpp)
add_test(NAME schedule_goldens_spec2 COMMAND test_schedule_goldens)
set_tests_properties(schedule_goldens_spec2 PROPERTIES ENVIRONMENT SPEC=2 LABELS parity)
