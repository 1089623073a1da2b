// The profiler's events in the trace (schema 5): buffer allocs and frees with the kernels that read and wrote each
// buffer, markers, user ranges; the memory lane built from them against SQL and against the engine's own peak counter;
// `tinyviz-cli profile` against the reference's viz.cli on the same training run (tests/parity/gen_profile_goldens.py);
// the Trace Event export read by a real consumer (tracerbench's trace model under node); damaged rows and bad
// arguments as messages.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "backends/cpu/cpu.h"
#include "backends/interp/interp.h"
#include "lib/helpers.h"
#include "lib/recorder.h"
#include "lib/tensor.h"
#include "profiler/profile.h"
#include "tests/support/cli_capture.h"
#include "viz/cli/cli.h"
#include "viz/export/export.h"
#include "viz/reader/trace_profile.h"
#include "viz/reader/reader.h"
#include "viz/schema.h"
#include "viz/writer/trace_writer.h"

using namespace tg;
using namespace tg::viz;
using nlohmann::json;

namespace {

std::string tmp_path(const std::string& name, const char* ext = ".trace.db") {
  return std::string(::testing::TempDir()) + "tg_" + name + "_" + std::to_string(getpid()) + ext;
}

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

// the most bytes live at once on a device, computed by SQL from the rows alone
int64_t sql_peak(const std::string& path, const std::string& device) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db,
                               "SELECT MAX(live) FROM (SELECT SUM(CASE m.kind WHEN 1 THEN m.nbytes ELSE -m.nbytes END) "
                               "OVER (ORDER BY m.t, m.id) AS live FROM mem_events m JOIN strings d ON d.id=m.device "
                               "WHERE d.value=?)",
                               -1, &s, nullptr),
            SQLITE_OK);
  sqlite3_bind_text(s, 1, device.c_str(), -1, SQLITE_TRANSIENT);
  int64_t v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
  sqlite3_finalize(s);
  sqlite3_close(db);
  return v;
}

// tinyviz-cli in this process, its stdout captured
std::string cli(std::vector<std::string> args, int* rc = nullptr) { return tg::test::run_cli(std::move(args), rc); }

}  // namespace

