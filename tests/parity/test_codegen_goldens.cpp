// Per-kernel codegen against the reference, kernel by kernel (tests/data/codegen_goldens.txt, from
// gen_codegen_goldens.py: the AST each kernel of small tensor programs hands to full_rewrite_to_sink, lowered by
// tinygrad with ClangRenderer, CPULLVMRenderer, NOOPT=1 and a has_local Clang variant):
//   * every tracked graph_rewrite of our full_rewrite_to_sink has the reference's name, depth and flags, in order
//     (the steps a VIZ=-1 trace shows);
//   * the graph after each depth-0 pass equals the reference's (the first divergence is reported);
//   * the final SINK, the applied opts and the kernel name equal the reference's;
//   * linearize + render of our SINK give the reference's program and C / LLVM source byte for byte;
//   * the interpreter runs our program to the reference's PYTHON-device values (or the compiled kernel's);
//   * the final SINKs equal the ones tests/data/kernel_goldens.txt feeds the linearizer.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>

#include "backends/interp/interp.h"
#include "lib/codegen/codegen.h"
#include "lib/codegen/late/program.h"
#include "lib/recorder.h"
#include "lib/renderer/cstyle.h"
#include "lib/renderer/llvmir.h"
#include "lib/uop/kernel_info.h"
#include "lib/uop/serialize.h"
#include "tests/parity/step_recorder.h"
#include "tests/support/codegen_goldens.h"
#include "tests/support/compare_buffer.h"
#include "tests/support/kernel_goldens.h"

using namespace tg;

