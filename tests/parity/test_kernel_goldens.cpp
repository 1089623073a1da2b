// The late stage of the pipeline against the reference, kernel by kernel (tests/data/kernel_goldens.txt, from
// gen_kernel_goldens.py: small tensor programs lowered by tinygrad on the CPU device with ClangRenderer and
// CPULLVMRenderer):
//   * linearize(sink) is the reference's linear order exactly, and line_rewrite(..., pm_linearize_cleanups) its
//   program;
//   * the add-control-flow pass (CFGContext + pm_add_control_flow) and pm_split_ends give the reference's graphs;
//   * ClangRenderer / CPULLVMRenderer render the reference's program to its C source / LLVM IR byte for byte;
//   * the interpreter, run on the inputs the reference's compiled kernel saw, gives its outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>

#include "backends/interp/interp.h"
#include "lib/codegen/late/linearizer.h"
#include "lib/codegen/late/program.h"
#include "lib/renderer/cstyle.h"
#include "lib/renderer/llvmir.h"
#include "lib/uop/serialize.h"
#include "tests/support/compare_buffer.h"
#include "tests/support/kernel_goldens.h"

using namespace tg;

namespace {

using tg::test::dec_linear;
using tg::test::join_lines;
using tg::test::first_diff;

const std::vector<KernelGolden>& goldens() {
  static const std::vector<KernelGolden> g = load_kernel_goldens(TG_TEST_DATA "/kernel_goldens.txt");
  return g;
}

std::vector<std::string> enc_linear(const std::vector<UOp>& lst) {
  return encode_graph(UOp(Ops::LINEAR, dtypes::void_, lst));
}

struct Tally {
  const char* what;
  int total = 0, ok = 0;
  ~Tally() { std::printf("[ kernels ] %-28s %d/%d match\n", what, ok, total); }
};

const Target kTarget{"CPU", "CLANG", "x86_64,native", "", ""};

}  // namespace

TEST(KernelGoldens, Loaded) {
  ASSERT_GE(goldens().size(), 40u);
  int runs = 0;
  for (const auto& k : goldens()) runs += k.has_run;
  EXPECT_EQ(runs, (int)goldens().size());
}

TEST(KernelGoldens, LinearizeOrder) {
  Tally t{"linearize order"};
  for (const auto& k : goldens())
    for (const KernelBlock* b : {&k.clang, &k.llvm}) {
      SCOPED_TRACE("kernel " + std::to_string(k.id) + " " + k.program + (b == &k.clang ? " clang" : " llvm"));
      t.total++;
      auto got = enc_linear(linearize(decode_graph(b->sink)));
      if (got == b->linear)
        t.ok++;
      else
        ADD_FAILURE() << first_diff(join_lines(b->linear), join_lines(got));
    }
}

TEST(KernelGoldens, LinearProgram) {
  Tally t{"do_linearize program"};
  for (const auto& k : goldens())
    for (const KernelBlock* b : {&k.clang, &k.llvm}) {
      SCOPED_TRACE("kernel " + std::to_string(k.id) + " " + k.program + (b == &k.clang ? " clang" : " llvm"));
      t.total++;
      auto got = enc_linear(do_linearize(decode_graph(b->sink)));
      if (got == b->program)
        t.ok++;
      else
        ADD_FAILURE() << first_diff(join_lines(b->program), join_lines(got));
    }
}

TEST(KernelGoldens, AddControlFlow) {
  Tally t{"add control flow"};
  for (const auto& k : goldens())
    for (const KernelBlock* b : {&k.clang, &k.llvm}) {
      if (b->cfg_in.empty()) continue;
      SCOPED_TRACE("kernel " + std::to_string(k.id) + " " + k.program + (b == &k.clang ? " clang" : " llvm"));
      t.total++;
      UOp in = decode_graph(b->cfg_in);
      CFGContext ctx(in);
      auto got = encode_graph(
          graph_rewrite(in, pm_add_control_flow(), {.ctx = &ctx, .bottom_up = true, .name = "add control flow"}));
      if (got == b->cfg_out)
        t.ok++;
      else
        ADD_FAILURE() << first_diff(join_lines(b->cfg_out), join_lines(got));
    }
  EXPECT_GT(t.total, 0);
}

TEST(KernelGoldens, SplitEnds) {
  Tally t{"pm_split_ends"};
  for (const auto& k : goldens())
    for (const KernelBlock* b : {&k.clang, &k.llvm}) {
      if (b->split_in.empty()) continue;
      SCOPED_TRACE("kernel " + std::to_string(k.id) + " " + k.program + (b == &k.clang ? " clang" : " llvm"));
      t.total++;
      auto got = encode_graph(graph_rewrite(decode_graph(b->split_in), pm_split_ends()));
      if (got == b->split_out)
        t.ok++;
      else
        ADD_FAILURE() << first_diff(join_lines(b->split_out), join_lines(got));
    }
  EXPECT_GT(t.total, 0);
}

