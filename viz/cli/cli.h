// tinyviz-cli's commands, callable in-process (tests run them on many files without a process per run).
#pragma once

namespace tg::viz {
// argv as tinyviz-cli's main gets it; prints to stdout/stderr and returns the exit status
int cli_main(int argc, char** argv);
}  // namespace tg::viz