namespace {

using tg::test::first_diff;
using tg::test::join_lines;

const std::vector<CgKernel>& goldens() {
  static const std::vector<CgKernel> g = load_codegen_goldens(TG_TEST_DATA "/codegen_goldens.txt");
  return g;
}

const Target kClang{"CPU", "CLANG", "x86_64,native", "", ""};
const Target kLLVM{"CPU", "LLVM", "x86_64,native", "", ""};

// the renderers of the variants, as the generator configured them (NUM_CPU_THREADS=8)
const Renderer& renderer_for(const std::string& kind) {
  static ClangRenderer clang = [] {
    ClangRenderer r(kClang);
    r.global_max = std::vector<pyint>{8, 0, 0};
    return r;
  }();
  static CPULLVMRenderer llvm = [] {
    CPULLVMRenderer r(kLLVM);
    r.global_max = std::vector<pyint>{8, 0, 0};
    return r;
  }();
  static ClangRenderer local = [] {
    ClangRenderer r(kClang);
    r.has_local = true;
    r.has_threads = false;
    r.global_max = std::vector<pyint>{0x8FFFFFFF, 0x8FFFFFFF, 0x8FFFFFFF};
    return r;
  }();
  if (kind == "llvm") return llvm;
  if (kind == "local") return local;
  return clang;
}

struct Result {
  std::string error;
  std::vector<StepRecorder::Step> steps;  // full_rewrite_to_sink's, without the function-cached "reshape" steps
  UOp sink;
  std::vector<UOp> program;
  std::string source;
  bool has_source = false;
  UOp prg;  // PROGRAM (clang, llvm, noopt)
  std::string group_name;
};

// our lowering of one kernel for one variant (memoized: every test reads the same run)
const Result& lower(const CgKernel& k, const CgVariant& v) {
  static std::map<std::pair<int, std::string>, Result> cache;
  auto key = std::make_pair(k.id, v.kind);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  Result& r = cache[key];
  static StepRecorder* rec = new StepRecorder();  // outlives the exit handler
  rec->clear();
  set_recorder(rec);
  const Renderer& ren = renderer_for(v.kind);
  try {
    // CPU_TILE=0: the reference's opts (the port's register tiles pick other upcasts for DEV=CPU's reduce kernels)
    Context c({{"TRACK_MATCH_STATS", 2}, {"NOOPT", v.kind == "noopt" ? 1 : 0}, {"CPU_TILE", 0}});
    if (v.kind == "local") {
      r.sink = full_rewrite_to_sink(k.ast, ren, k.ast.tag().is_none());
      r.program = do_linearize(r.sink);
    } else {
      r.prg = to_program(k.ast, ren);
      r.sink = r.prg.src(0);
      r.program = std::vector<UOp>(r.prg.src(1).src().begin(), r.prg.src(1).src().end());
      r.source = r.prg.src(2).arg().as_str();
      r.has_source = true;
      r.group_name = rec->context_name;
    }
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  set_recorder(nullptr);
  for (auto& s : rec->steps)
    if (s.name != "reshape" && s.name != "linearize/render") r.steps.push_back(s);
  return r;
}

std::vector<std::string> golden_steps(const CgVariant& v) {
  std::vector<std::string> r;
  for (const auto& s : v.steps) {
    // "<depth> <flags> <name>"
    size_t a = s.find(' '), b = s.find(' ', a + 1);
    if (s.substr(b + 1) != "reshape") r.push_back(s);
  }
  return r;
}
std::string step_line(const StepRecorder::Step& s) { return std::to_string(s.depth) + " " + s.flags + " " + s.name; }

std::string graph_diff(const UOp& want, const UOp& got) {
  return first_diff(join_lines(encode_graph(want)), join_lines(encode_graph(got)));
}

struct Tally {
  std::string what;
  int total = 0, ok = 0;
  ~Tally() { std::printf("[ kernels ] %-40s %d/%d match\n", what.c_str(), ok, total); }
};

std::string trace(const CgKernel& k, const CgVariant& v) {
  return "kernel " + std::to_string(k.id) + " " + k.program + " " + v.kind + " (" + v.fname + ")";
}

// every variant of every kernel the reference could lower
template <typename F>
void each(const std::string& kinds, F f) {
  for (const auto& k : goldens())
    for (const auto& v : k.variants) {
      if (!v.error.empty() || kinds.find(v.kind) == std::string::npos) continue;
      SCOPED_TRACE(trace(k, v));
      f(k, v, lower(k, v));
    }
}

}  // namespace

TEST(CodegenGoldens, Loaded) {
  ASSERT_GE(goldens().size(), 80u);
  int variants = 0, runs = 0;
  for (const auto& k : goldens()) {
    variants += (int)k.variants.size();
    runs += k.has_run;
    ASSERT_TRUE(k.ast) << k.id;
  }
  EXPECT_GE(variants, 3 * 80);
  EXPECT_EQ(runs, (int)goldens().size());
}

// a variant the reference refused (a forced THREAD opt on a target without threads) fails here too
TEST(CodegenGoldens, ReferenceErrors) {
  Tally t{"reference errors reproduced"};
  for (const auto& k : goldens())
    for (const auto& v : k.variants) {
      if (v.error.empty()) continue;
      SCOPED_TRACE(trace(k, v) + ": " + v.error);
      t.total++;
      const Result& r = lower(k, v);
      if (!r.error.empty() && v.error.find(r.error) != std::string::npos)
        t.ok++;
      else
        ADD_FAILURE() << "got: " << (r.error.empty() ? "no error" : r.error);
    }
  EXPECT_GT(t.total, 0);
}

TEST(CodegenGoldens, NoErrors) {
  Tally t{"lowered without error"};
  each("clang llvm noopt local", [&](const CgKernel&, const CgVariant&, const Result& r) {
    t.total++;
    if (r.error.empty())
      t.ok++;
    else
      ADD_FAILURE() << r.error;
  });
}

TEST(CodegenGoldens, Steps) {
  Tally t{"trace steps (name, depth, flags)"};
  size_t n_steps = 0;
  each("clang llvm noopt local", [&](const CgKernel&, const CgVariant& v, const Result& r) {
    if (!r.error.empty()) return;
    t.total++;
    std::vector<std::string> got;
    for (const auto& s : r.steps) got.push_back(step_line(s));
    std::string want = join_lines(golden_steps(v)), g = join_lines(got);
    n_steps += got.size();
    if (want == g)
      t.ok++;
    else
      ADD_FAILURE() << first_diff(want, g);
  });
  std::printf("[ kernels ]   %zu steps compared\n", n_steps);
  EXPECT_GT(n_steps, 10000u);
}

TEST(CodegenGoldens, Passes) {
  Tally t{"every depth-0 pass graph"};
  std::map<std::string, int> first_bad;
  size_t n_passes = 0;
  each("clang llvm noopt local", [&](const CgKernel&, const CgVariant& v, const Result& r) {
    if (!r.error.empty()) return;
    t.total++;
    std::vector<const StepRecorder::Step*> ours;
    for (const auto& s : r.steps)
      if (s.depth == 0) ours.push_back(&s);
    for (size_t i = 0; i < v.passes.size(); i++) {
      if (i >= ours.size()) {
        ADD_FAILURE() << "missing pass " << i << " " << v.passes[i].name;
        first_bad[v.passes[i].name]++;
        return;
      }
      if (ours[i]->name != v.passes[i].name) {
        ADD_FAILURE() << "pass " << i << " is " << ours[i]->name << ", want " << v.passes[i].name;
        first_bad[v.passes[i].name]++;
        return;
      }
      if (ours[i]->out != v.passes[i].graph) {
        ADD_FAILURE() << "first divergence at pass " << i << " '" << v.passes[i].name << "'\n"
                      << graph_diff(v.passes[i].graph, ours[i]->out);
        first_bad[v.passes[i].name]++;
        return;
      }
    }
    if (ours.size() != v.passes.size()) {
      ADD_FAILURE() << "extra passes: " << ours.size() << " vs " << v.passes.size();
      return;
    }
    n_passes += ours.size();
    t.ok++;
  });
  std::printf("[ kernels ]   %zu pass graphs compared\n", n_passes);
  EXPECT_GT(n_passes, 5000u);
  for (const auto& [name, n] : first_bad) std::printf("[ kernels ]   first divergence at '%s': %d\n", name.c_str(), n);
}

TEST(CodegenGoldens, FinalSink) {
  Tally t{"final SINK"};
  each("clang llvm noopt local", [&](const CgKernel&, const CgVariant& v, const Result& r) {
    if (!r.error.empty()) return;
    t.total++;
    UOp want = v.passes.back().graph;
    if (r.sink == want)
      t.ok++;
    else
      ADD_FAILURE() << graph_diff(want, r.sink);
  });
}

TEST(CodegenGoldens, OptsAndName) {
  Tally t{"applied opts + kernel name"};
  each("clang llvm noopt local", [&](const CgKernel&, const CgVariant& v, const Result& r) {
    if (!r.error.empty()) return;
    t.total++;
    const KernelInfo* ki = r.sink.arg().as<KernelInfo>();
    std::vector<std::string> opts;
    for (const Arg& o : ki->applied_opts.items()) {
      std::string arg = o[2].is_none() ? "None" : o[2].str();
      opts.push_back(o[0].as_str() + " " + (o[1].is_none() ? "None" : o[1].str()) + " " + arg);
    }
    bool ok = opts == v.opts && ki->name == v.name && ki->function_name() == v.fname;
    if (!r.group_name.empty()) ok = ok && r.group_name == v.name;
    if (ok)
      t.ok++;
    else
      ADD_FAILURE() << "opts: " << join_lines(opts) << "\nwant: " << join_lines(v.opts) << "\nname " << ki->name
                    << " want " << v.name;
  });
}

TEST(CodegenGoldens, LinearProgram) {
  Tally t{"linearized program"};
  each("clang llvm noopt local", [&](const CgKernel&, const CgVariant& v, const Result& r) {
    if (!r.error.empty()) return;
    t.total++;
    UOp got(Ops::LINEAR, dtypes::void_, r.program);
    if (got == v.program)
      t.ok++;
    else
      ADD_FAILURE() << graph_diff(v.program, got);
  });
}

TEST(CodegenGoldens, Source) {
  Tally tc{"AST -> C source (clang, noopt)"}, tl{"AST -> LLVM IR"};
  each("clang llvm noopt", [&](const CgKernel&, const CgVariant& v, const Result& r) {
    if (!r.error.empty()) return;
    Tally& t = v.kind == "llvm" ? tl : tc;
    t.total++;
    std::string want = join_lines(v.source);
    if (r.has_source && r.source == want)
      t.ok++;
    else
      ADD_FAILURE() << first_diff(want, r.source);
  });
}

// unobserved (no recorder, TRACK_MATCH_STATS=0), codegen skips the passes that cannot change a kernel (no LOCAL
// memory for the barriers, no unnumbered PARAM, no loop to order) and the rules no node can match: the final SINK and
// the source are the recorded run's, which the tests above hold to the reference's
TEST(CodegenGoldens, UnobservedEqualsRecorded) {
  Tally t{"unobserved lowering == recorded"};
  each("clang llvm noopt local", [&](const CgKernel& k, const CgVariant& v, const Result& r) {
    if (!r.error.empty()) return;
    t.total++;
    const Renderer& ren = renderer_for(v.kind);
    Context c({{"TRACK_MATCH_STATS", 0}, {"NOOPT", v.kind == "noopt" ? 1 : 0}, {"CPU_TILE", 0}});
    UOp sink;
    std::string source;
    if (v.kind == "local") {
      sink = full_rewrite_to_sink(k.ast, ren, k.ast.tag().is_none());
    } else {
      UOp prg = to_program(k.ast, ren);
      sink = prg.src(0), source = prg.src(2).arg().as_str();
    }
    if (sink == r.sink && source == r.source)
      t.ok++;
    else
      ADD_FAILURE() << (sink == r.sink ? first_diff(r.source, source) : graph_diff(r.sink, sink));
  });
}

// float32 tolerance of the codegen goldens' buffers (they come from the reference's own compiled kernels)
constexpr double kFloat32Tol = 1e-5;

// the interpreter on our program: bit for bit the reference's PYTHON device on its program, or (where that could not
// run, e.g. FDIV) close to the compiled kernel
TEST(CodegenGoldens, Values) {
  Tally te{"interpreter == PYTHON device"}, tc{"interpreter ~ compiled kernel"};
  Tally tx{"(PYTHON device != its compiled kernel)"};
  each("clang llvm noopt local", [&](const CgKernel& k, const CgVariant& v, const Result& r) {
    if (!r.error.empty() || !k.has_run) return;
    std::vector<std::vector<uint8_t>> mem;
    std::vector<interp::BufferView> views;
    std::vector<DType> dts;
    for (const auto& b : k.bufs) mem.push_back(b.before), dts.push_back(dtypes::by_name(b.dtype));
    for (size_t i = 0; i < mem.size(); i++) views.push_back({mem[i].data(), k.bufs[i].count, dts[i]});
    try {
      UOp prg = r.prg ? r.prg
                      : UOp(Ops::PROGRAM, dtypes::void_, {r.sink, UOp(Ops::LINEAR, dtypes::void_, r.program)},
                            ProgramInfo::from_sink(r.sink, renderer_for(v.kind).target.repr()).to_arg());
      const ProgramInfo* info = prg.arg().as<ProgramInfo>();
      std::unordered_map<std::string, pyint> var_vals;
      for (size_t i = 0; i < info->vars.size() && i < k.vals.size(); i++)
        if (k.vals[i] != "-") var_vals[info->vars[i].expr()] = std::stoll(k.vals[i]);
      interp::run_program(prg, views, var_vals);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "interpreter: " << e.what();
      return;
    }
    // the reference's PYTHON device can disagree with the reference's own compiled kernel (it does on two has_local
    // programs with GROUP reductions: outputs it never writes); there the compiled kernel is the oracle
    bool emu_trusted = !v.emu.empty();
    for (size_t i = 0; emu_trusted && i < v.emu.size() && i < k.bufs.size(); i++) {
      const std::string& e = v.emu[i];
      if (e == "=" || e == "<") continue;
      if (!compare_buffer(dts[i], k.bufs[i].after, test::unhex(e), kFloat32Tol).empty()) emu_trusted = false;
    }
    if (!v.emu.empty() && !emu_trusted) tx.total++, tx.ok++;
    if (emu_trusted) {
      te.total++;
      bool ok = v.emu.size() == mem.size();
      for (size_t i = 0; ok && i < mem.size(); i++) {
        const std::string& e = v.emu[i];
        std::vector<uint8_t> want = e == "=" ? k.bufs[i].after : e == "<" ? k.bufs[i].before : test::unhex(e);
        if (want != mem[i]) {
          ok = false;
          ADD_FAILURE() << "buffer " << i << ": " << compare_buffer(dts[i], want, mem[i], kFloat32Tol)
                        << " (bit-exact expected)";
        }
      }
      te.ok += ok;
    } else {
      tc.total++;
      bool ok = true;
      for (size_t i = 0; i < mem.size(); i++)
        if (std::string err = compare_buffer(dts[i], k.bufs[i].after, mem[i], kFloat32Tol); !err.empty()) {
          ok = false;
          ADD_FAILURE() << "buffer " << i << ": " << err;
        }
      tc.ok += ok;
    }
  });
}

// the final SINKs are the ones the late-stage goldens (kernel_goldens.txt) start from
TEST(CodegenGoldens, KernelGoldensSinks) {
  Tally t{"== kernel_goldens.txt SINK"};
  auto kg = load_kernel_goldens(TG_TEST_DATA "/kernel_goldens.txt");
  for (const auto& g : kg) {
    const CgKernel* k = nullptr;
    for (const auto& c : goldens())
      if (c.program == g.program && c.variant("clang") && c.variant("clang")->fname == g.name &&
          c.variant("clang")->passes.back().graph == decode_graph(g.clang.sink))
        k = &c;
    SCOPED_TRACE("kernel_goldens kernel " + std::to_string(g.id) + " " + g.program + " " + g.name);
    if (!k) {
      ADD_FAILURE() << "no codegen golden with this final SINK";
      continue;
    }
    for (const char* kind : {"clang", "llvm"}) {
      t.total++;
      const Result& r = lower(*k, *k->variant(kind));
      UOp want = decode_graph(std::string(kind) == "clang" ? g.clang.sink : g.llvm.sink);
      if (r.error.empty() && r.sink == want)
        t.ok++;
      else
        ADD_FAILURE() << kind << ": " << (r.error.empty() ? graph_diff(want, r.sink) : r.error);
    }
  }
  EXPECT_GE(t.total, 140);
}
