// Machine code in the trace (schema 6): a CPU kernel compiled while a trace is recorded comes with LLVM's disassembly
// of the object that ran (x86-64 instructions of that kernel, its loops marked), read lazily by the reader and printed
// by `tinyviz-cli code --asm`; nothing is disassembled without a trace; a schema 5 trace opens with no machine code;
// a damaged machine_code row is a TraceError, not a crash.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "backends/cpu/cpu.h"
#include "backends/interp/interp.h"
#include "lib/helpers.h"
#include "lib/recorder.h"
#include "lib/tensor.h"
#include "tests/support/cli_capture.h"
#include "viz/cli/cli.h"
#include "viz/reader/reader.h"
#include "viz/schema.h"
#include "viz/writer/trace_writer.h"

using namespace tg;
using namespace tg::viz;

namespace {

std::string tmp_path(const std::string& name, const char* ext = ".trace.db") {
  return std::string(::testing::TempDir()) + "tg_mc_" + name + "_" + std::to_string(getpid()) + ext;
}

void sql(const std::string& path, const std::string& stmt) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, stmt.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

// tinyviz-cli in this process, its stdout captured
std::string cli(std::vector<std::string> args, int* rc = nullptr) { return tg::test::run_cli(std::move(args), rc); }

// a trace of c = a + b (float32, 256 elements) and of a sum with a loop over 4096 elements, on the CPU
std::string record_add_and_sum() {
  cpu::register_device();
  interp::register_device();
  std::string path = tmp_path("add");
  Context ctx({{"TRACK_MATCH_STATS", 2}, {"PROFILE", 1}});
  Recorder* r = open_trace_writer(path).release();
  set_recorder(r);
  std::vector<float> v(256), big(4096, 1.0f);
  for (int i = 0; i < 256; i++) v[i] = (float)i;
  Tensor a = Tensor::from_vector<float>(v), b = Tensor::from_vector<float>(v);
  Tensor c = (a + b).contiguous().realize();
  EXPECT_EQ(c.to_vector<float>()[255], 510.0f);
  EXPECT_EQ(Tensor::from_vector<float>(big).sum().item<float>(), 4096.0f);
  r->finish();
  set_recorder(nullptr);
  delete r;
  return path;
}

const std::string& add_trace() {
  static const std::string p = record_add_and_sum();
  return p;
}

const ProgramRow* program_named(const Trace& t, const std::string& prefix) {
  for (const ProgramRow& p : t.programs())
    if (p.name.rfind(prefix, 0) == 0 && p.device == "CPU") return &p;
  return nullptr;
}

}  // namespace

TEST(MachineCode, ACpuKernelIsRecordedAsTheDisassemblyOfItsObject) {
  auto t = Trace::open(add_trace(), false);
  EXPECT_EQ(t->schema_version(), TRACE_SCHEMA_VERSION);
  ASSERT_TRUE(t->has_machine_code());
  const ProgramRow* add = program_named(*t, "E_");
  ASSERT_NE(add, nullptr);
  std::optional<MachineCodeRow> mc = t->machine_code(add->id);
  ASSERT_TRUE(mc);
  EXPECT_NE(mc->kind.find("x86-64 machine code"), std::string::npos) << mc->kind;
  const std::string& s = mc->text;
  // the kernel's own function, and the entry the launcher calls, which jumps or calls to it
  EXPECT_NE(s.find("\n" + add->name + ":\n"), std::string::npos) << s;
  EXPECT_NE(s.find("__tg_entry_" + add->name + ":"), std::string::npos) << s;
  EXPECT_TRUE(std::regex_search(s, std::regex("\\b(jmp|callq?) +<" + add->name + ">"))) << s;
  // real x86-64 instructions: a return and a float add (scalar or vector), one instruction per line after an offset
  // ('|' in the gutter: the add is in the kernel's loop)
  EXPECT_TRUE(std::regex_search(s, std::regex("\n +[0-9a-f]+: +retq?\n"))) << s;
  EXPECT_TRUE(std::regex_search(s, std::regex("\n +[0-9a-f]+: +[| ]*v?add(ps|ss) +[^\n]*%[xyz]mm[0-9]+\n"))) << s;
  // no undecodable bytes
  EXPECT_EQ(s.find(".byte"), std::string::npos) << s;
}

TEST(MachineCode, ALoopIsMarkedAtItsHeadAndItsBackwardJump) {
  auto t = Trace::open(add_trace(), false);
  const ProgramRow* sum = program_named(*t, "r_");
  ASSERT_NE(sum, nullptr);
  std::optional<MachineCodeRow> mc = t->machine_code(sum->id);
  ASSERT_TRUE(mc);
  const std::string& s = mc->text;
  std::smatch head;
  ASSERT_TRUE(std::regex_search(s, head, std::regex("\n(\\.L[0-9]+):\\s+; innermost loop, back from 0x([0-9a-f]+)")))
      << s;
  std::string label = head[1], latch = head[2];
  // the jump back: at the offset the head names, to the head's label
  EXPECT_TRUE(std::regex_search(
      s, std::regex("\n +" + latch + ": +\\|+ +j[a-z]+ +\\" + label + " +# <- loop \\" + label + " \\(innermost\\)")))
      << s;
  EXPECT_NE(s.find("; loops (a backward jump"), std::string::npos);
}

