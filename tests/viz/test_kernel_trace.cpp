// Kernels in the trace (schema 3): a PROGRAM made by to_program is recorded once, linked to its codegen context, with
// the rendered source (equal to the reference's C), the linearized UOps and estimates; kernel events written through
// the Recorder come back from the reader and the kernel_events_view with GFLOPS; PROFILE=1 alone records programs and
// events but no rewrite steps; schema 2 traces still open (no kernels).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>

#include "lib/codegen/codegen.h"
#include "lib/codegen/late/program.h"
#include "lib/helpers.h"
#include "lib/recorder.h"
#include "lib/renderer/cstyle.h"
#include "lib/uop/kernel_info.h"
#include "tests/support/codegen_goldens.h"
#include "viz/reader/reader.h"
#include "viz/schema.h"
#include "tests/support/sql.h"
#include "viz/writer/trace_writer.h"

using namespace tg;
using namespace tg::viz;

namespace {

using tg::test::join_lines;

std::string tmp_path(const std::string& name) {
  return std::string(::testing::TempDir()) + "tg_" + name + "_" + std::to_string(getpid()) + ".trace.db";
}

template <typename F>
std::string record(const std::string& name, int tms, int profile, F fn) {
  std::string path = tmp_path(name);
  Context ctx({{"TRACK_MATCH_STATS", tms}, {"PROFILE", profile}});
  Recorder* r = open_trace_writer(path).release();
  set_recorder(r);
  fn();
  r->finish();
  set_recorder(nullptr);
  delete r;
  return path;
}

const CgKernel& first_kernel_with_clang() {
  static const std::vector<CgKernel> ks = load_codegen_goldens(TG_TEST_DATA "/codegen_goldens.txt");
  for (const CgKernel& k : ks)
    if (const CgVariant* v = k.variant("clang"); v && v->error.empty()) return k;
  throw std::runtime_error("no clang golden");
}

ClangRenderer clang() {
  ClangRenderer r(Target{"CPU", "clang", "x86_64,native", "", ""});
  r.global_max = std::vector<pyint>{8, 0, 0};
  return r;
}


}  // namespace

TEST(KernelTrace, ProgramLinkedToItsCodegenContext) {
  const CgKernel& k = first_kernel_with_clang();
  ClangRenderer ren = clang();
  uint64_t id = 0;
  std::string path = record("prog", 2, 1, [&] {
    UOp prg = to_program(k.ast, ren);
    id = recorded_program_id(prg);
    // a second to_program of the same AST gives the same PROGRAM node: recorded once
    EXPECT_EQ(record_program(prg, "CPU"), id);
    KernelEvent e;
    e.program = id;
    e.name = "kernel";
    e.device = "CPU";
    e.t_start_ns = 1000;
    e.t_end_ns = 3000;
    e.bufs = {{1, 64, BufferUse::write}, {2, 64, BufferUse::read}};
    profile_recorder()->kernel_event(e);
  });
  ASSERT_NE(id, 0u);
  auto t = Trace::open(path);
  EXPECT_EQ(t->schema_version(), TRACE_SCHEMA_VERSION);
  ASSERT_EQ(t->programs().size(), 1u);
  const ProgramRow& p = t->programs()[0];
  EXPECT_EQ(p.device, "CPU");
  EXPECT_EQ(p.source, join_lines(k.variant("clang")->source));
  EXPECT_NE(p.uops.find("Ops.SINK"), std::string::npos);
  EXPECT_GE(p.ops, 0);
  EXPECT_GT(p.mem, 0);
  // the codegen context is the one named after the kernel, and the program is found from it
  ASSERT_NE(p.context, 0);
  EXPECT_EQ(ansistrip(t->context(p.context).name), p.name);
  ASSERT_NE(t->program_of_context(p.context), nullptr);
  EXPECT_EQ(t->program_of_context(p.context)->id, p.id);
  ASSERT_EQ(t->kernel_events().size(), 1u);
  const KernelEventRow& ev = t->kernel_events()[0];
  EXPECT_EQ(ev.program, p.id);
  EXPECT_EQ(ev.t_end - ev.t_start, 2000);
  EXPECT_EQ(ev.bufs, "[[1,64,1],[2,64,0]]");
  // the SQL view computes GFLOPS (FLOPs per ns) from the program's estimate
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT ns, gbs FROM kernel_events_view", -1, &s, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int64(s, 0), 2000);
  EXPECT_DOUBLE_EQ(sqlite3_column_double(s, 1), double(p.mem) / 2000);
  sqlite3_finalize(s);
  sqlite3_close(db);
  std::filesystem::remove(path);
}