TEST(ProfileTrace, BuffersKernelsMarkersAndRangesOfAProgram) {
  cpu::register_device();
  interp::register_device();  // host data arrives through the PYTHON device
  std::string path = tmp_path("program");
  {
    Context ctx({{"PROFILE", 1}});
    Recorder* r = open_trace_writer(path).release();
    set_recorder(r);
    profile_marker("start", "red");
    {
      profile_range span("add and sum");
      std::vector<float> v(16);
      for (int i = 0; i < 16; i++) v[i] = (float)i;
      Tensor a = Tensor::from_vector<float>(v);
      Tensor b = (a + 1).contiguous().realize();
      EXPECT_EQ((b.sum()).item<float>(), 136.0f);
    }
    profile_marker("end");
    r->finish();
    set_recorder(nullptr);
    delete r;
  }
  auto t = Trace::open(path);
  EXPECT_EQ(t->schema_version(), TRACE_SCHEMA_VERSION);
  ASSERT_EQ(t->markers().size(), 2u);
  EXPECT_EQ(t->markers()[0].name, "start");
  EXPECT_EQ(t->markers()[0].color, "red");
  EXPECT_EQ(t->markers()[1].color, "gray");
  ASSERT_EQ(t->ranges().size(), 1u);
  EXPECT_EQ(t->ranges()[0].device, "USER");
  EXPECT_EQ(t->ranges()[0].name, "add and sum");
  EXPECT_LE(t->markers()[0].t, t->ranges()[0].t_start);
  EXPECT_GE(t->markers()[1].t, t->ranges()[0].t_end);
  // every buffer a kernel named was allocated before the run, and the modes say which argument was written
  std::map<int64_t, const MemEventRow*> alloc;
  for (const MemEventRow& m : t->mem_events())
    if (m.alloc) alloc[m.buffer] = &m;
  ASSERT_FALSE(t->kernel_events().empty());
  bool saw_read = false, saw_write = false;
  for (const KernelEventRow& k : t->kernel_events()) {
    auto args = parse_bufs(*t, k);
    ASSERT_FALSE(args.empty()) << k.name;
    for (size_t n = 0; n < args.size(); n++) {
      ASSERT_TRUE(alloc.count(args[n].buffer)) << k.name << " data" << n;
      EXPECT_LE(alloc[args[n].buffer]->t, k.t_end);  // outputs are allocated when their kernel runs
      EXPECT_EQ(alloc[args[n].buffer]->nbytes, args[n].nbytes);
      if (k.device == "CPU") {  // a kernel writes data0 and reads the rest
        EXPECT_EQ(args[n].mode, n == 0 ? 1 : 0) << k.name << " data" << n;
        saw_read |= n > 0, saw_write |= n == 0;
      }
    }
  }
  EXPECT_TRUE(saw_read && saw_write);
  // the memory lane: its peak equals SQL's, and the buffers' users come from the kernel runs
  Profile p = build_profile(*t);
  const MemoryLane* cpu = memory_lane(p, "CPU");
  ASSERT_NE(cpu, nullptr);
  EXPECT_GT(cpu->peak, 0);
  EXPECT_EQ(cpu->peak, sql_peak(path, "CPU"));
  size_t users = 0;
  for (const BufferLife& b : cpu->buffers) {
    users += b.users.size();
    EXPECT_LE(b.t_alloc, b.t_free);
    for (const BufferUser& u : b.users) EXPECT_FALSE(u.name.empty());
  }
  EXPECT_GE(users, 3u);  // the three kernels' outputs and inputs
  EXPECT_EQ(p.markers.size(), 2u);
  EXPECT_LE(p.t_start, t->markers()[0].t);
  EXPECT_GE(p.t_end, t->markers()[1].t);

  // tinyviz-cli profile: sources, the interval between the markers, totals; errors that name what is wrong
  std::string list = cli({"profile", path, "--list"});
  EXPECT_NE(list.find("CPU Memory"), std::string::npos) << list;
  EXPECT_NE(list.find("USER"), std::string::npos) << list;
  std::string all = cli({"profile", path});
  EXPECT_NE(all.find("--- MARKER start"), std::string::npos) << all;
  EXPECT_NE(all.find("*** USER    add and sum"), std::string::npos) << all;
  int rc = 0;
  std::string iv = cli({"profile", path, "--interval", "start", "end", "-t", "--json"}, &rc);
  EXPECT_EQ(rc, 0);
  int64_t runs = 0;
  std::istringstream lines(iv);
  for (std::string l; std::getline(lines, l);) {
    json j = json::parse(l);
    if (j["name"].get<std::string>().rfind("CPU ", 0) == 0) runs += j["count"].get<int64_t>();
  }
  int64_t cpu_runs = 0;
  for (const KernelEventRow& k : t->kernel_events()) cpu_runs += k.device == "CPU";
  EXPECT_EQ(runs, cpu_runs);
  std::string mem = cli({"profile", path, "-s", "CPU Memory", "--json"});
  EXPECT_EQ(json::parse(mem.substr(0, mem.find('\n')))["peak"].get<int64_t>(), cpu->peak);
  EXPECT_NE(mem.find("write@data0"), std::string::npos) << mem;
  testing::internal::CaptureStderr();
  EXPECT_EQ((cli({"profile", path, "-s", "CPUU"}, &rc), rc), 2);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("did you mean \"CPU\""), std::string::npos);
  testing::internal::CaptureStderr();
  EXPECT_EQ((cli({"profile", path, "--interval", "nowhere"}, &rc), rc), 2);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("marker \"nowhere\" not found"), std::string::npos);
  if (!HasFailure())
    std::filesystem::remove(path);
  else
    std::printf("trace kept: %s\n", path.c_str());
}

