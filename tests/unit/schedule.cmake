# the scheduler (lib/schedule): create_linear_with_vars against the reference's schedules
tg_test(test_schedule_goldens LABEL parity SOURCES parity/test_schedule_goldens.cpp)
# SPEC=2: every UOp the scheduler creates is type-checked, and each function is verified against spec_tensor
add_test(NAME schedule_goldens_spec2 COMMAND test_schedule_goldens)
set_tests_properties(schedule_goldens_spec2 PROPERTIES ENVIRONMENT SPEC=2 LABELS parity)
# the kernel-count assertions of the reference's test/null/test_schedule.py on the big SINKs it scheduled
tg_test(test_schedule_counts LABEL parity SOURCES parity/test_schedule_counts.cpp)
add_test(NAME schedule_counts_spec2 COMMAND test_schedule_counts)
set_tests_properties(schedule_counts_spec2 PROPERTIES ENVIRONMENT SPEC=2 LABELS parity)
# benchmark (`make bench` style, not a test): create_linear_with_vars on the largest golden SINKs and the MLP
add_executable(bench_schedule bench/bench_schedule.cpp)
target_link_libraries(bench_schedule PRIVATE tinygrad benchmark::benchmark)
# the memory planner's TLSFAllocator against the reference's on random alloc/free sequences
tg_test(test_schedule_memory LABEL parity SOURCES parity/test_schedule_memory.cpp)
# unit tests: schedule cache and its DEBUG line, pm_flatten_linear, bind mismatch
tg_test(test_schedule LABEL unit SOURCES unit/test_schedule.cpp)
# the scheduler's rule tables against the reference's UPats
tg_test(test_schedule_patterns LABEL parity SOURCES parity/test_schedule_patterns.cpp)
# every distinct schedule the reference's unit tests make (test_assign, test_setitem_schedule, ...), whole LINEAR
tg_test(test_schedule_corpus LABEL parity SOURCES parity/test_schedule_corpus.cpp)
add_test(NAME schedule_corpus_spec2 COMMAND test_schedule_corpus)
set_tests_properties(schedule_corpus_spec2 PROPERTIES ENVIRONMENT SPEC=2 LABELS parity)
