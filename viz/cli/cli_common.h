// The commands of tinyviz-cli that live outside cli.cpp.
#pragma once
#include "viz/reader/reader.h"

namespace tg::viz {

int cmd_profile(Trace& t, int argc, char** argv, bool as_json);
int cmd_export(Trace& t, int argc, char** argv, bool as_json);
// exit status 0: the traces agree, 1: they differ
int cmd_diff(Trace& a, int argc, char** argv, bool as_json);
// import-tinygrad REWRITES.pkl [PROFILE.pkl] OUT.db: exit status 0, or an error (tg::Error) naming the file
int cmd_import_tinygrad(int argc, char** argv, bool as_json);

}  // namespace tg::viz