TEST(KernelTrace, ProfileAloneRecordsKernelsWithoutSteps) {
  const CgKernel& k = first_kernel_with_clang();
  ClangRenderer ren = clang();
  std::string path = record("profile", 0, 1, [&] {
    UOp prg = to_program(k.ast, ren);
    KernelEvent e;
    e.program = recorded_program_id(prg);
    e.name = "k";
    e.device = "CPU";
    e.t_start_ns = 5, e.t_end_ns = 9;
    profile_recorder()->kernel_event(e);
  });
  auto t = Trace::open(path);
  EXPECT_TRUE(t->steps().empty());
  ASSERT_EQ(t->programs().size(), 1u);
  EXPECT_EQ(t->programs()[0].context, 0);  // codegen was not recorded
  EXPECT_EQ(t->kernel_events().size(), 1u);
  std::filesystem::remove(path);
}

TEST(KernelTrace, NothingRecordedWithoutProfileOrTrace) {
  Context ctx({{"TRACK_MATCH_STATS", 0}, {"PROFILE", 0}});
  EXPECT_EQ(profile_recorder(), nullptr);
  const CgKernel& k = first_kernel_with_clang();
  ClangRenderer ren = clang();
  EXPECT_EQ(recorded_program_id(to_program(k.ast, ren)), 0u);
}

TEST(KernelTrace, SchemaTwoTracesStillOpen) {
  for (const auto& f : std::filesystem::directory_iterator(TG_SOURCE_ROOT "traces")) {
    if (f.path().extension() != ".db") continue;
    auto t = Trace::open(f.path().string());
    EXPECT_GE(t->schema_version(), 2);
    if (t->schema_version() == 2) {
      EXPECT_TRUE(t->kernel_events().empty());
    }
  }
}

// The reader's check that a kernel run names a recorded program: in a finished trace a run of a program that does not
// exist is damage, named with its table and row; in a trace cut off while recording (status not complete) the program
// may simply not have been written, and the run opens with no program
TEST(KernelTrace, ARunOfAProgramThatDoesNotExistIsDamageInAFinishedTrace) {
  const CgKernel& k = first_kernel_with_clang();
  ClangRenderer ren = clang();
  std::string path = record("badprog", 0, 1, [&] {
    KernelEvent e;
    e.program = recorded_program_id(to_program(k.ast, ren));
    e.name = "k", e.device = "CPU", e.t_start_ns = 5, e.t_end_ns = 9;
    profile_recorder()->kernel_event(e);
  });
  ASSERT_EQ(tg::test::sql_exec(path, "UPDATE kernel_events SET program=4242"), "");
  int64_t run = tg::test::sql_int(path, "SELECT id FROM kernel_events");
  try {
    Trace::open(path);
    ADD_FAILURE() << "opened a run of program 4242";
  } catch (const TraceError& e) {
    std::string m = e.what();
    for (const std::string& part : std::vector<std::string>{"table kernel_events", "row " + std::to_string(run),
                                    "4242 does not exist in table programs"})
      EXPECT_NE(m.find(part), std::string::npos) << "no '" << part << "' in: " << m;
  }
  ASSERT_EQ(tg::test::sql_exec(path, "UPDATE meta SET value='recording' WHERE key='status'"), "");
  auto t = Trace::open(path);
  ASSERT_EQ(t->kernel_events().size(), 1u);
  EXPECT_EQ(t->kernel_events()[0].program, 0);
  std::filesystem::remove(path);
}
