# tinyviz-cli import-tinygrad: the reference's VIZ pickles in tests/data (tests/parity/gen_import_fixtures.py) imported
# and checked against the counts the generator took with the reference's classes; hostile, truncated and mutated
# pickles refused
tg_test(test_import_tinygrad LABEL viz SOURCES test_import_tinygrad.cpp LIBS tg_viz_cli SQLite::SQLite3
        nlohmann_json::nlohmann_json)
target_compile_definitions(test_import_tinygrad PRIVATE TG_CLI_BIN="$<TARGET_FILE:tinyviz-cli>")
add_dependencies(test_import_tinygrad tinyviz-cli)
