# the scheduler (lib/schedule): the schedule cache and its DEBUG line, pm_flatten_linear, bind mismatches
tg_test(test_schedule LABEL unit SOURCES test_schedule.cpp)
