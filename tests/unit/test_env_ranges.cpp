// Environment variables are validated against their ranges: a program started with a malformed or out-of-range value
// stops at once with exit status 2 and a message naming the variable, the value and the range.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>

#include "lib/helpers.h"

namespace {

struct ChildRun {
  int status = -1;
  std::string err;
};

// runs the example program with one variable set; only its stderr is kept
ChildRun run_with(const std::string& assignment) {
  std::string cmd = "env " + assignment + " '" TG_HELLO_BIN "' 2>&1 >/dev/null";
  ChildRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 512> buf;
  while (fgets(buf.data(), (int)buf.size(), p)) r.err += buf.data();
  r.status = pclose(p);
  return r;
}

}  // namespace

TEST(EnvRanges, OutOfRangeValuesStopTheProgramWithTheirRange) {
  for (const char* bad : {"BEAM=-1", "PARALLEL=-1", "PARALLEL=100000", "NUM_CPU_THREADS=0", "VIZ=-5",
                          "TRACK_MATCH_STATS=7", "DEBUG=-2", "SPEC=9"}) {
    ChildRun r = run_with(bad);
    ASSERT_TRUE(WIFEXITED(r.status)) << bad;
    EXPECT_EQ(WEXITSTATUS(r.status), 2) << bad << "\n" << r.err;
    std::string name = std::string(bad).substr(0, std::string(bad).find('='));
    EXPECT_NE(r.err.find(std::string(bad) + " is out of range: " + name + " takes"), std::string::npos)
        << bad << "\n" << r.err;
  }
}

TEST(EnvRanges, MalformedValueNamesTheVariable) {
  ChildRun r = run_with("BEAM=two");
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 2);
  EXPECT_NE(r.err.find("BEAM='two' is not an integer"), std::string::npos) << r.err;
}

TEST(EnvRanges, ValuesInRangeRun) {
  ChildRun r = run_with("PARALLEL=1 NUM_CPU_THREADS=1 DEBUG=0");
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 0) << r.err;
}

TEST(EnvRanges, GetenvIntChecksItsRange) {
  setenv("TG_TEST_RANGE", "5", 1);
  EXPECT_EQ(tg::getenv_int("TG_TEST_RANGE", 1, 0, 9), 5);
  EXPECT_THROW(tg::getenv_int("TG_TEST_RANGE", 1, 0, 4), tg::EnvError);
  unsetenv("TG_TEST_RANGE");
  EXPECT_EQ(tg::getenv_int("TG_TEST_RANGE", 7, 0, 4), 7);  // the default is the program's, not checked
}
