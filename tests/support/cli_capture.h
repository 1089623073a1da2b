// tinyviz-cli run in the test's own process (viz/cli/cli.h cli_main), its stdout captured through a temporary file: for
// tests that check what a subcommand prints.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "viz/cli/cli.h"

namespace tg::test {

inline std::string run_cli(std::vector<std::string> args, int* rc = nullptr) {
  std::string out_path =
      std::string(::testing::TempDir()) + "tg_cli_out_" + std::to_string(getpid()) + ".txt";
  std::fflush(stdout);
  int saved = dup(1);
  FILE* f = std::fopen(out_path.c_str(), "w");
  dup2(fileno(f), 1);
  std::vector<char*> argv{const_cast<char*>("tinyviz-cli")};
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int r = tg::viz::cli_main((int)argv.size() - 1, argv.data());
  std::fflush(stdout);
  dup2(saved, 1);
  close(saved);
  std::fclose(f);
  if (rc) *rc = r;
  std::ifstream in(out_path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::filesystem::remove(out_path);
  return ss.str();
}

}  // namespace tg::test