TEST(KernelGoldens, ClangSource) {
  Tally t{"ClangRenderer source"};
  ClangRenderer ren(kTarget);
  for (const auto& k : goldens()) {
    SCOPED_TRACE("kernel " + std::to_string(k.id) + " " + k.program);
    t.total++;
    std::string want = join_lines(k.clang.source), got = ren.render(dec_linear(k.clang.program));
    if (got == want)
      t.ok++;
    else
      ADD_FAILURE() << first_diff(want, got);
  }
}

TEST(KernelGoldens, LLVMSource) {
  Tally t{"CPULLVMRenderer IR"};
  CPULLVMRenderer ren(Target{"CPU", "LLVM", "x86_64,native", "", ""});
  for (const auto& k : goldens()) {
    SCOPED_TRACE("kernel " + std::to_string(k.id) + " " + k.program);
    t.total++;
    std::string want = join_lines(k.llvm.source), got = ren.render(dec_linear(k.llvm.program));
    if (got == want)
      t.ok++;
    else
      ADD_FAILURE() << first_diff(want, got);
  }
}

// sink -> source through our linearizer and renderer
TEST(KernelGoldens, EndToEndRender) {
  Tally t{"sink -> source (both)"};
  ClangRenderer clang(kTarget);
  CPULLVMRenderer llvm(Target{"CPU", "LLVM", "x86_64,native", "", ""});
  for (const auto& k : goldens()) {
    SCOPED_TRACE("kernel " + std::to_string(k.id) + " " + k.program);
    t.total++;
    bool ok = do_render(clang, decode_graph(k.clang.sink)) == join_lines(k.clang.source);
    ok = ok && do_render(llvm, decode_graph(k.llvm.sink)) == join_lines(k.llvm.source);
    if (ok)
      t.ok++;
    else
      ADD_FAILURE() << "rendered source differs";
  }
}

namespace {
std::string info_line(const ProgramInfo& p) {
  auto dims = [](const std::optional<std::vector<sint>>& d) {
    if (!d) return std::string("None");
    std::string r;
    for (size_t i = 0; i < d->size(); i++)
      r += (i ? "," : "") + ((*d)[i].is_int() ? pyint_str((*d)[i].i()) : (*d)[i].u().render());
    return r;
  };
  auto ints = [](const std::vector<int64_t>& v) {
    std::string r;
    for (size_t i = 0; i < v.size(); i++) r += (i ? "," : "") + std::to_string(v[i]);
    return r.empty() ? std::string("-") : r;
  };
  std::string vars;
  for (size_t i = 0; i < p.vars.size(); i++) vars += (i ? "," : "") + p.vars[i].expr();
  return "info global=" + dims(p.global_size) + " local=" + dims(p.local_size) +
         " vars=" + (vars.empty() ? "-" : vars) + " globals=" + ints(p.globals) + " outs=" + ints(p.outs) +
         " ins=" + ints(p.ins);
}
}  // namespace

// ProgramInfo.from_sink, and the PROGRAM pm_to_program builds (SINK, LINEAR, SOURCE)
TEST(KernelGoldens, ToProgram) {
  Tally t{"ProgramInfo + PROGRAM"};
  ClangRenderer clang(kTarget);
  CPULLVMRenderer llvm(Target{"CPU", "LLVM", "x86_64,native", "", ""});
  for (const auto& k : goldens())
    for (const KernelBlock* b : {&k.clang, &k.llvm}) {
      SCOPED_TRACE("kernel " + std::to_string(k.id) + " " + k.program + (b == &k.clang ? " clang" : " llvm"));
      t.total++;
      UOp sink = decode_graph(b->sink);
      const Renderer& ren = b == &k.clang ? static_cast<const Renderer&>(clang) : static_cast<const Renderer&>(llvm);
      UOp prg = to_program_from_full_sink(sink, ren);
      const ProgramInfo* info = prg.arg().as<ProgramInfo>();
      bool ok = info && info_line(*info) == b->info && prg.nsrc() == 3 && prg.src(0) == sink &&
                encode_graph(prg.src(1)) == b->program && prg.src(2).arg().as_str() == join_lines(b->source);
      for (int d = 0; ok && d < 3; d++)
        ok = info->global_size[(size_t)d].is_int() && info->global_size[(size_t)d].i() == b->global[(size_t)d];
      if (ok)
        t.ok++;
      else
        ADD_FAILURE() << (info ? info_line(*info) : std::string("no ProgramInfo")) << "\nwant " << b->info;
    }
}