TEST(MachineCode, TheCliPrintsAKernelsMachineCodeSourceAndUops) {
  auto t = Trace::open(add_trace(), false);
  const ProgramRow* add = program_named(*t, "E_");
  ASSERT_NE(add, nullptr);
  ASSERT_GT(add->context, 0);
  int rc = -1;
  std::string out = cli({"code", add_trace(), std::to_string(add->context), "--asm"}, &rc);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(out, t->machine_code(add->id)->text + (t->machine_code(add->id)->text.back() == '\n' ? "" : "\n"));
  out = cli({"code", add_trace(), add->name}, &rc);
  EXPECT_EQ(rc, 0);
  EXPECT_NE(out.find("define void @" + add->name), std::string::npos) << out;
  out = cli({"code", add_trace(), add->name, "--uops"}, &rc);
  EXPECT_NE(out.find("Ops.SINK"), std::string::npos) << out;
  out = cli({"code", add_trace(), "no_such_kernel", "--asm"}, &rc);
  EXPECT_EQ(rc, 2);
  out = cli({"--json", "code", add_trace(), add->name, "--asm"}, &rc);
  EXPECT_EQ(rc, 0);
  EXPECT_NE(out.find("\"kind\":\"x86-64 machine code"), std::string::npos) << out;
}

// counts the programs and machine codes it is given
struct CountingRecorder : Recorder {
  std::atomic<int> programs{0}, codes{0};
  uint64_t context_begin(const std::string&, int64_t) override { return 0; }
  void context_rename(uint64_t, const std::string&) override {}
  void context_end(uint64_t, int64_t) override {}
  uint64_t step_begin(const StepInfo&, const UOp&) override { return 0; }
  void step_end(uint64_t, const UOp*, int64_t, std::vector<RuleStat>&&, const std::string&) override {}
  void match(uint64_t, uint32_t, const UOp&, const UOp&, uint32_t, int64_t) override {}
  void rule_error(uint64_t, uint32_t, const UOp&, const UOp&, uint32_t, const std::string&) override {}
  void note_uop(const UOp&) override {}
  uint64_t program(const ProgramRecord&) override { return (uint64_t)++programs; }
  void program_code(uint64_t, const MachineCode& mc) override {
    EXPECT_FALSE(mc.text.empty()) << mc.kind;
    ++codes;
  }
  void finish() override {}
  std::string path() const override { return ""; }
};

// the machine code goes to the recorder once per program while kernels are recorded (PROFILE), and nothing is
// disassembled when they are not
TEST(MachineCode, DisassembledOncePerProgramAndOnlyWhileRecording) {
  cpu::register_device();
  interp::register_device();
  CountingRecorder rec;
  set_recorder(&rec);
  std::vector<float> v(64, 2.0f);
  {
    Context ctx({{"TRACK_MATCH_STATS", 0}, {"PROFILE", 0}});
    Tensor c = (Tensor::from_vector<float>(v) * 5).contiguous().realize();
    EXPECT_EQ(c.to_vector<float>()[0], 10.0f);
  }
  EXPECT_EQ(rec.programs.load(), 0);
  EXPECT_EQ(rec.codes.load(), 0);
  {
    Context ctx({{"TRACK_MATCH_STATS", 0}, {"PROFILE", 1}});
    for (int i = 0; i < 3; i++) {  // the same kernel three times: one program, one machine code
      Tensor c = (Tensor::from_vector<float>(v) * 7).contiguous().realize();
      EXPECT_EQ(c.to_vector<float>()[0], 14.0f);
    }
  }
  set_recorder(nullptr);
  EXPECT_GE(rec.programs.load(), 1);
  EXPECT_EQ(rec.codes.load(), rec.programs.load());
}

// a schema 5 trace (before machine code): opens, has no machine code, and the CLI says why
TEST(MachineCode, ASchemaFiveTraceOpensWithNoMachineCode) {
  std::string old = tmp_path("schema5");
  std::filesystem::copy_file(add_trace(), old, std::filesystem::copy_options::overwrite_existing);
  sql(old, "DROP TABLE machine_code; PRAGMA user_version=5;");
  auto t = Trace::open(old);
  EXPECT_EQ(t->schema_version(), 5);
  EXPECT_FALSE(t->has_machine_code());
  ASSERT_FALSE(t->programs().empty());
  EXPECT_FALSE(t->machine_code(t->programs()[0].id));
  EXPECT_FALSE(t->program_text(t->programs()[0].id).first.empty());
  int rc = -1;
  std::string out = cli({"code", old, t->programs()[0].name, "--asm"}, &rc);
  EXPECT_EQ(rc, 1);
  EXPECT_TRUE(out.empty()) << out;
  std::filesystem::remove(old);
}

// a damaged row is a TraceError naming the table and row; a schema 6 trace without the table does not open
TEST(MachineCode, ADamagedMachineCodeRowIsATraceError) {
  std::string bad = tmp_path("bad");
  std::filesystem::copy_file(add_trace(), bad, std::filesystem::copy_options::overwrite_existing);
  auto t0 = Trace::open(bad, false);
  int64_t id = t0->programs()[0].id;
  t0.reset();
  sql(bad, "UPDATE machine_code SET code=x'00ff10' WHERE program=" + std::to_string(id));
  auto t = Trace::open(bad, false);
  try {
    t->machine_code(id);
    ADD_FAILURE() << "no error";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("table machine_code, row " + std::to_string(id)), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("holds a blob, not text"), std::string::npos) << e.what();
  }
  t.reset();
  sql(bad, "DROP TABLE machine_code");
  try {
    Trace::open(bad);
    ADD_FAILURE() << "no error";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("machine_code is missing"), std::string::npos) << e.what();
  }
  std::filesystem::remove(bad);
}
