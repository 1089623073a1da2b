// A full disk while recording: beautiful_mnist recorded (VIZ=-1 PROFILE=1) into a trace whose writes start failing in
// the middle of its first step. The program prints one line saying recording stopped and why, finishes its work and
// exits 0; the trace keeps every transaction committed before the failure, is marked truncated, and opens in every
// tinyviz-cli subcommand, with every recorded step replaying under verify.
//
// Two ways to fill the disk: a file size limit (RLIMIT_FSIZE, `ulimit -f`: write() fails with EFBIG, SQLite says
// SQLITE_IOERR_WRITE), which any user can set, and a real 6 MB tmpfs (SQLITE_FULL), mounted in a private mount
// namespace when the test may (root).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "tests/support/cli_capture.h"
#include "viz/reader/reader.h"

using namespace tg;
using namespace tg::viz;
namespace fs = std::filesystem;

namespace {
bool have_dataset() {
  return fs::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz") || std::getenv("FASHION_MNIST_PATH");
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) n++;
  return n;
}

struct ProgramRun {
  int rc = -1;
  std::string out, err;
};

// runs `sh -c script` (stdout and stderr captured apart)
ProgramRun run_sh(const std::string& script, const std::string& dir) {
  std::string o = dir + "/stdout.txt", e = dir + "/stderr.txt";
  std::string cmd = "sh -c '" + script + "' > " + o + " 2> " + e;
  ProgramRun r;
  int st = std::system(cmd.c_str());
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = slurp(o), r.err = slurp(e);
  return r;
}

// what every cut-off trace must satisfy
// why: what the message says, one of them (SQLite reports a write cut short at the limit as SQLITE_FULL, "database or
// disk is full", and one refused outright as SQLITE_IOERR_WRITE, with the system's "File too large" when it keeps the
// errno, else the writer's explanation)
void check_truncated_trace(const std::string& path, const ProgramRun& r, std::vector<std::string> why) {
  SCOPED_TRACE(path);
  // the program did all its work and exited normally, saying once that recording stopped, and why
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  for (const char* step : {"step   0", "step   1", "step   2"}) EXPECT_NE(r.out.find(step), std::string::npos) << r.out;
  EXPECT_EQ(count(r.err, "tinygrad: recording stopped: "), 1u) << r.err;
  auto says_why = [&](const std::string& text) {
    for (const std::string& w : why)
      if (text.find(w) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(says_why(r.err)) << r.err;
  EXPECT_NE(r.out.find("recording stopped early"), std::string::npos) << r.out;

  auto t = Trace::open(path);
  EXPECT_FALSE(t->complete());
  EXPECT_TRUE(t->truncated());
  EXPECT_TRUE(says_why(t->meta()["stopped"])) << t->meta()["stopped"];
  ASSERT_GT(t->steps().size(), 100u) << "the transactions before the failure are not in the file\n" << r.err;
  EXPECT_GT(t->match_count(), 0u);

  // every subcommand opens it
  int rc = -1;
  std::string info = test::run_cli({"info", path}, &rc);
  EXPECT_EQ(rc, 0);
  EXPECT_NE(info.find("status     truncated (recording stopped early: "), std::string::npos) << info;
  for (std::vector<std::string> args :
       {std::vector<std::string>{"contexts", path}, {"steps", path}, {"stats", path}, {"kernels", path},
        {"profile", path}, {"profile", path, "-t"}, {"info", path, "--json"}}) {
    test::run_cli(args, &rc);
    EXPECT_EQ(rc, 0) << args[0];
  }
  int64_t with_matches = 0;
  for (const auto& s : t->steps())
    if (s.n_matches > 0 && s.output_root) with_matches = s.id;
  ASSERT_NE(with_matches, 0);
  test::run_cli({"matches", path, std::to_string(with_matches)}, &rc);
  EXPECT_EQ(rc, 0);
  test::run_cli({"frame", path, std::to_string(with_matches), "1"}, &rc);
  EXPECT_EQ(rc, 0);
  std::string json = path + ".json";
  test::run_cli({"export", path, "--chrome", json}, &rc);
  EXPECT_EQ(rc, 0);
  fs::remove(json);
  // every committed step replays to the output it recorded
  std::string v = test::run_cli({"verify", path}, &rc);
  EXPECT_EQ(rc, 0) << v;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(v, m, std::regex(R"(verified (\d+) steps .*: (\d+) reproduce their output, (\d+) do not)")))
      << v;
  EXPECT_GT(std::stoll(m[1]), 100);
  EXPECT_EQ(m[3], "0") << v;
}

std::string fresh_dir(const std::string& name) {
  std::string d = std::string(::testing::TempDir()) + "tg_full_disk_" + name + "_" + std::to_string(getpid());
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// the recorded program: the compile cache off (it is a file too, and would meet the same limit)
std::string recorded(const std::string& trace) {
  return std::string("CCACHE=0 VIZ=-1 PROFILE=1 PRINT_MATCH_STATS=0 VIZ_PATH=") + trace + " " + TG_MNIST_BIN +
         " --steps 3";
}
}  // namespace

// a 6 MB file size limit (the whole run records ~50 MB): write() fails with EFBIG inside the first step
TEST(FullDisk, FileSizeLimitCutsTheTraceCleanly) {
  if (!have_dataset()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  std::string dir = fresh_dir("fsize"), trace = dir + "/run.trace.db";
  // SIGXFSZ ignored: the write fails instead of killing the program
  ProgramRun r = run_sh("trap \"\" XFSZ; ulimit -f 6144; " + recorded(trace), dir);
  check_truncated_trace(trace, r, {"the file reached its size limit", "File too large", "database or disk is full"});
  fs::remove_all(dir);
}

// a real full filesystem: a 6 MB tmpfs in a private mount namespace; the trace is copied out before it goes away
TEST(FullDisk, FullTmpfsCutsTheTraceCleanly) {
  if (!have_dataset()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  std::string dir = fresh_dir("tmpfs"), mnt = dir + "/mnt", trace = dir + "/run.trace.db";
  fs::create_directories(mnt);
  if (std::system(("unshare -m sh -c \"mount -t tmpfs -o size=1m tmpfs " + mnt + "\" 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "no permission to mount a tmpfs in a private mount namespace (needs root)";
  ProgramRun r = run_sh("unshare -m sh -c \"mount -t tmpfs -o size=6m tmpfs " + mnt + " && " + recorded(mnt + "/run.trace.db") +
                     "; rc=\\$?; cp " + mnt + "/run.trace.db* " + dir + "/; exit \\$rc\"",
                 dir);
  check_truncated_trace(trace, r, {"database or disk is full"});
  fs::remove_all(dir);
}
