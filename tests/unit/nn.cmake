# nn datasets: the IDX reader and gzip (through zlib): every zlib strategy, concatenated members, damaged input.
tg_test(test_datasets LABEL unit SOURCES test_datasets.cpp LIBS ZLIB::ZLIB)
