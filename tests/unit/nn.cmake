# nn datasets: the IDX reader and the in-process gzip inflate. zlib only in the test: it checks our inflate against it.
tg_require(ZLIB "zlib1g-dev" TG_BUILD_TESTS)
tg_test(test_datasets LABEL unit SOURCES test_datasets.cpp LIBS ZLIB::ZLIB)
