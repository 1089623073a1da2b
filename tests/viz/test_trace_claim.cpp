// How a recording process treats its trace file: SIGINT/SIGTERM finish the trace before the process dies of the
// signal; a second recorder on the same path records to a numbered file instead of deleting the first one's trace;
// a directory or a file that is not a trace at VIZ_PATH is an error and is left untouched.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "lib/helpers.h"
#include "viz/reader/reader.h"
#include "viz/writer/trace_writer.h"

using namespace tg;
using namespace tg::viz;
namespace fs = std::filesystem;

namespace {

std::string tmp(const std::string& name) {
  return std::string(::testing::TempDir()) + "tg_claim_" + name + "_" + std::to_string(getpid());
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// the recording program, started with VIZ=-1 VIZ_PATH=path; stdout is a pipe, stderr goes to a file
struct Child {
  pid_t pid = -1;
  int out = -1;
  std::string err_path;

  Child(const std::string& path, const std::string& name, const char* iterations = nullptr) {
    err_path = tmp(name) + ".stderr";
    int p[2];
    if (pipe(p) != 0) return;
    pid = fork();
    if (pid == 0) {
      dup2(p[1], 1);
      close(p[0]);
      FILE* e = std::fopen(err_path.c_str(), "w");
      if (e) dup2(fileno(e), 2);
      setenv("VIZ", "-1", 1);
      setenv("VIZ_PATH", path.c_str(), 1);
      setenv("PRINT_MATCH_STATS", "0", 1);
      if (iterations)
        execl(TG_RECORD_BIN, TG_RECORD_BIN, "--iterations", iterations, (char*)nullptr);
      else
        execl(TG_RECORD_BIN, TG_RECORD_BIN, (char*)nullptr);
      _exit(127);
    }
    close(p[1]);
    out = p[0];
  }
  // blocks until the program says it is recording
  bool wait_recording() {
    std::string got;
    char c;
    while (read(out, &c, 1) == 1) {
      got += c;
      if (got.find("recording\n") != std::string::npos) return true;
    }
    return false;
  }
  int wait() {
    int status = 0;
    waitpid(pid, &status, 0);
    close(out);
    return status;
  }
  std::string err() const { return slurp(err_path); }
};

void expect_complete_trace(const std::string& path) {
  std::unique_ptr<Trace> t;
  ASSERT_NO_THROW(t = Trace::open(path)) << path;
  EXPECT_TRUE(t->complete()) << path;
  EXPECT_GT(t->contexts().size(), 0u) << path;
  EXPECT_GT(t->steps().size(), 0u) << path;
}

void remove_trace(const std::string& path) {
  for (const char* ext : {"", "-wal", "-shm"}) std::remove((path + ext).c_str());
}

}  // namespace

class StopSignal : public ::testing::TestWithParam<int> {};

TEST_P(StopSignal, FinishesTheTraceThenDiesOfTheSignal) {
  int sig = GetParam();
  std::string path = tmp(std::string("signal") + std::to_string(sig)) + ".trace.db";
  remove_trace(path);
  Child c(path, "signal" + std::to_string(sig));
  ASSERT_TRUE(c.wait_recording()) << c.err();
  ASSERT_EQ(kill(c.pid, sig), 0);
  int status = c.wait();
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << status << "\n" << c.err();
  EXPECT_EQ(WTERMSIG(status), sig);
  EXPECT_NE(c.err().find("finishing the trace"), std::string::npos) << c.err();
  expect_complete_trace(path);
  EXPECT_FALSE(fs::exists(path + "-wal") && fs::file_size(path + "-wal") > 0) << "the WAL was not checkpointed";
  remove_trace(path);
}

INSTANTIATE_TEST_SUITE_P(Recorder, StopSignal, ::testing::Values(SIGINT, SIGTERM));

TEST(TraceClaim, SecondRecorderOnTheSamePathTakesANumberedFile) {
  std::string path = tmp("shared") + ".trace.db", second = tmp("shared") + "-2.trace.db";
  remove_trace(path);
  remove_trace(second);
  Child a(path, "shared_a");
  ASSERT_TRUE(a.wait_recording()) << a.err();
  Child b(path, "shared_b");
  ASSERT_TRUE(b.wait_recording()) << b.err();
  kill(a.pid, SIGTERM);
  kill(b.pid, SIGTERM);
  a.wait();
  b.wait();
  EXPECT_NE(b.err().find(second), std::string::npos) << b.err();
  expect_complete_trace(path);
  expect_complete_trace(second);
  remove_trace(path);
  remove_trace(second);
}

TEST(TraceClaim, InOneProcessTooAndAFinishedTraceIsReplaced) {
  std::string path = tmp("inproc") + ".trace.db";
  remove_trace(path);
  remove_trace(tmp("inproc") + "-2.trace.db");
  auto w1 = open_trace_writer(path);
  auto w2 = open_trace_writer(path);
  EXPECT_EQ(w1->path(), path);
  EXPECT_EQ(w2->path(), tmp("inproc") + "-2.trace.db");
  w2->finish();
  w1->finish();
  // both finished: the path is free again, and a new recorder replaces the earlier trace
  auto w3 = open_trace_writer(path);
  EXPECT_EQ(w3->path(), path);
  w3->finish();
  EXPECT_TRUE(Trace::open(path)->complete());
  remove_trace(path);
  remove_trace(tmp("inproc") + "-2.trace.db");
}

TEST(TraceClaim, NumberedNamesKeepTheExtension) {
  std::string dir = tmp("noext");
  std::string path = dir + ".db";
  remove_trace(path);
  auto w1 = open_trace_writer(path);
  auto w2 = open_trace_writer(path);
  EXPECT_EQ(w2->path(), path + "-2");
  w2->finish();
  w1->finish();
  remove_trace(path);
  remove_trace(path + "-2");
}

TEST(TraceClaim, DirectoryOrForeignFileIsAnErrorAndIsKept) {
  std::string dir = tmp("dir");
  fs::create_directories(dir);
  try {
    open_trace_writer(dir);
    FAIL() << "recorded into a directory";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_directory(dir));

  std::string foreign = tmp("foreign") + ".txt";
  {
    std::ofstream f(foreign);
    f << "my notes, not a trace\n";
  }
  try {
    open_trace_writer(foreign);
    FAIL() << "overwrote a file that is not a trace";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is not a trace"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(foreign), std::string::npos) << e.what();
  }
  EXPECT_EQ(slurp(foreign), "my notes, not a trace\n");

  // the same through VIZ_PATH in a real program: it says so, records nothing, and finishes its work
  Child c(foreign, "foreign", "50");
  int status = c.wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << c.err();
  EXPECT_NE(c.err().find("is not a trace"), std::string::npos) << c.err();
  EXPECT_EQ(slurp(foreign), "my notes, not a trace\n");
  fs::remove_all(dir);
  fs::remove(foreign);
}