// Estimates.from_uops(program, ignore_indexing=True): FLOPs, bytes loaded/stored, distinct bytes (symbolic for
// Variables)
TEST(KernelGoldens, Estimates) {
  Tally t{"Estimates.from_uops"};
  auto r = [](const sint& x) { return x.is_int() ? pyint_str(x.i()) : x.u().render(false); };
  for (const auto& k : goldens())
    for (const KernelBlock* b : {&k.clang, &k.llvm}) {
      SCOPED_TRACE("kernel " + std::to_string(k.id) + " " + k.program + (b == &k.clang ? " clang" : " llvm"));
      t.total++;
      Estimates e = Estimates::from_uops(dec_linear(b->program), true);
      std::string got = "est ops=" + r(e.ops) + " lds=" + r(e.lds) + " mem=" + r(e.mem);
      if (got == b->est)
        t.ok++;
      else
        ADD_FAILURE() << "want " << b->est << "\ngot  " << got;
    }
}

namespace {

std::vector<std::vector<uint8_t>> run_values(const KernelGolden& k, const KernelBlock& b, Tally& t, bool* exact) {
  t.total++;
  std::vector<std::vector<uint8_t>> mem;
  std::vector<interp::BufferView> views;
  std::vector<DType> dts;
  for (const auto& g : k.bufs) {
    mem.push_back(g.before);
    dts.push_back(dtypes::by_name(g.dtype));
  }
  for (size_t i = 0; i < mem.size(); i++) views.push_back({mem[i].data(), k.bufs[i].count, dts[i]});
  std::vector<std::optional<pyint>> vals;
  for (const auto& v : k.vals) vals.push_back(v == "-" ? std::nullopt : std::optional<pyint>(std::stoll(v)));
  interp::LaunchDims dims;
  dims.global = b.global;
  interp::Program(dec_linear(b.program)).run(views, vals, dims);
  // the same through the PROGRAM (ProgramInfo gives the dims and the variable order) must agree
  {
    std::vector<std::vector<uint8_t>> mem2;
    std::vector<interp::BufferView> views2;
    for (const auto& g : k.bufs) mem2.push_back(g.before);
    for (size_t i = 0; i < mem2.size(); i++) views2.push_back({mem2[i].data(), k.bufs[i].count, dts[i]});
    UOp prg = to_program_from_full_sink(decode_graph(b.sink), ClangRenderer(kTarget));
    std::unordered_map<std::string, pyint> var_vals;
    const ProgramInfo* info = prg.arg().as<ProgramInfo>();
    for (size_t i = 0; i < info->vars.size(); i++)
      if (k.vals[i] != "-") var_vals[info->vars[i].expr()] = std::stoll(k.vals[i]);
    interp::run_program(prg, views2, var_vals);
    EXPECT_EQ(mem2, mem) << "run_program differs from Program::run";
  }
  bool ok = true;
  for (size_t i = 0; i < mem.size(); i++) {
    std::string err = compare_buffer(dts[i], k.bufs[i].after, mem[i]);
    if (!err.empty()) {
      ok = false;
      ADD_FAILURE() << "buffer " << i << " (" << k.bufs[i].dtype << "): " << err;
    }
    if (mem[i] != k.bufs[i].after) *exact = false;
  }
  t.ok += ok;
  return mem;
}
}  // namespace

TEST(KernelGoldens, InterpreterValues) {
  Tally t{"interpreter ~ compiled kernel"};
  Tally te{"interpreter == PYTHON device"};
  int exact = 0;
  for (const auto& k : goldens()) {
    if (!k.has_run) continue;
    for (const KernelBlock* b : {&k.clang, &k.llvm}) {
      SCOPED_TRACE("kernel " + std::to_string(k.id) + " " + k.program + (b == &k.clang ? " clang" : " llvm"));
      bool ex = true;
      try {
        auto got = run_values(k, *b, t, &ex);
        exact += ex;
        // the reference's own interpreter on the same program: bit for bit
        const auto& emu = b == &k.clang ? k.emu_clang : k.emu_llvm;
        if (emu.empty()) continue;
        te.total++;
        if (emu == got)
          te.ok++;
        else
          ADD_FAILURE() << "differs from the reference's PYTHON device";
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
      }
    }
  }
  std::printf("[ kernels ] interpreter == compiled, bit-exact  %d/%d\n", exact, t.total);
  EXPECT_GE(te.total, 100);
}