TEST(ProfileTrace, DamagedProfileRowsAreNamed) {
  std::string path = tmp_path("damaged");
  {
    Context ctx({{"PROFILE", 1}});
    Recorder* r = open_trace_writer(path).release();
    set_recorder(r);
    profile_marker("m");
    r->finish();
    set_recorder(nullptr);
    delete r;
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "INSERT INTO mem_events(id, kind, device, t, buffer, dtype, size, nbytes) "
                         "SELECT 7, 3, name, 1, 1, name, 1, 4 FROM markers",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  try {
    Trace::open(path);
    FAIL() << "a mem_events row of kind 3 was accepted";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("mem_events"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("7"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

// PROFILE=1 beautiful_mnist --steps 3. Its memory lane peaks where the engine's counter did, its
// kernels and their run counts are the reference's (viz.cli -t on the reference's run of the same script), and its
// export opens in tracerbench's trace model with every event.
TEST(ProfileTrace, TrainingRunAgainstEngineReferenceAndConsumer) {
  if (!std::filesystem::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz") &&
      !std::getenv("FASHION_MNIST_PATH"))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  std::string path = tmp_path("mnist");
  // with the reference's opts (CPU_TILE=0): the port's register tiles name their kernels by other shapes
  std::string out = run("CPU_TILE=0 PROFILE=1 VIZ_PATH=" + path + " " + TG_MNIST_BIN + " --steps 3 2>&1");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex("peak memory on CPU: (\\d+) bytes"))) << out;
  int64_t engine_peak = std::stoll(m[1]);
  auto t = Trace::open(path);
  Profile p = build_profile(*t);
  const MemoryLane* cpu = memory_lane(p, "CPU");
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->peak, engine_peak);
  EXPECT_EQ(cpu->peak, sql_peak(path, "CPU"));
  // every buffer's life against the rows: allocated at an alloc row of its own, freed at its first free row after that
  // (and at none when the profile says it lives to the end)
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt *alloc = nullptr, *free_ = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db,
                                 "SELECT COUNT(*) FROM mem_events m JOIN strings d ON d.id = m.device WHERE m.kind = 1 "
                                 "AND m.buffer = ? AND m.t = ? AND d.value = ?",
                                 -1, &alloc, nullptr),
              SQLITE_OK);
    ASSERT_EQ(sqlite3_prepare_v2(db,
                                 "SELECT MIN(m.t) FROM mem_events m JOIN strings d ON d.id = m.device WHERE m.kind = 0 "
                                 "AND m.buffer = ? AND m.t >= ? AND d.value = ?",
                                 -1, &free_, nullptr),
              SQLITE_OK);
    size_t lives = 0, freed = 0;
    for (const MemoryLane& lane : p.memory)
      for (const BufferLife& b : lane.buffers) {
        for (sqlite3_stmt* q : {alloc, free_}) {
          sqlite3_reset(q);
          sqlite3_bind_int64(q, 1, b.buffer), sqlite3_bind_int64(q, 2, b.t_alloc);
          sqlite3_bind_text(q, 3, lane.device.c_str(), -1, SQLITE_TRANSIENT);
          ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
        }
        EXPECT_GE(sqlite3_column_int64(alloc, 0), 1) << "buffer " << b.buffer << " at " << b.t_alloc;
        if (b.freed) {
          EXPECT_EQ(sqlite3_column_int64(free_, 0), b.t_free) << "buffer " << b.buffer;
          freed++;
        } else {
          EXPECT_EQ(sqlite3_column_type(free_, 0), SQLITE_NULL) << "buffer " << b.buffer << " lives to the end";
        }
        lives++;
      }
    sqlite3_finalize(alloc), sqlite3_finalize(free_);
    sqlite3_close(db);
    EXPECT_GE(lives, 50u);  // 3 steps of beautiful_mnist: 78 lives, 18 of them freed
    EXPECT_GE(freed, 10u);
  }
  ASSERT_EQ(t->markers().size(), 3u);
  for (int i = 0; i < 3; i++) EXPECT_EQ(t->markers()[i].name, "train @ " + std::to_string(i));
  std::set<std::string> ranges;
  for (const RangeRow& r : t->ranges()) ranges.insert(r.device + " " + r.name);
  EXPECT_EQ(ranges, (std::set<std::string>{"USER train step 0", "USER train step 1", "USER train step 2"}));

  // the reference's kernels and run counts (its CPU lane), over the run and between two markers
  std::ifstream g(std::string(TG_TEST_DATA) + "/profile_goldens.txt");
  ASSERT_TRUE(g) << "no profile_goldens.txt";
  std::map<std::string, std::map<std::string, int64_t>> want, got;
  for (std::string l; std::getline(g, l);) {
    if (l.empty() || l[0] == '#') continue;
    std::istringstream ls(l);
    std::string scope, dev, name, n;
    std::getline(ls, scope, '\t'), std::getline(ls, dev, '\t'), std::getline(ls, name, '\t'), std::getline(ls, n);
    // the reference prints "<device[:7]> <name>": "CPU Gra batched N" is its CPU Graph lane, not a kernel; and it keeps
    // kernels whose names differ only in colour apart (E_2 twice), where the trace holds names without colours
    if (dev == "CPU" && name.rfind("Gra batched", 0) != 0) want[scope][name] += std::stoll(n);
  }
  auto ours = [&](std::vector<std::string> extra, const std::string& scope) {
    std::vector<std::string> args{"profile", path, "-s", "CPU", "-t", "-1", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::istringstream lines(cli(args));
    for (std::string l; std::getline(lines, l);) {
      json j = json::parse(l);
      got[scope][j["name"].get<std::string>()] = j["count"].get<int64_t>();
    }
  };
  ours({}, "all");
  ours({"--interval", "train @ 1", "train @ 2"}, "interval");
  EXPECT_EQ(got["all"], want["all"]);
  EXPECT_EQ(got["interval"], want["interval"]);

  // the export, read by a real Trace Event consumer
  std::string js = tmp_path("mnist", ".json");
  {
    std::ofstream f(js);
    export_chrome(*t, f);
  }
  if (run("command -v node").empty()) GTEST_SKIP() << "node is not installed (scripts/install-deps.sh installs it)";
  ASSERT_TRUE(std::filesystem::exists(std::string(TG_CHROME_CONSUMER) + "/node_modules/@tracerbench/trace-model"))
      << "the export's consumer is not installed: run scripts/install-deps.sh";
  std::string res = run("node " + std::string(TG_CHROME_CONSUMER) + "/check_export.js " + js + " 2>&1");
  json r = json::parse(res, nullptr, false);
  ASSERT_FALSE(r.is_discarded()) << res;
  size_t steps = 0;
  for (const ContextRow& c : t->contexts()) steps += c.steps.size();
  size_t expected = t->kernel_events().size() + t->ranges().size() + t->contexts().size() + steps +
                    t->mem_events().size() + t->markers().size();
  EXPECT_EQ(r["events"].get<size_t>(), expected);
  EXPECT_EQ(r["phases"]["C"].get<size_t>(), t->mem_events().size());
  EXPECT_EQ(r["phases"]["i"].get<size_t>(), t->markers().size());
  // every lane is a thread with its events
  std::map<std::string, size_t> lanes;
  for (const auto& proc : r["processes"])
    for (const auto& th : proc["threads"]) lanes[th["name"].get<std::string>()] = th["complete"].get<size_t>();
  for (const Lane& l : p.lanes) {
    if (l.name == "TINY") continue;  // rewrites go per recording thread
    EXPECT_EQ(lanes[l.name], l.spans.size()) << l.name;
  }
  std::filesystem::remove(path);
  std::filesystem::remove(js);
}
