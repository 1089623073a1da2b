// tinyviz-cli: inspect a trace from a terminal. See cli.cpp.
#include "viz/cli/cli.h"

int main(int argc, char** argv) { return tg::viz::cli_main(argc, argv); }
